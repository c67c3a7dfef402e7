#!/usr/bin/env python3
"""Fills the figure blocks of README.md and docs/*.md from committed runs.

A block is

    <!-- figures:begin NAME -->
    ...generated text...
    <!-- figures:end -->

and NAME is one of RENDERERS below. Each renderer reads the small result
files that scripts/export-notebooks.sh commits (notebooks-export/*-data/)
and writes Markdown. Every figure is one average, said once in each block:
pooled over the dataset's opens and pairs (pooled.csv: Σ over pairs, per
day of the pairs' windows), then the mean over the replications.

    python3 scripts/doc-figures.py           # rewrite the blocks in place
    python3 scripts/doc-figures.py --check   # exit 1 and name each stale block

Standard library only; python/tests/test_doc_figures.py runs --check.
"""

import csv
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_means import TIMERS, family, timer_match  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
EXPORT = REPO / "notebooks-export"
DOCS = ["README.md", "docs/results.md", "docs/planner.md", "docs/background-transfers.md", "docs/background-wakes.md"]
BLOCK = re.compile(r"(<!-- figures:begin ([a-z0-9-]+) -->\n)(.*?)(<!-- figures:end -->)", re.S)
AVERAGE = "pooled over each dataset's opens, then averaged over the replications"
DATASETS = {"ubiqlog": "UbiqLog", "synthetic": "synthetic"}


# ---- reading ----------------------------------------------------------------

def rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def pooled(run):
    """{(dataset, policy): {column: mean over replications}} and the policy order."""
    sums, counts, order = {}, {}, []
    for r in rows(EXPORT / run / "pooled.csv"):
        key = (r["dataset"], r["policy"])
        if key not in sums:
            sums[key], counts[key] = {}, 0
            order.append(key)
        counts[key] += 1
        for k, v in r.items():
            if k in ("dataset", "replication", "policy") or v == "":
                continue
            sums[key][k] = sums[key].get(k, 0.0) + float(v)
    return {k: {c: s / counts[k] for c, s in sums[k].items()} for k in order}, order


def policies_of(order, dataset):
    return [p for d, p in order if d == dataset]


# ---- formatting -------------------------------------------------------------

def num(x, decimals=None):
    """A figure for prose: 3 significant digits below 1,000, whole numbers with separators above."""
    if decimals is None:
        a = abs(x)
        decimals = 0 if a >= 100 else 1 if a >= 10 else 2 if a >= 1 else 3
    s = f"{x:,.{decimals}f}"
    return "0" if s.strip("0.,-") == "" else s


def pct(x):
    return num(100 * x, 1)


def minutes(s):
    return num(s / 60, 1)


NUMERIC = re.compile(r"^[–\d.,]+( %| of \d+)?$")


def table(header, body):
    right = [i > 0 and all(NUMERIC.match(r[i]) for r in body) for i in range(len(header))]
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if r else "---" for r in right) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in body]
    return "\n".join(out) + "\n"


def charged(v):
    e = v["energy_j_per_day"]
    return v["charging_energy_j_per_day"] / e if e > 0 else 0.0


# ---- the default benchmark (notebooks-export/default-data) --------------------

KEY = ["never", "periodic:15m", "periodic:1h", "periodic:4h", "oracle", "ios-minimum", "tailender:1h",
       "android-workmanager:1h", "imp"]


def key_policies(order, dataset):
    have = policies_of(order, dataset)
    planners = [p for p in have if p.split(":")[0] == "planner"]
    return [p for p in KEY if p in have] + planners


def policy_table(data, order, dataset, policies):
    body = []
    for p in policies:
        v = data[(dataset, p)]
        body.append([f"`{p}`", num(v["fetches_per_day"]), num(v["battery_energy_j_per_day"]), num(v["energy_j_per_day"]),
                     pct(v["fresh_ratio"]), minutes(v["mean_age_s"]), minutes(v["p90_age_s"])])
    return table(["policy", "fetches/day", "battery J/day", "total J/day", "fresh opens %", "mean age, min",
                  "p90 age, min"], body)


