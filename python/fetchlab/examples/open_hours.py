"""A learning policy that puts its fetches where the app's opens are:
``per_day`` fetches a day at local times of day learned from the training
part, on the quarter hours.

Model: the app's opens per local hour of day in the training part, mixed
with a uniform share, ``mu_h = (1 - w) * share_h + w / 24``. The day's
``per_day`` fetches are placed at equal steps of the cumulative
``sqrt(mu_h)`` over the day: the fetch rate that minimises the expected age
at a Poisson open for a fixed number of refreshes (Cho and Garcia-Molina,
"Effective page refresh policies for web crawlers", ACM TODS 28(4), 2003,
doi:10.1145/958942.958945). ``w = 1`` is a timer with one fetch every
24 h / ``per_day``. Each time is then rounded to the nearest quarter hour
of local time (two that meet become one fetch): the apps of a phone that
run this policy then fetch at the same instants and share the radio's
promotion and tail, as the batching of background work by Android's
AlarmManager and JobScheduler does.

Its one knob, ``w``, is chosen per user and app on the training part
alone: the model is fitted on its first two thirds, and the ``w`` of
``WEIGHTS`` whose schedule gives the lowest expected age at the opens of
the last third is kept (then refitted on the whole training part). The
expected age of an open ``g`` seconds after the content was last refreshed
(a fetch, or the previous open's foreground refresh) is
``g - (1 - exp(-lam * g)) / lam`` for updates at ``lam`` = 1 an hour, the
age of Cho and Garcia-Molina for Poisson updates. Nothing of the scored
window is used: the policy asks to be woken only at its own fetch times.

Settings (``external:cmd=python3 -m fetchlab.examples.open_hours,per_day=28``):
``per_day`` (default 28: on a synthetic population, ``fetchlab synth
--users 40 --days 21 --seed 7``, the largest of 24, 28 and 32 at which it
spends no more energy than ``periodic:1h``; see ``docs/python.md``).
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np

from fetchlab.policy import Policy, serve

#: The candidate weights of the uniform share.
WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0)
#: The update rate assumed by the expected age, per second (1 an hour).
LAM = 1 / 3600.0
DAY = 86_400.0
#: The grid of the fetch times, s of local time.
GRID = 900.0


def schedule(opens_local_s: np.ndarray, w: float, per_day: int) -> np.ndarray:
    """The ``per_day`` local times of day (s in [0, 86400)) of the fetches,
    from opens in local seconds and the uniform share ``w``."""
    counts = np.bincount((np.mod(opens_local_s, DAY) // 3600).astype(np.int64), minlength=24)[:24].astype(float)
    share = counts / counts.sum() if counts.sum() > 0 else np.full(24, 1 / 24)
    rate = np.sqrt((1 - w) * share + w / 24)
    cum = np.concatenate([[0.0], np.cumsum(rate)])
    targets = (np.arange(per_day) + 0.5) / per_day * cum[-1]
    hour = np.clip(np.searchsorted(cum, targets, side="right") - 1, 0, 23)
    frac = (targets - cum[hour]) / rate[hour]
    return (hour + frac) * 3600.0


def expected_age(opens_local_s: np.ndarray, times_of_day: np.ndarray, start: float) -> float:
    """The mean expected age at ``opens_local_s`` (sorted, local s) with
    fetches at ``times_of_day`` every day and a foreground refresh at each
    open; the content is taken as refreshed at ``start``."""
    if len(opens_local_s) == 0:
        return 0.0
    tod = np.sort(times_of_day)
    day = np.floor(opens_local_s / DAY)
    k = np.searchsorted(tod, opens_local_s - day * DAY, side="right") - 1
    last_fetch = np.where(k >= 0, day * DAY + tod[np.maximum(k, 0)], (day - 1) * DAY + tod[-1])
    prev_open = np.concatenate([[start], opens_local_s[:-1]])
    g = opens_local_s - np.maximum(last_fetch, prev_open)
    return float(np.mean(g - (1 - np.exp(-LAM * g)) / LAM))


def choose_weight(opens_local_s: np.ndarray, start: float, end: float, per_day: int,
                  weights: Sequence[float] = WEIGHTS) -> float:
    """The weight of ``weights`` whose schedule, fitted on the first two
    thirds of [start, end), gives the lowest expected age at the opens of
    the last third (the largest such weight on a tie; 1 with no opens)."""
    cut = start + (end - start) * 2 / 3
    fit, test = opens_local_s[opens_local_s < cut], opens_local_s[opens_local_s >= cut]
    if len(fit) == 0 or len(test) == 0:
        return 1.0
    ages = [expected_age(test, schedule(fit, w, per_day), cut) for w in weights]
    best = min(ages)
    return max(w for w, a in zip(weights, ages) if a <= best)


class OpenHours(Policy):
    ask = ()  # woken only at the window's start and at its fetch times

    def setup(self) -> None:
        self.per_day = int(self.settings.get("per_day", 28))
        self.times: Optional[np.ndarray] = None
        self.weight = 1.0

    def _fit(self, offset: float) -> None:
        d = self.device
        opens = np.sort(np.asarray(d.training_opens.get(self.app, []), dtype=float)) + offset
        start, end = d.training_start + offset, d.training_end + offset
        self.weight = choose_weight(opens, start, end, self.per_day)
        self.times = np.unique(np.mod(np.round(schedule(opens, self.weight, self.per_day) / GRID) * GRID, DAY))

    def _next(self, now: float, offset: float) -> float:
        """The first fetch time at least 1 s after ``now`` (Unix s)."""
        t = now + offset + 1
        day = math.floor(t / DAY)
        k = int(np.searchsorted(self.times, t - day * DAY, side="left"))
        local = day * DAY + self.times[k] if k < len(self.times) else (day + 1) * DAY + self.times[0]
        return local - offset

    def decide(self, obs):
        if self.times is None:
            self._fit(obs.utc_offset_s)
        nxt = self._next(obs.now, obs.utc_offset_s)
        return self.fetch(next=nxt) if obs.why == "timer" else self.wait_until(nxt)


if __name__ == "__main__":
    serve(OpenHours)
