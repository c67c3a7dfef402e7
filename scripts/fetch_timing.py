#!/usr/bin/env python3
"""When a policy's fetches happen relative to the app's next open, from a
run with event files (`"event_files": true`, or `run --trace`):

    python3 scripts/fetch_timing.py RUN_DIR [POLICY ...]

Per dataset and policy (all but `never`, or the ones named): fetches, the
share that brought new data, the median and mean energy of a fetch (J), and
the lead from a fetch's end to the app's next open (the open it can make
fresh): median, and the shares within 1 min, 10 min and 1 h. A fetch after
the app's last scored open has no lead and is left out of the lead columns.
"""
import bisect, collections, csv, os, statistics, sys

run = sys.argv[1]
wanted = set(sys.argv[2:])
opens = collections.defaultdict(list)
with open(os.path.join(run, "opens.csv")) as f:
    for r in csv.DictReader(f):
        opens[(r["dataset"], r["replication"], r["user"], r["app"], r["policy"])].append(float(r["time"]))
for v in opens.values():
    v.sort()
fetches = collections.defaultdict(list)
with open(os.path.join(run, "fetches.csv")) as f:
    for r in csv.DictReader(f):
        if r["policy"] == "never" or (wanted and r["policy"] not in wanted):
            continue
        key = (r["dataset"], r["replication"], r["user"], r["app"], r["policy"])
        fetches[(r["dataset"], r["policy"])].append((key, float(r["end_time"]), float(r["energy_j"]), r["result"]))

print("| dataset | policy | fetches | new data | J per fetch: median / mean | lead to the next open: median, s | < 1 min | < 10 min | < 1 h |")
print("|---|---|---|---|---|---|---|---|---|")
for (ds, policy), rows in sorted(fetches.items()):
    leads = []
    for key, end, _, _ in rows:
        o = opens.get(key, [])
        i = bisect.bisect_left(o, end)
        if i < len(o):
            leads.append(o[i] - end)
    energy = [e for _, _, e, _ in rows]
    new = sum(res == "new_data" for *_, res in rows) / len(rows)
    share = lambda s: sum(x < s for x in leads) / len(leads) if leads else float("nan")
    med = statistics.median(leads) if leads else float("nan")
    print(f"| {ds} | `{policy}` | {len(rows)} | {new:.2f} | {statistics.median(energy):.2f} / {statistics.mean(energy):.2f} | "
          f"{med:.0f} | {share(60):.2f} | {share(600):.2f} | {share(3600):.2f} |")
