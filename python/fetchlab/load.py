"""Result directories and traces as typed pandas DataFrames.

Every loader names the file, the line and the column of what it refuses:
a missing file or required column, or a number that does not parse.
"""
import csv
import io
import json
import warnings
import re
from datetime import timezone
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from .formats import NUMBER, TraceError, parse_zone, read_trace, zone_problem

_UNIX = "s since 1970-01-01 UTC"
_TEXT = "text"
_COUNT = "count"
_FLAG = "0/1 flag"

#: The unit of every column FetchLab writes (column -> unit). A column
#: ``X_lo`` / ``X_hi`` (bounds of a 95 % CI) has the unit of ``X``. In
#: ``pareto.csv`` ``cost`` and ``staleness`` have the unit of the row's
#: ``cost_metric`` / ``staleness_metric``; in ``paired.csv`` the means and
#: differences have the unit of the row's ``metric``.
UNITS = {
    # identifiers
    "dataset": _TEXT, "policy": _TEXT, "family": _TEXT, "user": _TEXT, "app": _TEXT, "baseline": _TEXT,
    "metric": _TEXT, "better": _TEXT, "staleness_metric": _TEXT, "cost_metric": _TEXT, "result": _TEXT,
    "failure": _TEXT, "network": _TEXT, "predictor": _TEXT, "subset": _TEXT, "event": _TEXT, "value": _TEXT,
    # counts
    "replication": _COUNT, "users": _COUNT, "pairs": _COUNT, "devices": _COUNT, "apps": _COUNT, "opens": _COUNT,
    "fetches": _COUNT, "new_data": _COUNT, "no_data": _COUNT, "failed": _COUNT, "wasted": _COUNT,
    "updates": _COUNT, "delivered": _COUNT, "waits": _COUNT, "foreground_refreshes": _COUNT, "wins": _COUNT,
    "losses": _COUNT, "ties": _COUNT, "decile": _COUNT, "n": _COUNT,
    # flags and shares
    "fresh": _FLAG, "on_frontier": _FLAG,
    "fresh_ratio": "fraction (0-1)", "time_fresh_ratio": "fraction (0-1)",
    "mean_predicted": "probability (0-1)", "observed": "fraction (0-1)", "sign_test_p": "probability (0-1)",
    # times and durations
    "time": _UNIX, "end_time": _UNIX, "days": "day",
    "age_s": "s", "aoi_s": "s", "duration_s": "s", "mean_age_s": "s", "p50_age_s": "s", "p90_age_s": "s",
    "p99_age_s": "s", "mean_aoi_s": "s", "time_avg_age_s": "s", "mean_delivery_delay_s": "s",
    "mean_wait_s": "s", "p90_wait_s": "s", "device_mean_wait_s": "s",
    # energy and data
    "energy_j": "J", "transfer_energy_j": "J", "monitoring_energy_j": "J", "energy_j_per_day": "J/day",
    "battery_energy_j": "J", "battery_energy_j_per_day": "J/day",
    "transfer_energy_j_per_day": "J/day", "monitoring_energy_j_per_day": "J/day",
    "foreground_energy_j_per_day": "J/day", "charging_energy_j_per_day": "J/day", "battery_pct_per_day": "%/day",
    "bytes": "B", "cellular_bytes": "B", "wifi_bytes": "B", "transfer_cellular_bytes": "B",
    "transfer_wifi_bytes": "B", "cellular_bytes_per_day": "B/day", "wifi_bytes_per_day": "B/day",
    "transfer_cellular_bytes_per_day": "B/day", "transfer_wifi_bytes_per_day": "B/day",
    "foreground_bytes_per_day": "B/day",
    "fetches_per_day": "1/day",
    # units given by another column of the row
    "cost": "unit of cost_metric", "staleness": "unit of staleness_metric", "baseline_mean": "unit of metric",
    "policy_mean": "unit of metric", "mean_diff": "unit of metric",
}

