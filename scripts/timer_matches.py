#!/usr/bin/env python3
"""Which timer settings a learning setting matches, from a run of the
default benchmark (or any run with timers and learning policies):

    fetchlab run experiments/default.json --out results/default
    python3 scripts/timer_matches.py results/default [path/to/fetchlab]

A timer setting (periodic, tailender, android-workmanager, imp) is
*matched* when some learning setting (planner, ios-minimum, ios-custom,
android-standby, android-prefetch, bg-app-refresh) spends no more energy
per app-day (on the run's energy basis, `energy_basis` in manifest.json:
battery energy by default, total energy for runs made with `--energy total`)
and is at least as fresh and as young (mean age), pooled over
users and averaged over replications. For each match the table gives the
cheapest such setting and the paired per-user differences learner - timer
(`fetchlab compare`, 95 % bootstrap CIs): "better" when the CI is on the
learner's side, "tie" when it contains 0. A timer no learning setting
matches is listed with the setting that comes closest: the one at or below
its energy with the smallest shortfall in fresh share plus age (each as a
share of the timer's value).
"""
import collections, json, os, sys
from run_means import TIMERS, family, paired, pooled_means, timer_match

run = sys.argv[1]
with open(os.path.join(run, "manifest.json"), encoding="utf-8") as f:
    E = "energy_j_per_day" if json.load(f).get("energy_basis") == "total" else "battery_energy_j_per_day"
fetchlab = sys.argv[2] if len(sys.argv) > 2 else "fetchlab"

mean = pooled_means(run, ("energy_j_per_day", "battery_energy_j_per_day", "fresh_ratio", "mean_age_s"))
datasets = sorted({d for d, _ in mean})


def cell(r, fmt):
    lo, hi, better = float(r["mean_diff_lo"]), float(r["mean_diff_hi"]), r["better"]
    side = "better" if (lo > 0 if better == "higher" else hi < 0) else "worse" if (hi < 0 if better == "higher" else lo > 0) else "tie"
    return f"{fmt.format(float(r['mean_diff']))} [{fmt.format(lo)}, {fmt.format(hi)}] {side}"


timers = sorted({q for _, q in mean if family(q) in TIMERS})
print("| dataset | timer | J/day | fresh | mean age, s | matched by | J/day | fresh: learner - timer [95 % CI] | mean age, s: learner - timer [95 % CI] |")
print("|---|---|---|---|---|---|---|---|---|")
count = collections.Counter()
for q in timers:
    diffs = paired(run, fetchlab, q)
    for ds in datasets:
        if (ds, q) not in mean:
            continue
        t = mean[(ds, q)]
        match, closest = timer_match(mean, ds, q, E)
        count[(ds, match is not None)] += 1
        head = f"| {ds} | `{q}` | {t[E]:.1f} | {t['fresh_ratio']:.3f} | {t['mean_age_s']:.0f} |"
        p = match or closest
        if p is None:
            print(head + " none (no learning setting this cheap) | | | |")
            continue
        label = f"`{p}`" if match else f"none (closest `{p}`)"
        print(head + f" {label} | {mean[(ds, p)][E]:.1f} | "
              + cell(diffs[(ds, p, "fresh_ratio")], "{:+.3f}") + " | " + cell(diffs[(ds, p, "mean_age_s")], "{:+.0f}") + " |")
print()
for ds in datasets:
    n = count[(ds, True)] + count[(ds, False)]
    print(f"{ds}: {count[(ds, True)]} of {n} timer settings matched by a learning setting")
