# Load the run's files and define the tables, charts and interpretation.
import json
import math
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import SVG, display

RUN = Path(RUN_DIR)
BUDGETS_J_PER_DAY = [10, 100]  # budgets of the "freshest under a budget" statements
FAMILY_COLORS = {}  # each policy family's colour in FetchLab's SVG charts (Okabe-Ito)


def color_of(name, i):
    """The colour of a policy or family (the text before ':') in FetchLab's charts; else matplotlib's cycle."""
    return FAMILY_COLORS.get(name.split(":")[0], f"C{i % 10}")


def read_csv(name, required=True):
    """A run file as a DataFrame (None if optional and absent); dataset is "" in single runs."""
    path = RUN / name
    if not path.exists():
        if required:
            raise FileNotFoundError(f"{path} not found: does RUN_DIR point at a run directory?")
        return None
    text = {"dataset": str, "policy": str, "family": str, "user": str, "app": str}
    exact = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}  # pandas 3: exact by default
    df = pd.read_csv(path, dtype=text, **exact)
    if "dataset" not in df.columns:
        df.insert(0, "dataset", "")
    df["dataset"] = df["dataset"].fillna("")
    if TRACE_DATASET is not None:  # a --trace run's scored files name its one dataset; its other files do not
        df.loc[df["dataset"] == TRACE_DATASET, "dataset"] = ""
    return df


manifest = json.loads((RUN / "manifest.json").read_text(encoding="utf-8"))
_trace = manifest.get("trace")
TRACE_DATASET = (Path(_trace["path"]).stem or "trace") if isinstance(_trace, dict) and "path" in _trace else None
policies = read_csv("policies.csv")
pareto = read_csv("pareto.csv")
pooled = read_csv("pooled.csv", required=False)
summary = read_csv("summary.csv", required=False)
opens = read_csv("opens.csv", required=False)
fetches = read_csv("fetches.csv", required=False)
if "family" not in policies.columns:
    policies["family"] = pd.NA
policies["family"] = policies["family"].fillna(policies["policy"].str.split(":").str[0])


def fmt(x):
    """3 significant digits (integers of 4+ digits in full), as FetchLab writes them."""
    if x is None or not math.isfinite(x):
        return "–"
    if x == 0:
        return "0"
    d = min(max(0, 2 - math.floor(math.log10(abs(x)))), 9)
    p = 10.0**d
    r = abs(x * p)
    f = math.floor(r)
    r = (f + 1 if r - f >= 0.5 else f) * (1 if x > 0 else -1) / p
    return str(int(r)) if r == int(r) else repr(r)


def ci(row, metric, scale=1.0):
    lo, hi = row[metric + "_lo"], row[metric + "_hi"]
    return f" [{fmt(lo * scale)}, {fmt(hi * scale)}]" if pd.notna(lo) and pd.notna(hi) else ""


def policy_table(dataset):
    """Mean [95% CI] per policy of one dataset, from policies.csv (and pooled.csv)."""
    rows = policies[policies.dataset == dataset]
    out = pd.DataFrame({"users": rows["users"].to_numpy()}, index=pd.Index(rows["policy"], name="policy"))
    columns = [
        ("J/day [95% CI]", "energy_j_per_day", 1.0),
        ("cellular MB/day [95% CI]", "cellular_bytes_per_day", 1e-6),
        ("mean age (s) [95% CI]", "mean_age_s", 1.0),
        ("fresh (%) [95% CI]", "fresh_ratio", 100.0),
    ]
    for title, metric, scale in columns:
        out[title] = [fmt(r[metric] * scale) + ci(r, metric, scale) for _, r in rows.iterrows()]
    if pooled is not None:
        p90 = pooled[pooled.dataset == dataset].groupby("policy", sort=False)["p90_age_s"].mean()
        out["p90 age, pooled (s)"] = [fmt(p90.get(p, math.nan)) for p in rows["policy"]]
    return out