#: The columns a loader needs in each file (others are typed when present).
REQUIRED = {
    "policies.csv": ["policy", "users", "energy_j_per_day", "energy_j_per_day_lo", "energy_j_per_day_hi",
                     "mean_age_s", "mean_age_s_lo", "mean_age_s_hi", "fresh_ratio", "fresh_ratio_lo",
                     "fresh_ratio_hi"],
    "pareto.csv": ["staleness_metric", "cost_metric", "policy", "cost", "staleness", "on_frontier"],
    "pooled.csv": ["policy", "p90_age_s"],
    "summary.csv": ["user", "app", "policy", "mean_age_s", "energy_j_per_day"],
    "opens.csv": ["user", "app", "policy", "time", "age_s", "fresh"],
    "fetches.csv": ["user", "app", "policy", "time", "result"],
    "paired.csv": ["baseline", "policy", "metric", "mean_diff", "mean_diff_lo", "mean_diff_hi"],
    "calibration.csv": ["predictor", "subset", "decile", "n", "mean_predicted", "observed"],
    "trace": ["user", "time", "event", "app", "value"],
}


class ResultFormatError(ValueError):
    """A result file that is missing, lacks a column, or holds a value that does not parse."""


def unit_of(column):
    """The unit of a column (see :data:`UNITS`); None for a column FetchLab does not write."""
    if column in UNITS:
        return UNITS[column]
    base = re.sub(r"_(lo|hi)$", "", column)
    return UNITS.get(base)


def _kind(column):
    unit = unit_of(column)
    if unit == _TEXT:
        return "text"
    if unit == _COUNT:
        return "count"
    if unit == _FLAG:
        return "flag"
    return "number"


def _convert(df, path):
    """Types every column by its unit; a value that does not parse names its line (header = line 1).

    Numbers follow FetchLab's one grammar (decimal only: :data:`fetchlab.formats.NUMBER`,
    no ``0x10``, ``inf`` or ``nan``) and must be finite; counts are whole numbers
    below 2^53; flags are 0 or 1.
    """
    first_line = df.attrs.pop("first_line", 2)

    def fail(i, c, what):
        raise ResultFormatError(f"{path}:{i + first_line}: {c}: {what}: {df[c].iloc[i]!r}")

    for c in df.columns:
        kind = _kind(c)
        if kind == "text":
            df[c] = df[c].fillna("").astype(str)
            continue
        cells = df[c]
        bad = np.flatnonzero((cells.notna() & ~cells.fillna("0").str.fullmatch(_NUMBER)).to_numpy())
        if len(bad):
            fail(int(bad[0]), c, "not a number")
        values = cells.astype("float64")
        bad = np.flatnonzero(np.isinf(values.to_numpy()))
        if len(bad):
            fail(int(bad[0]), c, "a number beyond ±1.8e308")
        if kind == "flag":
            bad = np.flatnonzero((values.notna() & ~values.isin([0.0, 1.0])).to_numpy())
            if len(bad):
                fail(int(bad[0]), c, "expected 0 or 1, found")
            df[c] = values.astype("boolean")
        elif kind == "count":
            v = values.to_numpy()
            bad = np.flatnonzero(~np.isnan(v) & ((v != np.floor(v)) | (np.abs(v) > 2.0 ** 53)))
            if len(bad):
                fail(int(bad[0]), c, "expected a whole number below 2^53, found")
            df[c] = values.astype("Int64")
        else:
            df[c] = values
    df.attrs["units"] = {c: unit_of(c) for c in df.columns}
    df.attrs["path"] = str(path)
    return df


_NUMBER = NUMBER.pattern.decode()


