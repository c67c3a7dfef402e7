"""Runs the code of docs/python.md's "Your scheduler in Python" in order,
in a scratch directory that sees the repository's datasets."""

import os
import re
import runpy
import sys
from pathlib import Path

import pytest

from test_external import REPO, _fetchlab

DOC = REPO / "docs" / "python.md"


def blocks():
    """(file name or None, code) of each ```python block after a doc-test marker."""
    text = DOC.read_text()
    out = []
    for m in re.finditer(r"<!-- doc-test(?:: file (\S+))? -->\n```python\n(.*?)```", text, re.S):
        out.append((m.group(1), m.group(2)))
    return out


def test_the_page_has_its_examples():
    names = [b[0] for b in blocks()]
    assert names[0] == "my_policy.py" and len(names) == 3


def test_the_page_runs(tmp_path, monkeypatch):
    exe = _fetchlab()
    pytest.importorskip("gymnasium")
    (tmp_path / "datasets").symlink_to(REPO / "datasets")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FETCHLAB", exe)
    monkeypatch.setenv("PYTHONPATH", str(REPO / "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for name, code in blocks():
        if name:
            (tmp_path / name).write_text(code)
            continue
        exec(compile(code, str(DOC), "exec"), {"__name__": "__doc_test__"})
    assert (tmp_path / "results" / "my-policy" / "summary.csv").exists()
