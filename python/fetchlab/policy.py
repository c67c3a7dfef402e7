"""Fetch policies written in Python, run by FetchLab as ``external:`` policies.

A policy is a class with one method, ``decide(obs)``: FetchLab calls it at
each decision opportunity of one app on one phone (the replay window's
start, each open of the app, the ask-again time it asked for, the end of
each of its fetches) with what that app could see, and it answers fetch now
or not, and when to be asked again::

    from fetchlab.policy import Policy, serve

    class StaleAfterAnHour(Policy):
        def decide(self, obs):
            if obs.why == "open":
                return self.wait_until(obs.now + 3600)
            if obs.now - self.last_open(obs) >= 3600:
                return self.fetch(next=obs.now + 3600)
            return self.wait_until(self.last_open(obs) + 3600)

    if __name__ == "__main__":
        serve(StaleAfterAnHour)

and ``fetchlab run --trace t.csv --policy "external:cmd=python3 stale.py"``.
:func:`serve` speaks the protocol (version 3, ``docs/external-protocol.md``)
on stdin and stdout and makes one instance per (device, app), so a policy's
state never leaks from one phone to another and the results do not depend
on ``--jobs``. Nothing from the future is in an observation.

A policy that needs no decision at the app's opens or at its fetches' ends
says so with the class attribute ``ask`` (default ``("open", "fetch_done")``):
``ask = ()`` is asked only at the window's start and at its own ask-again
times, and finds the opens and fetch outcomes since its last decision in
``obs.opens`` and ``obs.outcomes`` all the same. Each decision is a round
trip over the pipe, so asking less makes a run faster. A policy that does
not read ``obs.outcomes`` (or ``obs.opens``) may also leave it out of the
class attribute ``tell`` (default ``("opens", "outcomes")``): FetchLab then
does not send it, and each message is smaller to parse.
"""

from __future__ import annotations

import json
import random
import sys
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Dict, List, Optional, Tuple, Type, Union

PROTOCOL = "fetchlab-external"
VERSION = 3
#: The protocol versions this module speaks.
VERSIONS = (1, 2, 3)

__all__ = ["PROTOCOL", "VERSION", "KEEP", "Decision", "Device", "Observation", "Policy", "serve"]


class _Keep:
    def __repr__(self) -> str:
        return "KEEP"


#: ``Decision.next`` for "the ask-again time asked for before" (the default).
KEEP: Any = _Keep()


@dataclass(frozen=True)
class Decision:
    """Fetch now (``fetch``) and/or ask again at ``next``: Unix s, at least
    1 s after now; ``None``: not before the app's next open or fetch end;
    :data:`KEEP`: the time asked for before (if it has not come yet)."""

    fetch: bool = False
    next: Any = KEEP


@dataclass
class Device:
    """One phone: its id, seed, time zone, the replay window's start, the
    replayed apps, and each app's opens in the training part (Unix s)."""

    id: str
    seed: int
    time_zone: str
    window_start: float
    apps: List[str]
    training_start: float
    training_end: float
    training_opens: Dict[str, List[float]]


class Observation:
    """What the app sees at one decision (all at or before ``now``).

    ``why``: ``start``, ``open``, ``timer`` or ``fetch_done``; ``now`` Unix s;
    ``local_hour`` in [0, 24); ``weekday`` 0 = Monday; ``utc_offset_s``;
    ``network`` (``wifi``, ``lte``, ``offline``, ...); ``charging``;
    ``battery_pct`` (``None`` while unknown); ``fetch_in_flight``; ``budget``
    (``None``: the OS gives the app none); ``gates`` (``offline``,
    ``low_battery``: the OS's own reasons to hold background work);
    ``outcome`` of the fetch that just finished (``start``, ``end``,
    ``result`` of ``new_data``/``no_data``/``failed``, ``bytes``,
    ``energy_j``, ``network``) or ``None``; ``opens``: the app's opens in the
    window so far (the training part's are in ``Device.training_opens``);
    ``outcomes``: its fetches' outcomes so far (each list only if the
    policy's ``tell`` has it or its ``ask`` has the matching opportunity).
    ``raw``: the message as sent (from version 3 without the fields that
    hold their default, which the attributes fill in).
    """

    __slots__ = ("why", "now", "local_hour", "weekday", "utc_offset_s", "network", "charging", "battery_pct",
                 "fetch_in_flight", "budget", "gates", "outcome", "opens", "outcomes", "raw")

    def __init__(self, m: Dict[str, Any], opens: List[float], outcomes: List[Dict[str, Any]]):
        self.raw = m
        self.why = m["why"]
        self.now = m["now"]
        self.local_hour = m["local_hour"]
        self.weekday = m["weekday"]
        self.utc_offset_s = m["utc_offset_s"]
        self.network = m["network"]
        # Version 3 leaves out what holds its default: false, unknown, none.
        self.charging = m.get("charging", False)
        self.battery_pct = m.get("battery_pct")
        self.fetch_in_flight = m.get("fetch_in_flight", False)
        self.budget = m.get("budget")
        g = m.get("gates")
        self.gates = {"offline": False, "low_battery": False} if g is None else {
            "offline": g.get("offline", False), "low_battery": g.get("low_battery", False)}
        self.outcome = m.get("outcome")
        self.opens = opens
        self.outcomes = outcomes


