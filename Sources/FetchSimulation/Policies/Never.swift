import FetchModels

/// Never fetches in the background: iOS's default
/// `backgroundFetchIntervalNever` (reference §2.1). Costs exactly nothing.
public struct NeverPolicy: FetchPolicy {
  public static var observedEvents: ObservedEvents { .none }
  public init() {}
}

/// `never`: iOS's default `backgroundFetchIntervalNever`.
public enum NeverFamily: PolicyFamily {
  public static let name = "never"
  public static let syntax = "never"
  public static let example = "never"
  public static let summary = "never fetch in the background (iOS's default); costs exactly nothing"
  public static let style = PolicyStyle(color: "#000000", marker: .square)

  public static func parse(_ argument: String?, spec: String) throws {
    if argument != nil { throw PolicySpecError(.unexpectedArgument, "policy 'never' takes no parameter (got '\(spec)')") }
  }
  public static func describe(_ configuration: Void) -> String { name }
  public static func fetchSpacingBound(_ configuration: Void) -> Double? { nil }
  public static func makePolicies(_ configuration: Void, _ device: DeviceReplayInput) -> (Int32, ContentTimeline) -> NeverPolicy {
    { _, _ in NeverPolicy() }
  }

}

extension PolicySpec {
  /// `never`.
  public static let never = PolicySpec(NeverFamily.self, ())
}