def manifest(run):
    import json
    return json.loads((EXPORT / run / "manifest.json").read_text(encoding="utf-8"))


def render_default_run(_):
    m = manifest("default-data")
    ds = {d["name"]: d for d in m["datasets"]}
    u, s = ds["ubiqlog"], ds["synthetic"]
    return (f"It replays {u['users']} UbiqLog users ({u['pairs']} (user, app) pairs, {u['opens']:,} scored opens) and "
            f"{s['users']} synthetic users ({s['pairs']} pairs, {s['opens']:,} scored opens) against "
            f"{len(m['policies'])} policy configurations, {len(m['replications'])} times each.\n")


def render_default_key(_):
    data, order = pooled("default-data")
    out = [f"Per app, {AVERAGE} (`notebooks-export/default-data/pooled.csv`); battery J/day leaves out what is "
           "drawn while charging and is what the frontier and the headline rank on.\n"]
    for d, name in DATASETS.items():
        out.append(f"\n{name}:\n\n" + policy_table(data, order, d, key_policies(order, d)))
    return "".join(out)


def every_configuration(run, intro, heading):
    """`intro`, then per dataset under `heading(name)` the table of every configuration of `run`."""
    data, order = pooled(run)
    out = [intro]
    for d, name in DATASETS.items():
        out.append(heading(name) + policy_table(data, order, d, policies_of(order, d)))
    return "".join(out)


def render_default_all(_):
    return every_configuration(
        "default-data", f"Every configuration of the run, per app, {AVERAGE} (`notebooks-export/default-data/pooled.csv`).\n",
        lambda name: f"\n#### {name}\n\n")


def render_default_charger(_):
    data, order = pooled("default-data")
    body = []
    for p in KEY:
        if ("synthetic", p) not in data:
            continue
        v = data[("synthetic", p)]
        body.append([f"`{p}`", num(v["energy_j_per_day"]), pct(charged(v)) + " %", num(v["battery_energy_j_per_day"])])
    return (f"Synthetic users of the default benchmark, per app, {AVERAGE}; `charging_energy_j_per_day` over "
            "`energy_j_per_day` (UbiqLog has no charging rows, so there the two energies are equal):\n\n"
            + table(["policy", "total J/day", "drawn on the charger", "battery J/day"], body))


def dominates(a, b):
    """a is at most b's battery energy and mean age and at least its fresh share, better in one."""
    ge = (a["battery_energy_j_per_day"] <= b["battery_energy_j_per_day"] and a["mean_age_s"] <= b["mean_age_s"]
          and a["fresh_ratio"] >= b["fresh_ratio"])
    gt = (a["battery_energy_j_per_day"] < b["battery_energy_j_per_day"] or a["mean_age_s"] < b["mean_age_s"]
          or a["fresh_ratio"] > b["fresh_ratio"])
    return ge and gt


def render_planner_default(_):
    data, order = pooled("default-data")
    out = [f"The planner's settings in the default benchmark, per app, {AVERAGE}. \"Matches or beats\" counts the "
           "other real configurations it is at least as good as on battery energy, fresh share and mean age at "
           "once, better on one (oracles left out).\n"]
    for d, name in DATASETS.items():
        have = policies_of(order, d)
        planners = [p for p in have if p.split(":")[0] == "planner"]
        others = [p for p in have if p.split(":")[0] not in ("planner", "oracle", "oracle-budget")]
        body = []
        for p in planners:
            v = data[(d, p)]
            beaten = [q for q in others if dominates(v, data[(d, q)])]
            body.append([f"`{p}`", num(v["battery_energy_j_per_day"]), pct(v["fresh_ratio"]), minutes(v["mean_age_s"]),
                         f"{len(beaten)} of {len(others)}"])
        out.append(f"\n{name}:\n\n" + table(
            ["configuration", "battery J/day", "fresh opens %", "mean age, min", "matches or beats"], body))
    return "".join(out)


