import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld
import Testing

@testable import FetchSimulation

/// The work estimate of every learning family against the decisions its
/// policies take, counted (not timed) at two window lengths: the counts
/// grow linearly with the window, and the estimate covers them at both.
@Suite("Policy work scaling")
struct PolicyWorkScalingTests {
  /// Decisions a replay's policies were asked to take.
  final class Count: @unchecked Sendable {
    /// Timer fires (a policy's own checks).
    var checks = 0
    /// Events the estimate counts as decision opportunities.
    var opportunities = 0
  }

  /// Passes everything to a built-in policy and counts its decision points.
  struct Counting: FetchPolicy {
    static var observesRadio: Bool { true }
    static var observedEvents: ObservedEvents { .allWithLocation }
    var inner: AnyFetchPolicy
    let count: Count
    let kinds: Set<EventKind>

    mutating func start(_ ctx: inout PolicyContext) { inner.start(&ctx) }
    mutating func observe(_ event: TraceEvent, _ ctx: inout PolicyContext) {
      if kinds.contains(event.kind) && !(event.kind == .open && event.app == ctx.app) { count.opportunities += 1 }
      inner.observe(event, &ctx)
    }
    mutating func timerFired(_ ctx: inout PolicyContext) {
      count.checks += 1
      inner.timerFired(&ctx)
    }
    mutating func fetchFinished(_ outcome: FetchOutcome, _ ctx: inout PolicyContext) { inner.fetchFinished(outcome, &ctx) }
  }

  /// Replays apps "a" and "b" of a `days`-day trace under `spec` (after a
  /// day of training) and counts their decision points.
  static func decisions(_ spec: PolicySpec, days: Double) -> (count: Count, trace: UserTrace) {
    let world = WorldParameters()
    let trace = TestTraces.user(seed: 11, days: days, opensPerHour: 2, networkChangesPerDay: 12)
    let training = TestTraces.user(seed: 12, days: 1, opensPerHour: 2, start: trace.start - 86_400)
    let user = PreparedUser(trace: trace, world: world)
    let apps: [Int32] = [0, 1]
    let contents = apps.map { ContentTimeline(trace: trace, app: $0, world: world, seed: 1) }
    let device = DeviceReplayInput(
      user: user, apps: apps, contents: contents, scope: .app,
      options: ReplayOptions(seed: 1, policyKey: spec.description, recordEvents: false),
      learning: spec.learns ? LearningContext(training: training, population: nil) : nil)
    let make = spec.makeBoxedPolicies(device)
    let count = Count()
    let kinds = spec.settingWork?.decidesAt ?? SettingWork.schedulerOpportunities.union([.location])
    _ = device.run { app, content in Counting(inner: make(app, content), count: count, kinds: kinds) }
    return (count, trace)
  }

  /// One setting of every learning family, with checks far apart so that
  /// the decisions at other events dominate.
  static let settings = [
    "ios-minimum:check=1d", "ios-custom:1h,check=1d", "bg-app-refresh:earliest=0s,spacing=0s,check=1d", "imp:check=1d",
    "planner:check=1d", "android-prefetch", "android-standby",
  ]

  @Test("every learning family: decisions double with the window, and the estimate covers them", arguments: settings)
  func decisionsScale(_ text: String) throws {
    let spec = try PolicySpec(parsing: text)
    #expect(spec.learns, "\(text)")
    let short = Self.decisions(spec, days: 3), long = Self.decisions(spec, days: 6)
    let n0 = short.count.checks + short.count.opportunities, n1 = long.count.checks + long.count.opportunities
    let ratio = Double(n1) / Double(max(n0, 1))
    #expect(n0 > 0 && ratio > 1.5 && ratio < 2.6, "\(text): \(n0) → \(n1) decision points")
    guard let work = spec.settingWork else { return }
    for (run, days) in [(short, 3.0), (long, 6.0)] {
      let opportunities = work.opportunities(in: run.trace, apps: [0, 1])
      let estimated = opportunities.reduce(0) { $0 + work.checksPerDay * days + $1 }
      let counted = Double(run.count.checks + run.count.opportunities)
      #expect(counted <= estimated, "\(text), \(days) days: \(counted) decision points, estimate \(estimated)")
      // The decisions at other apps' opens, wakes and network changes are
      // most of them (checks once a day): an estimate of checks alone misses them.
      #expect(work.checksPerDay * days * 2 < counted / 4, "\(text): \(run.count.checks) checks of \(counted)")
    }
  }

  @Test("a spacing of 0 is estimated, not divided by: a finite fetch count from the decisions")
  func zeroSpacing() throws {
    let spec = try PolicySpec(parsing: "bg-app-refresh:earliest=0s,spacing=0s")
    #expect(spec.fetchSpacingBound == 0)
    let work = try #require(spec.settingWork)
    let trace = TestTraces.user(seed: 11, days: 2, opensPerHour: 2, networkChangesPerDay: 12)
    let opportunities = work.opportunities(in: trace, apps: [0])
    #expect(opportunities.allSatisfy { $0.isFinite })
    #expect(work.steps(days: 2, opportunities: opportunities[0]).isFinite)
  }
}
