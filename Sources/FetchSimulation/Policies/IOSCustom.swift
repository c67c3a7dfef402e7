import FetchModels
import FetchTraces
import FetchWorld

/// `ios-custom:<interval>[,key=value,...]`: the Minimum scheduler with a
/// floor of `interval` between launches, as
/// `setMinimumBackgroundFetchInterval(_:)` with a custom value.
package enum IOSCustomFamily: PolicyFamily {
  /// The floor, s, and the scheduler's parameters (their spacing raised to
  /// at least the floor).
  package struct Configuration: Sendable, Hashable {
    package var interval: Double
    package var parameters: IOSMinimumParameters
  }

  package static let info = FamilyInfo(
    "ios-custom", .interval, learning: .habitModel, style: PolicyStyle(color: "#EE3377", marker: .triangleRight),
    summary: "the iOS Minimum scheduler with a floor of <interval> between launches (a custom fetch interval)")

  package static var settings: [PolicySettingInfo] { IOSMinimumFamily.settings }

  package static func parse(_ argument: String?, spec: String) throws -> Configuration {
    guard let a = argument else { throw PolicySpecError(.missingArgument, "policy 'ios-custom' needs an interval, e.g. ios-custom:1h") }
    let (secs, rest) = try parseIntervalAndSettings(a, policy: spec, examples: "30m, 1h")
    var p = try IOSMinimumParameters.parse(rest, policy: spec)
    p.minSpacingS = max(p.minSpacingS, secs)
    return Configuration(interval: secs, parameters: p)
  }

  package static func describe(_ c: Configuration) -> String {
    var p = c.parameters
    p.minSpacingS = p.minSpacingS == c.interval ? IOSMinimumParameters().minSpacingS : p.minSpacingS
    return "ios-custom:\(formatDuration(c.interval))"
      + p.settingsSuffix(separator: ",")
  }
  package static func expectedFetchesPerDay(_ c: Configuration) -> Double { timerFetchesPerDay(c.interval) }
  package static func fetchSpacingBound(_ c: Configuration) -> Double? { min(c.interval, 900) }
  package static func makePolicies(_ c: Configuration, _ device: DeviceReplayInput) -> (Int32, ContentTimeline) -> IOSMinimumPolicy {
    IOSMinimumPolicy.makePolicies(c.parameters, device)
  }
}
