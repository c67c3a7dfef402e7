"""The trace conformance corpus (Tests/Conformance/traces): the Python loader's verdicts.

The Swift reader is held to the same files by TraceConformanceTests; both
must accept the same files and refuse the others at the same line and field.
"""
import re
from pathlib import Path

import pytest

from fetchlab import _zones
from fetchlab.formats import TraceError, iso8601, number, parse_zone, read_trace
from fetchlab.load import ResultFormatError, load_trace

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "Tests" / "Conformance" / "traces"
FILES = sorted(CORPUS.glob("*.csv"))


def expected(path):
    first = path.read_bytes().split(b"\n", 1)[0].removeprefix(b"\xef\xbb\xbf").removesuffix(b"\r").decode()
    m = re.fullmatch(r"# expect: (accept|refuse (\d+) (\S+))", first)
    assert m, f"{path}: first line is not a verdict"
    return None if m.group(1) == "accept" else (int(m.group(2)), m.group(3))


def test_corpus_has_both_verdicts():
    verdicts = [expected(p) for p in FILES]
    assert sum(v is None for v in verdicts) >= 10 and sum(v is not None for v in verdicts) >= 40


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_loader_agrees_with_the_corpus(path):
    want = expected(path)
    if want is None:
        df = load_trace(path)
        assert len(df) > 0 and df["time"].dtype == "float64"
        return
    with pytest.raises(TraceError) as e:
        read_trace(path)
    assert (e.value.line, e.value.field) == want, str(e.value)
    with pytest.raises(ResultFormatError, match=re.escape(f"{path}:{want[0]}: {want[1]}:")):
        load_trace(path)


def test_numbers_are_decimal_only():
    for ok, value in [("35", 35.0), ("-1.5e3", -1500.0), (".5", 0.5), ("5.", 5.0), ("+2E-1", 0.2)]:
        assert number(ok) == value
    for bad in ["0x10", "0x1.a5p30", "inf", "nan", "Infinity", " 1", "1 ", "1_0", "١", "", "-", ".", "e5", "1e"]:
        assert number(bad) is None, bad


def test_iso_times_match_the_grammar():
    assert iso8601("2026-01-05T08:00:00+01:00") == (1767600000.0, 3600)
    assert iso8601("2026-01-05 08:00z") == (1767600000.0, 0)
    assert iso8601("2026-01-05T08:00:00") == (1767600000.0, None)
    for bad in ["2026-01-05", "2026-01-05T8:00Z", "2026-13-01T00:00Z", "2026-01-05T08:00:00+14:60", "２０２６-01-05T08:00Z"]:
        assert iso8601(bad) is None, bad


def test_zones_are_the_documented_forms():
    for ok in ["UTC", "Z", "", "+05:30", "-14:00", "Europe/Berlin", "Etc/GMT+5"]:
        assert parse_zone(ok) is not None, ok
    for bad in ["UTC+1", "UTC-3", "GMT+0530", "US/Pacific-New", "+0530", "+15:00", "utc", "europe/berlin", "localtime"]:
        assert parse_zone(bad) is None, bad


def test_zone_list_is_the_swift_readers():
    swift = (ROOT / "Sources" / "FetchTraces" / "TraceTimeZone+Names.swift").read_text(encoding="utf-8")
    body = swift.split('"""')[1]
    assert frozenset(body.split()) == _zones.NAMES
    assert f'ianaRelease = "{_zones.RELEASE}"' in swift
