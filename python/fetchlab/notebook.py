"""The analysis of the notebooks `fetchlab report --notebook` writes.

The notebook's first code cells are::

    RUN_DIR = "../results/default"
    from fetchlab.notebook import NotebookRun
    nb = NotebookRun(RUN_DIR)

and the cells after call ``nb.policy_table(dataset)``,
``nb.plot_staleness_energy(dataset)``, ``nb.interpret(dataset)``, ... Each
redoes, from the run's CSVs, a table, chart or interpretation FetchLab
stored in the notebook; ``interpret`` prints the same statements as
FetchLab's (CI checks it).
"""
import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .figures import energy_column
from .load import load_run, local_hours
from .style import family_style

#: Budgets of the "freshest under a budget" statements, J/day (FetchLab's ``Notebook.budgetsJPerDay``).
BUDGETS_J_PER_DAY = [10, 100]
#: users below which the bootstrap CIs of a dataset are too few to read: the
#: rule of `fetchlab compare`'s small-sample warning (a test of the Swift
#: package keeps the two equal)
RELIABLE_USERS = 10


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


def zero_floor(values):
    """A symlog threshold: the decade below the smallest positive value (log axes cannot show 0)."""
    v = values[values > 0]
    return 10.0 ** math.floor(math.log10(v.min())) if len(v) else 1.0



def color_of(name):
    """The colour of a policy or family (the text before ':') in FetchLab's charts."""
    return family_style(name.split(":")[0])[0]


