import FetchTraces

/// Why a habit-driven system scheduler (``IOSMinimumPolicy``, ``PlannerPolicy``)
/// did or did not launch the app at a decision point.
///
/// The gates and budgets are shared; each scheduler weighs a launch in its
/// own terms, so the verdict cases are its own: the Minimum scheduler's
/// benefit against its cost in J-equivalent, the planner's utility against
/// the price of its energy and its cheaper later candidates. The raw values
/// are the `factor` column that `fetchlab predict` writes.
package enum DecisionFactor: String, Sendable, CaseIterable {
  /// No network.
  case offline = "offline"
  /// The battery below the critical threshold, not charging.
  case lowBattery = "low_battery"
  /// Too soon after the app's last launch.
  case rateLimit = "rate_limit"
  /// The day's energy budget spent.
  case energyBudget = "energy_budget"
  /// The day's launch budget spent.
  case launchBudget = "launch_budget"
  /// The day's cellular data budget spent (Minimum only).
  case dataBudget = "data_budget"
  /// Minimum: the expected benefit below the priced energy cost.
  case benefitBelowCost = "benefit_below_cost"
  /// Minimum: the expected benefit above the cost, so it launched.
  case benefitAboveCost = "benefit_above_cost"
  /// Planner: the utility of fetching now below the price of its energy.
  case utilityBelowPrice = "utility_below_price"
  /// Planner: a later candidate is worth more per joule, so it waits.
  case cheaperLater = "cheaper_later"
  /// Planner: launched.
  case launched = "launched"

  /// The first gate closed at `ctx.now`, nil when all are open, in this
  /// order: offline; the battery below `lowBatteryPct` % and not charging;
  /// less than `minSpacingS` s since `lastLaunch` (Unix s).
  @inline(__always)
  static func closedGate(_ ctx: PolicyContext, lowBatteryPct: Double, lastLaunch: Double, minSpacingS: Double) -> Self? {
    guard ctx.network != .offline else { return .offline }
    if let b = ctx.batteryPct, b < lowBatteryPct, !ctx.isCharging { return .lowBattery }
    if ctx.now - lastLaunch < minSpacingS { return .rateLimit }
    return nil
  }
}

/// Whether `event` is a moment for a cost-benefit scheduler to decide
/// besides its own timer: another app's open, a wake, plugging in, joining
/// WiFi.
@inline(__always)
func isDecisionOpportunity(_ event: TraceEvent, _ ctx: PolicyContext) -> Bool {
  switch event.kind {
  case .open: event.app != ctx.app
  case .wake, .chargeStart: true
  case .network: ctx.network == .wifi
  default: false
  }
}
