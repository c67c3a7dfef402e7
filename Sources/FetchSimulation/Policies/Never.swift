import FetchModels
import FetchWorld

/// Never fetches in the background: iOS's default
/// `backgroundFetchIntervalNever` (Apple, `setMinimumBackgroundFetchInterval`). Costs exactly nothing.
package struct NeverPolicy: FetchPolicy {
  package static var observedEvents: ObservedEvents { .none }
  package init() {}
}

/// `never`: iOS's default `backgroundFetchIntervalNever`.
package enum NeverFamily: PolicyFamily {
  package static let info = FamilyInfo(
    "never", .none, style: PolicyStyle(color: "#000000", marker: .square),
    summary: "never fetch in the background (iOS's default); costs exactly nothing")

  package static func fetchSpacingBound(_ configuration: Void) -> Double? { nil }
  package static func makePolicies(_ configuration: Void, _ device: DeviceReplayInput) -> (Int32, ContentTimeline) -> NeverPolicy {
    { _, _ in NeverPolicy() }
  }

}

extension PolicySpec {
  /// `never`.
  public static let never = PolicySpec(NeverFamily.self, ())
}