def per_user_table(dataset):
    """Median [p25, p75] over users of each user's mean age and J/day, from summary.csv."""
    s = summary[summary.dataset == dataset]
    u = s.groupby(["policy", "user"], sort=False)[["mean_age_s", "energy_j_per_day"]].mean()
    rows = {}
    for policy in s["policy"].unique():
        g = u.loc[policy]
        q = lambda v: f"{fmt(v.median())} [{fmt(v.quantile(0.25))}, {fmt(v.quantile(0.75))}]"
        rows[policy] = [g["mean_age_s"].count(), q(g["mean_age_s"].dropna()), q(g["energy_j_per_day"].dropna())]
    columns = ["users", "mean age (s) median [p25, p75]", "J/day median [p25, p75]"]
    return pd.DataFrame.from_dict(rows, orient="index", columns=columns).rename_axis("policy")


def zero_floor(values):
    """A symlog threshold: the decade below the smallest positive value (log axes cannot show 0)."""
    v = values[values > 0]
    return 10.0 ** math.floor(math.log10(v.min())) if len(v) else 1.0


def plot_staleness_energy(dataset):
    """Mean age at open against J/day with 95% CI whiskers and the Pareto frontier."""
    rows = policies[policies.dataset == dataset].dropna(subset=["energy_j_per_day", "mean_age_s"])
    fig, ax = plt.subplots(figsize=(10, 6.5))
    for i, (family, g) in enumerate(rows.groupby("family", sort=False)):
        g = g.sort_values(["energy_j_per_day", "policy"])
        x, y = g["energy_j_per_day"], g["mean_age_s"]
        xerr = [(x - g["energy_j_per_day_lo"].fillna(x)).clip(lower=0), (g["energy_j_per_day_hi"].fillna(x) - x).clip(lower=0)]
        yerr = [(y - g["mean_age_s_lo"].fillna(y)).clip(lower=0), (g["mean_age_s_hi"].fillna(y) - y).clip(lower=0)]
        name = g["policy"].iloc[0] if len(g) == 1 else f"{family} ({len(g)})"
        ax.errorbar(x, y, xerr=xerr, yerr=yerr, fmt="o-" if len(g) > 1 else "o", ms=4, lw=1, capsize=2,
                    color=color_of(family, i), label=name)
    f = pareto[(pareto.dataset == dataset) & (pareto.staleness_metric == "mean_age_s")
               & (pareto.cost_metric == "energy_j_per_day") & (pareto.on_frontier == 1)]
    f = f.dropna(subset=["cost", "staleness"]).sort_values(["cost", "staleness"])
    ax.step(f["cost"], f["staleness"], where="post", color="black", ls="--", lw=1, label="Pareto frontier")
    ax.set_xscale("symlog", linthresh=zero_floor(rows["energy_j_per_day"]))
    ax.set_yscale("symlog", linthresh=zero_floor(rows["mean_age_s"]))
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("background-fetch energy (J/day, symlog scale)")
    ax.set_ylabel("mean age at open (s, symlog scale)")
    ax.set_title("Staleness vs energy" + (f" ({dataset})" if dataset else ""))
    ax.grid(True, which="major", color="#e5e5e5")
    ax.legend(fontsize=7, ncol=2, loc="upper right")
    plt.show()


def plot_age_cdf(dataset):
    """Share of opens with age <= x per policy, from opens.csv."""
    ev = opens[opens.dataset == dataset]
    top = max(float(ev["age_s"].max()), 10.0)
    grid = np.logspace(0, math.ceil(math.log10(top)), 240)
    fig, ax = plt.subplots(figsize=(10, 6))
    for i, (policy, g) in enumerate(ev.groupby("policy", sort=False)):
        a = np.sort(g["age_s"].to_numpy())
        ax.plot(grid, 100 * np.searchsorted(a, grid, side="right") / len(a), color=color_of(policy, i), label=policy)
    ax.set_xscale("log")
    ax.set_ylim(0, 100)
    ax.set_xlabel("age at open (s, log scale)")
    ax.set_ylabel("opens with age ≤ x (%)")
    ax.set_title("Age at open, cumulative" + (f" ({dataset})" if dataset else ""))
    ax.grid(True, color="#e5e5e5")
    ax.legend(fontsize=7)
    plt.show()