def render_timer_matches(_):
    data, order = pooled("planner-data")
    out = [f"`experiments/planner.json` (`notebooks-export/planner-data/`): each timer and IMP setting against the "
           "cheapest learning setting that spends no more battery energy and is at least as fresh and as young "
           f"(mean age), per app, {AVERAGE}; where none is, the closest at or below its energy "
           "(`scripts/timer_matches.py` adds the paired per-user differences with 95 % intervals).\n"]
    for d, name in DATASETS.items():
        timers = [p for p in policies_of(order, d) if family(p) in TIMERS]
        body, matched = [], 0
        for q in timers:
            t = data[(d, q)]
            match, closest = timer_match(data, d, q)
            matched += match is not None
            p = match or closest
            row = [f"`{q}`", num(t["battery_energy_j_per_day"]), pct(t["fresh_ratio"]), minutes(t["mean_age_s"])]
            if p is None:
                body.append(row + ["none this cheap", "–", "–", "–"])
                continue
            v = data[(d, p)]
            body.append(row + [f"`{p}`" if match else f"none (closest `{p}`)", num(v["battery_energy_j_per_day"]),
                               pct(v["fresh_ratio"]), minutes(v["mean_age_s"])])
        out.append(f"\n{name}: {matched} of {len(timers)} matched.\n\n" + table(
            ["timer", "battery J/day", "fresh opens %", "mean age, min", "matched by", "battery J/day",
             "fresh opens %", "mean age, min"], body))
    return "".join(out)


def render_oracle_gap(_):
    gaps = [r for r in rows(EXPORT / "planner-data" / "oracle_gap.csv")
            if r["budget_metric"] == "battery_energy_j_per_day" and family(r["policy"]) == "planner"]
    out = ["`experiments/planner.json`'s `oracle_gap.csv`: each planner setting's per-user mean battery J/day and "
           "fresh share, the budgeted oracle's fresh share at that energy (its whole frontier, linear between its "
           "budgets, `never` at 0 J), and the share of the gap from `never` to it that the setting closes.\n"]
    for d, name in DATASETS.items():
        body = [[f"`{r['policy']}`", num(float(r["budget_value"])), pct(float(r["fresh_ratio"])),
                 pct(float(r["budget_oracle_fresh_ratio"])), pct(float(r["fresh_gap_closed"])) + " %"]
                for r in gaps if r["dataset"] == d]
        out.append(f"\n{name}:\n\n" + table(
            ["configuration", "battery J/day", "fresh opens %", "oracle's fresh opens %", "gap closed"], body))
    return "".join(out)


# ---- robustness (notebooks-export/robustness-data) ------------------------------

def render_robustness(_):
    rs = rows(EXPORT / "robustness-data" / "robustness.csv")
    points = sorted({(r["dataset"], r["world_point"]) for r in rs})
    taus = [float(r["kendall_tau"]) for r in rs if r["measure"] == "kendall_tau_energy" and r["kendall_tau"]]
    claims, winner = {}, {}
    for r in rs:
        if r["claim"] and r["measure"] == "best_within_budget":
            claims.setdefault((r["dataset"], r["claim"]), []).append((r["world_point"], r["holds"] == "1"))
            winner[(r["dataset"], r["claim"])] = r["reference_value"]
    beats = [r for r in rs if r["measure"] == "beats_at_equal_energy"]
    broken = sorted({(r["dataset"], r["world_point"]) for r in beats if r["holds"] == "0"})
    out = [f"From `experiments/robustness.json` (`notebooks-export/robustness-data/robustness.csv`: "
           f"{len(points)} (dataset, world) points against each dataset's reference, among them battery against "
           f"total energy): the order of the policies by energy has Kendall τ ≥ {num(min(taus), 2)} at every point; "
           f"{len(broken)} points break at least one \"A beats B at equal energy\" claim.\n\n"]
    body = []
    for (d, c), hs in sorted(claims.items()):
        fails = [p for p, h in hs if not h]
        body.append([DATASETS.get(d, d), c, f"`{winner[(d, c)]}`",
                     "every world" if not fails else ", ".join(f"`{p}`" for p in sorted(fails))])
    out.append(table(["dataset", "claim of the reference", "its policy", "fails in"], body))
    return "".join(out)


