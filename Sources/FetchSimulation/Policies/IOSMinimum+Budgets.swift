import FetchModels
import FetchTraces
import FetchWorld
import Foundation

/// The system's budgets of one device, spent so far: shared by every
/// Minimum instance of a device replay (``PolicySpec`` gives the apps of a
/// `replay.scope=device` replay one ledger; at `app` scope each instance
/// keeps its own). The budgets are the same parameters as per app
/// (`energy_budget_pct`, `launches`, `cellular_monthly_bytes` ×
/// `cellular_share`), here bounding the device's total.
///
/// Arbitration is first come, first served in the replay's deterministic
/// order (time, then app index at equal times): an app launches when the
/// device's spending so far is below its own released share of the device's
/// budget (its pacing and credit, which stay per app, as do the spacing
/// limit and the update-rate evidence). The engine replays events in time
/// order, so no app can see the future; ranking simultaneous wishes by
/// expected benefit would need every app's decision at the same instant,
/// which the periodic checks (one per app, at the app's own phase) rarely
/// produce, and Apple documents no such ranking.
package final class DeviceBudgetLedger {
  var day = Int.min
  var energyToday = 0.0
  var launchesToday = 0
  var month = Int.min
  var cellularThisMonth = 0.0

  package init() {}

  /// Resets the daily and monthly spending when local day `d` or month `m` is new.
  func roll(day d: Int, month m: Int) {
    if d != day {
      day = d
      energyToday = 0
      launchesToday = 0
    }
    if m != month {
      month = m
      cellularThisMonth = 0
    }
  }
}

extension IOSMinimumPolicy {
  /// Cumulative share of the app's training opens by local hour (Laplace
  /// smoothed toward UbiqLog's hourly share of all opens).
  static func pacing(training: UserTrace, app: Int32) -> [Double] {
    pacing(training: training, apps: [app])[0]
  }

  /// ``pacing(training:app:)`` of each of `apps`, in one pass over the
  /// training events (each app's counts summed in event order, so the
  /// same bits as one app's pass).
  ///
  /// - Complexity: O(training events + apps).
  static func pacing(training: UserTrace, apps: [Int32]) -> [[Double]] {
    // The row of `apps` of each app index of the trace (−1: not asked for).
    var row = [Int](repeating: -1, count: training.apps.count)
    for (k, a) in apps.enumerated() where a >= 0 && Int(a) < row.count { row[Int(a)] = k }
    var clock = LocalClock(training.timeZone)
    var counts = [[Double]](repeating: WorldParameters.ubiqlogHourlyShare.map { $0 * 24 }, count: apps.count)
    for e in training.events where e.kind == .open && e.app >= 0 && Int(e.app) < row.count && row[Int(e.app)] >= 0 {
      counts[row[Int(e.app)]][min(23, Int(clock.hourOfDay(e.time)))] += 1
    }
    return counts.map(cumulativeShares)
  }

  /// The running sums of `weights` (one per local hour) over their total:
  /// the cumulative share by the end of each hour, the last 1.
  ///
  /// - Complexity: O(weights).
  static func cumulativeShares(_ weights: [Double]) -> [Double] {
    let total = weights.reduce(0, +)
    var acc = 0.0
    return weights.map { acc += $0; return acc / total }
  }

  /// The cumulative share `pace` (from ``pacing(training:app:)``) at local
  /// hour `h` ∈ [0, 24), interpolated linearly within the hour.
  static func share(_ pace: [Double], atHour h: Double) -> Double {
    let i = min(23, Int(h))
    let before = i > 0 ? pace[i - 1] : 0
    return before + (pace[i] - before) * (h - Double(i))
  }

  /// Share of the day's budgets released by local hour `h` ∈ [0, 24).
  ///
  /// Inlined, as ``budgetGate(local:day:)``: called from a mutating method, a
  /// call copied the whole policy (1.2 KB) to pass it.
  @inline(__always)
  func released(atHour h: Double) -> Double {
    min(1, params.paceSlack + Self.share(pace, atHour: h))
  }

  /// The daily budget that stops a decision at local time `local` (local
  /// seconds) of local day `d` (its floor in days): energy, then launches;
  /// nil when both allow one. The share released is that of the local hour
  /// (``LocalClock/hourOfDay(_:)`` from the local time and day: the same
  /// bits, `Double(d)` being the floor that `hourOfDay` subtracts).
  @inline(__always)
  func budgetGate(local: Double, day d: Int) -> DecisionFactor? {
    let share = released(atHour: (local - Double(d) * 86_400) / 3600)
    if (ledger?.energyToday ?? energyToday) >= share * params.energyBudgetPctPerDay / 100 * batteryCapacityJ {
      return .energyBudget
    }
    if Double(ledger?.launchesToday ?? launchesToday) >= share * params.launchesPerDay * credit { return .launchBudget }
    return nil
  }
}
