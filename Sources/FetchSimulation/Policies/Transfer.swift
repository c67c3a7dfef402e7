import FetchModels
import FetchTraces
import FetchWorld

/// `transfer:<discretionary|immediate>[,deadline=<d>,fetch=<interval>,min_bytes=<n>]`:
/// a handler that hands an item of at least ``TransferSettings/minBytes`` to
/// the device's background transfer queue (`NSURLSession` background
/// session, Apple URLSession documentation) instead of downloading it itself; smaller
/// items it downloads itself. The handler is launched by one of two
/// triggers:
/// - **push** (the default): the app's server sends a silent push on each
///   content update, as `silent-push` (APNs batching, rate cap, store-one
///   coalescing); the handler-only strategy to compare with is
///   `silent-push`.
/// - **fetch** (`fetch=<interval>`): the background fetch handler of a timer
///   every `interval`, first at the app's own phase, as
///   `periodic:<interval>`; its 30 s fetch discovers new items. The
///   handler-only strategy to compare with is `periodic:<interval>`.
///
/// `discretionary` transfers wait for WiFi ∧ charging until the deadline,
/// then go on any network; `immediate` ones go on any network at once. iOS
/// treats a transfer handed over while the app is in the background as
/// discretionary (Apple, `URLSessionConfiguration.isDiscretionary`): what
/// `immediate` models is a transfer started in the foreground, an upper
/// bound on a background hand-over's speed rather than an iOS behaviour.
///
/// - Complexity: as `silent-push` or `periodic` per event; the queue's work
///   is the engine's (`TransferQueue.swift`).
package struct TransferPolicy: FetchPolicy {
  package let settings: TransferSettings
  /// The push trigger: a silent push per content update (nil with a timer).
  package var push: SilentPushPolicy?
  /// The fetch trigger: a periodic background fetch (nil with pushes).
  package var timer: PeriodicPolicy?

  /// A policy whose handler is launched by silent pushes.
  package init(settings: TransferSettings, push: SilentPushPolicy) {
    self.settings = settings
    self.push = push
  }

  /// A policy whose handler is the background fetch of a timer.
  package init(settings: TransferSettings, timer: PeriodicPolicy) {
    self.settings = settings
    self.timer = timer
  }

  package mutating func start(_ ctx: inout PolicyContext) {
    ctx.transfers = settings
    push?.start(&ctx)
    timer?.start(&ctx)
  }

  // A timer ignores the trace's events (`periodic` observes none).
  package mutating func observe(_ event: TraceEvent, _ ctx: inout PolicyContext) { push?.observe(event, &ctx) }
  package mutating func timerFired(_ ctx: inout PolicyContext) {
    push?.timerFired(&ctx)
    timer?.timerFired(&ctx)
  }
  package mutating func fetchFinished(_ outcome: FetchOutcome, _ ctx: inout PolicyContext) {
    push?.fetchFinished(outcome, &ctx)
  }
}

/// `transfer:<discretionary|immediate>[,key=value,...]`.
package enum TransferFamily: PolicyFamily {
  /// How items are handed over, and what launches the handler.
  package struct Configuration: Sendable, Hashable {
    package var transfer: TransferSettings
    /// The background fetch's interval, s; 0: a silent push per content
    /// update launches the handler instead.
    package var fetchIntervalS = 0.0
  }

  package static let info = FamilyInfo(
    "transfer", .other(":<discretionary|immediate>[,deadline=<d>,fetch=<interval>,min_bytes=<n>]"),
    example: "transfer:discretionary,deadline=1d", style: PolicyStyle(color: "#44AA99", marker: .openHexagon),
    summary:
      "a silent push on each content update (as silent-push), or with fetch=<interval> a background fetch on a timer (as periodic:<interval>); the 30 s handler hands items of at least min_bytes to the device's background transfer queue (out of process, no time limit, resumes after a network loss); discretionary ones wait for WiFi and charging until the deadline (what iOS does for background hand-overs), immediate ones go at once (as if started in the foreground: an upper bound, not iOS's background behaviour)")

  static let keys: [SettingKey<Configuration>] = [
    .init("deadline", \.transfer.deadlineS, duration: true, help: "discretionary only: how long a transfer waits for WiFi and charging before it goes on any network"),
    .init("fetch", \.fetchIntervalS, min: 1, duration: true, help: "the trigger: the background fetch handler of a timer every <interval>, first at the app's own phase (as periodic:<interval>); unset, a silent push on each content update (as silent-push)"),
    .init("min_bytes", \.transfer.minBytes, max: SettingBound.bytes, help: "items at least this large, bytes, go to the queue; smaller ones the handler downloads itself"),
  ]
  package static var settings: [PolicySettingInfo] {
    settingInfos(keys, defaults: Configuration(transfer: TransferSettings(discretionary: true))).map {
      $0.name == "fetch" ? PolicySettingInfo(name: $0.name, defaultValue: "unset (push)", range: $0.range, help: $0.help) : $0
    }
  }

  package static func parse(_ argument: String?, spec: String) throws -> Configuration {
    guard let a = argument, !a.isEmpty else {
      throw PolicySpecError(.missingArgument, "policy 'transfer' needs a mode, e.g. transfer:discretionary,deadline=24h or transfer:immediate")
    }
    let items = a.split(separator: ",", maxSplits: 1).map(String.init)
    let discretionary: Bool
    switch items[0] {
    case "discretionary": discretionary = true
    case "immediate": discretionary = false
    default:
      throw PolicySpecError(.badValue, "policy '\(spec)': unknown mode '\(items[0])' (expected discretionary or immediate)")
    }
    let defaults = Configuration(transfer: TransferSettings(discretionary: discretionary))
    let c = try parseSettings(items.count > 1 ? items[1] : "", policy: spec, defaults: defaults, keys: keys)
    if !discretionary && c.transfer.deadlineS != defaults.transfer.deadlineS {
      throw PolicySpecError(.badValue, "policy '\(spec)': deadline applies to discretionary transfers only")
    }
    return c
  }

  package static func describe(_ c: Configuration) -> String {
    let s = c.transfer
    var out = name + (s.discretionary ? ":discretionary,deadline=" + formatDuration(s.deadlineS) : ":immediate")
    if c.fetchIntervalS > 0 { out += ",fetch=" + formatDuration(c.fetchIntervalS) }
    if s.minBytes != TransferSettings(discretionary: s.discretionary).minBytes { out += ",min_bytes=" + keys[2].text(s.minBytes) }
    return out
  }

  /// As `periodic:<interval>` with the fetch trigger; the push trigger
  /// fetches only on content updates, as `silent-push`.
  package static func expectedFetchesPerDay(_ c: Configuration) -> Double {
    c.fetchIntervalS > 0 ? timerFetchesPerDay(c.fetchIntervalS) : 50
  }
  package static func fetchSpacingBound(_ c: Configuration) -> Double? {
    c.fetchIntervalS > 0 ? min(c.fetchIntervalS, 900) : nil
  }

  package static func makePolicies(_ c: Configuration, _ device: DeviceReplayInput) -> (Int32, ContentTimeline) -> TransferPolicy {
    if c.fetchIntervalS > 0 {
      return { app, _ in
        TransferPolicy(
          settings: c.transfer, timer: PeriodicPolicy(interval: c.fetchIntervalS, phase: c.fetchIntervalS * device.timerPhase(app: app)))
      }
    }
    return { TransferPolicy(settings: c.transfer, push: SilentPushPolicy(user: device.user, content: $1)) }
  }
}
