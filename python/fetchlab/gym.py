"""A Gymnasium environment of one app on one phone, with FetchLab as the
simulator: ``fetchlab.gym.FetchEnv``.

Each episode replays one user of a trace (its most opened app, the last
``1 - train_fraction`` of its window) in ``fetchlab run``, whose decisions
come from the agent through the ``external`` protocol: at each decision
opportunity (the window's start, an open of the app, the ask-again time
the agent chose, the end of a fetch) the observation is what the app could
see, and the action is fetch now or not, and when to ask again.

Reward: +1 per fresh open (an open that found the content up to date),
minus ``price_per_j`` per joule and ``price_per_cellular_byte`` per
cellular byte of the app's background fetching, from FetchLab's own radio
model. A fetch's own energy and bytes are charged at the decision after it
ends (its ``outcome``); the rest (the fresh opens, and energy not charged
to a single fetch, such as radio tails shared with the user's sessions) at
the episode's last step, so an episode's rewards add up to exactly the
run's figures: ``fresh opens - price_per_j * energy_j - price_per_cellular_byte
* cellular_bytes`` of the user's row in ``summary.csv``.
"""

from __future__ import annotations

import csv
import io
import os
import select
import shutil
import subprocess
import sys
import tempfile
from typing import Any, Dict, List, Optional, Tuple

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from .experiment import FetchLabError, _error_text, fetchlab_executable

__all__ = ["FetchEnv", "OBSERVATION_FIELDS", "WAITS_S", "split_trace"]

#: The ask-again delays an action chooses from, s.
WAITS_S = (900.0, 3600.0, 4 * 3600.0)
#: The observation vector's entries, all in [0, 1].
OBSERVATION_FIELDS = (
    "local_hour/24", "weekday/6", "why=start", "why=open", "why=timer", "why=fetch_done", "network=wifi",
    "network=cellular", "network=offline", "charging", "battery_pct/100 (1 while unknown)", "fetch_in_flight",
    "hours since the app's last open/48 (1 when none)", "hours since its last fetch ended/48 (1 when none)",
)
_WHY = {"start": 2, "open": 3, "timer": 4, "fetch_done": 5}


def split_trace(path: str) -> List[Tuple[str, str]]:
    """(user, canonical trace text of that user alone), in file order."""
    header = None
    users: Dict[str, List[str]] = {}
    order: List[str] = []
    with open(path, newline="") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            if header is None:
                header = line
                continue
            user = next(csv.reader(io.StringIO(line)))[0]
            if user not in users:
                users[user] = []
                order.append(user)
            users[user].append(line)
    if header is None:
        raise ValueError(f"{path}: no header")
    return [(u, header + "".join(users[u])) for u in order]


