"""``fetchlab-figures RUN_DIR --out DIR``: the paper figures of a result directory."""
import argparse
import sys
from pathlib import Path

from . import __version__
from .figures import age_cdf, calibration, draw_frontier, fresh_vs_energy, save, timeline
from .load import ResultFormatError, load_run

FIGURES = ["frontier", "fresh", "age-cdf", "calibration", "timeline"]


def skipped_figures(run):
    """The figures ``--figure all`` cannot draw from ``run``'s files, each with the reason."""
    out = []
    if not run.has("opens.csv"):
        why = "no opens.csv (the run used --no-event-files or event_files: false)"
        out += [("age-cdf", why), ("timeline", why)]
    if not (run.has("fit/calibration.csv") or run.has("calibration.csv")):
        out.append(("calibration", "no fit/calibration.csv (write it with fetchlab fit --report RUN_DIR/fit)"))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="fetchlab-figures",
        description="Draws the paper figures of a FetchLab result directory (default: the frontier, "
                    "mean age at open against J/day, one file per dataset).")
    ap.add_argument("run_dir", help="a directory written by `fetchlab run`")
    ap.add_argument("--out", required=True, help="folder for the figures (created)")
    ap.add_argument("--figure", action="append", choices=FIGURES + ["all"],
                    help="a figure to draw (repeatable; default: frontier). 'all': every figure the run's files allow")
    ap.add_argument("--policies", help="comma-separated configurations to draw, in legend order (default: all)")
    ap.add_argument("--width", choices=["single", "double"], default="single",
                    help="single column (3.5 in) or double column (7.2 in); default single")
    ap.add_argument("--format", choices=["pdf", "svg"], default="pdf")
    ap.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    a = ap.parse_args(argv)
    policies = [p.strip() for p in a.policies.split(",") if p.strip()] if a.policies else None
    wanted = a.figure or ["frontier"]
    try:
        run = load_run(a.run_dir)
        out = Path(a.out)
        every = "all" in wanted
        if every:
            wanted = ["frontier", "fresh"] + (["age-cdf", "timeline"] if run.has("opens.csv") else []) + (
                ["calibration"] if run.has("fit/calibration.csv") or run.has("calibration.csv") else [])
            for f, why in skipped_figures(run):
                print(f"fetchlab-figures: {f} not drawn: {why}", file=sys.stderr)
        written = []
        for f in dict.fromkeys(wanted):
            if f == "frontier":
                written += draw_frontier(run, out, policies, a.width, a.format)
                continue
            if f == "calibration":
                written.append(save(calibration(run, width=a.width), out / f"calibration.{a.format}"))
                continue
            draw = {"fresh": fresh_vs_energy, "age-cdf": age_cdf, "timeline": timeline}[f]
            for d in run.datasets:
                name = f + (f"-{d}" if d else "") + f".{a.format}"
                kw = {"dataset": d, "policies": policies}
                written.append(save(draw(run, width=a.width, **kw) if f != "timeline" else draw(run, **kw), out / name))
    except (ResultFormatError, ValueError, OSError) as e:
        print(f"fetchlab-figures: error: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # a file damaged in a way no check above names: still no traceback
        print(f"fetchlab-figures: error: {a.run_dir}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    for p in written:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