def plot_hour_of_day(dataset):
    """Opens and each policy's fetches by UTC hour, as shares of their totals."""
    hours = lambda t: np.minimum(23, (np.mod(t.to_numpy(), 86400) // 3600).astype(int))
    ev = opens[opens.dataset == dataset]
    first = ev["policy"].iloc[0]
    o = np.bincount(hours(ev[ev.policy == first]["time"]), minlength=24)
    fig, ax = plt.subplots(figsize=(10, 5))
    ax.plot(range(24), 100 * o / o.sum(), "k--", label=f"opens ({o.sum()})")
    if fetches is not None:
        fe = fetches[fetches.dataset == dataset]
        for i, (policy, g) in enumerate(fe.groupby("policy", sort=False)):
            c = np.bincount(hours(g["time"]), minlength=24)
            ax.plot(range(24), 100 * c / c.sum(), marker="o", ms=3, color=color_of(policy, i), label="fetches: " + policy)
    ax.set_xticks(range(0, 24, 3))
    ax.set_xlabel("hour of day (UTC)")
    ax.set_ylabel("share of the series' events (%)")
    ax.set_title("Opens and fetches by hour of day" + (f" ({dataset})" if dataset else ""))
    ax.grid(True, color="#e5e5e5")
    ax.legend(fontsize=7)
    plt.show()


def show_chart(file):
    """An SVG chart drawn by `fetchlab report`, from RUN_DIR/plots/."""
    path = RUN / "plots" / file
    if path.exists():
        display(SVG(filename=str(path)))
    else:
        print(f"{path} not found: run `fetchlab report {RUN_DIR}` to draw it")


def interpretation(dataset):
    """The interpretation's statements, computed from policies.csv and pareto.csv."""
    rows = policies[policies.dataset == dataset]
    family = dict(zip(rows["policy"], rows["family"]))
    usable = [r for _, r in rows.iterrows() if pd.notna(r["energy_j_per_day"]) and pd.notna(r["mean_age_s"])]
    real = [r for r in usable if not r["family"].startswith("oracle")]
    e = lambda r: r["energy_j_per_day"]
    a = lambda r: r["mean_age_s"]
    p = lambda s: f"`{s}`"
    point = lambda policy, cost, age: f"{p(policy)} ({fmt(cost)} J/day, {fmt(age)} s)"
    freshest = lambda rs: min(rs, key=lambda r: (a(r), e(r), r["policy"])) if rs else None
    overlap = lambda r, s, m: None if pd.isna(r[m + "_lo"]) or pd.isna(r[m + "_hi"]) or pd.isna(s[m + "_lo"]) or pd.isna(s[m + "_hi"]) else (
        "overlap" if r[m + "_lo"] <= s[m + "_hi"] and s[m + "_lo"] <= r[m + "_hi"] else "do not overlap")
    out = []
    f = pareto[(pareto.dataset == dataset) & (pareto.staleness_metric == "mean_age_s")
               & (pareto.cost_metric == "energy_j_per_day") & (pareto.on_frontier == 1)]
    front = sorted(((c, s, q) for c, s, q in zip(f["cost"], f["staleness"], f["policy"]) if pd.notna(c) and pd.notna(s)))
    if not front:
        out.append("- pareto.csv has no (mean age, J/day) frontier for this dataset.")
    else:
        out.append(f"- Pareto frontier (mean age against J/day): {len(front)} of {len(usable)} configurations: "
                   + ", ".join(point(q, c, s) for c, s, q in front) + ".")
        k = sum(1 for _, _, q in front if family.get(q, q.split(":")[0]).startswith("oracle"))
        if k > 0:
            out.append(f"- {k} of the {len(front)} frontier points are oracle configurations, which know the future opens and "
                       "updates: no real scheduler reaches them.")
    real_front = []
    for r in sorted(real, key=lambda r: (e(r), a(r), r["policy"])):
        if not real_front or a(r) < a(real_front[-1]):
            real_front.append(r)
    if real_front:
        out.append("- Without the oracles, the frontier is: " + ", ".join(point(r["policy"], e(r), a(r)) for r in real_front) + ".")
    for b in BUDGETS_J_PER_DAY:
        q = freshest([r for r in real if e(r) <= b])
        if q is not None:
            out.append(f"- Under {fmt(b)} J/day, the freshest configuration without oracles is {p(q['policy'])}: mean age "
                       f"{fmt(a(q))} s{ci(q, 'mean_age_s')} at {fmt(e(q))} J/day.")
        else:
            out.append(f"- No configuration without oracles spends at most {fmt(b)} J/day.")
    o = next((r for r in usable if r["policy"] == "oracle"), None)
    if o is not None:
        s = f"- The oracle's mean age is {fmt(a(o))} s at {fmt(e(o))} J/day."
        q = freshest([r for r in real if e(r) <= e(o)])
        if q is not None:
            s += f" At that energy or less, the freshest configuration without oracles is {p(q['policy'])} at "
            s += f"{fmt(a(q))} s, {fmt(a(q) - a(o))} s more."
        else:
            s += " No configuration without oracles spends that little."
        q = freshest(real)
        if q is not None:
            s += f" The freshest configuration without oracles, {p(q['policy'])} ({fmt(a(q))} s), spends {fmt(e(q))} J/day"
            s += f", {fmt(e(q) / e(o))}× the oracle's energy." if e(o) > 0 else "."
        out.append(s)
    m = next((r for r in usable if r["policy"] == "ios-minimum"), None)
    t = next((r for r in usable if r["policy"] == "periodic:1h"), None)
    if m is not None and t is not None:
        s = f"- {p('ios-minimum')} against {p('periodic:1h')}: {fmt(e(m))} J/day{ci(m, 'energy_j_per_day')} against "
        s += f"{fmt(e(t))}{ci(t, 'energy_j_per_day')}"
        s += f" ({fmt(e(m) / e(t))}× the energy)" if e(t) > 0 else ""
        s += f"; mean age {fmt(a(m))} s{ci(m, 'mean_age_s')} against {fmt(a(t))} s{ci(t, 'mean_age_s')}; fresh opens "
        s += f"{fmt(m['fresh_ratio'] * 100)} % against {fmt(t['fresh_ratio'] * 100)} %."
        x = overlap(m, t, "energy_j_per_day")
        s += f" The energy CIs {x}." if x else ""
        x = overlap(m, t, "mean_age_s")
        s += f" The mean-age CIs {x}." if x else ""
        out.append(s)
    if t is not None:
        c = [r for r in real if a(r) <= a(t) and pd.notna(r["cellular_bytes_per_day"])]
        if c:
            q = min(c, key=lambda r: (r["cellular_bytes_per_day"], a(r), r["policy"]))
            mb = fmt(t["cellular_bytes_per_day"] * 1e-6)
            if q["policy"] == t["policy"]:
                out.append(f"- No configuration without oracles that is at least as fresh as {p('periodic:1h')} (mean age ≤ "
                           f"{fmt(a(t))} s) uses less cellular data than its {mb} MB/day.")
            else:
                out.append(f"- At least as fresh as {p('periodic:1h')} (mean age ≤ {fmt(a(t))} s), the configuration without "
                           f"oracles with the least cellular data is {p(q['policy'])}: {fmt(q['cellular_bytes_per_day'] * 1e-6)} "
                           f"MB/day against {mb}.")
    return out


def interpret(dataset):
    print("\n".join(interpretation(dataset)))
