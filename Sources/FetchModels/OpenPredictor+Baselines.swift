import FetchTraces
import Foundation

// Baseline open predictors, fitted from a training window of one (user, app)
// and scored by the same code as the learned habit model
// (``PredictionEvaluation``). Each is deliberately simple; a learned model
// that does not beat them has learned nothing useful.
//
// Common smoothing: a count `n` over an exposure `E` seconds becomes the rate
//
//     rate = (n + α) / (E + α / r̄),   r̄ = max(N, ½) / E_total
//
// i.e. `α` pseudo-opens spread at the pair's overall rate `r̄` (N opens in the
// whole training window). Over whole days this is Laplace (add-α) smoothing
// of the share of opens per cell, and a cell with no exposure gets `r̄`. The
// `½` keeps a pair with no training opens at a small positive rate, so a
// test open never has likelihood zero.

/// Opens per second of one hour of the local day, Laplace-smoothed: the
/// classical "time of day" predictor.
///
///     λ(t) = rate[localHourOfDay(t)]
///     rate[h] = (n_h + α) / (E_h + α / r̄)
///
/// where `n_h` counts the training opens in local hour `h` and `E_h` is the
/// training time spent in hour `h` (≈ days × 3600 s): the opens per hour of
/// day averaged over the training days. Ignores recency.
package struct HourOfDayBaseline: OpenPredictor, Codable, Sendable, Equatable {
  /// Opens per second for local hours 0...23; finite, ≥ 0.
  package private(set) var ratesPerSecond: [Double]

  /// A baseline with the given 24 hourly rates (opens per second).
  package init(ratesPerSecond: [Double]) {
    precondition(ratesPerSecond.count == 24, "HourOfDayBaseline needs 24 hourly rates, got \(ratesPerSecond.count)")
    precondition(ratesPerSecond.allSatisfy { $0.isFinite && $0 >= 0 }, "hourly rates must be finite and ≥ 0")
    self.ratesPerSecond = ratesPerSecond
  }

  /// Fits the hourly rates to the opens of `app` in [`from`, `to`) of `trace`.
  ///
  /// - Parameter pseudoOpens: α, the Laplace pseudo-count added to each hour.
  /// - Complexity: O(events + window hours).
  package init(fitting trace: UserTrace, app: Int32, from: Double, to: Double, pseudoOpens: Double = 1) {
    precondition(from.isFinite && to.isFinite && to > from, "training window [\(from), \(to)) is empty")
    precondition(pseudoOpens >= 0, "pseudoOpens must be ≥ 0")
    var clock = LocalClock(trace.timeZone)
    var exposure = [Double](repeating: 0, count: 24)
    LocalHours.forEachPiece(from: from, to: to, clock: &clock) { how, s in exposure[how % 24] += s }
    var counts = [Double](repeating: 0, count: 24)
    var n = 0.0
    for e in trace.events where e.kind == .open && e.app == app && e.time >= from && e.time < to {
      counts[min(23, Int(clock.hourOfDay(e.time)))] += 1
      n += 1
    }
    let overall = max(n, 0.5) / (to - from)
    ratesPerSecond = (0..<24).map { smoothedRate(counts[$0], exposure[$0], pseudo: pseudoOpens, overall: overall) }
  }

  package func intensity(at t: Double, clock: inout LocalClock, recency: Recency) -> Double {
    ratesPerSecond[min(23, max(0, Int(clock.hourOfDay(t))))]
  }
}

