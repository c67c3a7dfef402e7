#!/usr/bin/env python3
"""What knowing *when* the app will be opened is worth: a bound for the
planner's fresh share at a given energy, from a trace alone.

    python3 scripts/planner_bound.py TRACE.csv [--train 0.75] [--top 3]
        [--rate-per-hour 1] [--ride-j 1.5]

Scored opens are those of each user's `top` most-opened apps in the last
(1 - train) of the user's window, as `experiments/planner.json` scores them.
Content changes as a Poisson process at `rate-per-hour` (the world's
default), so content synced d seconds before an open is fresh with
probability e^(-rate * d) whoever synced it (Cho and Garcia-Molina); an open
syncs its app (the foreground refresh).

On a phone without WiFi or charger rows (the bundled UbiqLog trace) a fetch
is cheap only when another app's session already has the radio up; from an
idle radio it pays a promotion and a tail (about 12 J on LTE, where the
budgeted oracle pays `ride-j`, about 1.5 J, by finishing its fetch as the
open's own session starts). So a fetch rides the most recent other-app open
before the app's open, at `ride-j` J (the replay's measured cost of such a
fetch), and must have started at least 2 s before the open.

Two tables:

1. **Clairvoyant about opens, blind to content.** Fetch at the last other-app
   open before each open of the app that follows it within W (and only
   then): the freshness that perfect knowledge of the next open within W
   buys, per fetch. No policy that does not know the open instants beats it
   at the same number of riding fetches; one that also fetches from an idle
   radio pays about 12 J per such fetch.
2. **A learned trigger.** Fetch at another app's open when the training
   share of that app's opens (with this app's content 30 min or more old)
   followed by this app's within 10 min, shrunk toward all other apps with
   5 pseudo-opens, is at least the threshold: what the app-transition signal
   alone achieves.

Both count fetches and the Poisson expectation of fresh opens; they do not
replay the radio, so they compare with a replay's figures only through
`ride-j` (state it when quoting them). With `--run DIR --dataset NAME` (a
run of `experiments/planner.json`) each row also gives the budgeted
oracle's fresh share at its energy (on the frontier of the
`oracle-budget:<X>J` runs: linear, never below a cheaper point, the best
point's beyond the last, the rule of `oracle_gap.csv`) and the share
of the gap from `never` (here the closed form above) to it that the row
closes.
"""
import argparse, bisect, collections, csv, math, sys
from run_means import fresh_on_frontier, oracle_frontier, pooled_means

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("trace")
ap.add_argument("--train", type=float, default=0.75)
ap.add_argument("--top", type=int, default=3)
ap.add_argument("--rate-per-hour", type=float, default=1.0)
ap.add_argument("--ride-j", type=float, default=1.5)
ap.add_argument("--run", help="a run directory with oracle-budget:<X>J runs (pooled.csv)")
ap.add_argument("--dataset", help="the dataset of --run to compare with")
args = ap.parse_args()
lam = args.rate_per_hour / 3600
FETCH_S = 2.0
STALE_S = 1800.0
PAIR_S = 600.0

opens = collections.defaultdict(list)
window = {}
with open(args.trace) as f:
    rows = csv.reader(line for line in f if not line.startswith("#"))
    header = next(rows)
    col = {name: i for i, name in enumerate(header)}
    for r in rows:
        user, t, kind = r[col["user"]], float(r[col["time"]]), r[col["event"]]
        lo, hi = window.get(user, (math.inf, -math.inf))
        if kind in ("begin", "end"):
            window[user] = (t, hi) if kind == "begin" else (lo, t)
        elif kind == "open":
            opens[user].append((t, r[col["app"]]))
            window[user] = (min(lo, t), max(hi, t))