def _text(path):
    """The file's text, checked: not empty, UTF-8, ending with a line break (a file cut short does not)."""
    data = path.read_bytes()
    if not data.strip():
        raise ResultFormatError(f"{path}: empty file: no header row (was it written completely?)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ResultFormatError(f"{path}:{line}: not valid UTF-8 (byte 0x{data[e.start]:02X}); "
                                "FetchLab writes UTF-8: was the file edited or damaged?") from None
    if not text.endswith("\n"):
        line = text.count("\n") + 1
        raise ResultFormatError(f"{path}:{line}: the last line has no line end: the file is truncated")
    return text


def _read(path, required, skiprows=0):
    path = Path(path)
    if not path.is_file():
        raise ResultFormatError(f"{path}: file not found")
    text = _text(path)
    records = csv.reader(io.StringIO(text, newline=""))
    width = None
    try:
        for rec in records:
            if records.line_num <= skiprows or not rec:
                continue
            if width is None:
                width = len(rec)
            elif len(rec) != width:
                raise ResultFormatError(f"{path}:{records.line_num}: {len(rec)} fields, but the header has {width} "
                                        "(a damaged or truncated row)")
    except csv.Error as e:
        raise ResultFormatError(f"{path}:{records.line_num}: {e}") from None
    df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, na_values=[""], skiprows=skiprows)
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise ResultFormatError(f"{path}:{skiprows + 1}: missing column(s) {', '.join(missing)} "
                                f"(found: {', '.join(df.columns)})")
    df.attrs["first_line"] = skiprows + 2
    return df


def trace_dataset(manifest):
    """The dataset name of a ``--trace`` run (the trace file's stem, or ``trace``); None for an experiment.

    FetchLab writes it in the ``dataset`` column of the run's scored files
    (``policies.csv``, ``pareto.csv``, ``paired.csv``, ...); :class:`Run`
    reads it as ``""``, the dataset of the run's other files, as FetchLab's
    report does.
    """
    trace = manifest.get("trace") if isinstance(manifest, dict) else None
    if not isinstance(trace, dict) or "path" not in trace:
        return None
    return Path(str(trace["path"])).stem or "trace"


def load_csv(path, required=None, trace_dataset=None):
    """One CSV file of a result directory as a typed DataFrame.

    Text columns are ``str``, counts nullable ``Int64``, flags nullable
    ``boolean``, every other column ``float64`` (empty cells are NaN). Files
    of single runs get a ``dataset`` column of ``""`` so that one-run and
    experiment directories read alike; ``trace_dataset`` (a ``--trace``
    run's name in its scored files) is read as ``""`` too. ``df.attrs["units"]`` maps each
    column to its unit (:data:`UNITS`). ``required`` defaults to
    :data:`REQUIRED` for the file's name.
    """
    path = Path(path)
    need = REQUIRED.get(path.name, []) if required is None else required
    df = _read(path, need)
    if "dataset" not in df.columns and path.name != "calibration.csv":
        df.insert(0, "dataset", "")
    elif trace_dataset is not None and "dataset" in df.columns:
        df.loc[df["dataset"] == trace_dataset, "dataset"] = ""
    return _convert(df, path)


def load_calibration(path):
    """A habit model's calibration table (``fetchlab fit --report DIR``: ``DIR/calibration.csv``).

    ``path`` is the file, or a directory holding ``calibration.csv`` or
    ``fit/calibration.csv``. One row per (predictor, subset, decile):
    ``subset`` is ``all`` (every test window) or ``outside_gaps`` (windows
    outside the user's recording gaps); ``mean_predicted`` is the decile's
    mean predicted probability of an open, ``observed`` the share of its
    windows with one.
    """
    path = Path(path)
    if path.is_dir():
        found = [p for p in (path / "fit" / "calibration.csv", path / "calibration.csv") if p.is_file()]
        if not found:
            raise ResultFormatError(f"{path}: no fit/calibration.csv or calibration.csv "
                                    "(write one with `fetchlab fit --trace T --out M.json --report DIR`)")
        path = found[0]
    return load_csv(path, REQUIRED["calibration.csv"])


