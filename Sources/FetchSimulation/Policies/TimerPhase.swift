import FetchModels
import FetchSupport
import FetchWorld

/// Where each app's own timers start.
///
/// Independent apps do not share a clock: an app's periodic work starts
/// when the app was installed, last launched or enqueued its job, which has
/// nothing to do with the other apps on the phone. A replay therefore gives
/// every (user, app) its own phase, drawn from the run's seed and keyed by
/// the user and the app's name only, so that every policy and every
/// setting of a run sees the same phases and paired comparisons stay
/// paired. `replay.timer_phase=aligned` starts every app's timer one
/// interval after the window start instead: the perfect batching an OS
/// would give by firing all apps' timers together, which no phone does for
/// independent apps' own timers.
extension DeviceReplayInput {
  /// The first firing of app `app`'s timers, as a fraction of their
  /// interval after the window start: uniform in (0, 1], or 1 when the
  /// world aligns timers.
  ///
  /// - Complexity: O(length of the user id and app name).
  package func timerPhase(app: Int32) -> Double {
    TimerPhase.fraction(seed: options.seed, user: user.trace.user, app: user.trace.apps[Int(app)], replay: user.world.replay)
  }
}

/// The phase draw itself, for callers without a ``DeviceReplayInput``.
package enum TimerPhase {
  /// Uniform in (0, 1] from the stream keyed by `seed`, the user and the
  /// app's name; 1 under `replay.timer_phase=aligned`.
  package static func fraction(seed: UInt64, user: String, app: String, replay: ReplaySwitches) -> Double {
    guard !replay.alignedTimers else { return 1 }
    var rng = SplitMix64(seed: seed, keys: "timer-phase", user, app)
    return rng.uniformPositive()
  }
}
