import FetchModels
import Foundation

/// ``PlannerMath/utility(sinceSync:lambda:fresh:agePerHour:)`` remembered
/// by the bits of its arguments: a decision's baselines at `since + mid`
/// are, but for one, the baselines of the check a step before (the same
/// sums of multiples of 2⁻²² s, hence the same bits; see
/// ``HabitOpenMemo``). Direct-mapped, one slot per `quantum` seconds of
/// `sinceSync`.
struct UtilityMemo {
  private let mask: Int
  private let quantum: Double
  /// The rate and weights (bits) the values are for.
  private var parameters: (lambda: UInt64, fresh: UInt64, age: UInt64) = (0, 0, 0)
  /// Two-way sets: keys (the bits of `sinceSync`), values (NaN: empty),
  /// and per set whether way 1 was used last.
  private var keys: [UInt64]
  private var values: [Double]
  private var recent: [Bool]

  /// A memo of about 2 × `slots` values (`slots` rounded up to a power of
  /// two, at least 2), in two-way sets as ``HabitOpenMemo``'s.
  init(slots: Int, quantum: Double) {
    var n = 2
    while n < slots { n *= 2 }
    mask = n - 1
    self.quantum = quantum > 0 && quantum.isFinite ? quantum : 1
    keys = Array(repeating: 0, count: 2 * n)
    values = Array(repeating: .nan, count: 2 * n)
    recent = Array(repeating: false, count: n)
  }

  /// `PlannerMath.utility(sinceSync: x, lambda:, fresh:, agePerHour:)`, the same bits.
  ///
  /// - Complexity: O(1); O(slots) when the rate or the weights changed.
  mutating func utility(sinceSync x: Double, lambda: Double, fresh: Double, agePerHour: Double) -> Double {
    let p = (lambda: lambda.bitPattern, fresh: fresh.bitPattern, age: agePerHour.bitPattern)
    if p != parameters {
      parameters = p
      for k in values.indices { values[k] = .nan }
    }
    let q = (x / quantum).rounded(.down)
    let set = abs(q) < 1e15 ? Int(q) & mask : 0
    let key = x.bitPattern
    let i = 2 * set
    if keys[i] == key && !values[i].isNaN {
      recent[set] = false
      return values[i]
    }
    if keys[i + 1] == key && !values[i + 1].isNaN {
      recent[set] = true
      return values[i + 1]
    }
    let v = PlannerMath.utility(sinceSync: x, lambda: lambda, fresh: fresh, agePerHour: agePerHour)
    let way = recent[set] ? 0 : 1
    keys[i + way] = key
    values[i + way] = v
    recent[set] = way == 1
    return v
  }
}

/// `e^(−max(0, ρ)·step)` remembered by the bits of ρ (direct-mapped, by a
/// hash): the look-ahead intensities repeat from one decision to the next
/// (``HabitOpenMemo``), and so do their survivals.
struct SurvivalMemo {
  private static let slots = 128
  private var keys = [UInt64](repeating: 0, count: slots)
  private var steps = [UInt64](repeating: 0, count: slots)
  private var values = [Double](repeating: .nan, count: slots)

  /// `exp(-max(0, rho) * step)`, the same bits.
  ///
  /// - Complexity: O(1).
  mutating func survival(_ rho: Double, step: Double) -> Double {
    let k = rho.bitPattern
    let slot = Int(truncatingIfNeeded: (k &* 0x9E37_79B9_7F4A_7C15) >> 57)
    if keys[slot] == k && steps[slot] == step.bitPattern && !values[slot].isNaN { return values[slot] }
    let v = exp(-max(0, rho) * step)
    keys[slot] = k
    steps[slot] = step.bitPattern
    values[slot] = v
    return v
  }
}

extension PlannerPolicy {
  /// Drops everything the memos hold, so that a decision computes all it
  /// uses afresh (``remembers`` off: the tests' check that the memos change
  /// no result).
  mutating func forgetMemos() {
    habit.openMemo = HabitOpenMemo(slots: 2 * bins, quantum: params.stepS)
    utilityMemo = UtilityMemo(slots: 2, quantum: params.stepS)
    survivalMemo = SurvivalMemo()
    activityMemo = [:]
    afterCache = (0, [])
  }
}