class FetchEnv(gym.Env):
    """One app on one phone; an episode per user of ``trace``.

    Actions: ``Discrete(2 * len(WAITS_S))``: ``a // len(WAITS_S)`` is fetch
    now (1) or not (0), ``WAITS_S[a % len(WAITS_S)]`` when to ask again.
    Observations: ``Box(0, 1, (14,))``, see :data:`OBSERVATION_FIELDS`.
    ``reset(options={"user": i})`` picks the episode's user; otherwise
    users are drawn with the environment's seeded generator.
    """

    metadata = {"render_modes": []}

    def __init__(self, trace: str, *, price_per_j: float = 0.01, price_per_cellular_byte: float = 0.0,
                 train_fraction: float = 0.75, seed: int = 1, fetchlab: Optional[str] = None,
                 args: Tuple[str, ...] = ()):
        super().__init__()
        self.trace = os.fspath(trace)
        self.users = split_trace(self.trace)
        self.price_per_j = float(price_per_j)
        self.price_per_cellular_byte = float(price_per_cellular_byte)
        self.train_fraction = float(train_fraction)
        self.run_seed = int(seed)
        self.fetchlab = fetchlab_executable(fetchlab)
        self.args = tuple(args)
        self.action_space = spaces.Discrete(2 * len(WAITS_S))
        self.observation_space = spaces.Box(0.0, 1.0, shape=(len(OBSERVATION_FIELDS),), dtype=np.float32)
        self._proc: Optional[subprocess.Popen] = None
        self._dir: Optional[str] = None
        self._buf = b""
        self._fd: Optional[int] = None
        self._reply: Optional[Any] = None
        self.user: Optional[str] = None
        self.summary: Optional[Dict[str, str]] = None

    # -- episode plumbing ---------------------------------------------------
    def _stop(self) -> None:
        if self._reply is not None:
            self._reply.close()
            self._reply = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.wait()
            self._proc = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def _line(self) -> Optional[str]:
        """The next message FetchLab sent, or None when the run is over."""
        while b"\n" not in self._buf:
            r, _, _ = select.select([self._fd], [], [], 0.2)
            if not r:
                if self._proc.poll() is not None and not self._connected:
                    return None
                continue
            chunk = os.read(self._fd, 65536)
            if not chunk:
                if self._connected or self._proc.poll() is not None:
                    return None
                continue
            self._connected = True
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return line.decode()

    def _observe(self, m: Dict[str, Any]) -> np.ndarray:
        import json  # noqa: F401  (kept local: the module imports cheaply)

        o = np.zeros(len(OBSERVATION_FIELDS), dtype=np.float32)
        now = m["now"]
        o[0] = min(m["local_hour"] / 24.0, 1.0)
        o[1] = m["weekday"] / 6.0
        o[_WHY[m["why"]]] = 1.0
        net = m["network"]
        o[6 if net == "wifi" else 8 if net == "offline" else 7] = 1.0
        o[9] = 1.0 if m["charging"] else 0.0
        b = m["battery_pct"]
        o[10] = 1.0 if b is None else min(max(b / 100.0, 0.0), 1.0)
        o[11] = 1.0 if m["fetch_in_flight"] else 0.0
        if m["why"] == "open":
            self._last_open = now
        if m.get("outcome"):
            self._last_fetch = m["outcome"]["end"]
        o[12] = 1.0 if self._last_open is None else min((now - self._last_open) / 3600 / 48, 1.0)
        o[13] = 1.0 if self._last_fetch is None else min((now - self._last_fetch) / 3600 / 48, 1.0)
        return o

    def _next_decision(self) -> Optional[Dict[str, Any]]:
        import json

        while True:
            line = self._line()
            if line is None:
                return None
            m = json.loads(line)
            if m["type"] == "decide":
                return m

    def reset(self, *, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None):
        super().reset(seed=seed)
        self._stop()
        if options and "user" in options:
            index = int(options["user"])
        else:
            index = int(self.np_random.integers(len(self.users)))
        self.user, text = self.users[index]
        self._dir = tempfile.mkdtemp(prefix="fetchlab-gym-")
        with open(self._dir + "/trace.csv", "w") as f:
            f.write(text)
        os.mkfifo(self._dir + "/to_env")
        os.mkfifo(self._dir + "/from_env")
        package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env = dict(os.environ)
        env["PYTHONPATH"] = package + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        policy = f"external:cmd={sys.executable} -m fetchlab.gym_bridge {self._dir},timeout=1h"
        cmd = [self.fetchlab, "run", "--trace", self._dir + "/trace.csv", "--policy", policy, "--apps", "top:1",
               "--train-fraction", repr(self.train_fraction), "--seed", str(self.run_seed), "--jobs", "1",
               "--no-event-files", "--out", self._dir + "/run", *self.args]
        self._stderr = open(self._dir + "/stderr.txt", "w+")
        self._proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self._stderr, env=env)
        self._fd = os.open(self._dir + "/to_env", os.O_RDONLY | os.O_NONBLOCK)
        self._buf = b""
        self._connected = False
        self._last_open = None
        self._last_fetch = None
        self._charged = 0.0
        self.summary = None
        m = self._next_decision()
        if m is None:
            return self._finish_without_decisions()
        self._reply = open(self._dir + "/from_env", "w", buffering=1)
        self._m = m
        return self._observe(m), {"user": self.user, "now": m["now"], "why": m["why"]}

    def _finish_without_decisions(self):
        self._final_reward()
        return np.zeros(len(OBSERVATION_FIELDS), dtype=np.float32), {"user": self.user, "now": None, "why": None}

    def _final_reward(self) -> float:
        code = self._proc.wait()
        self._stderr.seek(0)
        err = self._stderr.read()
        if code != 0:
            raise FetchLabError(_error_text(err), code, err, [])
        with open(self._dir + "/run/summary.csv", newline="") as f:
            rows = [r for r in csv.DictReader(f)]
        self.summary = rows[0] if rows else None
        return self.episode_total(self.summary) - self._charged

    def episode_total(self, row: Optional[Dict[str, str]]) -> float:
        """An episode's whole reward from its ``summary.csv`` row."""
        if row is None:
            return 0.0
        fresh = round(float(row["opens"]) * float(row["fresh_ratio"] or 0))
        return fresh - self.price_per_j * float(row["energy_j"]) - self.price_per_cellular_byte * float(
            row["cellular_bytes"])

    def step(self, action):
        a = int(action)
        if not self.action_space.contains(a):
            raise ValueError(f"action {action!r} is not in {self.action_space}")
        fetch = a // len(WAITS_S) == 1
        nxt = self._m["now"] + WAITS_S[a % len(WAITS_S)]
        self._reply.write('{"fetch":%s,"next":%r}\n' % ("true" if fetch else "false", nxt))
        self._reply.flush()
        m = self._next_decision()
        if m is None:
            reward = self._final_reward()
            return np.zeros(len(OBSERVATION_FIELDS), dtype=np.float32), float(reward), True, False, {
                "user": self.user, "summary": self.summary}
        self._m = m
        reward = 0.0
        o = m.get("outcome")
        if o:
            cellular = o["bytes"] if o["network"] not in ("wifi", "offline") else 0.0
            reward = -self.price_per_j * o["energy_j"] - self.price_per_cellular_byte * cellular
        self._charged += reward
        return self._observe(m), float(reward), False, False, {"user": self.user, "now": m["now"], "why": m["why"]}

    def close(self) -> None:
        self._stop()
        super().close()
