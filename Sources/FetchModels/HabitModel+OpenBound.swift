import FetchTraces
import Foundation

/// A rigorous upper bound of P(an open within h of t) as
/// ``HabitOpenMemo/probabilityOfOpen(_:within:from:clock:recency:step:)``
/// computes it for one ``HabitModel``, rounding included, at a fraction of
/// its cost: a scheduler that compares P(open) · value with a cost can
/// decide from the bound alone whenever the bound does not pay.
///
/// Each point of the computation has the intensity
/// exp(clamp(T(h, w) + β₁₀·a(s) + β₁₁·b(s′))) / bin, with T the time part of
/// the linear predictor (local hour h, weekend flag w) and a, b the capped
/// `log1p` recency features, which grow with the time since the opens:
///
/// - T is bounded over each five-minute slot of the local day (and each
///   weekend flag) by its values at the slot's ends plus its Lipschitz
///   constant times half the slot, kept per slot once asked (the model's
///   trigonometric polynomial; the hour's derivative bounded by the
///   harmonics' amplitudes), the window's slots maximised;
/// - a and b are bounded at the window's ends (the smaller time since the
///   opens when β < 0, the larger when β ≥ 0) by a table of `log1p` at
///   sixteen points per octave of seconds;
/// - the sums, the `exp`, the step sum and the `expm1` are each widened by a
///   relative margin far above their rounding (≥ 10⁻¹² where the rounding
///   is ≤ 10⁻¹⁵ · steps).
///
/// Windows across a change of the UTC offset, longer than a day or of
/// more than 10⁴ steps get the trivial bound 1. Forget the slots
/// (``reset()``) whenever the model changes.
package struct HabitOpenBound: Sendable {
  /// Upper bounds of T over each slot, weekdays' 288 then weekends' (NaN:
  /// not yet computed); empty until first asked.
  private var slots: [Double] = []
  /// The recency features' bounds (shared tables, kept here for access
  /// without a lazy global's check).
  private var app = RecencyFeatureBounds.app
  private var any = RecencyFeatureBounds.any
  /// Bounds computed and trivial bounds given, for tests.
  package private(set) var evaluated = 0
  package private(set) var trivial = 0

  package init() {}

  /// Forgets the slots' bounds (the model changed).
  package mutating func reset() {
    for k in slots.indices { slots[k] = .nan }
  }

  /// An upper bound, in [0, 1], of
  /// `HabitOpenMemo().probabilityOfOpen(model, within: h, from: t, clock: &clock, recency: recency, step: step)`.
  ///
  /// - Complexity: O(1 + h / 300 s): the window's slots, one `exp` and one `expm1`.
  package mutating func probabilityOfOpen(
    _ model: HabitModel, within h: Double, from t: Double, clock: inout LocalClock, recency: Recency,
    step: Double = HabitOpenMemo.defaultStep
  ) -> Double {
    guard h > 0, h <= 86_400, step > 0, step.isFinite, h / step <= 10_000 else {
      trivial += 1
      return 1
    }
    // maxIntensity checks t and the model, and gives ∞ where it cannot bound.
    let rate = maxIntensity(model, from: t, first: 0, last: h, clock: &clock, recency: recency)
    guard rate.isFinite else { return 1 }
    let p = -expm1(-(rate * h * (1 + 1e-9))) * (1 + 1e-12)
    return p.isNaN ? 1 : min(1, p)
  }

  /// An upper bound of the model's intensity, opens per s, at every
  /// τ = `t` + d for d in [`first`, `last`] (0 ≤ first ≤ last) with the
  /// recency `recency.advanced(by: d)`: at least what
  /// ``HabitModel/intensity(at:clock:recency:)`` and ``HabitOpenMemo``
  /// compute at each such point; ∞ for a span across a change of the UTC
  /// offset or longer than a day.
  ///
  /// - Complexity: O(1 + (last − first) / 300 s): the span's slots and one `exp`.
  package mutating func maxIntensity(
    _ model: HabitModel, from t: Double, first: Double, last: Double, clock: inout LocalClock, recency: Recency
  ) -> Double {
    let c = model.coefficients
    guard t.isFinite, first >= 0, last >= first, last - first <= 86_400, c.count == 12 else {
      trivial += 1
      return .infinity
    }
    let (offset, until) = clock.offsetSpan(at: t)
    guard t + last + 1 < until else {
      trivial += 1
      return .infinity
    }
    evaluated += 1
    if slots.isEmpty { slots = Array(repeating: .nan, count: 2 * 288) }
    // Local seconds of the span's points, widened by a second for the
    // rounding of t + d + offset and of the day's start.
    let l0 = t + first + offset - 1, l1 = t + last + offset + 1
    var time = -Double.infinity
    var d = Int((l0 / 86_400).rounded(.down))
    let lastDay = Int((l1 / 86_400).rounded(.down))
    while d <= lastDay {
      let start = Double(d) * 86_400
      let w = ((d + 3) % 7 + 7) % 7 >= 5 ? 1 : 0
      let from = max(0, Int((max(0, l0 - start) / 300).rounded(.down)))
      let end = min(287, Int((min(86_400, l1 - start) / 300).rounded(.down)))
      if from <= end {
        for k in from...end { time = max(time, slotBound(c, slot: k, weekend: w)) }
      }
      d += 1
    }
    let sa = recency.sinceAppOpenS, sb = recency.sinceAnyOpenS
    let ta = c[10] >= 0 ? c[10] * app.upper(sa + last) : c[10] * app.lower(sa + first)
    let tb = c[11] >= 0 ? c[11] * any.upper(sb + last) : c[11] * any.lower(sb + first)
    var eta = time + ta + tb
    eta += 1e-9 * (1 + abs(time) + abs(ta) + abs(tb))
    return exp(HabitModel.clampEta(eta)) / model.binSeconds * (1 + 1e-12)
  }

  /// The bound of T over slot `k` (hours k/12 to (k + 1)/12) on weekdays
  /// (`w` = 0) or weekends (1), computed when first asked.
  @inline(__always)
  private mutating func slotBound(_ c: [Double], slot k: Int, weekend w: Int) -> Double {
    let i = w * 288 + k
    if !slots[i].isNaN { return slots[i] }
    let v = Self.computeSlotBound(c, slot: k, weekend: Double(w))
    slots[i] = v
    return v
  }

  /// (T(a) + T(b)) / 2 + L · (b − a) / 2 over slot `k`, L the bound of
  /// |dT/dh| (per hour), plus a margin for the rounding of T.
  static func computeSlotBound(_ c: [Double], slot k: Int, weekend w: Double) -> Double {
    let e = slotEnds
    let ta = HabitModel.timeLinearPredictor(c, weekend: w, sin: e[k].sin, cos: e[k].cos)
    let tb = HabitModel.timeLinearPredictor(c, weekend: w, sin: e[k + 1].sin, cos: e[k + 1].cos)
    let amplitude =
      ((c[1] + w * c[8]) * (c[1] + w * c[8]) + (c[2] + w * c[9]) * (c[2] + w * c[9])).squareRoot()
      + 2 * (c[3] * c[3] + c[4] * c[4]).squareRoot() + 3 * (c[5] * c[5] + c[6] * c[6]).squareRoot()
    let lipschitz = 2 * Double.pi / 24 * amplitude * (1 + 1e-9)
    var size = 1.0
    for j in 0..<10 { size += abs(c[j]) }
    let v = (ta + tb) / 2 + lipschitz / 24 + 1e-9 * size
    return v.isNaN ? .infinity : v
  }

  /// sin and cos of the hour angle at the slots' ends (k/12 h, k = 0...288).
  static let slotEnds: [(sin: Double, cos: Double)] = (0...288).map { k in
    let a = 2 * Double.pi * Double(k) / 288
    return (sin(a), cos(a))
  }
}

