"""What the table scripts (planner_table.py, timer_matches.py,
planner_bound.py) read from a run directory: the pooled figures averaged
over replications, the budgeted oracle's frontier, the gap to it
(oracle_gap.csv), and `fetchlab compare`'s paired differences. Standard library only, so the scripts run without the
Python package.
"""
import collections, csv, os, subprocess

METRICS = ("energy_j_per_day", "fresh_ratio", "mean_age_s")


def pooled_means(run, metrics=METRICS):
    """{(dataset, policy): {metric: mean over the replications}} from RUN/pooled.csv."""
    rows = collections.defaultdict(lambda: collections.defaultdict(list))
    with open(os.path.join(run, "pooled.csv")) as f:
        for r in csv.DictReader(f):
            for m in metrics:
                rows[(r["dataset"], r["policy"])][m].append(float(r[m]))
    return {k: {m: sum(v) / len(v) for m, v in d.items()} for k, d in rows.items()}


def oracle_frontier(means, dataset):
    """The dataset's `oracle-budget:<X>J` runs as sorted (J/day, fresh share) points."""
    return sorted(
        (v["energy_j_per_day"], v["fresh_ratio"]) for (d, p), v in means.items()
        if d == dataset and p.startswith("oracle-budget:") and p.endswith("J"))


def fresh_on_frontier(frontier, energy, never):
    """The budgeted oracle's fresh share at `energy` J/day: linear between
    the frontier's points, with `never`'s fresh share at 0 J; never below a
    cheaper point's, and the best point's beyond the last."""
    pts = [(0.0, never)] + frontier
    best = never
    for (e0, f0), (e1, f1) in zip(pts, pts[1:]):
        if e0 <= energy <= e1 and e1 > e0:
            return max(best, f0 + (f1 - f0) * (energy - e0) / (e1 - e0))
        best = max(best, f1)
    return best


def oracle_gaps(run, axis_suffix="energy_j_per_day"):
    """{(dataset, policy): oracle_gap.csv row} of RUN/oracle_gap.csv on the
    energy axis (the run's energy basis): the gap to the budgeted oracle's
    whole frontier, as `fetchlab run` and `fetchlab score` write it."""
    with open(os.path.join(run, "oracle_gap.csv")) as f:
        return {(r["dataset"], r["policy"]): r for r in csv.DictReader(f) if r["budget_metric"].endswith(axis_suffix)}


def paired(run, fetchlab, baseline, metrics=("fresh_ratio", "mean_age_s")):
    """`fetchlab compare RUN --baseline BASELINE` on `metrics`:
    {(dataset, policy, metric): paired.csv row} (differences policy - baseline)."""
    args = [fetchlab, "compare", run, "--baseline", baseline]
    for m in metrics:
        args += ["--metric", m]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(run, "paired.csv")) as f:
        return {(r["dataset"], r["policy"], r["metric"]): r for r in csv.DictReader(f)}