# ---- large content (notebooks-export/large-content-data) ------------------------

def render_large_content(_):
    data, order = pooled("large-content-data")
    body = []
    for d, p in order:
        v = data[(d, p)]
        share = v["delivered"] / v["updates"] if v["updates"] > 0 else 0.0
        delay = v.get("mean_delivery_delay_s")
        body.append([f"`{p}`", pct(share), "–" if delay is None else num(delay / 3600, 2),
                     num(v["battery_energy_j_per_day"]), num(v["energy_j_per_day"]), num(v["transfer_energy_j_per_day"]),
                     num(v["cellular_bytes_per_day"] / 1e6, 2), num(v["transfer_wifi_bytes_per_day"] / 1e6, 1),
                     pct(v["fresh_ratio"]), num(v["mean_age_s"] / 3600, 2), num(v["failed"], 0)])
    return (f"`experiments/large-content.json`, {AVERAGE} (`notebooks-export/large-content-data/pooled.csv`; "
            "J/day and MB/day per app):\n\n"
            + table(["policy", "delivered, % of updates", "mean delay, h", "battery J/day", "total J/day",
                     "of which transfers", "cellular MB/day", "transfer WiFi MB/day", "fresh opens, %",
                     "mean age at open, h", "failed fetches"], body))


def render_background_wakes(_):
    return every_configuration(
        "background-wakes-data", f"Per app, {AVERAGE} (`notebooks-export/background-wakes-data/pooled.csv`).\n",
        lambda name: f"\n{name}:\n\n")


BENCH = "docs/bench/bench-users300.csv"


def render_speed(_):
    """The speed section from this version's committed `fetchlab bench` run (300 users)."""
    b = {r["metric"]: float(r["value"]) for r in rows(REPO / BENCH)}
    body = []
    for name, label in [("never", "`never`"), ("periodic_1h", "`periodic:1h`"), ("oracle", "`oracle`"),
                        ("ios_minimum", "`ios-minimum`"), ("imp", "`imp`"), ("planner", "`planner`")]:
        key = f"replay_{name}_policy_user_days_per_core_s"
        if key not in b:
            continue
        vs = b.get(key + "_vs_baseline")
        body.append([label, f"{b[key]:,.0f}", "" if vs is None else f"{vs:.2f}×"])
    out = [f"`fetchlab bench --users 300 --compare docs/bench/bench-0.7.0-users300.csv` on 2 cores (`{BENCH}`): "
           "replay speed per policy in one run, and its ratio to 0.7.0's recorded run on the same population "
           "(single runs of one binary differ by up to 40 % on this noisy machine; compare with interleaved pairs).\n\n",
           table(["policy", "policy-user-days per CPU-s", "against 0.7.0"], body)]
    facts = []
    if "ingest_hashed_mb_per_s" in b:
        facts.append(f"ingestion with the input's SHA-256 at {b['ingest_hashed_mb_per_s']:.0f} MB/s")
    if "speedup_jobs_2" in b:
        facts.append(f"`--jobs 2` {b['speedup_jobs_2']:.2f}× faster than `--jobs 1`")
    if "experiment_wall_s" in b:
        facts.append(f"a default-style experiment in {b['experiment_wall_s']:.1f} s")
    if "external_pipe_slowdown" in b:
        facts.append(f"a Python policy over the pipe {b['external_pipe_slowdown']:.1f}× the time of the same rule in Swift")
    if "peak_rss" in b:
        facts.append(f"peak memory {b['peak_rss']:.0f} MB")
    out.append("\n" + "; ".join(facts) + ".\n")
    return "".join(out)