class NotebookRun:
    """A run directory's files for the notebook's tables, charts and interpretation.

    ``policies``, ``pareto`` (required), ``pooled``, ``summary``, ``opens``,
    ``fetches`` (None when absent): typed DataFrames (:func:`fetchlab.load_csv`).
    """

    def __init__(self, run_dir):
        self.run = load_run(run_dir)
        self.manifest = self.run.manifest
        self.policies = self.run.policies
        self.pareto = self.run.pareto
        optional = lambda name: getattr(self.run, name) if self.run.has(name + ".csv") else None
        self.pooled, self.summary = optional("pooled"), optional("summary")
        self.opens, self.fetches = optional("opens"), optional("fetches")
        # The energy the run ranks on (energy_column: the manifest's energy_basis, battery by default).
        self.energy = energy_column(self.run)

    def frontier_rows(self, dataset):
        """pareto.csv's (mean age, J/day) frontier of one dataset."""
        f = self.pareto
        on = f["on_frontier"].fillna(False).astype(bool)
        return f[(f.dataset == dataset) & (f.staleness_metric == "mean_age_s") & (f.cost_metric == self.energy) & on]

    def policy_table(self, dataset):
        """Mean [95% CI] per policy of one dataset, from policies.csv (and pooled.csv)."""
        rows = self.policies[self.policies.dataset == dataset]
        out = pd.DataFrame({"users": rows["users"].to_numpy()}, index=pd.Index(rows["policy"], name="policy"))
        columns = [
            ("J/day [95% CI]", self.energy, 1.0),
            ("cellular MB/day [95% CI]", "cellular_bytes_per_day", 1e-6),
            ("mean age (s) [95% CI]", "mean_age_s", 1.0),
            ("fresh (%) [95% CI]", "fresh_ratio", 100.0),
        ]
        for title, metric, scale in columns:
            out[title] = [fmt(r[metric] * scale) + ci(r, metric, scale) for _, r in rows.iterrows()]
        if self.pooled is not None:
            p90 = self.pooled[self.pooled.dataset == dataset].groupby("policy", sort=False)["p90_age_s"].mean()
            out["p90 age, pooled (s)"] = [fmt(p90.get(p, math.nan)) for p in rows["policy"]]
        return out

    def per_user_table(self, dataset):
        """Median [p25, p75] over users of each user's mean age and J/day, from summary.csv."""
        s = self.summary[self.summary.dataset == dataset]
        u = s.groupby(["policy", "user"], sort=False)[["mean_age_s", self.energy]].mean()
        rows = {}
        for policy in s["policy"].unique():
            g = u.loc[policy]
            q = lambda v: f"{fmt(v.median())} [{fmt(v.quantile(0.25))}, {fmt(v.quantile(0.75))}]"
            rows[policy] = [g["mean_age_s"].count(), q(g["mean_age_s"].dropna()), q(g[self.energy].dropna())]
        columns = ["users", "mean age (s) median [p25, p75]", "J/day median [p25, p75]"]
        return pd.DataFrame.from_dict(rows, orient="index", columns=columns).rename_axis("policy")

    def plot_staleness_energy(self, dataset):
        """Mean age at open against J/day with 95% CI whiskers and the Pareto frontier."""
        rows = self.policies[self.policies.dataset == dataset].dropna(subset=[self.energy, "mean_age_s"])
        fig, ax = plt.subplots(figsize=(10, 6.5))
        for family, g in rows.groupby("family", sort=False):
            g = g.sort_values([self.energy, "policy"])
            x, y = g[self.energy], g["mean_age_s"]
            xerr = [(x - g[self.energy + "_lo"].fillna(x)).clip(lower=0), (g[self.energy + "_hi"].fillna(x) - x).clip(lower=0)]
            yerr = [(y - g["mean_age_s_lo"].fillna(y)).clip(lower=0), (g["mean_age_s_hi"].fillna(y) - y).clip(lower=0)]
            name = g["policy"].iloc[0] if len(g) == 1 else f"{family} ({len(g)})"
            ax.errorbar(x, y, xerr=xerr, yerr=yerr, fmt="o-" if len(g) > 1 else "o", ms=4, lw=1, capsize=2,
                        color=color_of(family), label=name)
        f = self.frontier_rows(dataset)
        f = f.dropna(subset=["cost", "staleness"]).sort_values(["cost", "staleness"])
        ax.step(f["cost"], f["staleness"], where="post", color="black", ls="--", lw=1, label="Pareto frontier")
        ax.set_xscale("symlog", linthresh=zero_floor(rows[self.energy]))
        ax.set_yscale("symlog", linthresh=zero_floor(rows["mean_age_s"]))
        ax.set_xlim(left=0)
        ax.set_ylim(bottom=0)
        ax.set_xlabel("background-fetch energy (J/day, symlog scale)")
        ax.set_ylabel("mean age at open (s, symlog scale)")
        ax.set_title("Staleness vs energy" + (f" ({dataset})" if dataset else ""))
        ax.grid(True, which="major", color="#e5e5e5")
        ax.legend(fontsize=7, ncol=2, loc="upper right")
        plt.show()

    def plot_age_cdf(self, dataset):
        """Share of opens with age <= x per policy, from opens.csv."""
        ev = self.opens[self.opens.dataset == dataset]
        top = max(float(ev["age_s"].max()), 10.0)
        grid = np.logspace(0, math.ceil(math.log10(top)), 240)
        fig, ax = plt.subplots(figsize=(10, 6))
        for policy, g in ev.groupby("policy", sort=False):
            a = np.sort(g["age_s"].to_numpy())
            ax.plot(grid, 100 * np.searchsorted(a, grid, side="right") / len(a), color=color_of(policy), label=policy)
        ax.set_xscale("log")
        ax.set_ylim(0, 100)
        ax.set_xlabel("age at open (s, log scale)")
        ax.set_ylabel("opens with age ≤ x (%)")
        ax.set_title("Age at open, cumulative" + (f" ({dataset})" if dataset else ""))
        ax.grid(True, color="#e5e5e5")
        ax.legend(fontsize=7)
        plt.show()

    def plot_hour_of_day(self, dataset):
        """Opens and each policy's fetches by hour of day, as shares of their totals.

        Hours are each user's local time, from the time zones of the run's
        trace (``begin`` rows), as in FetchLab's report; UTC when the trace
        is not found.
        """
        zones = self.run.time_zones.get(dataset, {})
        hours = lambda g: local_hours(g["time"], g["user"], zones)
        ev = self.opens[self.opens.dataset == dataset]
        first = ev["policy"].iloc[0]
        o = np.bincount(hours(ev[ev.policy == first]), minlength=24)
        fig, ax = plt.subplots(figsize=(10, 5))
        ax.plot(range(24), 100 * o / o.sum(), "k--", label=f"opens ({o.sum()})")
        if self.fetches is not None:
            fe = self.fetches[self.fetches.dataset == dataset]
            for policy, g in fe.groupby("policy", sort=False):
                c = np.bincount(hours(g), minlength=24)
                ax.plot(range(24), 100 * c / c.sum(), marker="o", ms=3, color=color_of(policy), label="fetches: " + policy)
        ax.set_xticks(range(0, 24, 3))
        ax.set_xlabel("hour of day (each user's local time, from the trace's time zones)" if zones
                      else "hour of day (UTC: the trace was not found, so local time zones are not applied)")
        ax.set_ylabel("share of the series' events (%)")
        ax.set_title("Opens and fetches by hour of day" + (f" ({dataset})" if dataset else ""))
        ax.grid(True, color="#e5e5e5")
        ax.legend(fontsize=7)
        plt.show()

    def show_chart(self, file):
        """An SVG chart drawn by `fetchlab report`, from RUN_DIR/plots/."""
        path = self.run.path / "plots" / file
        if path.exists():
            from IPython.display import SVG, display

            display(SVG(filename=str(path)))
        else:
            print(f"{path} not found: run `fetchlab report {self.run.path}` to draw it")

    def interpretation(self, dataset):
        """The interpretation's statements, computed from policies.csv and pareto.csv."""
        rows = self.policies[self.policies.dataset == dataset]
        family = dict(zip(rows["policy"], rows["family"]))
        usable = [r for _, r in rows.iterrows() if pd.notna(r[self.energy]) and pd.notna(r["mean_age_s"])]
        real = [r for r in usable if not r["family"].startswith("oracle")]
        e = lambda r: r[self.energy]
        a = lambda r: r["mean_age_s"]
        p = lambda s: f"`{s}`"
        point = lambda policy, cost, age: f"{p(policy)} ({fmt(cost)} J/day, {fmt(age)} s)"
        freshest = lambda rs: min(rs, key=lambda r: (a(r), e(r), r["policy"])) if rs else None
        overlap = lambda r, s, m: None if pd.isna(r[m + "_lo"]) or pd.isna(r[m + "_hi"]) or pd.isna(s[m + "_lo"]) or pd.isna(s[m + "_hi"]) else (
            "overlap" if r[m + "_lo"] <= s[m + "_hi"] and s[m + "_lo"] <= r[m + "_hi"] else "do not overlap")
        out = []
        f = self.frontier_rows(dataset)
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
            s = f"- {p('ios-minimum')} against {p('periodic:1h')}: {fmt(e(m))} J/day{ci(m, self.energy)} against "
            s += f"{fmt(e(t))}{ci(t, self.energy)}"
            s += f" ({fmt(e(m) / e(t))}× the energy)" if e(t) > 0 else ""
            s += f"; mean age {fmt(a(m))} s{ci(m, 'mean_age_s')} against {fmt(a(t))} s{ci(t, 'mean_age_s')}; fresh opens "
            s += f"{fmt(m['fresh_ratio'] * 100)} % against {fmt(t['fresh_ratio'] * 100)} %."
            x = overlap(m, t, self.energy)
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
        fewest = rows["users"].min() if len(rows) else None
        if fewest is not None and pd.notna(fewest) and int(fewest) < RELIABLE_USERS:
            out.append(f"- Only {int(fewest)} users in this dataset (fewer than {RELIABLE_USERS}): its bootstrap CIs, and "
                       "whether two of them overlap, are unreliable; read the per-user numbers (summary.csv) and the means instead.")
        return out

    def interpret(self, dataset):
        print("\n".join(self.interpretation(dataset)))