class Policy:
    """The base class: subclass it and define :meth:`decide`.

    Each instance serves one app on one phone: ``self.device``
    (:class:`Device`), ``self.app`` (its name), ``self.settings`` (the
    policy string's other ``key=value`` settings, as text), ``self.seed``
    (this device's seed) and ``self.rng`` (a ``random.Random`` seeded
    with it). Override :meth:`setup` to learn from the training part.
    ``ask`` (a class attribute): the optional decision opportunities the
    policy wants, among ``"open"`` and ``"fetch_done"``; those it leaves
    out reach it in the next observation's ``opens`` and ``outcomes``,
    if ``tell`` (a class attribute, among ``"opens"`` and ``"outcomes"``)
    has them.
    """

    ask: Tuple[str, ...] = ("open", "fetch_done")
    tell: Tuple[str, ...] = ("opens", "outcomes")

    def __init__(self, device: Device, app: str, settings: Dict[str, str]):
        self.device = device
        self.app = app
        self.settings = settings
        self.seed = device.seed
        self.rng = random.Random(device.seed)
        self.setup()

    def setup(self) -> None:
        """Called once per instance, before the first decision (default: nothing)."""

    def decide(self, obs: Observation) -> Union[None, Decision, bool, Tuple[bool, Any]]:
        """The decision at ``obs``: a :class:`Decision`; ``None`` (no fetch, the
        ask-again time unchanged); a bool (fetch or not, the time unchanged);
        or ``(fetch, next)``."""
        raise NotImplementedError

    # Helpers for decide().
    @staticmethod
    def fetch(next: Any = KEEP) -> Decision:
        """Fetch now (and ask again at ``next``; by default at the time asked for before)."""
        return Decision(True, next)

    @staticmethod
    def wait_until(t: Optional[float]) -> Decision:
        """Do not fetch; ask again at ``t`` (``None``: at the next open)."""
        return Decision(False, t)

    def last_open(self, obs: Observation) -> float:
        """The app's last open before or at now (training part included), or -inf."""
        if obs.opens:
            return obs.opens[-1]
        t = self.device.training_opens.get(self.app)
        return t[-1] if t else float("-inf")


def _reply(d: Any) -> str:
    if d is None:
        return '{"fetch":false}\n'
    if isinstance(d, Decision):
        fetch, nxt = d.fetch, d.next
    elif isinstance(d, bool):
        fetch, nxt = d, KEEP
    elif isinstance(d, tuple) and len(d) == 2:
        fetch, nxt = bool(d[0]), d[1]
    else:
        raise TypeError(f"decide() must return None, a Decision, a bool or (fetch, next), not {d!r}")
    head = '{"fetch":true' if fetch else '{"fetch":false'
    if nxt is KEEP:
        return head + "}\n"
    return head + ',"next":' + ("null" if nxt is None else repr(float(nxt))) + "}\n"


def serve(policy: Type[Policy], stdin: Optional[IO[str]] = None, stdout: Optional[IO[str]] = None) -> None:
    """Speaks the ``external`` protocol on ``stdin``/``stdout`` (the process's
    by default) until end of input, with one ``policy`` instance per
    (device, app). An exception in the policy ends the process with its
    traceback on stderr, which FetchLab shows."""
    inp = stdin if stdin is not None else sys.stdin.buffer
    out = stdout if stdout is not None else sys.stdout
    settings: Dict[str, str] = {}
    device: Optional[Device] = None
    instances: Dict[str, Tuple[Policy, List[float], List[Dict[str, Any]]]] = {}
    loads = json.loads
    write, flush = out.write, out.flush
    for line in inp:
        m = loads(line)
        t = m["type"]
        if t == "decide":
            app = m["app"]
            slot = instances.get(app)
            if slot is None:
                if device is None or device.id != m.get("device", device.id):
                    raise RuntimeError("a decision for a device that was not announced")
                slot = instances[app] = (policy(device, app, settings), [], [])
            inst, opens, outcomes = slot
            if "opens" in m:
                opens.extend(m["opens"])
            if "outcomes" in m:
                outcomes.extend(m["outcomes"])
            why = m["why"]
            if why == "open":
                opens.append(m["now"])
            elif why == "fetch_done":
                outcomes.append(m["outcome"])
            write(_reply(inst.decide(Observation(m, opens, outcomes))))
            flush()
        elif t == "device":
            tr = m["training"]
            device = Device(m["device"], m["seed"], m["time_zone"], m["window_start"], m["apps"], tr["start"],
                            tr["end"], tr["opens"])
            instances = {}
        elif t == "hello":
            offered = m.get("versions", [m.get("version")])
            spoken = [v for v in (3, 2) if v in offered]
            if not spoken:
                raise RuntimeError(f"FetchLab speaks protocol versions {offered}, this serve() 2 or {VERSION}")
            settings = dict(m.get("settings", {}))
            ask = [a for a in ("open", "fetch_done") if a in policy.ask]
            reply = {"protocol": PROTOCOL, "version": spoken[0], "ask": ask}
            if spoken[0] >= 3:
                reply["tell"] = [n for n in ("opens", "outcomes") if n in policy.tell]
            write(json.dumps(reply, separators=(",", ":")) + "\n")
            flush()
        else:
            raise RuntimeError(f"unknown message type {t!r}")
