/// Never fetches in the background: iOS's default
/// `backgroundFetchIntervalNever` (reference §2.1). Costs exactly nothing.
public struct NeverPolicy: FetchPolicy {
  public static var observedEvents: ObservedEvents { .none }
  public init() {}
}

/// A plain timer: fetches every `interval` seconds from the window start,
/// whatever the device is doing. A fetch still running when the timer fires
/// makes that tick a no-op.
public struct PeriodicPolicy: FetchPolicy {
  public static var observedEvents: ObservedEvents { .none }
  /// Seconds between fetches.
  public let interval: Double

  public init(interval: Double) {
    precondition(interval > 0, "periodic interval must be positive")
    self.interval = interval
  }

  public mutating func start(_ ctx: inout PolicyContext) {
    ctx.setTimer(at: ctx.now + interval)
  }

  public mutating func timerFired(_ ctx: inout PolicyContext) {
    ctx.requestFetch()
    ctx.setTimer(at: ctx.now + interval)
  }
}
