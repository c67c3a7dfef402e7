import FetchTraces
import Foundation

/// An empirical baseline of "≥ 1 open of the app in the next `h`": the
/// training frequency of that event in a cell of time, instead of a Poisson
/// rate turned into a probability (`1 − e^{−λh}` over-predicts when opens
/// come in bursts: most hours with an open have several).
///
/// Cells (``Kind``): one for ``Kind/constant``; the local hour of day of
/// `t` (24); the local hour of week (168); for ``Kind/lastSeenHour`` "near"
/// (within ±1 h of the hour of day of the app's last open, on the 24-h
/// circle) or "elsewhere" (and before any open).
///
/// Fitting, on the grid `t = k·grid` with `[t, t + h] ⊆` the training
/// window: `y(t) = 1` when the app is opened in (t, t + h]. With `n_c` grid
/// points and `y_c` events in cell c, and κ = 4 pseudo-points:
///
///     p̄   = (Σ y + ½) / (n + 1)
///     p_c = (y_c + κ·parent_c) / (n_c + κ)
///
/// where the parent is p̄, except for hour of week: the smoothed hour-of-day
/// frequency of the same hour. ``Kind/constant`` is p̄ itself.
///
/// The intensity (used only for the Poisson count log-likelihood of
/// ``PredictionEvaluation``) is the matching smoothed rate of
/// ``HourOfDayBaseline`` / ``LastSeenHourBaseline`` / ``ConstantBaseline``
/// (hour of week: the hour-of-week rate smoothed toward the hour-of-day
/// rate). ``probabilityOfEvent(within:from:clock:recency:step:)`` returns
/// the cell's frequency when `h` is the fitted horizon, else the Poisson
/// conversion of the intensity.
package struct CalibratedBaseline: OpenPredictor, Sendable, Equatable {
  package enum Kind: String, CaseIterable, Sendable {
    case hourOfDay = "hour_of_day"
    case hourOfWeek = "hour_of_week"
    case lastSeenHour = "last_seen_hour"
    case constant
  }

  /// Pseudo-points of the smoothing (κ).
  package static let pseudoPoints = 4.0

  package let kind: Kind
  /// The horizon the frequencies are for, s.
  package let horizonSeconds: Double
  /// Opens per second, per cell.
  package private(set) var ratesPerSecond: [Double]
  /// P(≥ 1 open in the next horizon), per cell.
  package private(set) var probabilities: [Double]

  /// Fits `kind` to the training window of `sample`.
  ///
  /// - Complexity: O(events + window / grid).
  package init(_ kind: Kind, fitting sample: HabitSample, horizonSeconds: Double = 3600, gridSeconds: Double = 900) {
    precondition(horizonSeconds > 0 && gridSeconds > 0, "horizon and grid must be > 0")
    self.kind = kind
    self.horizonSeconds = horizonSeconds
    let trace = sample.trace, app = sample.app, from = sample.from, to = sample.to
    var clock = LocalClock(trace.timeZone)
    let hod = HourOfDayBaseline(fitting: sample)
    switch kind {
    case .constant: ratesPerSecond = [ConstantBaseline(fitting: sample).ratePerSecond]
    case .hourOfDay: ratesPerSecond = hod.ratesPerSecond
    case .lastSeenHour:
      let l = LastSeenHourBaseline(fitting: sample)
      ratesPerSecond = [l.nearRatePerSecond, l.elsewhereRatePerSecond]
    case .hourOfWeek:
      var exposure = [Double](repeating: 0, count: 168), counts = [Double](repeating: 0, count: 168)
      LocalHours.forEachPiece(from: from, to: to, clock: &clock) { how, s in exposure[how] += s }
      for e in trace.events where e.kind == .open && e.app == app && e.time >= from && e.time < to {
        counts[min(167, max(0, Int(clock.hourOfWeek(e.time))))] += 1
      }
      ratesPerSecond = (0..<168).map {
        smoothedRate(counts[$0], exposure[$0], pseudo: 1, overall: hod.ratesPerSecond[$0 % 24])
      }
    }

    // Empirical frequencies on the training grid.
    let opens = trace.events.filter { $0.kind == .open && $0.app == app }.map(\.time)
    let cells = Self.cellCount(kind)
    var yc = [Double](repeating: 0, count: cells), nc = [Double](repeating: 0, count: cells)
    var yh = [Double](repeating: 0, count: 24), nh = [Double](repeating: 0, count: 24)
    var total = 0.0, events = 0.0
    var i = 0
    var t = (from / gridSeconds).rounded(.up) * gridSeconds
    while t + horizonSeconds <= to {
      while i < opens.count && opens[i] <= t { i += 1 }
      let y = i < opens.count && opens[i] <= t + horizonSeconds ? 1.0 : 0
      let recency = Recency(sinceAppOpenS: i > 0 ? t - opens[i - 1] : .infinity, sinceAnyOpenS: .infinity)
      let c = Self.cell(kind, at: t, clock: &clock, recency: recency)
      yc[c] += y
      nc[c] += 1
      let h = min(23, max(0, Int(clock.hourOfDay(t))))
      yh[h] += y
      nh[h] += 1
      total += 1
      events += y
      t += gridSeconds
    }
    let k = Self.pseudoPoints
    let overall = (events + 0.5) / (total + 1)
    let byHour = (0..<24).map { (yh[$0] + k * overall) / (nh[$0] + k) }
    probabilities = kind == .constant ? [overall] : (0..<cells).map { c in
      let parent = kind == .hourOfWeek ? byHour[c % 24] : overall
      return (yc[c] + k * parent) / (nc[c] + k)
    }
  }

  static func cellCount(_ kind: Kind) -> Int {
    switch kind {
    case .constant: 1
    case .hourOfDay: 24
    case .hourOfWeek: 168
    case .lastSeenHour: 2
    }
  }

  /// The cell of `t` given the recency at `t`.
  static func cell(_ kind: Kind, at t: Double, clock: inout LocalClock, recency: Recency) -> Int {
    switch kind {
    case .constant: return 0
    case .hourOfDay: return min(23, max(0, Int(clock.hourOfDay(t))))
    case .hourOfWeek: return min(167, max(0, Int(clock.hourOfWeek(t))))
    case .lastSeenHour:
      guard recency.sinceAppOpenS.isFinite else { return 1 }
      let near = LastSeenHourBaseline.circularHours(clock.hourOfDay(t), clock.hourOfDay(t - recency.sinceAppOpenS)) <= 1
      return near ? 0 : 1
    }
  }

  package func intensity(at t: Double, clock: inout LocalClock, recency: Recency) -> Double {
    ratesPerSecond[Self.cell(kind, at: t, clock: &clock, recency: recency)]
  }

  package func probabilityOfEvent(
    within h: Double, from t: Double, clock: inout LocalClock, recency: Recency, step: Double
  ) -> Double {
    guard h == horizonSeconds else {
      return probabilityOfOpen(within: h, from: t, clock: &clock, recency: recency, step: step)
    }
    return probabilities[Self.cell(kind, at: t, clock: &clock, recency: recency)]
  }
}
