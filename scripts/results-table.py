#!/usr/bin/env python3
"""Prints the tables of docs/results.md from a run directory.

Usage: python3 scripts/results-table.py results/default            (per-user table)
       python3 scripts/results-table.py results/default --devices  (per-device table)

Reads policies.csv (per-user means with 95 % CIs) and paired.csv (from
`fetchlab compare RUN --baseline periodic:1h`); one row per policy below,
per dataset. Energy is J per day per app; ages in seconds.
"""
import csv
import sys

POLICIES = {
    "ubiqlog": ["periodic:1h", "oracle-budget:4", "silent-push", "imp", "tailender:1h",
                "ios-minimum:price=0.1", "ios-minimum"],
    "synthetic": ["periodic:1h", "tailender:1h", "ios-minimum", "silent-push", "imp"],
}
NAMES = {"ubiqlog": "UbiqLog", "synthetic": "synthetic"}


def fmt(x, d):
    x = float(x)
    return f"{x:,.{d}f}" if abs(x) >= 100 or d == 0 else f"{x:.{d}f}"


def ci(r, m, d):
    return f"{fmt(r[m], d)} [{fmt(r[m + '_lo'], d)}, {fmt(r[m + '_hi'], d)}]"


def paired(rows, dataset, policy):
    out = []
    for metric, label in [("energy_j_per_day", "J/day"), ("fresh_ratio", "fresh"), ("mean_age_s", "mean age")]:
        r = rows.get((dataset, policy, metric))
        if r is None:
            continue
        users = int(r["users"])
        p = float(r["sign_test_p"])
        wins = int(r["wins"])
        sig = "" if p < 0.05 else " n.s."
        out.append(f"{label} {'better' if wins * 2 > users else 'worse'} for "
                   f"{wins if wins * 2 > users else int(r['losses'])}/{users} (p = {p:.1g}){sig}")
    return "; ".join(out)


def main(run):
    pol = {(r["dataset"], r["policy"]): r for r in csv.DictReader(open(run + "/policies.csv"))}
    pr = {}
    try:
        for r in csv.DictReader(open(run + "/paired.csv")):
            pr[(r["dataset"], r["policy"], r["metric"])] = r
    except FileNotFoundError:
        pass
    print("| dataset | policy | J/day per app [95 % CI] | fresh share [95 % CI] | mean age, s [95 % CI] | vs periodic:1h (paired, sign test) |")
    print("|---|---|---|---|---|---|")
    for d, ps in POLICIES.items():
        for p in ps:
            r = pol.get((d, p))
            if r is None:
                continue
            print(f"| {NAMES[d]} | {p} | {ci(r, 'energy_j_per_day', 1)} | {ci(r, 'fresh_ratio', 3)} | "
                  f"{ci(r, 'mean_age_s', 0)} | {paired(pr, d, p) if p != 'periodic:1h' else ''} |")


DEVICE_POLICIES = {
    "ubiqlog": ["never", "periodic:15m", "periodic:1h", "oracle", "oracle-budget:4", "ios-minimum",
                "ios-minimum:price=0.1", "silent-push", "tailender:1h", "imp"],
    "synthetic": ["never", "periodic:1h", "oracle", "ios-minimum", "silent-push", "tailender:1h", "imp"],
}


def devices(run):
    """Mean over replications of devices_pooled.csv's per-device figures."""
    acc = {}
    for r in csv.DictReader(open(run + "/devices_pooled.csv")):
        acc.setdefault((r["dataset"], r["policy"]), []).append(r)

    def mean(rows, c):
        return sum(float(r[c]) for r in rows) / len(rows)

    def num(x, d=2):
        return f"{x:.3g}" if x >= 100 else (f"{x:.{d}f}".rstrip("0").rstrip(".") if x else "0")

    print("| dataset | policy | J/day per device | % battery/day | cellular MB/day | mean wait, s | p90 wait, s |")
    print("|---|---|---|---|---|---|---|")
    for d, ps in DEVICE_POLICIES.items():
        for p in ps:
            rows = acc.get((d, p))
            if not rows:
                continue
            e = mean(rows, "energy_j_per_day")
            print(f"| {NAMES[d]} | {p} | {round(e) if e >= 100 else num(e, 1)} | {num(mean(rows, 'battery_pct_per_day'))} | "
                  f"{num(mean(rows, 'cellular_bytes_per_day') * 1e-6, 1)} | {num(mean(rows, 'mean_wait_s'))} | {num(mean(rows, 'p90_wait_s'))} |")


if __name__ == "__main__":
    run = sys.argv[1] if len(sys.argv) > 1 else "results/default"
    devices(run) if "--devices" in sys.argv else main(run)
