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

# The names below load their modules on first use (PEP 562), so that
# `fetchlab.policy`, which a policy process imports, needs neither pandas
# nor matplotlib.
_LAZY = {
    "UNITS": "load", "ResultFormatError": "load", "Run": "load", "load_calibration": "load", "load_csv": "load",
    "load_run": "load", "load_trace": "load", "local_hours": "load", "unit_of": "load", "user_time_zones": "load",
    "WIDTHS_IN": "figures", "age_cdf": "figures", "calibration": "figures", "draw_frontier": "figures",
    "fresh_vs_energy": "figures", "frontier": "figures", "save": "figures", "timeline": "figures",
    "FAMILY_STYLES": "style", "policy_style": "style",
    "FetchLabError": "experiment", "run": "experiment", "sweep": "experiment",
}


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'fetchlab' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module("." + module, __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + list(_LAZY))


__all__ = [
    "__version__", "UNITS", "ResultFormatError", "Run", "load_calibration", "load_csv", "load_run", "load_trace",
    "local_hours", "unit_of", "user_time_zones", "WIDTHS_IN", "age_cdf", "calibration", "draw_frontier",
    "fresh_vs_energy", "frontier", "save", "timeline", "FAMILY_STYLES", "policy_style", "FetchLabError", "run",
    "sweep",
]
