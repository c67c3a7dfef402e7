import FetchTraces
import Foundation

extension HabitModel {
  /// The features, in the order of ``coefficients``. Stable: decoding a model
  /// with a different list fails.
  ///
  /// With `h` the local hour of day in [0, 24) and `w` = 1 on local Saturdays
  /// and Sundays (else 0):
  ///
  /// | name | value |
  /// |---|---|
  /// | `intercept` | 1 |
  /// | `hour_sin1`, `hour_cos1` | sin, cos(2πh/24) |
  /// | `hour_sin2`, `hour_cos2` | sin, cos(2π·2h/24) |
  /// | `hour_sin3`, `hour_cos3` | sin, cos(2π·3h/24) |
  /// | `weekend` | w |
  /// | `weekend_hour_sin1`, `weekend_hour_cos1` | w·sin, w·cos(2πh/24) |
  /// | `recency_app` | log1p(min(sinceAppOpenS, 7 d) / 3600 s) |
  /// | `recency_any` | log1p(min(sinceAnyOpenS, 1 d) / 60 s) |
  ///
  /// Recency ∞ (never seen) or NaN counts as the cap; a negative one as 0.
  package static let featureNames: [String] = [
    "intercept",
    "hour_sin1", "hour_cos1", "hour_sin2", "hour_cos2", "hour_sin3", "hour_cos3",
    "weekend", "weekend_hour_sin1", "weekend_hour_cos1",
    "recency_app", "recency_any",
  ]

  /// Number of features (12).
  static let featureCount = 12

  /// Cap of `sinceAppOpenS` in the `recency_app` feature: 7 days, s.
  static let appRecencyCapS = 7 * 86_400.0
  /// Cap of `sinceAnyOpenS` in the `recency_any` feature: 1 day, s.
  static let anyRecencyCapS = 86_400.0

  /// The feature vector x(t) at Unix time `t` (s), in ``featureNames`` order.
  ///
  /// The same function the fitter uses at each bin start, so fitted and
  /// predicted features agree.
  /// - Precondition: `t` is finite.
  package static func features(at t: Double, clock: inout LocalClock, recency: Recency) -> [Double] {
    var v = [Double](repeating: 0, count: featureCount)
    forEachFeature(at: t, clock: &clock, recency: recency) { j, x in v[j] = x }
    return v
  }

  /// Calls `body(j, x_j)` for each feature j of x(t): the single definition of
  /// the features, shared by fitting and prediction.
  ///
  /// - Complexity: O(1): one `sin`/`cos` pair (higher harmonics by the
  ///   angle-addition formulas), two `log1p`.
  @inline(__always)
  static func forEachFeature(
    at t: Double, clock: inout LocalClock, recency: Recency, _ body: (Int, Double) -> Void
  ) {
    precondition(t.isFinite, "HabitModel features need a finite time, got \(t)")
    let h = clock.hourOfDay(t)
    let w: Double = clock.dayOfWeek(t) >= 5 ? 1 : 0
    let a = 2 * Double.pi * h / 24
    forEachFeature(weekend: w, sin: sin(a), cos: cos(a), recency: recency, body)
  }

  /// ``forEachFeature(at:clock:recency:_:)`` given the weekend flag `w` and
  /// sin, cos(2πh/24) of the local hour h: the features from there on.
  @inline(__always)
  static func forEachFeature(
    weekend w: Double, sin s1: Double, cos c1: Double, recency: Recency, _ body: (Int, Double) -> Void
  ) {
    let s2 = 2 * s1 * c1, c2 = c1 * c1 - s1 * s1
    let s3 = s1 * c2 + c1 * s2, c3 = c1 * c2 - s1 * s2
    body(0, 1)
    body(1, s1)
    body(2, c1)
    body(3, s2)
    body(4, c2)
    body(5, s3)
    body(6, c3)
    body(7, w)
    body(8, w * s1)
    body(9, w * c1)
    body(10, cappedLog1p(recency.sinceAppOpenS, cap: appRecencyCapS, scale: 3600))
    body(11, cappedLog1p(recency.sinceAnyOpenS, cap: anyRecencyCapS, scale: 60))
  }

  /// The time part of the linear predictor, Σ_{j<10} β_j x_j(t) summed in
  /// ``linearPredictor(at:clock:recency:)``'s order (the same bits as its
  /// running sum before the recency terms), from the weekend flag and
  /// sin, cos of the hour angle as in
  /// ``forEachFeature(weekend:sin:cos:recency:_:)``.
  @inline(__always)
  static func timeLinearPredictor(_ c: [Double], weekend w: Double, sin s1: Double, cos c1: Double) -> Double {
    let s2 = 2 * s1 * c1, c2 = c1 * c1 - s1 * s1
    let s3 = s1 * c2 + c1 * s2, c3 = c1 * c2 - s1 * s2
    var eta = 0.0
    eta += c[0] * 1
    eta += c[1] * s1
    eta += c[2] * c1
    eta += c[3] * s2
    eta += c[4] * c2
    eta += c[5] * s3
    eta += c[6] * c3
    eta += c[7] * w
    eta += c[8] * (w * s1)
    eta += c[9] * (w * c1)
    return eta
  }