W = (60, 300, 900, 1800, 7200, math.inf)
THRESHOLDS = (0.05, 0.1, 0.2, 0.3)
clair = {w: [0, 0.0] for w in W}  # fetches, expected fresh opens
trig = {q: [0, 0.0] for q in THRESHOLDS}
never_fresh = scored = 0
app_days = 0.0
for user, events in opens.items():
    events.sort()
    start, end = window[user]
    cut = start + args.train * (end - start)
    counts = collections.Counter(a for _, a in events)
    top = [a for a, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[: args.top]]
    app_days += len(top) * (end - cut) / 86400
    times = [t for t, _ in events]
    for app in top:
        own = [t for t, a in events if a == app]
        others = sorted({t for t, a in events if a != app})
        # The learned trigger's statistics, from training only.
        hits, seen = collections.Counter(), collections.Counter()
        for t, a in events:
            if a == app or t >= cut:
                continue
            j = bisect.bisect_right(own, t)
            if j > 0 and t - own[j - 1] < STALE_S:
                continue
            nxt = own[j] if j < len(own) else math.inf
            seen[a] += 1
            hits[a] += nxt - t <= PAIR_S and nxt < cut
        base = (sum(hits.values()) + 1) / (sum(seen.values()) + 2)
        share = {a: (hits[a] + 5 * base) / (seen[a] + 5) for a in seen}
        for i, o in enumerate(own):
            if o < cut:
                continue
            prev = own[i - 1] if i > 0 else -math.inf
            scored += 1
            never_fresh += math.exp(-lam * (o - prev))
            k = bisect.bisect_right(others, o - FETCH_S)
            ride = others[k - 1] if k > 0 and others[k - 1] > prev else None
            for w in W:
                if ride is not None and o - ride <= w:
                    clair[w][0] += 1
                    clair[w][1] += math.exp(-lam * (o - ride))
                else:
                    clair[w][1] += math.exp(-lam * (o - prev))
        # The trigger replayed over the test part, in time order.
        test = [(t, a) for t, a in events if t >= cut]
        for q in THRESHOLDS:
            sync, fetches, fresh = -math.inf, 0, 0.0
            for t, a in test:
                if a == app:
                    fresh += math.exp(-lam * (t - sync)) if sync > -math.inf else 0.0
                    sync = t
                elif t - sync >= STALE_S and share.get(a, base) >= q:
                    fetches += 1
                    sync = t + FETCH_S
            trig[q][0] += fetches
            trig[q][1] += fresh

frontier = None
if args.run:
    frontier = oracle_frontier(pooled_means(args.run, ("energy_j_per_day", "fresh_ratio")), args.dataset)
    if not frontier:
        sys.exit(f"{args.run}/pooled.csv: no oracle-budget:<X>J runs of dataset {args.dataset!r}")


def row(label, n, fr):
    energy, fresh = n / app_days * args.ride_j, fr / scored
    cells = [label, f"{n / app_days:.1f}", f"{energy:.1f}", f"{fresh:.3f}"]
    if frontier:
        base = never_fresh / scored
        o = fresh_on_frontier(frontier, energy, base)
        cells += [f"{o:.3f}", f"{100 * (fresh - base) / (o - base):.0f} %" if o > base else "-"]
    return "| " + " | ".join(cells) + " |"


extra = (" oracle at this energy | gap closed |", "---|---|") if args.run else ("", "")
print(f"{scored} scored opens, {app_days:.0f} app-days; never: fresh {never_fresh / scored:.3f}")
print()
print("| fetch at the last other-app open when the app's open follows within | fetches per app-day | J per app-day | fresh |" + extra[0])
print("|---|---|---|---|" + extra[1])
for w in W:
    n, fr = clair[w]
    print(row("any time" if w == math.inf else f"{w / 60:g} min", n, fr))
print()
print("| learned trigger: P(this app within 10 min) at least | fetches per app-day | J per app-day | fresh |" + extra[0])
print("|---|---|---|---|" + extra[1])
for q in THRESHOLDS:
    n, fr = trig[q]
    print(row(f"{q:g}", n, fr))
