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

extension MinimumFactor: SchedulerGateFactor {}
extension PlannerFactor: SchedulerGateFactor {}
