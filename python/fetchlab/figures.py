"""The paper figures, drawn with matplotlib at print sizes.

Each function takes a :class:`~fetchlab.Run` (or a result directory path),
draws one dataset (the run's first when ``dataset`` is None) for the chosen
configurations (``policies=[...]``, in that order; all when None) and
returns a :class:`matplotlib.figure.Figure` of ``width`` ``"single"``
(3.5 in) or ``"double"`` (7.2 in), 8 pt text. Write it with :func:`save`
(PDF or SVG by the suffix, fonts embedded, no timestamps).
"""
import math
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .load import ResultFormatError, load_calibration, load_run, local_hours
from .style import (MIN_COLOUR_DIFFERENCE, PAPER_RC, REFERENCE_FAMILIES, SERIES_LIMIT, colour_difference, family_of,
                    family_style, policy_style)

#: Figure widths, inches: one column and the full page of a two-column paper.
WIDTHS_IN = {"single": 3.5, "double": 7.2}
_PREDICTOR_COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"]
_PREDICTOR_MARKERS = ["o", "s", "^", "D", "v", "P", "X"]
_SUBSET_LINESTYLES = {"all": "-", "outside_gaps": (0, (4, 2))}
_SUBSET_LABELS = {"all": "all windows", "outside_gaps": "outside recording gaps"}


def _width(width):
    if isinstance(width, str):
        if width not in WIDTHS_IN:
            raise ValueError(f"width: expected 'single', 'double' or inches, found {width!r}")
        return WIDTHS_IN[width]
    return float(width)


def _figure(width, height):
    with matplotlib.rc_context(PAPER_RC):
        fig = Figure(figsize=(_width(width), height), layout="constrained")
        ax = fig.add_subplot()
        ax.grid(True, which="major")
        ax.set_axisbelow(True)
    return fig, ax


def _rows(run, dataset, policies):
    """policies.csv rows of one dataset: all, or ``policies`` in that order (unknown names refused)."""
    d = run.dataset(dataset)
    rows = run.policies[run.policies["dataset"] == d]
    if policies is None:
        return d, rows
    known = list(rows["policy"])
    unknown = [p for p in policies if p not in known]
    if unknown:
        raise ValueError(f"{run.path}: no policy {', '.join(map(repr, unknown))} in dataset {d!r} "
                         f"(policies: {', '.join(known)})")
    return d, rows.set_index("policy").loc[list(policies)].reset_index()


def energy_column(run):
    """The energy column a run ranks on: ``battery_energy_j_per_day`` unless its manifest says
    ``energy_basis: total`` (or its policies.csv, from a version without battery energy, has no such column)."""
    basis = run.manifest.get("energy_basis", "battery") if isinstance(run.manifest, dict) else "battery"
    if basis == "total" or "battery_energy_j_per_day" not in run.policies.columns:
        return "energy_j_per_day"
    return "battery_energy_j_per_day"


def default_policies(run, dataset=None, metric="mean_age_s", limit=SERIES_LIMIT):
    """The configurations a trade-off figure draws when none are given, as FetchLab's report chooses them.

    At most ``limit`` families: the references (``never`` and the oracles),
    then the real families nearest the frontier of the real policies (the
    best ``metric`` at each energy or less), leaving out a family whose
    colour is within a CIEDE2000 difference of 20 of a family already
    chosen (the references included: every two families drawn differ by at
    least that);
    of each family its settings no other setting of the family beats on
    both energy and ``metric``. In run order.
    """
    run = load_run(run)
    E = energy_column(run)
    d = run.dataset(dataset)
    rows = run.policies[run.policies["dataset"] == d].dropna(subset=[E, metric])
    higher = metric == "fresh_ratio"
    better = (lambda a, b: a > b) if higher else (lambda a, b: a < b)
    front = []
    real = rows[~rows["family"].isin(REFERENCE_FAMILIES) | (rows["family"] == "never")]
    for _, r in real.sort_values(E, kind="stable").iterrows():
        if not front or better(r[metric], front[-1][1]):
            front.append((r[E], r[metric]))

    def distance(r):
        f = [s for c, s in front if c <= r[E]]
        if not f:
            return 0.0
        if higher:
            return max(0.0, f[-1] - r[metric])
        return max(0.0, math.log10(max(r[metric], 1e-9) / max(f[-1], 1e-9)))

    families = list(dict.fromkeys(rows["family"]))
    refs = [f for f in families if f in REFERENCE_FAMILIES]
    others = [f for f in families if f not in REFERENCE_FAMILIES]
    score = {f: min(distance(r) for _, r in rows[rows["family"] == f].iterrows()) for f in others}
    chosen = refs[:limit]
    for f in sorted(others, key=lambda f: (score[f], others.index(f))):
        if len(chosen) >= limit:
            break
        if any(colour_difference(family_style(c)[0], family_style(f)[0]) < MIN_COLOUR_DIFFERENCE
               for c in chosen):
            continue
        chosen.append(f)
    keep = set()
    for f in chosen:
        best = None
        for _, r in rows[rows["family"] == f].sort_values([E, "policy"]).iterrows():
            if best is None or better(r[metric], best):
                keep.add(r["policy"])
                best = r[metric]
    return [p for p in rows["policy"] if p in keep]


