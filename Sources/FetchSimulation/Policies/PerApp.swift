import FetchModels
import FetchTraces
import FetchWorld

/// `per-app:<app>=<policy>;...;*=<policy>`: a different policy per app of
/// a device (an app on `periodic:1h` beside an app on `ios-minimum`), all
/// replayed together on the device's one radio, with the device-wide
/// budgets shared by the apps whose policies use them (every Minimum or
/// Custom app draws on one ``DeviceBudgetLedger``, every IMP app on one
/// ``IMPSpending``).
///
/// An app is named by its name in the trace, or by `#k`, the k-th of the
/// device's replayed apps (1 = the first selected, the most used for
/// `--apps top(N)`); `*` covers the others and is required. A name wins
/// over a rank, a rank over `*`. Parts may not be `per-app` themselves.
/// The canonical form lists names, then ranks, then `*`, each part in its
/// own canonical form.
package enum PerAppFamily: PolicyFamily {
  /// Which app a part applies to.
  package enum AppSelector: Sendable, Hashable, Comparable {
    case name(String)
    case rank(Int)
    case others

    var text: String {
      switch self {
      case .name(let n): n
      case .rank(let k): "#\(k)"
      case .others: "*"
      }
    }
  }

  /// The parts in canonical order (names, ranks, then `*`).
  package struct Configuration: Sendable {
    package var parts: [(app: AppSelector, policy: PolicySpec)]
  }

  package static let info = FamilyInfo(
    "per-app", .other(":<app>=<policy>;...;*=<policy>"),
    example: "per-app:#1=periodic:1h;*=ios-minimum", style: PolicyStyle(color: "#117733", marker: .ring),
    summary:
      "a policy per app of the device (by name, or #k for the k-th replayed app; * for the rest), all on one radio with shared device budgets")

  package static func parse(_ argument: String?, spec: String) throws -> Configuration {
    guard let a = argument, !a.isEmpty else {
      throw PolicySpecError("policy 'per-app' needs its parts, e.g. \(example)")
    }
    var parts: [(app: AppSelector, policy: PolicySpec)] = []
    for item in a.split(separator: ";", omittingEmptySubsequences: false) {
      let kv = item.split(separator: "=", maxSplits: 1).map(String.init)
      guard kv.count == 2, !kv[0].isEmpty, !kv[1].isEmpty else {
        throw PolicySpecError("policy '\(spec)': '\(item)' is not <app>=<policy> (e.g. \(example))")
      }
      let app: AppSelector
      if kv[0] == "*" {
        app = .others
      } else if kv[0].hasPrefix("#") {
        guard let k = Int(kv[0].dropFirst()), k >= 1 else {
          throw PolicySpecError("policy '\(spec)': bad app rank '\(kv[0])' (#1 is the first replayed app)")
        }
        app = .rank(k)
      } else {
        app = .name(kv[0])
      }
      guard !parts.contains(where: { $0.app == app }) else {
        throw PolicySpecError("policy '\(spec)': app '\(kv[0])' is given twice; keep one")
      }
      let policy = try PolicySpec(parsing: kv[1])
      guard !policy.needsGeneratorTruth else {
        throw PolicySpecError("policy '\(spec)': a part may not plan with the generator's models (models=true)")
      }
      guard policy.family.name != name else {
        throw PolicySpecError("policy '\(spec)': a part may not be per-app itself")
      }
      parts.append((app, policy))
    }
    guard parts.contains(where: { $0.app == .others }) else {
      throw PolicySpecError("policy '\(spec)': add a part for the other apps, e.g. ';*=never'")
    }
    return Configuration(parts: parts.sorted { $0.app < $1.app })
  }

  package static func describe(_ c: Configuration) -> String {
    name + ":" + c.parts.map { $0.app.text + "=" + $0.policy.description }.joined(separator: ";")
  }

  package static func learns(_ c: Configuration) -> Bool { c.parts.contains { $0.policy.learns } }
  package static func usesHabitModel(_ c: Configuration) -> Bool { c.parts.contains { $0.policy.usesHabitModel } }
  package static func expectedFetchesPerDay(_ c: Configuration) -> Double {
    c.parts.map(\.policy.expectedFetchesPerDay).max() ?? 50
  }
  package static func fetchSpacingBound(_ c: Configuration) -> Double? {
    c.parts.compactMap(\.policy.fetchSpacingBound).min()
  }

  /// The part that applies to `app`, the `rank`-th (from 1) replayed app
  /// of a trace whose app names are `names`.
  static func part(_ c: Configuration, app: Int32, rank: Int, names: [String]) -> Int {
    let name = Int(app) < names.count ? names[Int(app)] : ""
    return c.parts.firstIndex { $0.app == .name(name) } ?? c.parts.firstIndex { $0.app == .rank(rank) }
      ?? c.parts.firstIndex { $0.app == .others }!
  }

  package static func makePolicies(_ c: Configuration, _ device: DeviceReplayInput) -> (Int32, ContentTimeline) -> AnyFetchPolicy {
    // Each part's maker is made once per device, so a part's shared state
    // (and the device's budgets in `device.services`) is shared by its apps.
    let makers = c.parts.map { $0.policy.makeBoxedPolicies(device) }
    let apps = device.apps
    let names = device.user.trace.apps
    return { app, content in
      let rank = (apps.firstIndex(of: app) ?? 0) + 1
      return makers[part(c, app: app, rank: rank, names: names)](app, content)
    }
  }
}

/// A policy of any type, for devices whose apps run different policies
/// (``PerAppFamily``). Calls are dynamic, and each wrapped policy is shown
/// only the events its own type asks for (``FetchPolicy/observedEvents``).
package struct AnyFetchPolicy: FetchPolicy {
  package static var observesRadio: Bool { true }
  package static var observedEvents: ObservedEvents { .allWithLocation }
  var policy: any FetchPolicy
  let events: ObservedEvents

  package init<P: FetchPolicy>(_ policy: P) {
    self.policy = policy
    events = P.observedEvents
  }

  package mutating func start(_ ctx: inout PolicyContext) { policy.start(&ctx) }

  package mutating func observe(_ event: TraceEvent, _ ctx: inout PolicyContext) {
    switch events {
    case .allWithLocation: policy.observe(event, &ctx)
    case .all: if event.kind != .location { policy.observe(event, &ctx) }
    case .appOpens: if event.kind == .open && event.app == ctx.app { policy.observe(event, &ctx) }
    case .none: break
    }
  }

  package mutating func timerFired(_ ctx: inout PolicyContext) { policy.timerFired(&ctx) }

  package mutating func fetchFinished(_ outcome: FetchOutcome, _ ctx: inout PolicyContext) {
    policy.fetchFinished(outcome, &ctx)
  }
}
