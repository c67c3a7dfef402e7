import FetchTraces
import Foundation

/// Probabilities of an open under one habit fit, shared by the policies
/// replayed for one user: `P(open within h of t)` by the bits of (t, h,
/// step, recency).
///
/// Every Minimum-scheduler setting of a run (each `ios-minimum` and
/// `ios-custom` of a sweep) checks at the same times (the replay's start
/// plus multiples of the check interval), with the same recency (the
/// trace's opens, which no policy changes) and the same fit (the shared
/// ``HabitFitCache``'s refit of the same window): the settings of a sweep
/// differ in the gates and the price, not in what they ask the habit
/// model. Each probability is then computed once, by the first setting to
/// ask, and read by the others. A value is a pure function of the fit,
/// the user's time zone and its key, so reading it changes no result.
///
/// Made by ``HabitFitCache/openProbabilities(user:app:from:to:base:fitter:)``
/// for one fit; thread-safe (a lock), but meant for one user's replays on
/// one thread.
package final class SharedOpenProbabilities: @unchecked Sendable {
  /// What a probability is kept by: the bits of the time, the horizon,
  /// the step and the recency.
  package struct Key: Equatable, Sendable {
    var t: UInt64
    var h: UInt64
    var step: UInt64
    var app: UInt64
    var any: UInt64

    /// The key of `P(open within h of t)` with `recency` at `t` and
    /// midpoint pieces of `step` s.
    package init(within h: Double, from t: Double, recency: Recency, step: Double) {
      self.t = t.bitPattern
      self.h = h.bitPattern
      self.step = step.bitPattern
      app = recency.sinceAppOpenS.bitPattern
      any = recency.sinceAnyOpenS.bitPattern
    }

    /// A multiplicative mix of the words (the times of a run's checks
    /// differ in their middle bits; the products spread them to the top).
    var hash: UInt64 {
      var x = t &* 0x9E37_79B9_7F4A_7C15
      x ^= app &* 0xC2B2_AE3D_27D4_EB4F
      x ^= any &* 0x1656_67B1_9E37_79F9
      x ^= (h ^ step) &* 0x27D4_EB2F_1656_67C5
      return x ^ (x >> 31)
    }
  }

  /// Open addressing with linear probing, at most half full: the keys, the
  /// values and whether a slot is used, `mask + 1` (a power of two) each.
  /// Not checked for exclusive access (each access is under `lock`).
  @exclusivity(unchecked) private var keys: [Key]
  @exclusivity(unchecked) private var values: [Double]
  @exclusivity(unchecked) private var used: [Bool]
  @exclusivity(unchecked) private var mask: Int
  @exclusivity(unchecked) private var filled = 0
  private let lock = NSLock()
  /// Probabilities read and computed, for tests and benchmarks.
  @exclusivity(unchecked) package private(set) var hits = 0
  @exclusivity(unchecked) package private(set) var misses = 0

  package init() {
    let n = 64
    keys = Array(repeating: Key(within: 0, from: 0, recency: Recency(sinceAppOpenS: 0, sinceAnyOpenS: 0), step: 0), count: n)
    values = Array(repeating: 0, count: n)
    used = Array(repeating: false, count: n)
    mask = n - 1
  }

  /// The probability kept for `key` (a hit), or nil (a miss: compute it
  /// and ``remember(_:for:)`` it).
  ///
  /// - Complexity: O(1) expected: a multiply-mix of five words and a short probe.
  package func probability(_ key: Key) -> Double? {
    lock.lock()
    defer { lock.unlock() }
    let i = slot(of: key)
    guard used[i] else { return nil }
    hits += 1
    return values[i]
  }

  /// Keeps `p` for `key`.
  ///
  /// - Precondition: `p` is the fit's
  ///   ``OpenPredictor/probabilityOfOpen(within:from:clock:recency:step:)``
  ///   (or ``HabitOpenMemo/probabilityOfOpen(_:within:from:clock:recency:step:)``,
  ///   the same bits) for the key's arguments.
  /// - Complexity: O(1) amortised.
  package func remember(_ p: Double, for key: Key) {
    lock.lock()
    defer { lock.unlock() }
    insert(key, p)
    misses += 1
  }

  /// Probabilities held.
  package var count: Int {
    lock.lock()
    defer { lock.unlock() }
    return filled
  }

  /// The slot holding `key`, or the free slot where it goes. Call with the lock held.
  private func slot(of key: Key) -> Int {
    var i = Int(truncatingIfNeeded: key.hash) & mask
    while used[i] && keys[i] != key { i = (i + 1) & mask }
    return i
  }

  /// Puts `key` (if not there) with `value`, growing the table past half full.
  /// Call with the lock held.
  private func insert(_ key: Key, _ value: Double) {
    let i = slot(of: key)
    guard !used[i] else { return }
    keys[i] = key
    values[i] = value
    used[i] = true
    filled += 1
    guard 2 * filled > mask + 1 else { return }
    let (oldKeys, oldValues, oldUsed) = (keys, values, used)
    let n = 2 * (mask + 1)
    keys = Array(repeating: key, count: n)
    values = Array(repeating: 0, count: n)
    used = Array(repeating: false, count: n)
    mask = n - 1
    for j in oldUsed.indices where oldUsed[j] {
      let k = slot(of: oldKeys[j])
      keys[k] = oldKeys[j]
      values[k] = oldValues[j]
      used[k] = true
    }
  }
}
