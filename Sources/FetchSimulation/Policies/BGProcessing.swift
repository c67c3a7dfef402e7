import FetchModels
import FetchTraces
import FetchWorld

/// Knobs of the `BGProcessingTask` model (Apple BGTaskScheduler documentation; S: WWDC19
/// talk 707). Durations in seconds.
package struct BGProcessingParameters: SettingTable {
  /// `requiresExternalPower`: run only while charging (1) or not (0).
  package var requiresPower = 1.0
  /// `requiresNetworkConnectivity`: run only while online (1) or not (0;
  /// the task may then run offline, and its fetch fails).
  package var requiresNetwork = 1.0
  /// Run time the task gets, s (S: "minutes"; NV default 5 min).
  package var runTimeS = 300.0
  /// `earliestBeginDate` after each run, s: the least time between two
  /// runs (NV: daily maintenance, so that it runs about once a night).
  package var earliestS = 12 * 3600.0
  /// The device counts as idle (screen off) this long after the end of the
  /// user's last session, s (NV: the system runs deferrable work when the
  /// device is idle, typically at night).
  package var idleS = 1800.0
  /// Seconds between the system's checks (NV, as `ios-minimum`'s 5 min).
  package var checkS = 300.0
  /// Below this battery level, and not charging, nothing runs, % (the
  /// critically-low / Low Power Mode gate, WWDC20 session 10063).
  package var lowBatteryPct = 20.0

  package init() {}

  /// Names accepted in `bg-processing:key=value,...`.
  package static let keys: [SettingKey<BGProcessingParameters>] = [
    .init("requires_power", \.requiresPower, max: 1, help: "requiresExternalPower: 1 runs only while charging"),
    .init("requires_network", \.requiresNetwork, max: 1, help: "requiresNetworkConnectivity: 1 runs only while online"),
    .init("run_time", \.runTimeS, min: 1, max: 3600, duration: true, help: "run time of the task; a fetch still running then is cut"),
    .init("earliest", \.earliestS, duration: true, help: "earliestBeginDate after each run: the least time between two runs"),
    .init("idle", \.idleS, duration: true, help: "the device counts as idle this long after the user's last session ended"),
    .init("check", \.checkS, min: 60, duration: true, help: "time between the system's checks"),
    .init("low_battery_pct", \.lowBatteryPct, max: 100, help: "battery %, below which nothing runs unless charging"),
  ]
}

/// `BGProcessingTask` (iOS 13+), `bg-processing` (Apple BGTaskScheduler documentation):
/// deferrable maintenance work of minutes, which the system runs when the
/// device is idle, typically at night while charging.
///
/// At each check (every ``BGProcessingParameters/checkS``, and when the
/// device is plugged in or joins a network) the task runs, one fetch with
/// ``BGProcessingParameters/runTimeS`` of time, when all hold: charging
/// (with `requires_power`), online (with `requires_network`), the battery
/// gate (≥ ``BGProcessingParameters/lowBatteryPct`` or charging), the
/// device idle (no session of any app for ``BGProcessingParameters/idleS``),
/// and ``BGProcessingParameters/earliestS`` since the previous run. A task
/// that requires power therefore never runs unplugged.
package struct BGProcessingPolicy: FetchPolicy {
  package let params: BGProcessingParameters
  /// End of the latest session of any app (the screen on), Unix s.
  var screenOffAt: Double
  var lastRun = -Double.infinity
  /// Runs started.
  package private(set) var runs = 0

  /// - Parameter lastSessionEnd: when the user's last session before the
  ///   replay ended (−∞ if none).
  package init(params: BGProcessingParameters = BGProcessingParameters(), lastSessionEnd: Double = -.infinity) {
    self.params = params
    screenOffAt = lastSessionEnd
  }

  package mutating func start(_ ctx: inout PolicyContext) {
    ctx.setTimer(at: ctx.now + params.checkS)
  }

  package mutating func observe(_ event: TraceEvent, _ ctx: inout PolicyContext) {
    switch event.kind {
    case .open:
      screenOffAt = max(screenOffAt, event.time + event.value)
    case .chargeStart, .network:
      check(&ctx)
    default:
      break
    }
  }

  package mutating func timerFired(_ ctx: inout PolicyContext) {
    check(&ctx)
    ctx.setTimer(at: ctx.now + params.checkS)
  }

  /// Whether the task may run at `ctx.now`.
  func eligible(_ ctx: PolicyContext) -> Bool {
    let t = ctx.now
    if params.requiresPower > 0 && !ctx.isCharging { return false }
    if params.requiresNetwork > 0 && ctx.network == .offline { return false }
    if let b = ctx.batteryPct, b < params.lowBatteryPct, !ctx.isCharging { return false }
    return !ctx.fetchInFlight && t - screenOffAt >= params.idleS && t - lastRun >= params.earliestS
  }

  mutating func check(_ ctx: inout PolicyContext) {
    guard eligible(ctx) else { return }
    lastRun = ctx.now
    runs += 1
    ctx.requestFetch(withinS: params.runTimeS)
  }
}

/// `bg-processing[:requires_power=1,requires_network=1,key=value,...]`.
package enum BGProcessingFamily: PolicyFamily {
  package static let info = FamilyInfo(
    "bg-processing", .settingsAfter("requires_power=0|1,requires_network=0|1"),
    example: "bg-processing:requires_network=0", style: PolicyStyle(color: "#DDCC77", marker: .openDiamond),
    summary:
      "BGProcessingTask: minutes of deferrable work when the device is idle, by default only while charging and online (typically at night), at most once per earliest")

  package static func expectedFetchesPerDay(_ p: BGProcessingParameters) -> Double { max(1, 86_400 / max(p.earliestS, 3600)) }
  package static func fetchSpacingBound(_ p: BGProcessingParameters) -> Double? { max(p.earliestS, p.checkS) }
  package static func makePolicies(_ p: BGProcessingParameters, _ device: DeviceReplayInput) -> (Int32, ContentTimeline) -> BGProcessingPolicy {
    let training = device.training
    var last = -Double.infinity
    for e in training.events.reversed() where e.kind == .open {
      last = e.time + e.value
      break
    }
    return { _, _ in BGProcessingPolicy(params: p, lastSessionEnd: last) }
  }
}