/// Bounds of a capped `log1p` recency feature
/// (``HabitModel/cappedLog1p(_:cap:scale:)``) from the bits of its
/// argument: sixteen buckets per octave of seconds from 1 s to 2²⁰ s, each
/// bounded by `log1p` at its ends, widened by 10⁻¹² relative.
struct RecencyFeatureBounds: Sendable {
  let cap: Double
  /// The feature at the cap, widened up and down.
  let capUpper: Double, capLower: Double
  /// The feature at 1 s, widened up (below 1 s the bound).
  let oneUpper: Double
  /// Per bucket, bounds of the feature over it.
  let uppers: [Double], lowers: [Double]

  /// The buckets start at 1 s (exponent 1023): index = bits >> 48 − this.
  static let firstIndex = 1023 << 4
  static let buckets = 20 << 4

  init(cap: Double, scale: Double) {
    precondition(cap > 1 && cap < 1_048_576, "the recency caps lie within the bound's buckets")
    self.cap = cap
    let atCap = log1p(cap / scale)
    capUpper = atCap * (1 + 1e-12)
    capLower = atCap * (1 - 1e-12)
    oneUpper = log1p(1 / scale) * (1 + 1e-12)
    var up: [Double] = [], low: [Double] = []
    for i in 0..<Self.buckets {
      let lo = Double(bitPattern: UInt64(Self.firstIndex + i) << 48)
      let hi = Double(bitPattern: UInt64(Self.firstIndex + i + 1) << 48)
      up.append(log1p(min(hi, cap) / scale) * (1 + 1e-12))
      low.append(log1p(min(lo, cap) / scale) * (1 - 1e-12))
    }
    uppers = up
    lowers = low
  }

  static let app = RecencyFeatureBounds(cap: HabitModel.appRecencyCapS, scale: 3600)
  static let any = RecencyFeatureBounds(cap: HabitModel.anyRecencyCapS, scale: 60)

  /// ≥ the feature at any s′ ≤ `s` (the feature grows with s; NaN is the cap).
  @inline(__always)
  func upper(_ s: Double) -> Double {
    if s.isNaN || s >= cap { return capUpper }
    if s <= 1 { return oneUpper }
    return uppers[Int(s.bitPattern >> 48) - Self.firstIndex]
  }

  /// ≤ the feature at any s′ ≥ `s`.
  @inline(__always)
  func lower(_ s: Double) -> Double {
    if s.isNaN || s >= cap { return capLower }
    if s <= 1 { return 0 }
    return lowers[Int(s.bitPattern >> 48) - Self.firstIndex]
  }
}
