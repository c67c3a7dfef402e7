import FetchModels
import FetchWorld

/// A plain timer: fetches every `interval` seconds, the first `phase`
/// seconds after the window start (the analytic convention of a fetch at
/// the start is `phase` 0), whatever the device is doing. A fetch still running when the timer fires makes that tick a no-op.
package struct PeriodicPolicy: FetchPolicy {
  package static var observedEvents: ObservedEvents { .none }
  /// Seconds between fetches.
  package let interval: Double
  /// Seconds from the window start to the first fetch.
  package let phase: Double

  /// - Parameter phase: s from the window start to the first fetch; nil:
  ///   one interval.
  package init(interval: Double, phase: Double? = nil) {
    precondition(interval > 0, "periodic interval must be positive")
    precondition((phase ?? 0) >= 0, "periodic phase must be non-negative")
    self.interval = interval
    self.phase = phase ?? interval
  }

  package mutating func start(_ ctx: inout PolicyContext) {
    ctx.setTimer(at: ctx.now + phase)
  }

  package mutating func timerFired(_ ctx: inout PolicyContext) {
    ctx.requestFetch()
    ctx.setTimer(at: ctx.now + interval)
  }
}

/// `periodic:<interval>[,phase=<d>]`: a plain timer.
package enum PeriodicFamily: PolicyFamily {
  /// The interval, s, and the first fetch's offset from the window start
  /// (`nil`: the app's own phase, ``TimerPhase``; equal to the interval:
  /// aligned with every other app).
  package struct Configuration: Sendable, Hashable {
    package var interval: Double
    package var phase: Double?
  }

  package static let info = FamilyInfo(
    "periodic", .other(":<interval>[,phase=<d>|aligned]"),
    example: "periodic:30m", style: PolicyStyle(color: "#E69F00", marker: .circle),
    summary:
      "a plain timer every <interval>, whatever the device is doing; each app's first fetch at its own seeded phase")

  package static let settings = [
    PolicySettingInfo(
      name: "phase", defaultValue: "seeded per (user, app)", range: "0...the interval, or aligned",
      help: "time from the window start to the first fetch (0: the analytic convention of a fetch at the start; aligned: one interval, every app together)")
  ]

  package static func parse(_ argument: String?, spec: String) throws -> Configuration {
    guard let a = argument else { throw PolicySpecError(.missingArgument, "policy 'periodic' needs an interval, e.g. periodic:30m") }
    let items = a.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
    let secs = try parseInterval(items[0], policy: spec, examples: "90s, 15m, 1h, 1h30m, 1d")
    var phase: Double?
    if items.count > 1 {
      let kv = items[1].split(separator: "=", maxSplits: 1).map(String.init)
      guard kv.count == 2, kv[0] == "phase" else {
        throw PolicySpecError(.unknownSetting, "policy '\(spec)': unknown setting '\(items[1])'; known: phase")
      }
      guard let p = kv[1] == "aligned" ? secs : settingDuration(kv[1]), p >= 0, p <= secs else {
        throw PolicySpecError(
          .badValue,
          "policy '\(spec)': bad value '\(kv[1])' for phase (a duration from 0 to the interval, e.g. phase=0, or aligned)")
      }
      phase = p
    }
    return Configuration(interval: secs, phase: phase)
  }

  package static func describe(_ c: Configuration) -> String {
    "periodic:\(formatDuration(c.interval))"
      + (c.phase.map { ",phase=" + ($0 == c.interval ? "aligned" : formatDuration($0)) } ?? "")
  }
  package static func expectedFetchesPerDay(_ c: Configuration) -> Double { timerFetchesPerDay(c.interval) }
  package static func fetchSpacingBound(_ c: Configuration) -> Double? { min(c.interval, 900) }
  package static func makePolicies(_ c: Configuration, _ device: DeviceReplayInput) -> (Int32, ContentTimeline) -> PeriodicPolicy {
    { app, _ in PeriodicPolicy(interval: c.interval, phase: c.phase ?? c.interval * device.timerPhase(app: app)) }
  }

}

extension PolicySpec {
  /// `periodic:<interval>[,phase=<phase>]`; `phase` nil is each app's own
  /// seeded phase, equal to the interval the aligned one.
  public static func periodic(interval: Double, phase: Double? = nil) -> PolicySpec {
    PolicySpec(PeriodicFamily.self, .init(interval: interval, phase: phase))
  }
}

/// Fetches a day of a timer every `interval` s (at least 1).
func timerFetchesPerDay(_ interval: Double) -> Double {
  interval > 0 ? max(1, 86_400 / interval) : 86_400
}
