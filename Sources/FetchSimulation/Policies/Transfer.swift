import FetchModels
import FetchTraces

/// `transfer:<discretionary|immediate>[,deadline=<d>,min_bytes=<n>]`: the
/// app's server sends a silent push on each content update (as
/// `silent-push`, with its APNs batching, rate cap and store-one
/// coalescing), and the 30 s push handler hands an item of at least
/// ``TransferSettings/minBytes`` to the device's background transfer queue
/// (`NSURLSession` background session, reference §2.3, §2.8) instead of
/// downloading it itself; smaller items it downloads as `silent-push` does.
/// `discretionary` transfers wait for WiFi ∧ charging until the deadline,
/// then go on any network; `immediate` ones go on any network at once.
/// The handler-only strategy to compare with is `silent-push`: the same
/// pushes, the whole item inside the 30 s handler.
///
/// - Complexity: as `silent-push` per event; the queue's work is the
///   engine's (`TransferQueue.swift`).
package struct TransferPolicy: FetchPolicy {
  package let settings: TransferSettings
  /// The trigger: a silent push per content update.
  package var push: SilentPushPolicy

  package init(settings: TransferSettings, push: SilentPushPolicy) {
    self.settings = settings
    self.push = push
  }

  package mutating func start(_ ctx: inout PolicyContext) {
    ctx.transfers = settings
    push.start(&ctx)
  }

  package mutating func observe(_ event: TraceEvent, _ ctx: inout PolicyContext) { push.observe(event, &ctx) }
  package mutating func timerFired(_ ctx: inout PolicyContext) { push.timerFired(&ctx) }
  package mutating func fetchFinished(_ outcome: FetchOutcome, _ ctx: inout PolicyContext) {
    push.fetchFinished(outcome, &ctx)
  }
}

/// `transfer:<discretionary|immediate>[,key=value,...]`.
package enum TransferFamily: PolicyFamily {
  package static let name = "transfer"
  package static let syntax = "transfer:<discretionary|immediate>[,deadline=<d>,min_bytes=<n>]"
  package static let example = "transfer:discretionary,deadline=1d"
  package static let summary =
    "a silent push on each content update (as silent-push); the 30 s handler hands items of at least min_bytes to the device's background transfer queue (out of process, no time limit, resumes after a network loss); discretionary ones wait for WiFi and charging until the deadline, immediate ones go at once"

  static let keys: [SettingKey<TransferSettings>] = [
    .init("deadline", \.deadlineS, duration: true, help: "discretionary only: how long a transfer waits for WiFi and charging before it goes on any network"),
    .init("min_bytes", \.minBytes, help: "items at least this large, bytes, go to the queue; smaller ones the handler downloads itself"),
  ]
  package static var settings: [PolicySettingInfo] {
    settingInfos(keys, defaults: TransferSettings(discretionary: true))
  }
  package static let style = PolicyStyle(color: "#44AA99", marker: .openHexagon)

  package static func parse(_ argument: String?, spec: String) throws -> TransferSettings {
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
    let s = try parseSettings(
      items.count > 1 ? items[1] : "", policy: spec, defaults: TransferSettings(discretionary: discretionary), keys: keys)
    if !discretionary && s.deadlineS != TransferSettings(discretionary: false).deadlineS {
      throw PolicySpecError(.badValue, "policy '\(spec)': deadline applies to discretionary transfers only")
    }
    return s
  }

  package static func describe(_ s: TransferSettings) -> String {
    var out = name + (s.discretionary ? ":discretionary,deadline=" + formatDuration(s.deadlineS) : ":immediate")
    let d = TransferSettings(discretionary: s.discretionary)
    if s.minBytes != d.minBytes { out += ",min_bytes=" + keys[1].text(s.minBytes) }
    return out
  }

  /// Fetches only on content updates, as `silent-push`.
  package static func fetchSpacingBound(_ configuration: TransferSettings) -> Double? { nil }

  package static func makePolicies(_ s: TransferSettings, _ device: DeviceReplayInput) -> (Int32, ContentTimeline) -> TransferPolicy {
    { TransferPolicy(settings: s, push: SilentPushPolicy(user: device.user, content: $1)) }
  }
}
