import Foundation
import FetchTraces

/// ``OpenPredictor/probabilityOfOpen(within:from:clock:recency:step:)`` of a
/// ``HabitModel`` with its intensities remembered, bit for bit the same.
///
/// A scheduler that checks every `step` seconds (300 s, the default) with
/// a horizon of several steps evaluates the intensity at t + 150, t + 450,
/// t + 750, then at (t + 300) + 150, … : two of the three points of a check
/// are points of the check before, with the same recency when no app was
/// opened in between. The times of a day in Unix seconds are multiples of
/// 2⁻²², so these sums are exact and the repeated points have the same bits.
/// The memo keeps the last few (time, recency) points and their intensity,
/// looked up by the bit patterns, so a repeated point costs no `sin`, `cos`,
/// `log1p` or `exp`.
///
/// Forget it (``reset()``) whenever the model changes.
package struct HabitOpenMemo: Sendable {
  private static let slots = 8
  private var keys = [(t: UInt64, app: UInt64, any: UInt64)](repeating: (0, 0, 0), count: slots)
  private var values = [Double](repeating: .nan, count: slots)
  /// Lookups answered from the memo and computed, for tests.
  package private(set) var hits = 0
  package private(set) var misses = 0

  package init() {}

  /// Forgets every remembered intensity.
  package mutating func reset() {
    for k in values.indices { values[k] = .nan }
  }

  /// `model.probabilityOfOpen(within: h, from: t, clock: &clock, recency: recency, step: step)`,
  /// bit for bit.
  ///
  /// - Complexity: O(h / step); one intensity per point not remembered.
  package mutating func probabilityOfOpen(
    _ model: HabitModel, within h: Double, from t: Double, clock: inout LocalClock, recency: Recency,
    step: Double = 300
  ) -> Double {
    probabilityOfAnOpen(within: h, from: t, step: step) { mid in
      intensity(model, at: t + mid, clock: &clock, recency: recency.advanced(by: mid))
    }
  }

  /// `model.intensity(at: t, clock: &clock, recency: r)`, remembered.
  mutating func intensity(_ model: HabitModel, at t: Double, clock: inout LocalClock, recency r: Recency) -> Double {
    let key = (t: t.bitPattern, app: r.sinceAppOpenS.bitPattern, any: r.sinceAnyOpenS.bitPattern)
    let slot = Int(truncatingIfNeeded: (key.t &* 0x9E37_79B9_7F4A_7C15) >> 61)
    if !values[slot].isNaN && keys[slot] == key {
      hits += 1
      return values[slot]
    }
    misses += 1
    let v = model.intensity(at: t, clock: &clock, recency: r)
    keys[slot] = key
    values[slot] = v
    return v
  }
}
