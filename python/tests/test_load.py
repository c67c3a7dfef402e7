import re

import pandas as pd
import pytest

import fetchlab
from fetchlab.load import UNITS, load_csv, local_hours, parse_time_zone
from conftest import REPO


def test_policies_are_typed_with_units(run_dir):
    p = fetchlab.load_run(run_dir).policies
    assert list(p["policy"]) == ["never", "periodic:1h", "periodic:4h", "ios-minimum", "oracle"]
    assert pd.api.types.is_string_dtype(p["policy"]) and pd.api.types.is_string_dtype(p["family"])
    assert str(p["users"].dtype) == "Int64" and p["users"].tolist() == [3] * 5
    for c in ("energy_j_per_day", "energy_j_per_day_lo", "mean_age_s", "fresh_ratio"):
        assert p[c].dtype == "float64"
    units = p.attrs["units"]
    assert units["energy_j_per_day"] == units["energy_j_per_day_hi"] == "J/day"
    assert units["mean_age_s"] == "s" and units["fresh_ratio"] == "fraction (0-1)"
    assert units["cellular_bytes_per_day"] == "B/day"
    # a single run reads like an experiment with dataset ""
    assert p.columns[0] == "dataset" and set(p["dataset"]) == {""}


def test_events_are_typed(run_dir):
    run = fetchlab.load_run(run_dir)
    o, f = run.opens, run.fetches
    assert str(o["fresh"].dtype) == "boolean" and o["time"].dtype == "float64" and o["age_s"].dtype == "float64"
    assert o.attrs["units"]["time"] == "s since 1970-01-01 UTC" and o.attrs["units"]["age_s"] == "s"
    assert (o.loc[o["fresh"], "age_s"] == 0).all()
    assert f.attrs["units"]["energy_j"] == "J" and f.attrs["units"]["bytes"] == "B"
    assert str(run.pareto["on_frontier"].dtype) == "boolean"


def test_every_column_of_a_run_has_a_unit(run_dir):
    for path in [p for p in sorted(run_dir.glob("*.csv")) if p.name != "trace.csv"] + [run_dir / "fit" / "calibration.csv"]:
        df = load_csv(path)
        assert {c: u for c, u in df.attrs["units"].items() if u is None} == {}, path.name


def test_missing_file_is_refused(run_copy):
    (run_copy / "pareto.csv").unlink()
    run = fetchlab.load_run(run_copy)
    with pytest.raises(fetchlab.ResultFormatError, match=r"pareto\.csv: file not found"):
        run.pareto
    (run_copy / "manifest.json").unlink()
    with pytest.raises(fetchlab.ResultFormatError, match="no manifest.json"):
        fetchlab.load_run(run_copy)
    with pytest.raises(fetchlab.ResultFormatError, match="not a directory"):
        fetchlab.load_run(run_copy / "nothing")


def test_missing_column_is_refused(run_copy):
    p = run_copy / "policies.csv"
    df = pd.read_csv(p, dtype=str, keep_default_na=False)
    df.drop(columns=["mean_age_s_lo"]).to_csv(p, index=False)
    with pytest.raises(fetchlab.ResultFormatError, match=r"policies\.csv:1: missing column\(s\) mean_age_s_lo"):
        fetchlab.load_run(run_copy).policies


def test_bad_value_names_file_line_and_column(run_copy):
    p = run_copy / "policies.csv"
    lines = p.read_text().splitlines()
    cells = lines[2].split(",")
    cells[lines[0].split(",").index("energy_j_per_day")] = "12 J"
    lines[2] = ",".join(cells)
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(fetchlab.ResultFormatError, match=r"policies\.csv:3: energy_j_per_day: not a number: '12 J'"):
        fetchlab.load_run(run_copy).policies


def test_calibration_keeps_both_subsets(run_dir):
    cal = fetchlab.load_run(run_dir).calibration
    assert set(cal["subset"]) == {"all", "outside_gaps"}
    assert str(cal["decile"].dtype) == "Int64" and cal.attrs["units"]["mean_predicted"] == "probability (0-1)"


def test_load_trace_skips_comment_lines_and_reads_iso_times(tmp_path):
    t = tmp_path / "t.csv"
    t.write_text("# a comment, with a comma\n# another\nuser,time,event,app,value\n"
                 "u1,2026-01-05T08:00:00Z,begin,,+01:00\nu1,1767600000.5,open,news#1,35\n"
                 "u1,2026-01-05 10:00:00+01:00,end,,\n")
    df = fetchlab.load_trace(t)
    assert list(df.columns) == ["user", "time", "event", "app", "value"]
    assert df["time"].tolist() == [1767600000.0, 1767600000.5, 1767603600.0]
    assert df["app"].tolist() == ["", "news#1", ""]
    t.write_text("# c\nuser,time,event,app,value\nu1,yesterday,begin,,UTC\n")
    with pytest.raises(fetchlab.ResultFormatError, match=r"t\.csv:3: time"):
        fetchlab.load_trace(t)


def test_load_trace_of_the_run(run_dir):
    df = fetchlab.load_trace(run_dir / "trace.csv")
    assert df["time"].dtype == "float64" and set(df["user"]) == {"u00001", "u00002", "u00003"}


def test_local_hours():
    # 2026-01-05T00:00:00Z
    t0 = 1767571200.0
    zones = {"a": parse_time_zone("+05:30"), "b": parse_time_zone("-08:00"), "p": parse_time_zone("Europe/Paris")}
    h = local_hours([t0, t0, t0, t0 + 3600 * 23.99, t0 + 181 * 86400], ["a", "b", "u", "u", "p"], zones)
    # Paris: +01:00 in January, +02:00 on 2026-07-05 (summer time)
    assert h.tolist() == [5, 16, 0, 23, 2]
    assert local_hours([t0], ["p"], zones).tolist() == [1]


def test_user_time_zones_come_from_the_runs_trace(run_dir):
    zones = fetchlab.user_time_zones(run_dir)[""]
    offsets = {u: z.utcoffset(None).total_seconds() / 3600 for u, z in zones.items()}
    assert offsets == {"u00001": 5.5, "u00002": 8.0, "u00003": -8.0}


def test_unit_table_of_the_docs_is_the_packages():
    doc = REPO / "docs" / "python.md"
    if not doc.exists():
        pytest.skip("not in a FetchLab checkout")
    rows = dict(re.findall(r"^\| `([a-z0-9_]+)` \| ([^|]+?) \|$", doc.read_text(encoding="utf-8"), flags=re.M))
    assert rows == UNITS


def test_version_is_fetchlabs():
    swift = REPO / "Sources" / "fetchlab" / "FetchLab.swift"
    if not swift.exists():
        pytest.skip("not in a FetchLab checkout")
    assert re.search(r'let fetchLabVersion = "([^"]+)"', swift.read_text()).group(1) == fetchlab.__version__
