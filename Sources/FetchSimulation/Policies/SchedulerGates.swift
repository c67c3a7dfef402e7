import FetchTraces

/// Why a habit-driven system scheduler (``MinimumPolicy``,
/// ``PlannerPolicy``) did or did not launch the app at a decision point:
/// the gates both check first, their budgets, and each one's verdict. The
/// raw values are what `fetchlab predict` prints.
package enum SchedulerFactor: String, Sendable, CaseIterable {
  /// No network.
  case offline = "offline"
  /// The battery below the critical threshold, not charging.
  case lowBattery = "low_battery"
  /// Too soon after the app's last launch.
  case rateLimit = "rate_limit"
  /// The day's paced energy budget, or its launch budget, is spent.
  case energyBudget = "energy_budget"
  case launchBudget = "launch_budget"
  /// The Minimum scheduler: the cellular data budget is spent.
  case dataBudget = "data_budget"
  /// The Minimum scheduler's verdict: the priced benefit below or above
  /// the cost (a launch).
  case benefitBelowCost = "benefit_below_cost"
  case benefitAboveCost = "benefit_above_cost"
  /// The planner's verdicts: the expected utility below the price of its
  /// energy; a cheaper moment likely before the next predicted open; a
  /// launch.
  case utilityBelowPrice = "utility_below_price"
  case deferred = "cheaper_later"
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

