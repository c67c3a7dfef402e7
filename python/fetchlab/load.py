"""Result directories and traces as typed pandas DataFrames.

Every loader names the file, the line and the column of what it refuses:
a missing file or required column, or a number that does not parse.
"""
import json
import warnings
import re
from datetime import timedelta, timezone
from functools import cached_property
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pandas as pd

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
    """Types every column by its unit; a value that does not parse names its line (header = line 1)."""
    first_line = df.attrs.pop("first_line", 2)
    for c in df.columns:
        kind = _kind(c)
        if kind == "text":
            df[c] = df[c].fillna("").astype(str)
            continue
        try:
            values = df[c].astype("float64")
        except (ValueError, TypeError):
            bad = pd.to_numeric(df[c], errors="coerce").isna() & df[c].notna()
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise ResultFormatError(f"{path}:{i + first_line}: {c}: not a number: {df[c].iloc[i]!r}") from None
        if kind == "flag":
            bad = values.notna() & ~values.isin([0.0, 1.0])
            if bad.any():
                i = int(np.flatnonzero(bad.to_numpy())[0])
                raise ResultFormatError(f"{path}:{i + first_line}: {c}: expected 0 or 1, found {df[c].iloc[i]!r}")
            df[c] = values.astype("boolean")
        elif kind == "count":
            frac = values.notna() & (values != np.floor(values))
            if frac.any():
                i = int(np.flatnonzero(frac.to_numpy())[0])
                raise ResultFormatError(f"{path}:{i + first_line}: {c}: expected an integer, found {df[c].iloc[i]!r}")
            df[c] = values.astype("Int64")
        else:
            df[c] = values
    df.attrs["units"] = {c: unit_of(c) for c in df.columns}
    df.attrs["path"] = str(path)
    return df


def _read(path, required, skiprows=0):
    path = Path(path)
    if not path.is_file():
        raise ResultFormatError(f"{path}: file not found")
    df = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""], skiprows=skiprows)
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


def _leading_comments(path):
    n = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.startswith("#"):
                break
            n += 1
    return n


def load_trace(path):
    """A FetchLab trace (``user,time,event,app,value``; leading ``#`` comment lines skipped).

    ``time`` becomes Unix seconds (``float64``; ISO 8601 times with a zone
    are converted), the other columns stay text (``value`` is a time zone,
    a session length in s, a network, ... depending on ``event``; see
    docs/trace-format.md).
    """
    path = Path(path)
    if not path.is_file():
        raise ResultFormatError(f"{path}: file not found")
    skip = _leading_comments(path)
    df = _read(path, REQUIRED["trace"], skiprows=skip)
    first = df.attrs.pop("first_line")
    for c in ("user", "event", "app", "value"):
        df[c] = df[c].fillna("").astype(str)
    try:
        t = df["time"].astype("float64")
    except ValueError:
        t = pd.Series(np.nan, index=df.index)
        plain = pd.to_numeric(df["time"], errors="coerce")
        iso = plain.isna()
        parsed = pd.to_datetime(df["time"][iso], utc=True, errors="coerce", format="ISO8601")
        if parsed.isna().any():
            i = int(np.flatnonzero(iso.to_numpy())[int(np.flatnonzero(parsed.isna().to_numpy())[0])])
            raise ResultFormatError(f"{path}:{i + first}: time: neither Unix seconds nor ISO 8601: "
                                    f"{df['time'].iloc[i]!r}") from None
        t[~iso] = df["time"][~iso].astype("float64")
        t[iso] = (parsed - pd.Timestamp(0, tz="UTC")).dt.total_seconds().to_numpy()
    df["time"] = t
    df.attrs["units"] = {c: unit_of(c) for c in df.columns}
    df.attrs["path"] = str(path)
    return df


def parse_time_zone(text):
    """A trace's ``begin`` value as a tzinfo: ``UTC``, ``+01:00`` / ``-05:30``, or an IANA name."""
    s = text.strip()
    if s in ("", "UTC", "Z"):
        return timezone.utc
    m = re.fullmatch(r"([+-])(\d{2}):?(\d{2})", s)
    if m:
        off = timedelta(hours=int(m.group(2)), minutes=int(m.group(3)))
        return timezone(-off if m.group(1) == "-" else off)
    try:
        return ZoneInfo(s)
    except (ZoneInfoNotFoundError, ValueError):
        raise ResultFormatError(f"unknown time zone {s!r}") from None


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
        skip = _leading_comments(path)
        begins = {}
        for chunk in pd.read_csv(path, dtype=str, keep_default_na=False, skiprows=skip,
                                 usecols=["user", "event", "value"], chunksize=1_000_000):
            b = chunk[chunk["event"] == "begin"]
            begins.update(zip(b["user"], b["value"]))
        zones[dataset] = {u: parse_time_zone(v) for u, v in begins.items()}
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

