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