def load_trace(path):
    """A FetchLab trace (``user,time,event,app,value``; leading ``#`` comment lines skipped).

    The file is checked as ``fetchlab validate`` checks it (:func:`fetchlab.formats.read_trace`:
    one grammar of numbers, times and zones for both, docs/trace-format.md); what it
    refuses raises :class:`ResultFormatError` naming the file, line and field. ``time``
    becomes Unix seconds (``float64``; ISO 8601 times are converted), the other columns
    stay text (``value`` is a time zone, a session length in s, a network, ... depending
    on ``event``). ``df.attrs["time_zones"]`` maps each user to its zone (a tzinfo).
    """
    path = Path(path)
    if not path.is_file():
        raise ResultFormatError(f"{path}: file not found")
    try:
        rows, zones = read_trace(path)
    except TraceError as e:
        raise ResultFormatError(str(e)) from None
    df = pd.DataFrame(rows, columns=REQUIRED["trace"])
    df["time"] = df["time"].astype("float64")
    df.attrs["units"] = {c: unit_of(c) for c in df.columns}
    df.attrs["path"] = str(path)
    df.attrs["time_zones"] = zones
    return df


def parse_time_zone(text):
    """A trace's ``begin`` value as a tzinfo: ``UTC``, ``+01:00`` / ``-05:30``, or a tz database name.

    The forms of :func:`fetchlab.formats.parse_zone`, and nothing else (``UTC+1``,
    ``GMT+0530`` and ``US/Pacific-New`` are refused, as FetchLab's reader refuses them).
    """
    zone = parse_zone(text)
    if zone is None:
        raise ResultFormatError(f"unknown time zone {text!r} ({zone_problem(text)})")
    return zone


def _trace_candidates(run_dir, entry, dataset):
    """Where a run's trace is now, in the order FetchLab's report looks."""
    out = []
    if entry.get("path_from_run_dir"):
        out.append(run_dir / entry["path_from_run_dir"])
    if entry.get("absolute_path"):
        out.append(Path(entry["absolute_path"]))
    p = entry.get("path")
    if p:
        out.append(Path(p))
        if not Path(p).is_absolute():
            up = run_dir
            for _ in range(6):
                up = up / ".."
                out.append(up / p)
    if dataset:
        out.append(run_dir / "datasets" / f"{dataset}.csv")
    return out


def user_time_zones(run_dir):
    """Each user's time zone per dataset, from the traces the run's manifest names.

    ``{dataset: {user: tzinfo}}`` (dataset ``""`` for a single run); a
    dataset whose trace is not found is left out, and its hours stay UTC,
    with a warning naming the trace.
    """
    run_dir = Path(run_dir)
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    entries = [(i.get("dataset", ""), i) for i in manifest.get("inputs", []) if isinstance(i, dict)]
    if not entries and isinstance(manifest.get("trace"), dict):
        entries = [("", manifest["trace"])]
    zones = {}
    for dataset, entry in entries:
        path = next((c for c in _trace_candidates(run_dir, entry, dataset) if c.is_file()), None)
        if path is None:
            warnings.warn(f"{entry.get('absolute_path') or entry.get('path')}: the trace of "
                          f"{dataset or 'the run'} is not found: its hours of day stay UTC", stacklevel=2)
            continue
        try:
            zones[dataset] = read_trace(path)[1]
        except TraceError as e:
            raise ResultFormatError(str(e)) from None
    return zones