def _zero_floor(values):
    """A symlog threshold: the decade below the smallest positive value (a log axis cannot show 0)."""
    v = values[values > 0]
    return 10.0 ** math.floor(math.log10(v.min())) if len(v) else 1.0


def _edge(colour):
    """A marker's edge: its colour, or dark grey for light colours (yellow on white)."""
    r, g, b = (int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    return "#555555" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.7 else colour


def pareto_front(cost, staleness):
    """Indices of the points no other point beats: cheaper-or-equal and fresher-or-equal, one strictly."""
    c, s = np.asarray(cost, float), np.asarray(staleness, float)
    out = []
    for i in range(len(c)):
        dominated = ((c <= c[i]) & (s <= s[i]) & ((c < c[i]) | (s < s[i]))).any()
        if not dominated:
            out.append(i)
    return out


def _legend(fig, handles, ncol):
    """The legend below the axes, outside them, in ``ncol`` compact columns."""
    with matplotlib.rc_context(PAPER_RC):
        fig.legend(handles=handles, loc="outside lower center", ncol=ncol, columnspacing=0.8, handletextpad=0.3,
                   handlelength=1.6, borderaxespad=0.2)


def _ncol(width, labels=()):
    """Legend columns: at most 3 in one column of a paper, 5 across the page, fewer when long labels would not fit.

    A label's width is estimated at 0.6 em a character of the 7 pt legend
    text (DejaVu Sans averages about 0.55 em), plus its handle; matplotlib
    fills the columns top to bottom.
    """
    w = _width(width)
    most = 3 if w < 5 else 5
    labels = list(labels)
    em = PAPER_RC["legend.fontsize"] / 72
    for n in range(most, 1, -1):
        rows = math.ceil(len(labels) / n) if labels else 1
        cols = [labels[i * rows:(i + 1) * rows] for i in range(n)]
        need = sum((1.6 + 0.3 + 0.6 * max(len(s) for s in c)) * em for c in cols if c) + 0.8 * em * (n - 1)
        if need <= 0.95 * w:
            return n
    return 1


#: duration ticks of a log age axis, s
_DURATION_TICKS = [0.1, 1, 10, 60, 600, 3600, 36000, 864000, 8640000]


def duration_label(s):
    """A duration tick: ``0``, ``10 s``, ``1 min``, ``10 min``, ``1 h``, ``10 h``, ``10 days``."""
    if s == 0:
        return "0"
    for scale, unit in ((86400, "days"), (3600, "h"), (60, "min"), (1, "s")):
        if abs(s) >= scale or scale == 1:
            v = s / scale
            return (f"{v:.0f}" if v == round(v) else f"{v:g}") + " " + (unit if not (unit == "days" and v == 1) else "day")
    return f"{s:g} s"


def _duration_axis(axis, lo, hi, zero=False):
    """Ticks an age axis (s) at 1 s, 10 s, 1 min, 10 min, 1 h, 10 h, ... between ``lo`` and ``hi``."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator
    ticks = ([0.0] if zero else []) + [t for t in _DURATION_TICKS if lo <= t <= hi]
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_major_formatter(FuncFormatter(lambda v, _: duration_label(v)))
    axis.set_minor_locator(NullLocator())


def _tradeoff(run, metric, scale, dataset, policies, width, height, annotate, frontier_line):
    run = load_run(run)
    E = energy_column(run)
    all_rows = _rows(run, dataset, None)[1].dropna(subset=[E, metric]).reset_index(drop=True)
    d, rows = _rows(run, dataset, policies if policies is not None else default_policies(run, dataset, metric))
    rows = rows.dropna(subset=[E, metric]).reset_index(drop=True)
    order = list(rows["policy"])
    families = list(dict.fromkeys(rows["family"]))
    labels = [f"{f} ({n})" if n > 1 else rows.loc[rows["family"] == f, "policy"].iloc[0]
              for f, n in ((f, int((rows["family"] == f).sum())) for f in families)]
    ncol = _ncol(width, labels + (["Pareto frontier"] if frontier_line else []))
    entries = len(families) + (1 if frontier_line else 0)
    annotate = annotate and len(rows) <= 12
    if height is None:
        height = _width(width) * (0.62 if _width(width) < 5 else 0.36) + 0.17 * math.ceil(entries / ncol) + 0.15
    fig, ax = _figure(width, height)
    handles = []
    with matplotlib.rc_context(PAPER_RC):
        for fam in families:
            g = rows[rows["family"] == fam].sort_values([E, "policy"])
            x, y = g[E].to_numpy(), g[metric].to_numpy() * scale
            xerr = np.vstack([x - g[E + "_lo"].fillna(g[E]).to_numpy(),
                              g[E + "_hi"].fillna(g[E]).to_numpy() - x]).clip(min=0)
            lo = g[metric + "_lo"].fillna(g[metric]).to_numpy() * scale
            hi = g[metric + "_hi"].fillna(g[metric]).to_numpy() * scale
            yerr = np.vstack([y - lo, hi - y]).clip(min=0)
            st = policy_style(g["policy"].iloc[0], order)
            ax.errorbar(x, y, xerr=xerr, yerr=yerr, fmt="none", ecolor=st["color"], elinewidth=0.6, capsize=1.5,
                        capthick=0.6, alpha=0.8, zorder=2)
            if len(g) > 1:
                ax.plot(x, y, color=st["color"], lw=0.8, zorder=2)
            edge = _edge(st["color"])
            ax.plot(x, y, ls="none", marker=st["marker"], ms=4, mfc=st["markerfacecolor"], mec=edge,
                    mew=0.8, zorder=3, clip_on=False)
            label = g["policy"].iloc[0] if len(g) == 1 else f"{fam} ({len(g)})"
            handles.append(Line2D([], [], color=st["color"], marker=st["marker"], mfc=st["markerfacecolor"],
                                  mec=edge, ms=4, lw=0.8 if len(g) > 1 else 0, label=label))
            if annotate and len(g) > 1:
                for p, xi, yi in zip(g["policy"], x, y):
                    ax.annotate(p.split(":", 1)[1] if ":" in p else p, (xi, yi), xytext=(3, 2),
                                textcoords="offset points", fontsize=6, color="#333333", zorder=4)
        if frontier_line:
            # The frontier of every configuration the figure is about: all
            # of the dataset's by default (pareto.csv's), else those asked for.
            every = all_rows if policies is None else rows
            better_lower = 1 if metric != "fresh_ratio" else -1
            front = every.iloc[pareto_front(every[E], better_lower * every[metric])]
            front = front.sort_values([E, metric])
            ax.step(front[E], front[metric] * scale, where="post", color="black", ls=(0, (3, 2)),
                    lw=0.8, zorder=1)
            handles.append(Line2D([], [], color="black", ls=(0, (3, 2)), lw=0.8, label="Pareto frontier"))
        ax.set_xscale("symlog", linthresh=_zero_floor(rows[E]), linscale=0.4)
        ax.set_xlim(left=0)
        ax.set_xlabel(f"background-fetch {'total energy' if E == 'energy_j_per_day' else 'battery energy'} (J per app-day, log scale)")
        _legend(fig, handles, ncol)
    return fig, ax, d


def frontier(run, dataset=None, policies=None, width="single", height=None, annotate=True, frontier_line=True):
    """Mean age at open against background-fetch energy, log axes, 95 % bootstrap CIs over users.

    One colour and marker per policy family; a family's configurations are
    joined in energy order and labelled by their setting (``annotate``, when
    at most 12 configurations are drawn).
    The dashed staircase is the Pareto frontier of the configurations
    drawn. A configuration at 0 (``never`` costs 0 J/day, the oracle's
    content may never be stale) sits on the axis' linear stretch at 0.
    """
    fig, ax, d = _tradeoff(run, "mean_age_s", 1.0, dataset, policies, width, height, annotate, frontier_line)
    rows = _rows(load_run(run), d, None)[1]
    with matplotlib.rc_context(PAPER_RC):
        floor = _zero_floor(rows["mean_age_s"].dropna())
        ax.set_yscale("symlog", linthresh=floor, linscale=0.4)
        top = rows[["mean_age_s", "mean_age_s_hi"]].max().max()
        ax.set_ylim(0, top * 1.5 if top > 0 else 1)  # room above the highest whisker
        _duration_axis(ax.yaxis, floor, top * 1.5 if top > 0 else 1, zero=True)
        ax.set_ylabel("mean age at open (log scale)")
    return fig


def fresh_vs_energy(run, dataset=None, policies=None, width="single", height=None, annotate=True,
                    frontier_line=True):
    """Share of opens showing fresh content (%) against energy (J/day, log scale), 95 % CIs.

    The staircase is the frontier for "more fresh opens for less energy".
    The y axis starts at 0, or below the lowest whisker when all are above 30 %.
    """
    fig, ax, d = _tradeoff(run, "fresh_ratio", 100.0, dataset, policies, width, height, annotate, frontier_line)
    rows = _rows(load_run(run), d, None)[1]
    low = 100 * rows[["fresh_ratio", "fresh_ratio_lo"]].min().min()
    with matplotlib.rc_context(PAPER_RC):
        # from 0 unless every configuration is far above it (then from the 10 % below the lowest whisker)
        ax.set_ylim(0 if not low > 30 else 10 * math.floor((low - 5) / 10), 100)
        ax.set_ylabel("fresh opens (%)")
    return fig


def _events(run, name, dataset, policies):
    run = load_run(run)
    d = run.dataset(dataset)
    if not run.has(name):
        raise ResultFormatError(f"{run.path / name}: file not found (the run kept no event files: "
                                "run without --no-event-files / event_files: false)")
    ev = getattr(run, name.removesuffix(".csv"))
    ev = ev[ev["dataset"] == d]
    if policies is None:
        # the trade-off figures' default configurations, when the events have them
        present = set(ev["policy"])
        order = [p for p in default_policies(run, d) if p in present] or list(dict.fromkeys(ev["policy"]))
    else:
        order = list(policies)
    unknown = [p for p in order if p not in set(ev["policy"])]
    if unknown and name == "opens.csv":
        raise ValueError(f"{run.path / name}: no opens of {', '.join(map(repr, unknown))} in dataset {d!r}")
    return run, d, ev, order


def age_cdf(run, dataset=None, policies=None, width="single", height=None):
    """Share of opens whose content was at most x seconds old, per configuration (from opens.csv).

    Pooled over users, apps and replications; the level at the left edge
    (1 s) is about the share of fresh opens (age 0).
    """
    run, d, ev, order = _events(run, "opens.csv", dataset, policies)
    top = max(float(ev["age_s"].max()), 10.0)
    grid = np.logspace(0, math.ceil(math.log10(top)), 300)
    ncol = _ncol(width, order)
    if height is None:
        height = _width(width) * (0.62 if _width(width) < 5 else 0.36) + 0.17 * math.ceil(len(order) / ncol) + 0.15
    fig, ax = _figure(width, height)
    handles = []
    with matplotlib.rc_context(PAPER_RC):
        for p in order:
            a = np.sort(ev.loc[ev["policy"] == p, "age_s"].to_numpy())
            st = policy_style(p, order)
            share = 100 * np.searchsorted(a, grid, side="right") / len(a)
            line, = ax.plot(grid, share, color=st["color"], ls=st["linestyle"], lw=1.0, marker=st["marker"],
                            markevery=(order.index(p) * 7 % 40, 40), ms=3.5, mfc=st["markerfacecolor"],
                            mec=st["color"], mew=0.7, label=p)
            handles.append(line)
        ax.set_xscale("log")
        ax.set_xlim(1, grid[-1])
        _duration_axis(ax.xaxis, 1, grid[-1])
        ax.set_ylim(0, 100)
        ax.set_xlabel("age at open (log scale)")
        ax.set_ylabel("opens with age ≤ x (%)")
        _legend(fig, handles, ncol)
    return fig


def calibration(source, predictors=None, width="single", height=None):
    """Predicted against observed probability of an open per decile: one line per predictor AND subset.

    ``source``: a :class:`~fetchlab.Run`, a directory holding
    ``fit/calibration.csv`` or ``calibration.csv``, the file, or its
    DataFrame. Colour and marker tell predictors apart, the line style the
    subset (solid, filled: ``all`` windows; dashed, open: ``outside_gaps``); the two
    subsets are never joined into one line. The dotted diagonal is perfect
    calibration.
    """
    if isinstance(source, pd.DataFrame):
        cal = source
    else:
        cal = load_calibration(source.path if hasattr(source, "path") else source)
    names = list(dict.fromkeys(cal["predictor"])) if predictors is None else list(predictors)
    unknown = [p for p in names if p not in set(cal["predictor"])]
    if unknown:
        raise ValueError(f"calibration: no predictor {', '.join(map(repr, unknown))} "
                         f"(predictors: {', '.join(dict.fromkeys(cal['predictor']))})")
    subsets = list(dict.fromkeys(cal["subset"]))
    ncol = 2 if _width(width) < 5 else 4
    entries = len(names) + len(subsets) + 1
    if height is None:
        height = _width(width) * (0.75 if _width(width) < 5 else 0.4) + 0.17 * math.ceil(entries / ncol) + 0.15
    fig, ax = _figure(width, height)
    handles = []
    with matplotlib.rc_context(PAPER_RC):
        for i, p in enumerate(names):
            colour, marker = _PREDICTOR_COLOURS[i % 7], _PREDICTOR_MARKERS[i % 7]
            for s in subsets:
                g = cal[(cal["predictor"] == p) & (cal["subset"] == s)].sort_values("decile")
                g = g.dropna(subset=["mean_predicted", "observed"])
                ax.plot(g["mean_predicted"], g["observed"], color=colour, marker=marker, ms=3.5, lw=1.0,
                        ls=_SUBSET_LINESTYLES.get(s, (0, (1, 1.5))), mfc=colour if s == "all" else "white",
                        mec=colour, mew=0.7, label=f"{p}, {_SUBSET_LABELS.get(s, s)}")
            handles.append(Line2D([], [], color=colour, marker=marker, ms=3.5, lw=1.0, label=p))
        for s in subsets:
            handles.append(Line2D([], [], color="#444444", ls=_SUBSET_LINESTYLES.get(s, (0, (1, 1.5))), lw=1.0,
                                  marker="o", ms=3.5, mfc="#444444" if s == "all" else "white", mec="#444444",
                                  label=_SUBSET_LABELS.get(s, s)))
        top = float(np.nanmax(cal[["mean_predicted", "observed"]].to_numpy())) if len(cal) else 1.0
        top = min(1.0, math.ceil(top * 10 + 0.5) / 10)
        ax.plot([0, top], [0, top], color="#888888", ls=(0, (1, 1.5)), lw=0.8)
        handles.append(Line2D([], [], color="#888888", ls=(0, (1, 1.5)), lw=0.8, label="perfect calibration"))
        ax.set_xlim(0, top)
        ax.set_ylim(0, top)
        ax.set_xlabel("predicted probability of an open")
        ax.set_ylabel("observed share of windows with an open")
        _legend(fig, handles, ncol)
    return fig


def timeline(run, user=None, day=None, dataset=None, policies=None, width="double", height=None):
    """One user-day: the user's opens and each configuration's fetches, by local hour.

    From opens.csv and fetches.csv (the run must keep its event files).
    ``user``: the user (the first in opens.csv when None); ``day``: the
    local date ``"YYYY-MM-DD"`` (the user's day with the most opens when
    None). Hours are the user's local time, from the trace's time zones
    (UTC when the trace is not found, as in FetchLab's report). Fetches:
    filled = new data, open = no new data, x = failed.
    """
    run, d, ev, order = _events(run, "opens.csv", dataset, policies)
    user = str(ev["user"].iloc[0]) if user is None else str(user)
    mine = ev[ev["user"] == user]
    if mine.empty:
        raise ValueError(f"{run.path / 'opens.csv'}: no opens of user {user!r} in dataset {d!r}")
    zones = run.time_zones.get(d, {})
    tz = zones.get(user)

    def local(t):
        stamps = pd.to_datetime(np.asarray(t, float), unit="s", utc=True)
        return stamps.tz_convert(tz) if tz is not None else stamps

    first = mine[mine["policy"] == mine["policy"].iloc[0]]
    days = pd.Series(local(first["time"]).strftime("%Y-%m-%d"))
    day = days.value_counts().sort_index().idxmax() if day is None else day
    fe = run.fetches if run.has("fetches.csv") else None

    def on_day(frame):
        t = local(frame["time"])
        keep = np.asarray(t.strftime("%Y-%m-%d") == day)
        hours = local_hours(frame["time"], frame["user"], {user: tz} if tz else {})
        frac = np.asarray(t.minute + t.second / 60.0) / 60.0
        return frame[keep], (hours + frac)[keep]

    o, oh = on_day(first)
    if height is None:
        height = 0.55 + 0.2 * (len(order) + 1)
    fig, ax = _figure(width, height)
    with matplotlib.rc_context(PAPER_RC):
        ax.grid(False)
        ax.vlines(oh, -0.5, len(order) + 0.5, color="#bbbbbb", lw=0.6, zorder=1)
        ax.plot(oh, np.full(len(oh), len(order)), "|", color="black", ms=7, mew=1.0)
        if fe is not None:
            f = fe[(fe["dataset"] == d) & (fe["user"] == user)]
            for i, p in enumerate(order):
                g, gh = on_day(f[f["policy"] == p])
                y = len(order) - 1 - i
                st = policy_style(p, order)
                for result, kw in (("new_data", {"mfc": st["color"]}), ("no_data", {"mfc": "white"}),
                                   ("failed", {"marker": "x"})):
                    h = gh[np.asarray(g["result"] == result)]
                    ax.plot(h, np.full(len(h), y), ls="none", marker=kw.get("marker", st["marker"]), ms=3.5,
                            color=st["color"], mec=st["color"], mfc=kw.get("mfc", st["color"]), mew=0.7)
        ax.set_yticks(range(len(order) + 1), list(reversed(order)) + ["opens"])
        ax.set_ylim(-0.6, len(order) + 0.6)
        ax.set_xlim(0, 24)
        ax.set_xticks(range(0, 25, 3))
        where = "local time" if tz is not None else "UTC: trace not found"
        ax.set_xlabel(f"hour of day ({where}), user {user}, {day}")
    return fig


def save(fig, path):
    """Writes ``fig`` as PDF or SVG (by the suffix of ``path``), fonts embedded, no timestamps; returns the path."""
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in ("pdf", "svg"):
        raise ValueError(f"{path}: expected a .pdf or .svg file name")
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {"Creator": "fetchlab-figures", "CreationDate": None} if fmt == "pdf" else {"Date": None}
    with matplotlib.rc_context({**PAPER_RC, "svg.hashsalt": "fetchlab"}):
        fig.savefig(path, format=fmt, metadata=meta)
    return path


def draw_frontier(run_dir, out_dir, policies=None, width="single", fmt="pdf"):
    """Draws :func:`frontier` for every dataset of the run into ``out_dir``; returns the files written.

    ``frontier.pdf`` for a single run, ``frontier-<dataset>.pdf`` per
    dataset of an experiment. ``policies``: the configurations to draw
    (those of a dataset that lacks one are refused).
    """
    run = load_run(run_dir)
    out = []
    for d in run.datasets:
        name = "frontier" + (f"-{d}" if d else "") + f".{fmt}"
        out.append(save(frontier(run, d, policies, width), Path(out_dir) / name))
    return out