def render_loss_split(_):
    """The references and the loss split (notebooks-export/model-oracle-data)."""
    data, _ = pooled("model-oracle-data")
    split = {(r["budget_j_per_day"], r["loss"]): r for r in rows(EXPORT / "model-oracle-data" / "loss_split.csv")
             if r["dataset"] == "synthetic" and r["metric"] == "fresh_ratio"}
    fresh = lambda p: data[("synthetic", p)]["fresh_ratio"]
    never = fresh("never")

    def loss(budget, kind):
        r = split.get((budget, kind))
        if r is None:
            return "–"
        d, lo, hi = (float(r[k]) for k in ("reference_minus_policy", "reference_minus_policy_lo", "reference_minus_policy_hi"))
        return f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]"

    body = []
    for budget in sorted({b for b, _ in split}, key=float):
        learning, foresight = split.get((budget, "learning")), split.get((budget, "foresight"))
        planner, model = (learning["policy"], learning["reference"]) if learning else (None, foresight["policy"])
        blind = foresight["reference"] if foresight else None
        share = (fresh(planner) - never) / (fresh(model) - never) if planner and fresh(model) != never else float("nan")
        blind_cell = f"{fresh(blind):.3f} ({num(data[('synthetic', blind)]['battery_energy_j_per_day'])})" if blind else "–"
        body.append([budget, f"{fresh(planner):.3f}" if planner else "–", f"{fresh(model):.3f}", loss(budget, "learning"),
                     f"{share:.2f}" if planner else "–", blind_cell, loss(budget, "foresight")])
    ten = {k: data[("synthetic", f"oracle-budget:10J{k}")] for k in ("", ",know=opens", ",know=none")}
    also = ", ".join(f"`oracle-budget:10J{k}` {v['fresh_ratio']:.3f} fresh at {num(v['battery_energy_j_per_day'])} J/day"
                     for k, v in ten.items())
    return (f"`experiments/model-oracle.json` (synthetic seed 1, 100 users × 28 days, the last 25 % scored, 3 "
            f"replications; `notebooks-export/model-oracle-data/`): fresh shares and battery J/day per app, {AVERAGE}; "
            f"the losses are `loss_split.csv`'s paired per-user differences (reference − policy) with 95 % bootstrap "
            f"intervals; `never` is {never:.3f} fresh.\n\n"
            + table(["budget, J/app-day", "planner fresh", "model oracle fresh", "learning loss [95 % CI]",
                     "planner's share of the model oracle's gain over never", "`know=opens` fresh (J/day)",
                     "foresight loss [95 % CI]"], body)
            + f"\nThe same run: {also}.\n")


RENDERERS = {
    "loss-split": render_loss_split,
    "speed": render_speed,
    "background-wakes": render_background_wakes,
    "default-run": render_default_run,
    "default-key": render_default_key,
    "default-all": render_default_all,
    "default-charger": render_default_charger,
    "planner-default": render_planner_default,
    "timer-matches": render_timer_matches,
    "oracle-gap": render_oracle_gap,
    "robustness": render_robustness,
    "large-content": render_large_content,
}


# ---- the blocks -------------------------------------------------------------------

def render(text):
    """The text with every block re-rendered; raises KeyError on an unknown name."""
    return BLOCK.sub(lambda m: m.group(1) + RENDERERS[m.group(2)](m.group(2)) + m.group(4), text)


def stale():
    """(file, block names) of the docs whose blocks differ from a fresh rendering."""
    out = []
    for name in DOCS:
        text = (REPO / name).read_text(encoding="utf-8")
        fresh = render(text)
        if fresh != text:
            old = {m.group(2): m.group(3) for m in BLOCK.finditer(text)}
            new = {m.group(2): m.group(3) for m in BLOCK.finditer(fresh)}
            out.append((name, sorted(k for k in new if old.get(k) != new[k])))
    return out


def main(argv):
    if argv[1:] == ["--check"]:
        bad = stale()
        for name, blocks in bad:
            print(f"{name}: stale figure blocks: {', '.join(blocks)} (python3 scripts/doc-figures.py rewrites them)")
        return 1 if bad else 0
    if argv[1:]:
        print(__doc__.strip().splitlines()[0] + "\nusage: doc-figures.py [--check]", file=sys.stderr)
        return 64
    for name in DOCS:
        p = REPO / name
        text = p.read_text(encoding="utf-8")
        fresh = render(text)
        if fresh != text:
            p.write_text(fresh, encoding="utf-8")
            print(f"rewrote {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
