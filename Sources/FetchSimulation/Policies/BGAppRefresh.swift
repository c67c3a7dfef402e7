import FetchModels
import FetchTraces
import FetchWorld

/// A `BGAppRefreshTask` configuration: the Minimum scheduler's parameters,
/// the `earliestBeginDate` floor and whether location wakes are launch
/// moments.
package struct BGAppRefreshParameters: SettingTable {
  /// `earliestBeginDate` − now at each (re)submission, s: the task does not
  /// start sooner (V, Apple BGTaskScheduler documentation); the app resubmits when a run ends, so
  /// this is the least time between two runs. Default 15 min (NV; Apple's
  /// sample code).
  package var earliestS = 900.0
  /// Whether a location wake (a `location` row) is a launch moment (1) or
  /// not (0): the system has woken the device and the app for it already.
  package var locationLaunches = 1.0
  /// The scheduler that picks the times (as `ios-minimum`).
  package var minimum = IOSMinimumParameters()

  package init() {}

  /// The settings: `earliest`, `location`, then every `ios-minimum` key.
  package static let keys: [SettingKey<BGAppRefreshParameters>] =
    [
      .init("earliest", \.earliestS, duration: true, help: "earliestBeginDate after each run: the least time between two runs"),
      .init("location", \.locationLaunches, max: 1, help: "1: location wakes are launch moments; 0: they are not"),
    ]
    + IOSMinimumParameters.keys(at: \.minimum)

  /// The scheduler's parameters with the floor applied to its spacing.
  var scheduler: IOSMinimumParameters {
    var p = minimum
    p.minSpacingS = max(p.minSpacingS, earliestS)
    return p
  }
}

/// `BGAppRefreshTask` (iOS 13+), `bg-app-refresh` (Apple BGTaskScheduler documentation):
/// the successor of the Minimum fetch interval. The system picks when to
/// run the task from the user's usage, the battery, budgets and rate
/// limits: this is `ios-minimum`'s scheduler (``IOSMinimumPolicy``, its habit
/// model, gates and budgets, shared with any Minimum instances of the
/// device), run as is, with two differences:
///
/// - `earliestBeginDate`: the app resubmits its request when a run ends,
///   with `earliestBeginDate = now + earliest`, so no run starts sooner
///   than ``BGAppRefreshParameters/earliestS`` after the previous one
///   (the scheduler's spacing raised to it, as `ios-custom`'s floor);
/// - location wakes (`location` rows) are launch moments: the device and
///   the system are awake for them, so the scheduler decides there too (as
///   at other apps' wakes and opens), besides its periodic checks.
///
/// Each run has the engine's 30 s budget (``FetchExchange/fetchBudgetS``;
/// S: ~30 s per run).
package struct BGAppRefreshPolicy: FetchPolicy {
  package static var observedEvents: ObservedEvents { .allWithLocation }
  package static var observesRadio: Bool { true }
  var scheduler: IOSMinimumPolicy
  let locationLaunches: Bool

  init(scheduler: IOSMinimumPolicy, locationLaunches: Bool) {
    self.scheduler = scheduler
    self.locationLaunches = locationLaunches
  }

  package mutating func start(_ ctx: inout PolicyContext) { scheduler.start(&ctx) }

  package mutating func observe(_ event: TraceEvent, _ ctx: inout PolicyContext) {
    scheduler.observe(event, &ctx)
    if event.kind == .location && locationLaunches { scheduler.decide(&ctx) }
  }

  package mutating func timerFired(_ ctx: inout PolicyContext) { scheduler.timerFired(&ctx) }

  package mutating func fetchFinished(_ outcome: FetchOutcome, _ ctx: inout PolicyContext) {
    scheduler.fetchFinished(outcome, &ctx)
  }
}

/// `bg-app-refresh[:earliest=<interval>,key=value,...]`.
package enum BGAppRefreshFamily: PolicyFamily {
  package static let info = FamilyInfo(
    "bg-app-refresh", .settingsAfter("earliest=<interval>"), example: "bg-app-refresh:earliest=30m",
    learning: .habitModel, style: PolicyStyle(color: "#88CCEE", marker: .openTriangle),
    summary:
      "BGAppRefreshTask: the ios-minimum scheduler picks the times, no sooner than earliestBeginDate after the last run, with location wakes as launch moments")

  package static func expectedFetchesPerDay(_ c: BGAppRefreshParameters) -> Double { min(50, timerFetchesPerDay(c.earliestS)) }
  package static func fetchSpacingBound(_ c: BGAppRefreshParameters) -> Double? { max(c.earliestS, c.minimum.minSpacingS) }
  package static func makePolicies(_ c: BGAppRefreshParameters, _ device: DeviceReplayInput) -> (Int32, ContentTimeline) -> BGAppRefreshPolicy {
    let make = IOSMinimumPolicy.makePolicies(c.scheduler, device)
    let location = c.locationLaunches > 0
    return { app, content in BGAppRefreshPolicy(scheduler: make(app, content), locationLaunches: location) }
  }
}
