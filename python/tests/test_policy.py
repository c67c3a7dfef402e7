"""fetchlab.policy.serve against the protocol, without FetchLab."""

import io
import json

import pytest

from fetchlab.policy import KEEP, Decision, Policy, serve


def exchange(policy, messages):
    out = io.StringIO()
    serve(policy, io.StringIO("".join(json.dumps(m) + "\n" for m in messages)), out)
    return [json.loads(l) for l in out.getvalue().splitlines()]


HELLO = {"type": "hello", "protocol": "fetchlab-external", "version": 2, "versions": [1, 2], "seed": 7, "timeout_s": 30,
         "settings": {"age": "3600"}}


def device(user, opens):
    return {"type": "device", "device": user, "seed": 11, "time_zone": "UTC", "window_start": 1000.0,
            "apps": ["news"], "training": {"start": 0.0, "end": 1000.0, "opens": {"news": opens}}}


def decide(user, now, why, **extra):
    m = {"type": "decide", "device": user, "app": "news", "why": why, "now": now, "local_hour": 0.0,
         "weekday": 0, "utc_offset_s": 0.0, "network": "wifi", "charging": False, "battery_pct": None,
         "fetch_in_flight": False, "budget": None, "gates": {"offline": False, "low_battery": False}}
    m.update(extra)
    return m


class Recorder(Policy):
    seen = []

    def decide(self, obs):
        Recorder.seen.append((self.device.id, self.app, obs.why, obs.now, list(obs.opens), self.settings))
        if obs.why == "start":
            return self.wait_until(obs.now + float(self.settings["age"]))
        if obs.why == "timer":
            return self.fetch()
        if obs.why == "open":
            return Decision(False, None)
        return None


def test_handshake_replies_and_fresh_state_per_device():
    Recorder.seen = []
    replies = exchange(Recorder, [
        HELLO, device("u1", [10.0]), decide("u1", 1000.0, "start"), decide("u1", 1500.0, "open"),
        decide("u1", 4600.0, "timer"), device("u2", []), decide("u2", 1000.0, "start"),
    ])
    assert replies == [
        {"protocol": "fetchlab-external", "version": 2, "ask": ["open", "fetch_done"]},
        {"fetch": False, "next": 4600.0},
        {"fetch": False, "next": None},
        {"fetch": True},
        {"fetch": False, "next": 4600.0},
    ]
    # The second device starts with no opens of the first.
    assert Recorder.seen[-1][:5] == ("u2", "news", "start", 1000.0, [])
    assert Recorder.seen[2][4] == [1500.0]
    assert Recorder.seen[0][5] == {"age": "3600"}


def test_training_opens_and_seed_reach_the_policy():
    got = {}

    class P(Policy):
        def decide(self, obs):
            got["last"] = self.last_open(obs)
            got["seed"] = self.seed
            got["draw"] = self.rng.random()
            return None

    assert exchange(P, [HELLO, device("u1", [10.0, 20.0]), decide("u1", 1000.0, "start")])[1] == {"fetch": False}
    assert got["last"] == 20.0 and got["seed"] == 11
    first = got["draw"]
    exchange(P, [HELLO, device("u1", [10.0, 20.0]), decide("u1", 1000.0, "start")])
    assert got["draw"] == first  # seeded: the same answer every run


def test_a_bad_return_value_is_an_error():
    class Bad(Policy):
        def decide(self, obs):
            return "yes"

    with pytest.raises(TypeError, match="must return"):
        exchange(Bad, [HELLO, device("u1", []), decide("u1", 1000.0, "start")])


def test_keep_is_the_default_of_fetch():
    assert Policy.fetch().next is KEEP


def test_a_policy_that_asks_less_is_told_of_opens_and_outcomes_in_its_next_observation():
    seen = []

    class TimerOnly(Policy):
        ask = ()

        def decide(self, obs):
            seen.append((obs.why, list(obs.opens), [o["result"] for o in obs.outcomes]))
            return self.wait_until(obs.now + 3600)

    outcome = {"start": 1100.0, "end": 1102.0, "result": "new_data", "bytes": 10, "energy_j": 1.0,
               "network": "wifi"}
    replies = exchange(TimerOnly, [
        HELLO, device("u1", []), decide("u1", 1000.0, "start"),
        decide("u1", 4600.0, "timer", opens=[1500.0, 1600.0], outcomes=[outcome]),
    ])
    assert replies[0] == {"protocol": "fetchlab-external", "version": 2, "ask": []}
    assert seen == [("start", [], []), ("timer", [1500.0, 1600.0], ["new_data"])]


def test_a_fetchlab_that_does_not_offer_version_2_is_refused():
    with pytest.raises(RuntimeError, match="protocol versions"):
        exchange(Recorder, [{"type": "hello", "protocol": "fetchlab-external", "version": 1, "seed": 7,
                             "timeout_s": 30, "settings": {}}])


def test_version_3_says_what_to_tell_and_fills_in_what_a_compact_message_leaves_out():
    seen = []

    class OpensOnly(Policy):
        ask = ()
        tell = ("opens",)

        def decide(self, obs):
            seen.append((obs.charging, obs.battery_pct, obs.fetch_in_flight, obs.budget, obs.gates, list(obs.opens)))
            return self.wait_until(obs.now + 3600)

    hello = dict(HELLO, version=3, versions=[1, 2, 3])
    compact = {"type": "decide", "app": "news", "why": "timer", "now": 4600.0, "local_hour": 1.0, "weekday": 0,
               "utc_offset_s": 0.0, "network": "offline", "opens": [1500.0], "gates": {"offline": True}}
    replies = exchange(OpensOnly, [hello, device("u1", []), decide("u1", 1000.0, "start"), compact,
                                   dict(compact, now=8200.0, charging=True, battery_pct=50.0, opens=[5000.0])])
    assert replies[0] == {"protocol": "fetchlab-external", "version": 3, "ask": [], "tell": ["opens"]}
    assert seen[1] == (False, None, False, None, {"offline": True, "low_battery": False}, [1500.0])
    assert seen[2] == (True, 50.0, False, None, {"offline": True, "low_battery": False}, [1500.0, 5000.0])
