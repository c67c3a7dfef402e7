import FetchModels
import FetchTraces
import FetchWorld
import Foundation

extension IOSMinimumPolicy {
  /// Share of the day's budgets released by local hour `h` ∈ [0, 24).
  ///
  /// Inlined, as ``budgetGate(local:day:)``: called from a mutating method, a
  /// call copies the whole policy to pass it.
  @inline(__always)
  func released(atHour h: Double) -> Double {
    min(1, params.paceSlack + UsagePacing.share(pace, atHour: h))
  }

  /// The daily budget that stops a decision at local time `local` (local
  /// seconds) of local day `d` (its floor in days): energy, then launches;
  /// nil when both allow one. The share released is that of the local hour
  /// (``LocalClock/hourOfDay(_:)`` from the local time and day: the same
  /// bits, `Double(d)` being the floor that `hourOfDay` subtracts).
  @inline(__always)
  func budgetGate(local: Double, day d: Int) -> DecisionFactor? {
    let share = released(atHour: (local - Double(d) * 86_400) / 3600)
    if (ledger?.energyToday ?? energyToday) >= share * params.energyBudgetPctPerDay / 100 * launch.device.batteryCapacityJ {
      return .energyBudget
    }
    if Double(ledger?.launchesToday ?? launchesToday) >= share * params.launchesPerDay * credit { return .launchBudget }
    return nil
  }
}