  /// `log1p(min(max(s, 0), cap) / scale)`, NaN and ∞ mapping to the cap.
  @inline(__always)
  static func cappedLog1p(_ s: Double, cap: Double, scale: Double) -> Double {
    let v = s.isNaN ? cap : min(max(s, 0), cap)
    return log1p(v / scale)
  }
}

/// The bins of a training window and where a design starts in it.
struct HabitBins {
  /// Window start, Unix s.
  let from: Double
  /// Window end, Unix s.
  let to: Double
  /// Bin length, s.
  let binSeconds: Double
  /// Bins in the whole window, the last possibly partial.
  let total: Int
  /// The first bin used (so `total - first` bins are used).
  let first: Int

  /// Bins of [from, to): ⌊(to − from)/b⌋ full ones plus a partial one when the
  /// remainder exceeds 10⁻⁶ b; none when to ≤ from or the span is not finite.
  /// Only the last `lastBins` are used when given.
  init(from: Double, to: Double, binSeconds b: Double, lastBins: Int? = nil) {
    self.from = from
    self.to = to
    binSeconds = b
    let span = to - from
    if span > 0 && span.isFinite {
      let full = (span / b).rounded(.down)
      let partial = span - full * b > 1e-6 * b ? 1 : 0
      total = Int(full) + partial
    } else {
      total = 0
    }
    first = max(0, total - (lastBins ?? total))
  }

  /// Number of bins used.
  var count: Int { total - first }

  /// Start of bin `k` (window index), Unix s.
  func start(_ k: Int) -> Double { from + Double(k) * binSeconds }

  /// Length of bin `k` as a fraction of a full bin, in (0, 1].
  func exposure(_ k: Int) -> Double {
    let end = k == total - 1 ? to : start(k + 1)
    return min(1, (end - start(k)) / binSeconds)
  }
}

extension HabitModel {
  /// Fills `count` rows of a column-major design (leading dimension
  /// `totalRows`, starting at row `rowOffset`), the responses and the
  /// exposures for the used bins of `sample`.
  ///
  /// Row i is bin k = `bins.first + i`: its features at the bin start (local
  /// time, recency from the trace's opens strictly before the bin start, any
  /// app for `recency_any`), the count of opens of `sample.app` in the bin,
  /// and the bin's length as a fraction of a full bin.
  ///
  /// - Returns: the number of opens counted.
  /// - Complexity: O(events + bins).
  ///
  /// With `appRecency` false, column 10 (`recency_app`) is left 0 without
  /// its `log1p` (for ``HabitUserDesign``, whose tables bring their own).
  static func fillDesign(
    _ sample: HabitSample, bins: HabitBins, x: inout [Double], y: inout [Double], exposure: inout [Double],
    rowOffset: Int, totalRows: Int, appRecency: Bool = true
  ) -> Int {
    let n = bins.count
    guard n > 0 else { return 0 }
    let events = sample.trace.events
    var clock = LocalClock(sample.trace.timeZone)
    var p = 0
    var lastApp = -Double.infinity, lastAny = -Double.infinity
    // sin and cos of the hour angle by bin of the day: bins recur daily, so
    // most rows reuse them (the same angle, hence the same bits).
    var angles = [(a: Double, s: Double, c: Double)](repeating: (.nan, 0, 0), count: 97)
    for i in 0..<n {
      let k = bins.first + i
      let t0 = bins.start(k)
      while p < events.count && events[p].time < t0 {
        let e = events[p]
        if e.kind == .open {
          lastAny = e.time
          if e.app == sample.app { lastApp = e.time }
        }
        p += 1
      }
      // log1p(0) = 0 (exact, and cheap) where column 10 is not wanted.
      let recency = Recency(sinceAppOpenS: appRecency ? t0 - lastApp : 0, sinceAnyOpenS: t0 - lastAny)
      let row = rowOffset + i
      precondition(t0.isFinite, "HabitModel features need a finite time, got \(t0)")
      let h = clock.hourOfDay(t0)
      let w: Double = clock.dayOfWeek(t0) >= 5 ? 1 : 0
      let a = 2 * Double.pi * h / 24
      let slot = min(96, max(0, Int(h * 4)))
      if angles[slot].a != a { angles[slot] = (a, sin(a), cos(a)) }
      forEachFeature(weekend: w, sin: angles[slot].s, cos: angles[slot].c, recency: recency) { j, v in
        x[row + j * totalRows] = v
      }
      y[row] = 0
      exposure[row] = bins.exposure(k)
    }
    // Count the app's opens in [start(first), to).
    let lo = bins.start(bins.first)
    var opens = 0
    for e in events where e.kind == .open && e.app == sample.app && e.time >= lo && e.time < bins.to {
      let k = min(n - 1, max(0, Int(((e.time - lo) / bins.binSeconds).rounded(.down))))
      y[rowOffset + k] += 1
      opens += 1
    }
    return opens
  }
}
