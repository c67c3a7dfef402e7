import FetchModels
import FetchTraces
import FetchWorld

/// The clairvoyant floor: knows the future opens, content updates and
/// network, and fetches once just before an open, only when the server has
/// something the device lacks, timed to finish exactly at the open (or, when
/// the device is offline or the network changes too close to the open, at
/// the latest moment a fetch can finish before it).
///
/// Every fetch brings the content as of its completion, so at each open the
/// oracle's age is ≤ any other policy's on the same trace, and it makes at
/// most one fetch per open. The guarantee is exact with server failures off
/// (`fetch.failure_probability` = 0, the default): random server failures
/// are not foreseen. Its energy is not a lower bound: it ignores radio
/// tails (the budgeted oracles of the benchmark harness address that).
package struct OraclePolicy: FetchPolicy {
  package static var observedEvents: ObservedEvents { .appOpens }
  let user: PreparedUser
  let opens: [Double]
  let content: ContentTimeline
  /// ``FetchExchange/fetchBudgetS``: a fetch is started two budgets before its open.
  let fetchBudgetS: Double
  /// ``WorldParameters/refreshesAtOpen``.
  let refreshesAtOpen: Bool
  var next = 0
  var synced = 0
  var deadline = 0.0
  // Search hints: the oracle asks about times that mostly move forward.
  var versionHint = 0
  var netHint = 0

  /// - Parameters:
  ///   - user: the prepared trace (its future is what the oracle knows).
  ///   - app: the app whose content is fetched.
  ///   - content: the app's update times.
  package init(user: PreparedUser, app: Int32, content: ContentTimeline) {
    self.user = user
    fetchBudgetS = user.world.fetch.fetchBudgetS
    refreshesAtOpen = user.world.refreshesAtOpen
    opens = user.opens(of: app).map(\.time)
    self.content = content
  }

  mutating func serverVersion(at t: Double) -> Int { content.version(at: t, hint: &versionHint) }

  /// The last moment at or before `t` at which a fetch can finish online.
  mutating func onlineDeadline(_ t: Double) -> Double {
    var i = user.networkIndex(at: t, hint: &netHint)
    guard user.netKinds[i] == .offline else { return t }
    while i > 0 && user.netKinds[i - 1] == .offline { i -= 1 }
    return i == 0 ? -.infinity : user.netTimes[i]
  }

  mutating func schedule(_ ctx: inout PolicyContext) {
    ctx.cancelTimer()
    guard next < opens.count else { return }
    let d = onlineDeadline(opens[next])
    guard d >= ctx.now, serverVersion(at: d) > synced else { return }
    deadline = d
    // Wake early enough for any fetch (two budgets, room for stepping back
    // one network segment); the engine times the start exactly.
    ctx.setTimer(at: max(ctx.now, d - 2 * fetchBudgetS))
  }

  package mutating func start(_ ctx: inout PolicyContext) { schedule(&ctx) }

  package mutating func timerFired(_ ctx: inout PolicyContext) {
    ctx.requestFetch(completingBy: deadline)
  }

  package mutating func fetchFinished(_ outcome: FetchOutcome, _ ctx: inout PolicyContext) {
    if outcome.result == .newData { synced = max(synced, serverVersion(at: outcome.end)) }
  }

  package mutating func observe(_ event: TraceEvent, _ ctx: inout PolicyContext) {
    guard event.kind == .open, event.app == ctx.app else { return }
    if refreshesAtOpen { synced = max(synced, serverVersion(at: event.time)) }
    while next < opens.count && opens[next] <= event.time { next += 1 }
    if !ctx.fetchInFlight { schedule(&ctx) }
  }
}

/// `oracle`: fetches at each content update (knows the future).
package enum OracleFamily: PolicyFamily {
  package static let info = FamilyInfo(
    "oracle", .none, style: PolicyStyle(color: "#009E73", marker: .diamond),
    summary:
      "the clairvoyant oracle: knows the future and fetches just before an open, only when the server has something new")

  package static func fetchSpacingBound(_ configuration: Void) -> Double? { nil }
  package static func makePolicies(_ configuration: Void, _ device: DeviceReplayInput) -> (Int32, ContentTimeline) -> OraclePolicy {
    { OraclePolicy(user: device.user, app: $0, content: $1) }
  }

}

extension PolicySpec {
  /// `oracle`.
  public static let oracle = PolicySpec(OracleFamily.self, ())
}
