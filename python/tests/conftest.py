import shutil
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

DATA = Path(__file__).parent / "data" / "run"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def run_dir():
    """The committed small result directory (read only)."""
    return DATA


@pytest.fixture
def run_copy(tmp_path):
    """A copy of the small result directory, to damage."""
    dst = tmp_path / "run"
    shutil.copytree(DATA, dst)
    return dst
