"""The companion under random damage: every input either loads or is refused with file:line, never a traceback.

Seeded byte mutations of the trace conformance corpus (``read_trace``) and of the
committed result directory's policies.csv (``fetchlab-figures``). FUZZ_CASES
(default 300) sets how many of each; ``scripts/fuzz.sh`` runs more.
"""
import os
import random
import re
from pathlib import Path

from fetchlab.cli import main
from fetchlab.formats import TraceError, read_trace

ROOT = Path(__file__).resolve().parents[2]
CASES = int(os.environ.get("FUZZ_CASES", "300"))
TOKENS = [b",", b"\n", b'"', b"\xff", b"\x00", b"0x10", b"inf", b"nan", b"1e400", b"-", b"+01:00", b"UTC+1", b"\r", b"#"]


def mutate(data, rng):
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(4)
        i = rng.randrange(len(data) + 1)
        if op == 0 and data:
            del data[i:i + rng.randint(1, 8)]
        elif op == 1:
            data[i:i] = rng.choice(TOKENS)
        elif op == 2 and data:
            data[min(i, len(data) - 1)] = rng.randrange(256)
        else:
            data = data[:i]
    return bytes(data)


def test_trace_reader_refuses_cleanly(tmp_path):
    rng = random.Random(20260105)
    seeds = [p.read_bytes() for p in sorted((ROOT / "Tests" / "Conformance" / "traces").glob("accept-*.csv"))]
    path = tmp_path / "t.csv"
    for _ in range(CASES):
        path.write_bytes(mutate(rng.choice(seeds), rng))
        try:
            read_trace(path)
        except TraceError as e:
            assert re.match(rf"{re.escape(str(path))}:\d+: \S+: ", str(e)), str(e)


def test_figures_refuse_cleanly(run_copy, tmp_path, capsys):
    rng = random.Random(7)
    p = run_copy / "policies.csv"
    original = p.read_bytes()
    for k in range(max(1, CASES // 10)):
        p.write_bytes(mutate(original, rng))
        code = main([str(run_copy), "--out", str(tmp_path / f"fig{k}")])
        err = capsys.readouterr().err
        assert "Traceback" not in err
        assert code == 0 or (code == 1 and err.startswith("fetchlab-figures: error: ") and "policies.csv" in err), err