/// Two rates: one within ±`windowHours` (circularly) of the local hour of
/// day of the app's last open, one elsewhere — "people open an app at the
/// time of day they last opened it". Before the first open ever seen the
/// elsewhere rate applies.
///
///     λ(t) = near       if |hourOfDay(t) − hourOfDay(t − sinceAppOpen)|∘ ≤ w
///            elsewhere  otherwise
///
/// where |·|∘ is the distance on the 24-hour circle. Just after an open the
/// distance is 0, so `near` also absorbs the burstiness of opens.
package struct LastSeenHourBaseline: OpenPredictor, Codable, Sendable, Equatable {
  /// Opens per second near the last open's hour of day.
  package private(set) var nearRatePerSecond: Double
  /// Opens per second elsewhere (and before any open).
  package private(set) var elsewhereRatePerSecond: Double
  /// Half-width w of the "near" band, hours (default 1).
  package private(set) var windowHours: Double

  package init(nearRatePerSecond: Double, elsewhereRatePerSecond: Double, windowHours: Double = 1) {
    precondition(nearRatePerSecond.isFinite && nearRatePerSecond >= 0, "near rate must be finite and ≥ 0")
    precondition(elsewhereRatePerSecond.isFinite && elsewhereRatePerSecond >= 0, "elsewhere rate must be finite and ≥ 0")
    precondition(windowHours > 0 && windowHours <= 12, "windowHours must be in (0, 12]")
    self.nearRatePerSecond = nearRatePerSecond
    self.elsewhereRatePerSecond = elsewhereRatePerSecond
    self.windowHours = windowHours
  }

  /// Fits both rates on [`from`, `to`): opens of `app` and the time spent
  /// near / away from the hour of day of the app's previous open (taken from
  /// the whole history, including opens before `from`).
  ///
  /// Exposure is computed exactly per inter-open segment in local time (a
  /// daylight-saving jump inside a segment is ignored).
  ///
  /// - Complexity: O(events).
  package init(
    fitting trace: UserTrace, app: Int32, from: Double, to: Double, windowHours: Double = 1, pseudoOpens: Double = 1
  ) {
    precondition(from.isFinite && to.isFinite && to > from, "training window [\(from), \(to)) is empty")
    precondition(windowHours > 0 && windowHours <= 12, "windowHours must be in (0, 12]")
    var clock = LocalClock(trace.timeZone)
    let w = windowHours * 3600
    var last: Double? = nil
    var nNear = 0.0, nElse = 0.0, eNear = 0.0, eElse = 0.0
    var segStart = from
    // Measure of {y in [0, z) : (y mod 86400) < 2w}, for any real z.
    func band(_ z: Double) -> Double {
      let days = (z / 86_400).rounded(.down)
      return days * 2 * w + min(z - days * 86_400, 2 * w)
    }
    func closeSegment(at b: Double, clock: inout LocalClock) {
      guard b > segStart else { return }
      if let l = last {
        let c = clock.local(l) - w
        let la = clock.local(segStart)
        let near = band(la + (b - segStart) - c) - band(la - c)
        eNear += near
        eElse += (b - segStart) - near
      } else {
        eElse += b - segStart
      }
    }
    for e in trace.events where e.kind == .open && e.app == app {
      if e.time >= to { break }
      if e.time >= from {
        if let l = last, Self.circularHours(clock.hourOfDay(e.time), clock.hourOfDay(l)) <= windowHours {
          nNear += 1
        } else {
          nElse += 1
        }
        closeSegment(at: e.time, clock: &clock)
        segStart = e.time
      }
      last = e.time
    }
    closeSegment(at: to, clock: &clock)
    let overall = max(nNear + nElse, 0.5) / (to - from)
    nearRatePerSecond = smoothedRate(nNear, eNear, pseudo: pseudoOpens, overall: overall)
    elsewhereRatePerSecond = smoothedRate(nElse, eElse, pseudo: pseudoOpens, overall: overall)
    self.windowHours = windowHours
  }

  /// Distance between two hours of day on the 24-hour circle, in [0, 12].
  static func circularHours(_ a: Double, _ b: Double) -> Double {
    let d = abs(a - b)
    return min(d, 24 - d)
  }

  package func intensity(at t: Double, clock: inout LocalClock, recency: Recency) -> Double {
    guard recency.sinceAppOpenS.isFinite else { return elsewhereRatePerSecond }
    let lastHour = clock.hourOfDay(t - recency.sinceAppOpenS)
    let hour = clock.hourOfDay(t)
    return Self.circularHours(hour, lastHour) <= windowHours ? nearRatePerSecond : elsewhereRatePerSecond
  }
}

