"""Tampered result directories: every refusal names the file and line, exits 1, and prints no traceback."""
import pytest

from fetchlab.cli import main


def _policies(run):
    return run / "policies.csv"


def _set_cell(path, line, column, value):
    lines = path.read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    cells = lines[line - 1].split(",")
    cells[header.index(column)] = value
    lines[line - 1] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _figures(run, tmp_path, capsys, *extra):
    code = main([str(run), "--out", str(tmp_path / "fig"), *extra])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


@pytest.mark.parametrize("users", ["inf", "1e400", "1e20", "-inf", "nan", "0x10", "2.5"])
def test_user_counts_that_are_not_counts(run_copy, tmp_path, capsys, users):
    _set_cell(_policies(run_copy), 3, "users", users)
    code, err = _figures(run_copy, tmp_path, capsys)
    assert code == 1
    assert f"policies.csv:3: users: " in err and repr(users) in err, err


def test_empty_policies(run_copy, tmp_path, capsys):
    _policies(run_copy).write_bytes(b"")
    code, err = _figures(run_copy, tmp_path, capsys)
    assert code == 1 and "policies.csv: empty file" in err, err


def test_non_utf8_policies(run_copy, tmp_path, capsys):
    p = _policies(run_copy)
    lines = p.read_bytes().split(b"\n")
    lines[3] = lines[3].replace(b"periodic", b"peri\xffodic", 1)
    p.write_bytes(b"\n".join(lines))
    code, err = _figures(run_copy, tmp_path, capsys)
    assert code == 1 and "policies.csv:4: not valid UTF-8 (byte 0xFF)" in err, err


def test_truncated_last_row(run_copy, tmp_path, capsys):
    p = _policies(run_copy)
    data = p.read_bytes()
    p.write_bytes(data[:-40])
    code, err = _figures(run_copy, tmp_path, capsys)
    n = data[:-40].count(b"\n") + 1
    assert code == 1 and f"policies.csv:{n}: the last line has no line end" in err, err
    # Cut at a line end: a row with fewer fields than the header.
    lines = data.split(b"\n")
    lines[-2] = b",".join(lines[-2].split(b",")[:5])
    p.write_bytes(b"\n".join(lines))
    code, err = _figures(run_copy, tmp_path, capsys)
    assert code == 1 and f"policies.csv:{len(lines) - 1}: 5 fields, but the header has" in err, err


def test_header_only_policies(run_copy, tmp_path, capsys):
    p = _policies(run_copy)
    p.write_bytes(p.read_bytes().split(b"\n")[0] + b"\n")
    code, err = _figures(run_copy, tmp_path, capsys)
    assert code == 1 and "policies.csv:2: no rows after the header" in err, err
    assert not (tmp_path / "fig").exists() or not any((tmp_path / "fig").iterdir())


def test_tampered_trace_zone_names_the_file(run_copy, tmp_path, capsys):
    t = run_copy / "trace.csv"
    text = t.read_text(encoding="utf-8")
    begin = next(l for l in text.splitlines() if ",begin," in l)
    t.write_text(text.replace(begin, begin.rsplit(",", 1)[0] + ",UTC+1", 1), encoding="utf-8")
    code, err = _figures(run_copy, tmp_path, capsys, "--figure", "timeline")
    assert code == 1 and "trace.csv:" in err and "unknown time zone 'UTC+1'" in err, err
