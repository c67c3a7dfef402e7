"""Run FetchLab experiments from Python: the CLI, with its progress streamed
and its errors raised, and the finished run loaded with :func:`load_run`."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from .load import Run, load_run

__all__ = ["FetchLabError", "run", "sweep", "fetchlab_executable"]


class FetchLabError(RuntimeError):
    """``fetchlab`` failed: ``message`` is the CLI's error text (its last
    ``Error:`` lines), ``returncode`` its exit status (1: the input, 64: the
    usage), ``stderr`` everything it printed, ``args_`` the command line."""

    def __init__(self, message: str, returncode: int, stderr: str, args: Sequence[str]):
        super().__init__(message)
        self.message = message
        self.returncode = returncode
        self.stderr = stderr
        self.args_ = list(args)


def fetchlab_executable(path: Optional[str] = None) -> str:
    """The ``fetchlab`` binary: ``path``, else ``$FETCHLAB``, else ``fetchlab`` on ``PATH``."""
    exe = path or os.environ.get("FETCHLAB") or shutil.which("fetchlab")
    if not exe:
        raise FileNotFoundError("fetchlab not found: pass fetchlab=..., set FETCHLAB, or put it on PATH")
    return exe


def _error_text(stderr: str) -> str:
    lines = [l for l in stderr.splitlines() if l.strip()]
    for i, l in enumerate(lines):
        if l.startswith("Error:") or l.startswith("error:"):
            return "\n".join(lines[i:])
    return "\n".join(lines[-5:]) if lines else "fetchlab failed without a message"


def run(
    experiment: Union[None, str, os.PathLike, Mapping[str, Any]] = None,
    out: Union[str, os.PathLike] = "results/python",
    *,
    trace: Optional[Union[str, os.PathLike]] = None,
    policies: Optional[Iterable[str]] = None,
    seed: Optional[int] = None,
    jobs: Optional[int] = None,
    force: bool = False,
    args: Sequence[str] = (),
    fetchlab: Optional[str] = None,
    progress: Union[bool, Callable[[str], None]] = True,
    env: Optional[Mapping[str, str]] = None,
) -> Run:
    """Runs ``fetchlab run`` and returns the :class:`Run` of ``out``.

    ``experiment`` is an experiment file's path, or a dict of one (written to a
    temporary file in the working directory, so its relative paths are
    relative to the working directory); or pass ``trace=`` and ``policies=``
    for ``fetchlab run --trace ... --policy ...``. ``progress``: ``True``
    echoes the CLI's progress lines to stderr, a callable gets each line,
    ``False`` is quiet. Raises :class:`FetchLabError` with the CLI's message
    when it fails (the result directory then holds its old content or none).
    """
    cmd: List[str] = [fetchlab_executable(fetchlab), "run"]
    tmp: Optional[str] = None
    if experiment is not None and trace is not None:
        raise ValueError("pass an experiment or a trace, not both")
    if isinstance(experiment, Mapping):
        fd, tmp = tempfile.mkstemp(prefix=".fetchlab-experiment-", suffix=".json", dir=os.getcwd())
        with os.fdopen(fd, "w") as f:
            json.dump(experiment, f, indent=2, sort_keys=True)
        cmd.append(tmp)
    elif experiment is not None:
        cmd.append(os.fspath(experiment))
    elif trace is not None:
        cmd += ["--trace", os.fspath(trace)]
        for p in policies or []:
            cmd += ["--policy", p]
    else:
        raise ValueError("pass an experiment (path or dict) or trace= and policies=")
    if trace is None and policies is not None:
        raise ValueError("policies= goes with trace=; an experiment lists its own")
    cmd += ["--out", os.fspath(out)]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    if jobs is not None:
        cmd += ["--jobs", str(jobs)]
    if force:
        cmd.append("--force")
    cmd += list(args)
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    echo: Optional[Callable[[str], None]]
    if progress is True:
        echo = lambda line: (sys.stderr.write(line + "\n"), sys.stderr.flush())
    elif callable(progress):
        echo = progress
    else:
        echo = None
    try:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env)
        err: List[str] = []
        assert p.stderr is not None
        for line in p.stderr:
            line = line.rstrip("\n")
            err.append(line)
            if echo is not None:
                echo(line)
        p.stdout.read() if p.stdout else None
        code = p.wait()
    finally:
        if tmp is not None:
            os.unlink(tmp)
    stderr = "\n".join(err)
    if code != 0:
        raise FetchLabError(_error_text(stderr), code, stderr, cmd)
    return load_run(out)


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def sweep(family: str, *args: Any, **settings: Iterable[Any]) -> List[str]:
    """The policy strings of a grid, in a stable order (the last setting
    varying fastest): ``sweep("periodic", ["30m", "1h"])`` gives
    ``["periodic:30m", "periodic:1h"]``; ``sweep("ios-minimum", price=[0.1, 1],
    spacing=["15m"])`` gives ``["ios-minimum:price=0.1,spacing=15m",
    "ios-minimum:price=1,spacing=15m"]``. One positional list is the
    family's main argument (an interval), written first."""
    if len(args) > 1:
        raise TypeError("sweep takes at most one positional list (the main argument)")
    axes: List[List[str]] = []
    if args:
        axes.append([_text(v) for v in args[0]])
    keys = list(settings)
    for k in keys:
        axes.append([f"{k}={_text(v)}" for v in settings[k]])
    if not axes:
        return [family]
    return [family + ":" + ",".join(combo) for combo in itertools.product(*axes)]
