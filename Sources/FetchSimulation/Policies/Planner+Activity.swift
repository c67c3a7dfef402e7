import FetchModels
import FetchTraces
import Foundation

/// The factors of the plan that depend only on the user's expected other
/// radio activity in each look-ahead bin (``PlannerMath``'s `activity`):
/// with `edge_k` the cumulative activity before bin k,
///
///     fromEdge[k] = e^(min(edge_k, 600)),   toMid[j] = e^(−min(edge_j + a_j/2, 1200)),
///     credit[j]   = e^(−(edge_j + a_j/2)),  busy[k]  = 1 − e^(−edge_k).
///
/// Without activity (nil) every factor is 1 and `busy` 0. The activity
/// bins repeat from one decision to the next (they follow the local hour),
/// so ``PlannerPolicy`` keeps these by bins instead of taking 4 exponentials
/// per bin at every decision.
struct ActivityTerms {
  let fromEdge: [Double]
  let toMid: [Double]
  let credit: [Double]
  let busy: [Double]
  /// Σ_j toMid[j] (K without activity).
  let toMidSum: Double

  /// - Complexity: O(bins): four exponentials per bin.
  init(_ activity: [Double]?, bins K: Int) {
    var fromEdge = [Double](repeating: 1, count: K)
    var toMid = [Double](repeating: 1, count: K)
    var credit = [Double](repeating: 1, count: K)
    var busy = [Double](repeating: 0, count: K)
    if let a = activity {
      var edge = 0.0
      for j in 0..<K {
        busy[j] = -expm1(-edge)
        fromEdge[j] = exp(min(edge, 600))
        toMid[j] = exp(-min(edge + a[j] / 2, 1200))
        credit[j] = exp(-(edge + a[j] / 2))
        edge += a[j]
      }
    }
    self.fromEdge = fromEdge
    self.toMid = toMid
    self.credit = credit
    self.busy = busy
    toMidSum = toMid.reduce(0, +)
  }
}

extension PlannerPolicy {
  /// Other apps' opens and wakes per second by local hour of the training
  /// window (0 without training days).
  ///
  /// - Complexity: O(training events).
  static func activityRates(_ training: UserTrace, app: Int32) -> [Double] {
    let days = (training.end - training.start) / 86_400
    guard days > 0 else { return Array(repeating: 0, count: 24) }
    var clock = LocalClock(training.timeZone)
    var counts = [Double](repeating: 0, count: 24)
    for e in training.events where (e.kind == .open && e.app != app) || e.kind == .wake {
      counts[min(23, Int(clock.hourOfDay(e.time)))] += 1
    }
    return counts.map { $0 / (days * 3600) }
  }

  /// The ``ActivityTerms`` of the `K` look-ahead bins from `t`, whose
  /// activity is `activityRate[local hour of the bin's midpoint] · step`:
  /// kept by the bins' hours (packed 5 bits each, for up to 24 bins),
  /// computed on first use.
  ///
  /// - Complexity: O(K) local hours; O(K) exponentials for hours not seen before.
  mutating func activityTerms(at t: Double, bins K: Int) -> ActivityTerms {
    let step = params.stepS
    var key = HourKey(low: 0, high: 0)
    for j in 0..<min(K, 24) {
      let h = UInt64(min(23, Int(clock.hourOfDay(t + (Double(j) + 0.5) * step))))
      if j < 12 { key.low |= h << UInt64(5 * j) } else { key.high |= h << UInt64(5 * (j - 12)) }
    }
    if K <= 24, let terms = activityMemo[key] { return terms }
    var activity = [Double](repeating: 0, count: K)
    for j in 0..<K { activity[j] = activityRate[min(23, Int(clock.hourOfDay(t + (Double(j) + 0.5) * step)))] * step }
    let terms = ActivityTerms(activity, bins: K)
    if K <= 24 {
      if activityMemo.count >= 4096 { activityMemo.removeAll(keepingCapacity: true) }
      activityMemo[key] = terms
    }
    return terms
  }

  /// The local hours of up to 24 look-ahead bins, 5 bits each.
  struct HourKey: Hashable {
    var low: UInt64
    var high: UInt64
  }
}
