import FetchModels
import FetchTraces
import FetchWorld

/// Knobs of the location-wake policy (Apple Core Location documentation). Durations in seconds.
package struct LocationWakeParameters: SettingTable {
  /// Background time the system grants the app per location wake, s (M:
  /// "a few seconds", ~10 s, Xamarin.iOS backgrounding guides). The refresh must start and
  /// finish inside it; a fetch still running at its end is cut.
  package var backgroundTimeS = 10.0
  /// Below this battery level, and not charging, wakes do nothing, % (the
  /// critically-low and Low Power Mode gates as in `ios-minimum`,
  /// WWDC20 session 10063 factors 1–2).
  package var lowBatteryPct = 20.0
  /// Whether region enter/exit wakes refresh (1) or not (0).
  package var regions = 1.0
  /// Whether significant-location-change wakes refresh (1) or not (0).
  package var significant = 1.0
  /// Least time between two refreshes, s (0: every wake may refresh).
  package var spacingS = 0.0

  package init() {}

  /// Names accepted in `location-wake:key=value,...`.
  package static let keys: [SettingKey<LocationWakeParameters>] = [
    .init("bg_time", \.backgroundTimeS, min: 1, max: 600, duration: true, help: "background time per location wake; a refresh must finish inside it"),
    .init("low_battery_pct", \.lowBatteryPct, max: 100, help: "battery %, below which wakes do nothing unless charging (Low Power Mode gate)"),
    .init("regions", \.regions, max: 1, help: "1: region enter/exit wakes refresh; 0: they do not"),
    .init("significant", \.significant, max: 1, help: "1: significant-location-change wakes refresh; 0: they do not"),
    .init("spacing", \.spacingS, duration: true, help: "least time between two refreshes (0: none)"),
  ]
}

/// What the location wakes of one replay did.
package struct LocationWakeStats: Sendable, Equatable {
  /// Location wakes of the kinds the app registered for.
  package var wakes = 0
  /// Wakes that started a refresh.
  package var refreshes = 0
  /// Wakes dropped by the battery gate.
  package var droppedLowPower = 0
  /// Wakes dropped by the spacing limit.
  package var droppedSpacing = 0
  /// Wakes whose background time ended before a refresh could start
  /// (offline, or the previous refresh still running).
  package var expired = 0

  package init() {}
}

/// Refresh on location wakes, `location-wake` (Apple Core Location documentation): an app
/// that monitors regions (home, work) or the significant-location-change
/// service is woken, or relaunched, when the user enters or leaves a region
/// or the phone changes cell tower, and gets a few seconds of background
/// time, which apps that are not location apps used on iOS 6 to refresh
/// their content.
///
/// At each wake of a registered kind (a `location` row), with the battery
/// gate passed (≥ ``LocationWakeParameters/lowBatteryPct`` or charging) and
/// the spacing limit respected, the app starts one refresh, which must
/// finish within the wake's background time
/// (``LocationWakeParameters/backgroundTimeS`` from the wake): a fetch
/// still running then is cut (`budget`), and a refresh that cannot start
/// before it ends (the device offline, the previous refresh still running)
/// does not happen. Nothing runs between wakes.
///
/// Monitoring costs energy (``AppSummary/monitoringEnergyJ``): every wake
/// that starts no refresh (dropped, expired or superseded) still launched
/// the app, a CPU wake of `device.cpu_wake_j`, and the app pays
/// `device.location_monitoring_w` over the whole window. A wake whose
/// background time outlasts the window is not charged.
package struct LocationWakePolicy: FetchPolicy {
  package static var observedEvents: ObservedEvents { .allWithLocation }
  package let params: LocationWakeParameters
  /// End of the current wake's background time (−∞: no wake pending).
  var windowEnd = -Double.infinity
  var lastRefresh = -Double.infinity
  package private(set) var stats = LocationWakeStats()

  package init(params: LocationWakeParameters = LocationWakeParameters()) {
    self.params = params
  }

  /// Whether the app registered for wakes of this kind.
  func wants(_ c: LocationChange) -> Bool {
    c.transition == .significant ? params.significant > 0 : params.regions > 0
  }

  package mutating func start(_ ctx: inout PolicyContext) {
    ctx.monitorsLocation = true
  }

  package mutating func observe(_ event: TraceEvent, _ ctx: inout PolicyContext) {
    if let c = event.location, wants(c) {
      if windowEnd > ctx.now {  // superseded before it could run
        stats.expired += 1
        ctx.chargeWakeWithoutFetch()
      }
      stats.wakes += 1
      windowEnd = event.time + params.backgroundTimeS
    }
    attempt(&ctx)
  }

  package mutating func timerFired(_ ctx: inout PolicyContext) { attempt(&ctx) }

  package mutating func fetchFinished(_ outcome: FetchOutcome, _ ctx: inout PolicyContext) { attempt(&ctx) }

  /// Starts the pending wake's refresh if it can run now; waits (until the
  /// background time ends) while offline or busy.
  mutating func attempt(_ ctx: inout PolicyContext) {
    let t = ctx.now
    guard windowEnd > -Double.infinity else { return }
    guard t < windowEnd else {
      stats.expired += 1
      ctx.chargeWakeWithoutFetch()
      windowEnd = -.infinity
      ctx.cancelTimer()
      return
    }
    guard !ctx.fetchInFlight, ctx.network != .offline else {
      ctx.setTimer(at: windowEnd)
      return
    }
    let end = windowEnd
    windowEnd = -.infinity
    ctx.cancelTimer()
    if let b = ctx.batteryPct, b < params.lowBatteryPct, !ctx.isCharging {
      stats.droppedLowPower += 1
      ctx.chargeWakeWithoutFetch()
      return
    }
    if t - lastRefresh < params.spacingS {
      stats.droppedSpacing += 1
      ctx.chargeWakeWithoutFetch()
      return
    }
    stats.refreshes += 1
    lastRefresh = t
    ctx.requestFetch(withinS: end - t)
  }
}

/// `location-wake[:key=value,...]`.
package enum LocationWakeFamily: PolicyFamily {
  package static let info = FamilyInfo(
    "location-wake", .settings, style: PolicyStyle(color: "#6699CC", marker: .octagon),
    summary:
      "refresh on location wakes (region enter/exit, significant location changes): one fetch per wake, inside the wake's ~10 s of background time, behind the battery gate")

  /// Commutes give about 10 wakes a working day (NV, the synthetic population).
  package static func expectedFetchesPerDay(_ p: LocationWakeParameters) -> Double { 12 }
  /// Significant changes come no more often than every 5 min (Apple Core Location documentation).
  package static func fetchSpacingBound(_ p: LocationWakeParameters) -> Double? { max(300, p.spacingS) }
  package static func makePolicies(_ p: LocationWakeParameters, _ device: DeviceReplayInput) -> (Int32, ContentTimeline) -> LocationWakePolicy {
    { _, _ in LocationWakePolicy(params: p) }
  }
}
