import FetchTraces
import FetchWorld

/// Budgets released through the local day in step with the user's opens of
/// an app by hour: the pacing that `ios-minimum`, `ios-custom`, IMP and the
/// planner's device budget share (``TrainingPacing`` caches it per training
/// window).
package enum UsagePacing {
  /// Cumulative share of the app's training opens by local hour (Laplace
  /// smoothed toward UbiqLog's hourly share of all opens).
  package static func pacing(training: UserTrace, app: Int32) -> [Double] {
    pacing(training: training, apps: [app])[0]
  }

  /// ``pacing(training:app:)``, read from `shared` (the pacing of every
  /// app of the training window, the same bits) when given.
  static func pacing(training: UserTrace, app: Int32, shared: TrainingPacing?) -> [Double] {
    shared?.pace(training, app: app) ?? pacing(training: training, app: app)
  }

  /// ``pacing(training:app:)`` of each of `apps`, in one pass over the
  /// training events (each app's counts summed in event order, so the
  /// same bits as one app's pass).
  ///
  /// - Complexity: O(training events + apps).
  package static func pacing(training: UserTrace, apps: [Int32]) -> [[Double]] {
    // The row of `apps` of each app index of the trace (−1: not asked for).
    var row = [Int](repeating: -1, count: training.apps.count)
    for (k, a) in apps.enumerated() where a >= 0 && Int(a) < row.count { row[Int(a)] = k }
    var clock = LocalClock(training.timeZone)
    var counts = [[Double]](repeating: ContentUpdates.ubiqlogHourlyShare.map { $0 * 24 }, count: apps.count)
    for e in training.events where e.kind == .open && e.app >= 0 && Int(e.app) < row.count && row[Int(e.app)] >= 0 {
      counts[row[Int(e.app)]][min(23, Int(clock.hourOfDay(e.time)))] += 1
    }
    return counts.map(cumulativeShares)
  }

  /// The running sums of `weights` (one per local hour) over their total:
  /// the cumulative share by the end of each hour, the last 1.
  ///
  /// - Complexity: O(weights).
  package static func cumulativeShares(_ weights: [Double]) -> [Double] {
    let total = weights.reduce(0, +)
    var acc = 0.0
    return weights.map { acc += $0; return acc / total }
  }

  /// The cumulative share `pace` (from ``pacing(training:app:)``) at local
  /// hour `h` ∈ [0, 24), interpolated linearly within the hour.
  package static func share(_ pace: [Double], atHour h: Double) -> Double {
    let i = min(23, Int(h))
    let before = i > 0 ? pace[i - 1] : 0
    return before + (pace[i] - before) * (h - Double(i))
  }
}
