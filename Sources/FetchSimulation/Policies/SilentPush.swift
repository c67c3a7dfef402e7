import FetchModels
import FetchTraces
import FetchWorld

/// Knobs of the APNs silent-push model (Apple, "Pushing background updates to your App"). Durations in
/// seconds.
package struct SilentPushParameters: SettingTable {
  /// Most pushes delivered (app launches) in any sliding ``rateWindowS``
  /// (V: Apple's guidance is "two or three per hour"; sweep
  /// k ∈ {2, 3}). 0 delivers nothing.
  package var rateLimit = 3.0
  /// The rate limiter's sliding window, s (V: per hour).
  package var rateWindowS = 3600.0
  /// Priority-5 batching: a push waits for the device's next network
  /// activity, but at most this long, s (NV: Apple says only that such
  /// pushes "might get grouped and delivered in bursts").
  package var maxDelayS = 900.0
  /// Below this battery level, and not charging, pushes are dropped, %
  /// (S: WWDC20's critically-low 20 % and Low Power Mode gates, WWDC20
  /// session 10063 factors 1–2; silent pushes obey the seven factors but app usage).
  package var lowBatteryPct = 20.0
  /// How long APNs stores the push for an unreachable device, s
  /// (V: up to 30 days, or `apns-expiration`).
  package var expirationS = 30 * 86_400.0
  /// The push service and kind (Apple, "Pushing background updates to your App"; S for the last three).
  package var service = PushService.apns

  package init() {}

  /// Names accepted in `silent-push:key=value,...`.
  package static let keys: [SettingKey<SilentPushParameters>] = [
    .init("rate", \.rateLimit, max: SettingBound.count, help: "most pushes delivered in any sliding rate window (0: none)"),
    .init("rate_window", \.rateWindowS, min: 1, duration: true, help: "the rate limiter's sliding window"),
    .init("max_delay", \.maxDelayS, duration: true, help: "priority-5 batching: longest wait for the device's next network activity"),
    .init("low_battery_pct", \.lowBatteryPct, max: SettingBound.percent, help: "battery %, below which pushes are dropped unless charging"),
    .init("expiration", \.expirationS, duration: true, help: "how long APNs stores a push for an unreachable device"),
  ]
}

/// Which push the server sends (`silent-push:service=...`).
package enum PushService: String, Sendable, Hashable, CaseIterable {
  /// APNs background-only push, priority 5: batched, rate-capped (V).
  case apns
  /// APNs alert push with `content-available`: a user-visible
  /// notification that also wakes the app; priority 10 is allowed and it
  /// is not throttled like background-only pushes (S): delivered at once.
  case apnsAlert = "apns-alert"
  /// FCM high priority: may wake the device from Doze and grant a short
  /// network window (S): delivered at once.
  case fcmHigh = "fcm-high"
  /// FCM normal priority: delivered at once unless the device is in deep
  /// Doze, else at its next maintenance window (S; Doze as
  /// `android-workmanager` infers it, AOSP defaults).
  case fcmNormal = "fcm-normal"
}

/// What happened to the server's pushes in one replay.
package struct SilentPushStats: Sendable, Equatable {
  /// Pushes the server sent (one per content update in the window).
  package var sent = 0
  /// Pushes merged into one already waiting (priority-5 batching, or
  /// store-one while the device is offline).
  package var coalesced = 0
  /// Deliveries that launched the app in the background (one fetch each).
  package var delivered = 0
  /// Deliveries dropped because the battery was low and not charging.
  package var droppedLowPower = 0
  /// Pending pushes that reached the app while the user had it open in the
  /// foreground, where the open's own refresh covers them (with foreground
  /// refresh on): no background launch.
  package var consumedInForeground = 0
  /// Pushes that expired on APNs before the device came back.
  package var expired = 0

  package init() {}
}

