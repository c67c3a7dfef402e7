#!/usr/bin/env python3
"""The planner's evaluation table (docs/planner.md) from a run of
experiments/planner.json:

    fetchlab run experiments/planner.json --out results/planner
    python3 scripts/planner_table.py results/planner [path/to/fetchlab]

For each dataset and planner budget, from the run's oracle_gap.csv (per-user
means, energy on the run's basis): its energy, fresh share and mean age; the
budgeted oracle's fresh share at that energy on the oracle's whole frontier
(every oracle-budget:<X>J setting of the run and never); and the share of the
never -> oracle gap in fresh share the planner closes. Then every timer baseline (periodic, tailender, android-workmanager, imp)
against the planner setting with the most energy at or below the timer's:
the paired per-user differences (`fetchlab compare`, 95 % bootstrap CIs);
the planner "wins" a metric when the CI of (timer - planner) excludes 0 in
the planner's favour, "ties" when it includes 0, "loses" otherwise.
"""
import collections, sys
from run_means import oracle_gaps, paired as compare, pooled_means

run = sys.argv[1]
fetchlab = sys.argv[2] if len(sys.argv) > 2 else "fetchlab"
TIMERS = ("periodic", "tailender", "android-workmanager", "imp")

mean = pooled_means(run)
datasets = sorted({d for d, _ in mean})
planners = sorted({p for _, p in mean if p.startswith("planner")}, key=lambda p: mean[(datasets[0], p)]["energy_j_per_day"])

paired = {}
for p in planners:
    for (ds, q, m), r in compare(run, fetchlab, p).items():
        paired[(ds, p, q, m)] = r

def verdict(r):
    lo, hi = float(r["mean_diff_lo"]), float(r["mean_diff_hi"])
    # diff = timer - planner; the planner is better when the timer is staler / less fresh.
    good = lo > 0 if r["better"] == "lower" else hi < 0
    bad = hi < 0 if r["better"] == "lower" else lo > 0
    return "win" if good else "loss" if bad else "tie"

gaps = oracle_gaps(run)


def num(cell, fmt):
    return fmt.format(float(cell)) if cell else "-"


print("Against the budgeted oracle's whole frontier (oracle_gap.csv: per-user means, energy on the run's basis).")
print()
print("| dataset | planner | J/day | fresh | mean age, s | oracle fresh at this energy | gap closed |")
print("|---|---|---|---|---|---|---|")
for ds in datasets:
    for p in planners:
        g = gaps[(ds, p)]
        closed = f"{100 * float(g['fresh_gap_closed']):.0f} %" if g["fresh_gap_closed"] else "-"
        print(f"| {ds} | `{p}` | {num(g['budget_value'], '{:.1f}')} | {num(g['fresh_ratio'], '{:.3f}')} | "
              f"{num(g['mean_age_s'], '{:.0f}')} | {num(g['budget_oracle_fresh_ratio'], '{:.3f}')} | {closed} |")
print()
print("The other tables: pooled over opens, mean of the replications, energy_j_per_day.")
print()
print("Each timer against the planner setting with the most energy at or below the timer's "
      "(pooled J/day; none: the planner has no setting that cheap). Paired per-user differences "
      "timer - planner with 95 % bootstrap CIs; the planner wins when the CI is on its side, loses when "
      "on the other, ties otherwise.")
print()
print("| dataset | timer | J/day | planner | J/day | fresh share: timer - planner [95 % CI] | | mean age, s: timer - planner [95 % CI] | |")
print("|---|---|---|---|---|---|---|---|---|")
score = collections.Counter()
for ds in datasets:
    for (d, q), v in sorted(mean.items(), key=lambda kv: kv[1]["energy_j_per_day"]):
        if d != ds or not q.startswith(TIMERS):
            continue
        cands = [p for p in planners if mean[(ds, p)]["energy_j_per_day"] <= v["energy_j_per_day"]]
        if not cands:
            print(f"| {ds} | `{q}` | {v['energy_j_per_day']:.1f} | none | | | | | |")
            continue
        p = max(cands, key=lambda p: mean[(ds, p)]["energy_j_per_day"])
        cells = []
        for metric in ("fresh_ratio", "mean_age_s"):
            r = paired[(ds, p, q, metric)]
            fmt = "{:+.3f}" if metric == "fresh_ratio" else "{:+.0f}"
            ci = f"{fmt.format(float(r['mean_diff']))} [{fmt.format(float(r['mean_diff_lo']))}, {fmt.format(float(r['mean_diff_hi']))}]"
            vd = verdict(r)
            score[(ds, metric, vd)] += 1
            cells += [ci, vd]
        print(f"| {ds} | `{q}` | {v['energy_j_per_day']:.1f} | `{p}` | {mean[(ds, p)]['energy_j_per_day']:.1f} | " + " | ".join(cells) + " |")
print()
for ds in datasets:
    for metric in ("fresh_ratio", "mean_age_s"):
        print(f"{ds} {metric}: planner wins {score[(ds, metric, 'win')]}, ties {score[(ds, metric, 'tie')]}, loses {score[(ds, metric, 'loss')]}")
print()
print("Per budget level, the dominance test: every timer setting at equal or lower energy than the planner's, "
      "paired per user; the level passes when no such timer is fresher (fresh share) or younger (mean age) "
      "with a CI excluding 0.")
print()
print("| dataset | planner | J/day | timers at <= its energy | fresh share: wins / ties / losses | mean age: wins / ties / losses | passes | loses to |")
print("|---|---|---|---|---|---|---|---|")
for ds in datasets:
    for p in planners:
        e = mean[(ds, p)]["energy_j_per_day"]
        qs = [q for (d, q) in mean if d == ds and q.startswith(TIMERS) and mean[(d, q)]["energy_j_per_day"] <= e]
        cnt = {m: collections.Counter(verdict(paired[(ds, p, q, m)]) for q in qs) for m in ("fresh_ratio", "mean_age_s")}
        ok = all(cnt[m]["loss"] == 0 for m in cnt)
        cells = [f"{cnt[m]['win']} / {cnt[m]['tie']} / {cnt[m]['loss']}" for m in ("fresh_ratio", "mean_age_s")]
        lost = [f"`{q}` ({'fresh' if m == 'fresh_ratio' else 'age'})" for q in sorted(qs) for m in ("fresh_ratio", "mean_age_s")
                if verdict(paired[(ds, p, q, m)]) == "loss"]
        print(f"| {ds} | `{p}` | {e:.1f} | {len(qs)} | " + " | ".join(cells) + f" | {('no timer' if not qs else 'yes') if ok else 'no'} | {', '.join(lost)} |")
print()
print("Reference points (pooled, mean of replications):")
print()
print("| dataset | policy | J/day | fresh | mean age, s |")
print("|---|---|---|---|---|")
for ds in datasets:
    for (d, q), v in sorted(mean.items(), key=lambda kv: kv[1]["energy_j_per_day"]):
        if d == ds and not q.startswith("planner"):
            print(f"| {ds} | `{q}` | {v['energy_j_per_day']:.1f} | {v['fresh_ratio']:.3f} | {v['mean_age_s']:.0f} |")
