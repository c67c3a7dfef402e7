import FetchTraces
import Foundation

/// Upper bounds of a ``HabitModel``'s intensity over a span of time with no
/// open in it: what a look-ahead could at most predict, for a scheduler that
/// skips the look-ahead when even that would not pay.
///
/// The linear predictor at τ = t + d splits into the time part T(h, w)
/// (features 0..<10: the local hour h and the weekend flag w) and the two
/// recency terms β₁₀·f_app(r_app + d) + β₁₁·f_any(r_any + d), each monotone
/// in d (``HabitModel/cappedLog1p(_:cap:scale:)`` is non-decreasing), so its
/// largest value over d ∈ [first, last] is at `last` for a coefficient ≥ 0
/// and at `first` otherwise. T, as a function of the hour angle a = 2πh/24,
/// is bounded on each five-minute slot of the local day (|a − c| ≤ δ =
/// π/288 about the slot's centre c) by its second-order Taylor bound
///
///     T(a) ≤ T(c) + |T′(c)|·δ + ½·M₂·δ²,   M₂ = r₁ + 4·r₂ + 9·r₃ ≥ |T″|,
///
/// with r_k the amplitude of harmonic k (the hypot of its sine and cosine
/// coefficients, the weekend ones added on weekends). The slots a span
/// covers (widened by 1 s at each end for the rounding of the local time)
/// give its time part's bound when the UTC offset holds over the span
/// (``LocalClock/offsetSpan(at:)``); otherwise the largest slot bound.
///
/// Every bound carries a relative margin of 10⁻⁹ and an absolute one of
/// 10⁻⁹·(1 + Σ|β|) for the rounding of the computed intensities (errors of
/// order 10⁻¹⁴ of the same terms), so it holds for the bits that
/// ``HabitModel/intensity(at:clock:recency:)`` and ``HabitOpenMemo`` compute.
package struct HabitIntensityBound: Sendable {
  /// Slots of the local day (five minutes each).
  static let slotsPerDay = 288
  static let slotSeconds = 300.0
  /// Upper bounds of the time part by slot: weekdays at 0..<288, weekends at 288..<576.
  private let slots: [Double]
  /// The largest of ``slots``.
  private let slotMax: Double
  private let appCoefficient: Double
  private let anyCoefficient: Double
  private let binSeconds: Double

  /// The bounds of `model`'s time part.
  ///
  /// - Complexity: O(576): one `sin`/`cos` pair per slot of the day.
  package init(_ model: HabitModel) {
    let c = model.coefficients
    let n = Self.slotsPerDay
    let margin = 1e-9 * (1 + c.reduce(0) { $0 + abs($1) })
    let delta = Double.pi / Double(n) * (1 + 1e-6)
    var slots = [Double](repeating: 0, count: 2 * n)
    for w in 0..<2 {
      let wd = Double(w)
      let a1 = c[1] + wd * c[8], b1 = c[2] + wd * c[9]
      let m2 = (hypot(a1, b1) + 4 * hypot(c[3], c[4]) + 9 * hypot(c[5], c[6])) * (1 + 1e-9)
      for i in 0..<n {
        let a = 2 * Double.pi * (Double(i) + 0.5) / Double(n)
        let s1 = sin(a), c1 = cos(a)
        let s2 = 2 * s1 * c1, c2 = c1 * c1 - s1 * s1
        let s3 = s1 * c2 + c1 * s2, c3 = c1 * c2 - s1 * s2
        let value = HabitModel.timeLinearPredictor(c, weekend: wd, sin: s1, cos: c1)
        let slope = a1 * c1 - b1 * s1 + 2 * (c[3] * c2 - c[4] * s2) + 3 * (c[5] * c3 - c[6] * s3)
        let bound = value + abs(slope) * (1 + 1e-9) * delta + 0.5 * m2 * delta * delta
        slots[w * n + i] = bound + 1e-9 * abs(bound) + margin
      }
    }
    self.slots = slots
    slotMax = slots.max() ?? 0
    appCoefficient = c[10]
    anyCoefficient = c[11]
    binSeconds = model.binSeconds
  }

  /// An upper bound of the model's intensity, opens per s, at every
  /// τ = `t` + d for d in [`first`, `last`] (0 ≤ first ≤ last) with the
  /// recency `recency.advanced(by: d)`: at least the
  /// ``HabitModel/intensity(at:clock:recency:)`` (and ``HabitOpenMemo``)
  /// computes at each such point.
  ///
  /// - Complexity: O(1 + (last − first)/5 min), at most O(576).
  package func maxIntensity(
    from t: Double, first: Double, last: Double, clock: inout LocalClock, recency: Recency
  ) -> Double {
    let timePart = maxTimePart(from: t + first, to: t + last, clock: &clock)
    let fa = HabitModel.cappedLog1p(
      recency.sinceAppOpenS + (appCoefficient >= 0 ? last : first), cap: HabitModel.appRecencyCapS, scale: 3600)
    let fb = HabitModel.cappedLog1p(
      recency.sinceAnyOpenS + (anyCoefficient >= 0 ? last : first), cap: HabitModel.anyRecencyCapS, scale: 60)
    let ta = appCoefficient * fa, tb = anyCoefficient * fb
    let eta = timePart + ta + tb
    let bound = eta + 1e-9 * (1 + abs(timePart) + abs(ta) + abs(tb))
    return exp(HabitModel.clampEta(bound)) / binSeconds * (1 + 1e-9)
  }

  /// An upper bound of the time part over the Unix times [`a`, `b`].
  private func maxTimePart(from a: Double, to b: Double, clock: inout LocalClock) -> Double {
    let span = clock.offsetSpan(at: a)
    guard a.isFinite && b.isFinite && b < span.until else { return slotMax }
    let lo = ((a + span.offset - 1) / Self.slotSeconds).rounded(.down)
    let hi = ((b + span.offset + 1) / Self.slotSeconds).rounded(.down)
    let n = Self.slotsPerDay
    guard abs(lo) < 1e15 && abs(hi) < 1e15 && hi - lo < Double(2 * n) else { return slotMax }
    let first = Int(lo), count = Int(hi) - first + 1
    var day = first >= 0 ? first / n : -((-first + n - 1) / n)
    var slot = first - day * n
    var row = Self.isWeekend(day: day) ? n : 0
    var m = -Double.infinity
    for _ in 0..<count {
      m = max(m, slots[row + slot])
      slot += 1
      if slot == n {
        slot = 0
        day += 1
        row = Self.isWeekend(day: day) ? n : 0
      }
    }
    return m
  }

  /// Whether local day `day` (days since 1970-01-01, a Thursday) is a
  /// Saturday or a Sunday, as ``LocalClock/dayOfWeek(_:)`` counts.
  private static func isWeekend(day: Int) -> Bool {
    ((day + 3) % 7 + 7) % 7 >= 5
  }
}
