"""Figures for papers from FetchLab result directories.

Load a directory written by ``fetchlab run`` (or ``fetchlab run EXPERIMENT.json``)
into typed pandas DataFrames, and draw the paper figures with matplotlib::

    import fetchlab
    run = fetchlab.load_run("results/default")
    run.policies                       # policies.csv, typed, units in .attrs["units"]
    fig = fetchlab.frontier(run, policies=["never", "periodic:1h", "ios-minimum", "oracle"])
    fig.savefig("frontier.pdf")

    fetchlab.draw_frontier("results/default", "figs/")   # figs/frontier-<dataset>.pdf

Every CSV column's unit is in :data:`fetchlab.UNITS`.
"""

__version__ = "0.7.0"

from .load import (
    UNITS,
    ResultFormatError,
    Run,
    load_calibration,
    load_csv,
    load_run,
    load_trace,
    local_hours,
    unit_of,
    user_time_zones,
)
from .figures import (
    WIDTHS_IN,
    age_cdf,
    calibration,
    draw_frontier,
    fresh_vs_energy,
    frontier,
    save,
    timeline,
)
from .style import FAMILY_STYLES, policy_style

__all__ = [
    "__version__", "UNITS", "ResultFormatError", "Run", "load_calibration", "load_csv", "load_run", "load_trace",
    "local_hours", "unit_of", "user_time_zones", "WIDTHS_IN", "age_cdf", "calibration", "draw_frontier",
    "fresh_vs_energy", "frontier", "save", "timeline", "FAMILY_STYLES", "policy_style",
]
