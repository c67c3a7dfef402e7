"""A learning policy: a logistic model of the hour of the app's opens,
fitted on the training part, spends a fixed number of fetches a day where
opens are likely.

Model: for every local hour of the training part, whether the app was
opened in it, regressed on the hour of day by logistic regression with
``harmonics`` Fourier terms (IRLS in NumPy, a small ridge). The fitted
probability ``p_h`` of an open in hour ``h`` gives the open rate
``rate_h = -log(1 - p_h)`` per hour. Given ``per_day`` fetches a day, the
fetch rate in hour ``h`` is proportional to ``sqrt(rate_h)``: the rule that
minimises the expected age at a Poisson open for a fixed number of
periodic refreshes (Cho and Garcia-Molina, "Effective page refresh
policies for web crawlers", ACM TODS 28(4), 2003, doi:10.1145/958942.958945).
With ``per_day=24`` it spends the fetches of ``periodic:1h``.

Settings (``external:cmd=python3 -m fetchlab.examples.hour_model,per_day=24``):
``per_day`` (default 24), ``harmonics`` (default 2), ``ridge`` (default 1).
"""

from __future__ import annotations

import math

import numpy as np

from fetchlab.policy import Policy, serve


def fit_hour_model(opens_local_s: np.ndarray, start_local_s: float, end_local_s: float, harmonics: int = 2,
                   ridge: float = 1.0) -> np.ndarray:
    """P(at least one open in local hour h), h = 0..23, from opens and the
    training window (all in local seconds): logistic regression by IRLS."""
    first = math.floor(start_local_s / 3600)
    last = math.floor(end_local_s / 3600)
    n = max(0, last - first)
    if n < 24:
        return np.full(24, 0.0)
    hours = np.arange(first, last)
    y = np.zeros(n)
    idx = np.floor(opens_local_s / 3600).astype(np.int64) - first
    idx = idx[(idx >= 0) & (idx < n)]
    y[idx] = 1.0

    def design(h: np.ndarray) -> np.ndarray:
        a = 2 * np.pi * (np.mod(h, 24) / 24.0)
        cols = [np.ones_like(a)]
        for k in range(1, harmonics + 1):
            cols += [np.cos(k * a), np.sin(k * a)]
        return np.stack(cols, axis=1)

    X = design(hours.astype(float))
    beta = np.zeros(X.shape[1])
    beta[0] = math.log((y.mean() + 1e-3) / (1 - y.mean() + 1e-3))
    penalty = ridge * np.eye(X.shape[1])
    penalty[0, 0] = 0.0
    for _ in range(50):
        eta = X @ beta
        p = 1 / (1 + np.exp(-eta))
        w = np.maximum(p * (1 - p), 1e-9)
        grad = X.T @ (y - p) - penalty @ beta
        hess = X.T @ (X * w[:, None]) + penalty
        step = np.linalg.solve(hess, grad)
        beta += step
        if np.max(np.abs(step)) < 1e-8:
            break
    return 1 / (1 + np.exp(-(design(np.arange(24, dtype=float)) @ beta)))


class HourModel(Policy):
    def setup(self) -> None:
        s = self.settings
        self.per_day = float(s.get("per_day", 24))
        d = self.device
        self.opens = np.asarray(d.training_opens.get(self.app, []), dtype=float)
        self.harmonics = int(s.get("harmonics", 2))
        self.ridge = float(s.get("ridge", 1))
        self.rate = None

    def _fit(self, offset: float) -> None:
        d = self.device
        p = fit_hour_model(self.opens + offset, d.training_start + offset, d.training_end + offset,
                           self.harmonics, self.ridge)
        rate = -np.log1p(-np.clip(p, 0, 1 - 1e-9))
        if rate.sum() <= 0:
            rate = np.ones(24)
        w = np.sqrt(rate)
        # Fetches per second in each hour of day (a floor keeps every wait finite).
        self.rate = np.maximum(self.per_day * w / w.sum(), 1e-3) / 3600

    def _next(self, now: float, offset: float) -> float:
        """The time when one fetch's worth of the hourly rates has passed."""
        t, left = now + offset, 1.0
        for _ in range(48):
            hour = math.floor(t / 3600)
            r = float(self.rate[hour % 24])
            end = (hour + 1) * 3600.0
            if t + left / r <= end:
                return max(t + left / r - offset, now + 1)
            left -= (end - t) * r
            t = end
        return t - offset

    def decide(self, obs):
        if self.rate is None:
            self._fit(obs.utc_offset_s)
        if obs.why in ("start", "open"):
            # An open refreshes the content in the foreground: the next
            # background fetch is one fetch's worth of rate after it.
            return self.wait_until(self._next(obs.now, obs.utc_offset_s))
        if obs.why == "timer":
            return self.fetch(next=self._next(obs.now, obs.utc_offset_s))
        return None


if __name__ == "__main__":
    serve(HourModel)