/// APNs silent (background) push, `silent-push` (Apple, "Pushing background updates to your App"): the
/// app's server sends a `content-available` push, priority 5, on every
/// content update (the server knows its own updates, hence `content`), and
/// each delivered push launches the app for one fetch (30 s budget, in the
/// engine).
///
/// Delivery follows Apple's documented behaviour for priority 5:
/// - **Batching**: a waiting push is coalesced with later ones (same app,
///   so the latest subsumes the rest) and delivered in one burst at the
///   device's next network activity (a user session, another app's wake,
///   or a (re)connection to a network), or after at most
///   ``SilentPushParameters/maxDelayS`` (NV).
/// - **Rate limit**: at most ``SilentPushParameters/rateLimit`` deliveries
///   in any sliding ``SilentPushParameters/rateWindowS`` (V "two or three
///   per hour"); a throttled push is kept (coalesced) and delivered when the
///   window allows.
/// - **Store-one**: while the device is offline APNs keeps only the newest
///   push (V), delivered when the device is back online (unless it expired
///   after ``SilentPushParameters/expirationS``).
/// - **Low power**: at delivery time, with the battery under
///   ``SilentPushParameters/lowBatteryPct`` and not charging, the push is
///   dropped (no launch).
/// - If the user opens the app while a push waits and the open refreshes
///   the content (``ReplaySwitches/foregroundRefresh``), the push reaches
///   the running app and no background launch happens.
///
/// Other services (``SilentPushParameters/service``): an
/// APNs alert push with `content-available` and FCM high priority are
/// delivered at once (no batching, no rate cap: `rate` and `max_delay`
/// do not apply); FCM normal priority at once unless the device is in
/// deep Doze, else at Doze's next maintenance window. Store-one while
/// offline and the battery gate apply to all.
///
/// Every fetch therefore follows at least one content update since the
/// previous fetch; there are no spontaneous fetches.
package struct SilentPushPolicy: FetchPolicy {
  package let params: SilentPushParameters
  let updates: [Double]
  let foregroundRefresh: Bool
  /// Index of the next update the server has not pushed yet.
  var next = 0
  /// When the oldest push of the waiting batch was sent, if one waits.
  var pendingSince: Double?
  /// When the newest waiting push was sent.
  var newestPush = -Double.infinity
  /// End of the latest observed device network activity.
  var activeUntil = -Double.infinity
  /// The latest deliveries (at most `rateLimit` of them), ascending.
  var recent: [Double] = []
  /// Deep Doze as inferred from the events (FCM normal priority only).
  var doze: DozeState?
  package private(set) var stats = SilentPushStats()

  /// - Parameters:
  ///   - user: the replayed user (for the world's foreground-refresh switch).
  ///   - content: the app's server update times; one push per update.
  package init(params: SilentPushParameters = SilentPushParameters(), user: PreparedUser, content: ContentTimeline) {
    self.params = params
    updates = content.updates
    foregroundRefresh = user.world.refreshesAtOpen
  }

  var limit: Int { Int(max(0, params.rateLimit).rounded(.down)) }

  /// The earliest time ≥ `t` at which the rate limiter allows a delivery.
  func rateFree(at t: Double) -> Double {
    guard limit > 0 else { return .infinity }
    guard recent.count >= limit else { return t }
    return max(t, recent[recent.count - limit] + params.rateWindowS)
  }

  package mutating func start(_ ctx: inout PolicyContext) {
    if params.service == .fcmNormal { doze = DozeState(start: ctx.now, isCharging: ctx.isCharging) }
    while next < updates.count && updates[next] < ctx.now { next += 1 }
    attempt(&ctx, opportunity: false)
  }

  package mutating func observe(_ event: TraceEvent, _ ctx: inout PolicyContext) {
    // A location wake goes only to apps registered for it (location-wake).
    doze?.observe(event)
    var opportunity = false
    switch event.kind {
    case .open:
      activeUntil = max(activeUntil, event.time + max(event.value, PreparedUser.minimumActivityS))
      if event.app == ctx.app && foregroundRefresh {
        ingest(upTo: ctx.now)
        if pendingSince != nil {
          pendingSince = nil
          stats.consumedInForeground += 1
        }
      } else {
        opportunity = true
      }
    case .wake:
      activeUntil = max(activeUntil, event.time + max(event.value, PreparedUser.minimumActivityS))
      opportunity = true
    case .network:
      opportunity = ctx.network != .offline
    default:
      break
    }
    attempt(&ctx, opportunity: opportunity)
  }

  package mutating func timerFired(_ ctx: inout PolicyContext) {
    attempt(&ctx, opportunity: false)
  }

  package mutating func fetchFinished(_ outcome: FetchOutcome, _ ctx: inout PolicyContext) {
    attempt(&ctx, opportunity: false)
  }

  /// The server sends a push for each update at or before `t`.
  mutating func ingest(upTo t: Double) {
    while next < updates.count && updates[next] <= t {
      stats.sent += 1
      if pendingSince == nil { pendingSince = updates[next] } else { stats.coalesced += 1 }
      newestPush = updates[next]
      next += 1
    }
  }

  /// Takes in new pushes, delivers the waiting one if APNs would now, and
  /// arms the timer for the next push or the batch's deadline.
  mutating func attempt(_ ctx: inout PolicyContext, opportunity: Bool) {
    let t = ctx.now
    ingest(upTo: t)
    defer { schedule(&ctx) }
    guard let since = pendingSince, ctx.network != .offline else { return }
    if t - newestPush > params.expirationS {
      pendingSince = nil
      stats.expired += 1
      return
    }
    guard !ctx.fetchInFlight else { return }
    if params.service == .apns {
      guard opportunity || t < activeUntil || t >= since + params.maxDelayS else { return }
      guard rateFree(at: t) <= t else { return }
    } else if let d = doze, d.nextRunnable(at: t) > t {
      return
    }
    pendingSince = nil
    if let b = ctx.batteryPct, b < params.lowBatteryPct, !ctx.isCharging {
      stats.droppedLowPower += 1
      return
    }
    stats.delivered += 1
    recent.append(t)
    if recent.count > max(limit, 1) { recent.removeFirst(recent.count - max(limit, 1)) }
    ctx.requestFetch()
  }

  mutating func schedule(_ ctx: inout PolicyContext) {
    var wake = next < updates.count ? updates[next] : .infinity
    // Offline: the reconnection is an event. In flight: fetchFinished retries.
    if let since = pendingSince, ctx.network != .offline, !ctx.fetchInFlight {
      if params.service == .apns {
        wake = min(wake, max(since + params.maxDelayS, rateFree(at: ctx.now)))
      } else {
        // Not batched or capped: now, or Doze's next maintenance window.
        if let r = doze?.nextRunnable(at: ctx.now), r > ctx.now { wake = min(wake, r) }
      }
    }
    if wake.isFinite { ctx.setTimer(at: wake) } else { ctx.cancelTimer() }
  }
}

