import FetchTraces
import Foundation

/// What the past says about a user at a moment: how long since they last
/// opened the app under study, and since they last opened any app.
package struct Recency: Sendable, Equatable {
  /// Seconds since the app's last open (∞ if never seen).
  package var sinceAppOpenS: Double
  /// Seconds since any app's last open (∞ if never seen).
  package var sinceAnyOpenS: Double

  package init(sinceAppOpenS: Double, sinceAnyOpenS: Double) {
    self.sinceAppOpenS = sinceAppOpenS
    self.sinceAnyOpenS = sinceAnyOpenS
  }

  /// The recency `dt` seconds later, assuming no open in between.
  package func advanced(by dt: Double) -> Recency {
    Recency(sinceAppOpenS: sinceAppOpenS + dt, sinceAnyOpenS: sinceAnyOpenS + dt)
  }
}

/// A model of when a user opens one app, conditioned on the past only.
///
/// Implemented by the learned habit model and by the evaluation baselines,
/// so both are scored by the same code.
package protocol OpenPredictor: Sendable {
  /// Expected opens of the app per second at Unix time `t`, given the
  /// recency state at `t`. `clock` converts `t` to the user's local time.
  func intensity(at t: Double, clock: inout LocalClock, recency: Recency) -> Double

  /// P(at least one open of the app in (t, t + h]) as the predictor states
  /// it, scored by ``PredictionEvaluation``. Default:
  /// ``probabilityOfOpen(within:from:clock:recency:step:)`` from the
  /// intensity; empirical baselines (``CalibratedBaseline``) give their
  /// training frequency instead.
  func probabilityOfEvent(within h: Double, from t: Double, clock: inout LocalClock, recency: Recency, step: Double) -> Double
}

extension OpenPredictor {
  package func probabilityOfEvent(
    within h: Double, from t: Double, clock: inout LocalClock, recency: Recency, step: Double
  ) -> Double {
    probabilityOfOpen(within: h, from: t, clock: &clock, recency: recency, step: step)
  }

  /// P(at least one open of the app in (t, t + h]) under the model, assuming
  /// no open of any app in between (recency grows with time): one minus the
  /// survival `exp(−∫ λ)`, integrated with the midpoint rule on `step`-second
  /// pieces.
  ///
  /// - Complexity: O(h / step).
  package func probabilityOfOpen(
    within h: Double, from t: Double, clock: inout LocalClock, recency: Recency, step: Double = 300
  ) -> Double {
    probabilityOfAnOpen(within: h, from: t, step: step) { mid in
      intensity(at: t + mid, clock: &clock, recency: recency.advanced(by: mid))
    }
  }
}

/// P(at least one event in (t, t + h]) of a process whose intensity (per
/// second) `intensity(x)` gives at `t + x`: one minus the survival
/// `exp(−∫ λ)`, integrated with the midpoint rule on `step`-second pieces
/// (the last one shorter). The one integration behind every
/// `probabilityOfOpen`, so that they agree bit for bit.
///
/// - Complexity: O(h / step) calls of `intensity`.
func probabilityOfAnOpen(within h: Double, from t: Double, step: Double, intensity: (Double) -> Double) -> Double {
  precondition(step > 0 && step.isFinite && !h.isNaN && h < .infinity && t.isFinite,
               "probabilityOfOpen needs a finite time and horizon and a positive step")
  guard h > 0 else { return 0 }
  var cumulative = 0.0
  var x = 0.0
  while x < h {
    let dt = min(step, h - x)
    let mid = x + dt / 2
    cumulative += intensity(mid) * dt
    x += dt
  }
  return -expm1(-cumulative)
}
