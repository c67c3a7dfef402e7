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
  /// Sets of the memos (a power of two, minus one), two entries each.
  private let mask: Int
  /// Seconds between the points of consecutive sets: points `quantum`
  /// apart go to consecutive sets, so a check's points never evict one
  /// another while the memo has at least as many sets as points.
  private let quantum: Double
  /// Whole intensities by (t, recency) bits.
  private var points: TwoWayMemo<(t: UInt64, app: UInt64, any: UInt64)>
  /// The time part of the linear predictor (features 0..<10) by t bits.
  private var timeParts: TwoWayMemo<UInt64>
  /// `recency_app` and `recency_any` feature values by the recency's bits.
  private var appTerms: TwoWayMemo<UInt64>
  private var anyTerms: TwoWayMemo<UInt64>
  /// sin and cos of the hour angle by five-minute slot of the day, with
  /// the angle's bits: the checks' points recur at the same local times
  /// every day, so after a refit (which forgets the time parts) their
  /// angles are still known.
  private var angles: [(a: UInt64, sin: Double, cos: Double)]
  /// Lookups answered from the memo and computed, for tests.
  package private(set) var hits = 0
  package private(set) var misses = 0

  /// The default step of ``probabilityOfOpen(_:within:from:clock:recency:step:)``, s.
  package static let defaultStep = 300.0

  /// A memo of about 2 × `slots` points (`slots` rounded up to a power of
  /// two, at least 2) for checks whose points are `quantum` seconds apart
  /// (> 0).
  package init(slots: Int = 8, quantum: Double = 300) {
    precondition(quantum > 0 && quantum.isFinite, "HabitOpenMemo needs a positive, finite quantum")
    var n = 2
    while n < slots { n *= 2 }
    mask = n - 1
    self.quantum = quantum
    points = TwoWayMemo(sets: n, empty: (0, 0, 0))
    timeParts = TwoWayMemo(sets: n, empty: 0)
    appTerms = TwoWayMemo(sets: n, empty: 0)
    anyTerms = TwoWayMemo(sets: n, empty: 0)
    angles = Array(repeating: (Double.nan.bitPattern, 0, 0), count: 289)
  }

  /// Forgets every remembered intensity (the recency features and the
  /// hour angles, which do not depend on the model, stay).
  package mutating func reset() {
    points.reset()
    timeParts.reset()
  }

  /// `model.probabilityOfOpen(within: h, from: t, clock: &clock, recency: recency, step: step)`,
  /// bit for bit.
  ///
  /// - Complexity: O(h / step); one intensity per point not remembered.
  package mutating func probabilityOfOpen(
    _ model: HabitModel, within h: Double, from t: Double, clock: inout LocalClock, recency: Recency,
    step: Double = defaultStep
  ) -> Double {
    probabilityOfAnOpen(within: h, from: t, step: step) { mid in
      intensity(model, at: t + mid, clock: &clock, recency: recency.advanced(by: mid))
    }
  }

  /// The set of `x`: ⌊x / quantum⌋ modulo the sets (0 for values too
  /// large for that, ∞ and NaN).
  @inline(__always)
  private func set(_ x: Double) -> Int {
    let q = (x / quantum).rounded(.down)
    return abs(q) < 1e15 ? Int(q) & mask : 0
  }

  /// `model.intensity(at: t, clock: &clock, recency: r)`, remembered: the
  /// same bits. A point not remembered reuses the time part of its linear
  /// predictor and its recency features when those are (the sum of the
  /// twelve terms in ``HabitModel/linearPredictor(at:clock:recency:)``'s
  /// order, so the same bits).
  ///
  /// - Complexity: O(1).
  package mutating func intensity(_ model: HabitModel, at t: Double, clock: inout LocalClock, recency r: Recency) -> Double {
    let key = (t: t.bitPattern, app: r.sinceAppOpenS.bitPattern, any: r.sinceAnyOpenS.bitPattern)
    let set = set(t)
    if let v = points.find(set, where: { $0 == key }) {
      hits += 1
      return v
    }
    misses += 1
    let c = model.coefficients
    var eta: Double
    if let e = timeParts.find(set, where: { $0 == key.t }) {
      eta = e
    } else {
      precondition(t.isFinite, "HabitModel features need a finite time, got \(t)")
      let h = clock.hourOfDay(t)
      let w: Double = clock.dayOfWeek(t) >= 5 ? 1 : 0
      let a = 2 * Double.pi * h / 24
      let slot = min(288, max(0, Int(h * 12)))
      if angles[slot].a != a.bitPattern { angles[slot] = (a.bitPattern, sin(a), cos(a)) }
      eta = HabitModel.timeLinearPredictor(c, weekend: w, sin: angles[slot].sin, cos: angles[slot].cos)
      timeParts.insert(set, key: key.t, value: eta)
    }
    let sa = self.set(r.sinceAppOpenS), sb = self.set(r.sinceAnyOpenS)
    let va =
      appTerms.find(sa, where: { $0 == key.app })
      ?? appTerms.insert(
        sa, key: key.app,
        value: HabitModel.cappedLog1p(r.sinceAppOpenS, cap: HabitModel.appRecencyCapS, scale: 3600))
    let vb =
      anyTerms.find(sb, where: { $0 == key.any })
      ?? anyTerms.insert(
        sb, key: key.any,
        value: HabitModel.cappedLog1p(r.sinceAnyOpenS, cap: HabitModel.anyRecencyCapS, scale: 60))
    eta += c[10] * va
    eta += c[11] * vb
    let v = exp(HabitModel.clampEta(eta)) / model.binSeconds
    points.insert(set, key: key, value: v)
    return v
  }
}

/// A small two-way set-associative memo of doubles: each set keeps its two
/// most recently used entries, so one decision off the checks' grid (whose
/// points fall into the same sets) does not evict the grid's points.
struct TwoWayMemo<Key>: Sendable where Key: Sendable {
  private var keys: [Key]
  private var values: [Double]
  /// Per set: whether way 1 (else way 0) was used last.
  private var recent: [Bool]

  /// A memo of `sets` sets of two entries, `empty` the placeholder key.
  init(sets: Int, empty: Key) {
    keys = Array(repeating: empty, count: 2 * sets)
    values = Array(repeating: .nan, count: 2 * sets)
    recent = Array(repeating: false, count: sets)
  }

  /// Forgets every entry.
  mutating func reset() {
    for k in values.indices { values[k] = .nan }
  }

  /// The value remembered for the key matching `match` in set `s`, if any.
  @inline(__always)
  mutating func find(_ s: Int, where match: (Key) -> Bool) -> Double? {
    let i = 2 * s
    if !values[i].isNaN && match(keys[i]) {
      recent[s] = false
      return values[i]
    }
    if !values[i + 1].isNaN && match(keys[i + 1]) {
      recent[s] = true
      return values[i + 1]
    }
    return nil
  }

  /// Remembers `value` for `key` in set `s`, in place of the entry used
  /// least recently; returns `value`.
  @discardableResult @inline(__always)
  mutating func insert(_ s: Int, key: Key, value: Double) -> Double {
    let way = recent[s] ? 0 : 1
    keys[2 * s + way] = key
    values[2 * s + way] = value
    recent[s] = way == 1
    return value
  }
}