/// `silent-push[:key=value,...]`.
package enum SilentPushFamily: PolicyFamily {
  package static let info = FamilyInfo(
    "silent-push", .settings, style: PolicyStyle(color: "#882255", marker: .plus),
    summary:
      "the server pushes on each content update; APNs priority-5 batching, a rate cap, store-one coalescing while offline; each delivery launches a 30 s fetch")

  /// `service=apns|apns-alert|fcm-high|fcm-normal`, among the table's settings.
  static let service = ChoiceSetting(
    name: "service", path: \SilentPushParameters.service,
    help: "apns: background push, batched and rate-capped; apns-alert: alert push with content-available, delivered at once; fcm-high: at once, through Doze; fcm-normal: at once unless in deep Doze, else at its next maintenance window")

  package static var settings: [PolicySettingInfo] { SilentPushParameters.settingInfos + [service.info] }

  package static func parse(_ argument: String?, spec: String) throws -> SilentPushParameters {
    try service.parse(argument, policy: spec)
  }
  package static func describe(_ p: SilentPushParameters) -> String {
    name + p.settingsSuffix(separator: ":")
      + (p.service == .apns ? "" : (p == withService(p.service) ? ":" : ",") + "service=" + p.service.rawValue)
  }

  /// The defaults with `service`.
  static func withService(_ service: PushService) -> SilentPushParameters {
    var p = SilentPushParameters()
    p.service = service
    return p
  }
  package static func makePolicies(_ p: SilentPushParameters, _ device: DeviceReplayInput) -> (Int32, ContentTimeline) -> SilentPushPolicy {
    { SilentPushPolicy(params: p, user: device.user, content: $1) }
  }

}
