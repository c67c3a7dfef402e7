import FetchTraces

/// The reasons of a decision that the habit-driven system schedulers
/// (``MinimumPolicy``, ``PlannerPolicy``) share: the gates each checks
/// first, before its own budgets and its weighing of a launch.
protocol SchedulerGateFactor {
  /// No network.
  static var offline: Self { get }
  /// The battery below the critical threshold, not charging.
  static var lowBattery: Self { get }
  /// Too soon after the app's last launch.
  static var rateLimit: Self { get }
}

extension SchedulerGateFactor {
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

extension MinimumFactor: SchedulerGateFactor {}
extension PlannerFactor: SchedulerGateFactor {}
