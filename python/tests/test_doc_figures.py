"""The figures quoted in README.md and docs/*.md are the committed runs'.

scripts/doc-figures.py renders every `<!-- figures:begin NAME -->` block
from notebooks-export/*-data/; a block that differs from its rendering (a
figure typed by hand, or a run regenerated without the docs) fails here.
"""

import importlib.util
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "doc-figures.py"


def load():
    spec = importlib.util.spec_from_file_location("doc_figures", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_block_matches_its_committed_run():
    r = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_docs_have_blocks_and_every_renderer_is_used():
    mod = load()
    used = set()
    for name in mod.DOCS:
        used |= {m.group(2) for m in mod.BLOCK.finditer((REPO / name).read_text(encoding="utf-8"))}
    assert used == set(mod.RENDERERS)


def test_a_figure_edited_by_hand_is_stale():
    mod = load()
    text = (REPO / "README.md").read_text(encoding="utf-8")
    m = next(mod.BLOCK.finditer(text))
    body = m.group(3)
    digit = next(i for i, c in enumerate(body) if c.isdigit())
    edited = text[: m.start(3) + digit] + str((int(body[digit]) + 1) % 10) + text[m.start(3) + digit + 1:]
    assert mod.render(edited) != edited
    assert mod.render(text) == text


def test_one_average_pooled_then_over_replications(tmp_path, monkeypatch):
    mod = load()
    run = tmp_path / "r-data"
    run.mkdir()
    cols = ["dataset", "replication", "policy", "energy_j_per_day", "fresh_ratio"]
    lines = [",".join(cols), "d,0,p,10,0.5", "d,1,p,20,0.75", "d,0,q,1,1"]
    (run / "pooled.csv").write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(mod, "EXPORT", tmp_path)
    data, order = mod.pooled("r-data")
    assert order == [("d", "p"), ("d", "q")]
    assert data[("d", "p")] == {"energy_j_per_day": 15.0, "fresh_ratio": 0.625}