/// A homogeneous Poisson process: the pair's mean rate over the training
/// window, `max(N, ½) / (to − from)`.
package struct ConstantBaseline: OpenPredictor, Codable, Sendable, Equatable {
  /// Opens per second; finite, ≥ 0.
  package private(set) var ratePerSecond: Double

  package init(ratePerSecond: Double) {
    precondition(ratePerSecond.isFinite && ratePerSecond >= 0, "rate must be finite and ≥ 0")
    self.ratePerSecond = ratePerSecond
  }

  /// The mean open rate of `app` over [`from`, `to`).
  ///
  /// - Complexity: O(events).
  package init(fitting trace: UserTrace, app: Int32, from: Double, to: Double) {
    precondition(from.isFinite && to.isFinite && to > from, "training window [\(from), \(to)) is empty")
    var n = 0.0
    for e in trace.events where e.kind == .open && e.app == app && e.time >= from && e.time < to { n += 1 }
    ratePerSecond = max(n, 0.5) / (to - from)
  }

  package func intensity(at t: Double, clock: inout LocalClock, recency: Recency) -> Double { ratePerSecond }
}

/// `(n + α) / (E + α / r̄)`; `r̄` when there is no exposure.
func smoothedRate(_ n: Double, _ exposure: Double, pseudo: Double, overall: Double) -> Double {
  guard overall > 0, overall.isFinite else { return 0 }
  let d = exposure + pseudo / overall
  return d > 0 ? (n + pseudo) / d : overall
}

/// Cuts time intervals at local hour boundaries.
enum LocalHours {
  /// Calls `body(hourOfWeek, seconds)` for each piece of [`from`, `to`) that
  /// lies within one local hour; hour of week 0 = Monday 00:00–01:00.
  ///
  /// - Complexity: O((to − from) / 3600).
  static func forEachPiece(
    from: Double, to: Double, clock: inout LocalClock, _ body: (Int, Double) -> Void
  ) {
    var t = from
    while t < to {
      let l = clock.local(t)
      let hourIndex = (l / 3600).rounded(.down)
      let day = (l / 86_400).rounded(.down)
      let dow = ((Int(day) + 3) % 7 + 7) % 7
      let hod = min(23, max(0, Int(hourIndex - day * 24)))
      var next = t + ((hourIndex + 1) * 3600 - l)
      if next <= t { next = t.nextUp }
      let end = min(next, to)
      body(dow * 24 + hod, end - t)
      t = end
    }
  }
}

extension HourOfDayBaseline {
  /// Fits to the training window of `sample` (see ``init(fitting:app:from:to:pseudoOpens:)``).
  package init(fitting sample: HabitSample, pseudoOpens: Double = 1) {
    self.init(fitting: sample.trace, app: sample.app, from: sample.from, to: sample.to, pseudoOpens: pseudoOpens)
  }
}

extension LastSeenHourBaseline {
  /// Fits to the training window of `sample` (see ``init(fitting:app:from:to:windowHours:pseudoOpens:)``).
  package init(fitting sample: HabitSample, windowHours: Double = 1, pseudoOpens: Double = 1) {
    self.init(
      fitting: sample.trace, app: sample.app, from: sample.from, to: sample.to, windowHours: windowHours,
      pseudoOpens: pseudoOpens)
  }
}

extension ConstantBaseline {
  /// Fits to the training window of `sample` (see ``init(fitting:app:from:to:)``).
  package init(fitting sample: HabitSample) {
    self.init(fitting: sample.trace, app: sample.app, from: sample.from, to: sample.to)
  }
}