def local_hours(times, users, zones):
    """The hour of day (0-23) of each Unix time in its user's time zone (UTC for users without one).

    ``times``, ``users``: equal-length sequences; ``zones``: ``{user: tzinfo}``.
    """
    t = np.asarray(times, dtype="float64")
    u = np.asarray(users, dtype=object)
    hours = np.minimum(23, (np.mod(t, 86400) // 3600).astype(int))
    for user in pd.unique(u):
        tz = zones.get(user)
        if tz is None or tz is timezone.utc:
            continue
        mask = u == user
        if isinstance(tz, timezone):
            hours[mask] = np.minimum(23, (np.mod(t[mask] + tz.utcoffset(None).total_seconds(), 86400) // 3600))
        else:
            hours[mask] = pd.to_datetime(t[mask], unit="s", utc=True).tz_convert(tz).hour
    return hours


class Run:
    """A result directory: each file a typed DataFrame, loaded on first use.

    ``run.policies``, ``run.pareto``, ``run.pooled``, ``run.summary``,
    ``run.opens``, ``run.fetches``, ``run.paired``, ``run.devices`` (the
    CSV files of the same names), ``run.calibration`` (``fit/calibration.csv``)
    and ``run.manifest`` (a dict). A missing file raises
    :class:`ResultFormatError` naming it; :meth:`has` tells in advance.
    """

    def __init__(self, path):
        self.path = Path(path)
        if not self.path.is_dir():
            raise ResultFormatError(f"{self.path}: not a directory (a result directory of `fetchlab run`)")
        if not (self.path / "manifest.json").is_file():
            raise ResultFormatError(f"{self.path}: no manifest.json: not a result directory of `fetchlab run`")

    def __repr__(self):
        return f"fetchlab.Run({str(self.path)!r})"

    def has(self, name):
        """Whether the directory holds file ``name`` (``"opens.csv"``, ``"fit/calibration.csv"``, ...)."""
        return (self.path / name).is_file()

    def csv(self, name):
        """``name`` (e.g. ``"matched.csv"``) of this directory, typed (:func:`load_csv`)."""
        return load_csv(self.path / name, trace_dataset=trace_dataset(self.manifest))

    @cached_property
    def manifest(self):
        p = self.path / "manifest.json"
        try:
            m = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ResultFormatError(f"{p}: not a JSON object ({e})") from None
        if not isinstance(m, dict):
            raise ResultFormatError(f"{p}: not a JSON object")
        return m

    @cached_property
    def policies(self):
        df = self.csv("policies.csv")
        if df.empty:
            raise ResultFormatError(f"{self.path / 'policies.csv'}:2: no rows after the header: a run scores at least "
                                    "one policy (was the file cut short or emptied?)")
        if "family" not in df.columns:
            df["family"] = df["policy"].str.split(":").str[0]
            df.attrs["units"]["family"] = _TEXT
        df["family"] = df["family"].where(df["family"] != "", df["policy"].str.split(":").str[0])
        return df

    pareto = cached_property(lambda self: self.csv("pareto.csv"))
    pooled = cached_property(lambda self: self.csv("pooled.csv"))
    summary = cached_property(lambda self: self.csv("summary.csv"))
    opens = cached_property(lambda self: self.csv("opens.csv"))
    fetches = cached_property(lambda self: self.csv("fetches.csv"))
    paired = cached_property(lambda self: self.csv("paired.csv"))
    devices = cached_property(lambda self: self.csv("devices.csv"))
    calibration = cached_property(lambda self: load_calibration(self.path))

    @cached_property
    def datasets(self):
        """The datasets in ``policies.csv`` order (``[""]`` for a single run)."""
        return list(pd.unique(self.policies["dataset"]))

    @cached_property
    def time_zones(self):
        """Each user's time zone per dataset (:func:`user_time_zones`)."""
        return user_time_zones(self.path)

    def dataset(self, dataset=None):
        """``dataset`` checked against the run's datasets; the first when None."""
        if dataset is None:
            return self.datasets[0]
        if dataset not in self.datasets:
            raise ValueError(f"{self.path}: no dataset {dataset!r} (datasets: {', '.join(map(repr, self.datasets))})")
        return dataset


def load_run(path):
    """The result directory at ``path`` (:class:`Run`); a directory without manifest.json is refused."""
    return path if isinstance(path, Run) else Run(path)

