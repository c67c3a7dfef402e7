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


TIMERS = ("periodic", "tailender", "android-workmanager", "imp")
LEARNERS = ("planner", "ios-minimum", "ios-custom", "android-standby", "android-prefetch", "bg-app-refresh")


def family(policy):
    return policy.split(":")[0]


def timer_match(means, dataset, timer, energy="battery_energy_j_per_day"):
    """(match, closest) for a timer setting of `dataset` in `means`
    (pooled_means with `energy`, fresh_ratio and mean_age_s): the cheapest
    learning setting that spends at most the timer's `energy` and is at
    least as fresh and as young (None if none is), and, when none is, the
    setting at or below its energy with the smallest shortfall in fresh
    share plus mean age, each as a share of the timer's (None if no
    learning setting is that cheap)."""
    t = means[(dataset, timer)]
    below = [p for (d, p), v in means.items() if d == dataset and family(p) in LEARNERS and v[energy] <= t[energy]]
    match = [p for p in below if means[(dataset, p)]["fresh_ratio"] >= t["fresh_ratio"]
             and means[(dataset, p)]["mean_age_s"] <= t["mean_age_s"]]
    if match:
        return min(match, key=lambda p: means[(dataset, p)][energy]), None

    def shortfall(p):
        m = means[(dataset, p)]
        return (max(0, t["fresh_ratio"] - m["fresh_ratio"]) / t["fresh_ratio"]
                + max(0, m["mean_age_s"] - t["mean_age_s"]) / t["mean_age_s"])
    return None, min(below, key=shortfall) if below else None


def paired(run, fetchlab, baseline, metrics=("fresh_ratio", "mean_age_s")):
    """`fetchlab compare RUN --baseline BASELINE` on `metrics`:
    {(dataset, policy, metric): paired.csv row} (differences policy - baseline)."""
    args = [fetchlab, "compare", run, "--baseline", baseline]
    for m in metrics:
        args += ["--metric", m]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(run, "paired.csv")) as f:
        return {(r["dataset"], r["policy"], r["metric"]): r for r in csv.DictReader(f)}
