#!/usr/bin/env python3
"""Checks FetchLab's notebook export (run by scripts/check-notebooks.sh in CI).

1. Every notebook in notebooks-export/ is valid nbformat 4.5 (nbformat.validate),
   its cell ids are unique and match ^[a-zA-Z0-9-_]+$ (1-64 chars), and the file
   is byte-identical to what nbformat writes (sorted keys, 1-space indent).
2. A small run (fetchlab synth + fetchlab run with event files) is exported with
   `fetchlab report RUN --notebook`, checked as in 1, its analysis cell checked
   to import the fetchlab package (python/; no pasted helper code), and
   executed with `jupyter nbconvert --to notebook --execute`.
3. Every notebook of notebooks-export/ is executed where it is (the default
   benchmark's RUN_DIR is relative to the notebook; story.ipynb imports a
   collector's sample log, runs a small experiment with the FETCHLAB
   executable and draws the paper figure, in seconds).

An executed notebook fails on any error output, any stderr output (warnings
included), a chart cell without a figure, or an `interpret(...)` cell whose
printed statements differ from the interpretation FetchLab stored.

Usage: python scripts/check-notebooks.py --fetchlab .build/debug/fetchlab
Needs nbformat, nbconvert, nbclient, ipykernel and the fetchlab package (pip install ./python).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
CELL_ID = re.compile(r"^[a-zA-Z0-9-_]{1,64}$")
results = []  # (name, ok, message)

IMPORT_CELL = "from fetchlab.notebook import NotebookRun"


def check(name, ok, message=""):
    results.append((name, ok, message))
    print(("ok   " if ok else "FAIL ") + name + (": " + message if message and not ok else ""), flush=True)
    return ok


def check_file(path):
    """nbformat 4.5, valid, unique well-formed ids, canonical bytes."""
    text = path.read_text(encoding="utf-8")
    nb = nbformat.reads(text, as_version=4)
    try:
        nbformat.validate(nb)
    except nbformat.ValidationError as e:
        return check(f"{path.name} is valid nbformat", False, str(e).splitlines()[0])
    ids = [c.get("id") for c in nb.cells]
    bad = [i for i in ids if not isinstance(i, str) or not CELL_ID.match(i)]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    ok = (nb.nbformat, nb.nbformat_minor) == (4, 5) and not bad and not dup
    check(f"{path.name} is valid nbformat 4.5 with unique cell ids", ok, f"bad ids {bad}, duplicates {dup}" if not ok else "")
    return check(f"{path.name} is in nbformat's canonical form", nbformat.writes(nb) + "\n" == text)


def execute(path, out_dir, timeout, fetchlab):
    """Runs every cell (cwd: the notebook's folder; FETCHLAB: the executable); returns the executed notebook."""
    out = Path(out_dir) / ("executed-" + path.name)
    t = time.monotonic()
    p = subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", str(path),
         "--output", str(out.resolve()), f"--ExecutePreprocessor.timeout={timeout}"],
        capture_output=True, text=True, env={**os.environ, "FETCHLAB": fetchlab})
    check(f"{path.name} executes ({time.monotonic() - t:.1f} s)", p.returncode == 0, p.stderr[-3000:])
    return nbformat.read(out, as_version=4) if p.returncode == 0 else None


def check_executed(path, stored, done):
    name = path.name
    problems = []
    for a, b in zip(stored.cells, done.cells):
        if a.cell_type != "code":
            continue
        first = a.source.splitlines()[0] if a.source else ""
        for o in b.outputs:
            if o.output_type == "error":
                problems.append(f"{first}: {o.ename}: {o.evalue}")
            if o.output_type == "stream" and o.name == "stderr":
                problems.append(f"{first}: stderr: {o.text.strip()[:300]}")
        if first.startswith(("nb.plot_", "nb.show_chart(")) or "fetchlab.frontier(" in a.source:
            kinds = {k for o in b.outputs for k in o.get("data", {})}
            if not kinds & {"image/png", "image/svg+xml"}:
                problems.append(f"{first}: no figure")
        if first.startswith("nb.interpret("):
            want = "".join(o.get("text", "") for o in a.outputs)
            got = "".join(o.get("text", "") for o in b.outputs)
            check(f"{name}: {first} prints the stored interpretation", want == got and want != "",
                  f"stored:\n{want}\nexecuted:\n{got}")
    check(f"{name}: no errors or warnings when executed", not problems, "\n".join(problems))


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        check(" ".join(cmd[:3]), False, p.stderr[-2000:])
        raise SystemExit(finish())
    return p


def finish():
    failed = sum(1 for _, ok, _ in results if not ok)
    print(f"notebooks: {len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fetchlab", required=True, help="the fetchlab executable")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per cell")
    args = ap.parse_args()
    fetchlab = str(Path(args.fetchlab).resolve())

    exported = sorted((ROOT / "notebooks-export").glob("*.ipynb"))
    check("notebooks-export/ has notebooks", bool(exported))
    version = re.search(r'let fetchLabVersion = "([^"]+)"',
                        (ROOT / "Sources" / "fetchlab" / "FetchLab.swift").read_text(encoding="utf-8")).group(1)
    for p in exported:
        check_file(p)
        labels = set(re.findall(r"FetchLab version: ([0-9][0-9A-Za-z.+-]*)", p.read_text(encoding="utf-8")))
        check(f"{p.name} is labelled with this version ({version})", labels == {version}, str(sorted(labels)))

    with tempfile.TemporaryDirectory(prefix="fetchlab-nb-") as tmp:
        t = Path(tmp)
        run([fetchlab, "synth", "--users", "4", "--days", "4", "--seed", "5", "--out", str(t / "trace.csv")])
        policies = ["never", "periodic:1h", "periodic:4h", "oracle", "ios-minimum", "ios-minimum:price=0.1"]
        run([fetchlab, "run", "--trace", str(t / "trace.csv"), "--apps", "top:2", "--out", str(t / "run")]
            + [a for p in policies for a in ("--policy", p)])
        nb_path = t / "notebooks" / "small.ipynb"
        run([fetchlab, "report", str(t / "run"), "--notebook", str(nb_path)])
        if check_file(nb_path):
            # The analysis is the fetchlab package's: no helper code in the notebook.
            code = [c.source for c in nbformat.read(nb_path, as_version=4).cells if c.cell_type == "code"]
            check("the analysis cell imports the fetchlab package and pastes no code",
                  len(code) > 1 and IMPORT_CELL in code[1] and not any("def " in c for c in code))
            done = execute(nb_path, t, args.timeout, fetchlab)
            if done is not None:
                check_executed(nb_path, nbformat.read(nb_path, as_version=4), done)
        for p in exported:
            done = execute(p, t, args.timeout, fetchlab)
            if done is not None:
                check_executed(p, nbformat.read(p, as_version=4), done)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
