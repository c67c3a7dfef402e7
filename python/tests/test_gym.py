"""fetchlab.gym.FetchEnv: Gymnasium's checker, a random and a heuristic
agent, and the heuristic's reward against the same rule's run figures."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
from gymnasium.utils.env_checker import check_env  # noqa: E402

import fetchlab  # noqa: E402
from fetchlab.gym import WAITS_S, FetchEnv  # noqa: E402
from test_external import REPO, _fetchlab  # noqa: E402

PRICE_J = 0.05
HOUR = WAITS_S.index(3600.0)


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    p = tmp_path_factory.mktemp("gym") / "t.csv"
    subprocess.run([_fetchlab(), "synth", "--users", "2", "--days", "6", "--seed", "3", "--out", str(p)],
                   check=True, capture_output=True)
    return p


def test_check_env_passes(trace):
    env = FetchEnv(trace, price_per_j=PRICE_J)
    check_env(env, skip_render_check=True)
    env.close()


def heuristic(obs):
    """Fetch at the start and at each ask-again time, then ask again in an hour."""
    why_start, why_timer = obs[2] == 1, obs[4] == 1
    return (len(WAITS_S) if (why_start or why_timer) else 0) + HOUR


def play(env, agent, user, rng=None):
    obs, _ = env.reset(options={"user": user})
    total, done, steps = 0.0, False, 0
    while not done:
        a = agent(obs) if rng is None else int(rng.integers(env.action_space.n))
        obs, r, done, trunc, info = env.step(a)
        assert env.observation_space.contains(obs)
        total += r
        steps += 1
    return total, steps, info["summary"]


RULE = """
from fetchlab.policy import Policy, serve

class Heuristic(Policy):
    def decide(self, obs):
        return (obs.why in ("start", "timer"), obs.now + 3600)

serve(Heuristic)
"""


def test_random_and_heuristic_agents_and_the_run_figures_agree(trace, tmp_path):
    env = FetchEnv(trace, price_per_j=PRICE_J)
    rng = np.random.default_rng(0)
    for user in range(2):
        total, steps, _ = play(env, None, user, rng)
        assert steps > 0 and np.isfinite(total)
    (tmp_path / "rule.py").write_text(RULE)
    for user in range(2):
        total, steps, row = play(env, heuristic, user)
        name, text = env.users[user]
        (tmp_path / f"{name}.csv").write_text(text)
        run = fetchlab.run(trace=tmp_path / f"{name}.csv", policies=[f"external:cmd={sys.executable} {tmp_path}/rule.py"],
                           out=tmp_path / f"run-{name}", fetchlab=_fetchlab(), progress=False,
                           env={"PYTHONPATH": str(REPO / "python")},
                           args=["--apps", "top:1", "--no-event-files", "--train-fraction", "0.75"])
        s = run.summary.iloc[0]
        fresh = round(s["opens"] * s["fresh_ratio"])
        expected = fresh - PRICE_J * s["energy_j"]
        assert total == pytest.approx(expected, rel=1e-9, abs=1e-6), (user, total, expected)
        assert s["fetches"] > 0
    env.close()
