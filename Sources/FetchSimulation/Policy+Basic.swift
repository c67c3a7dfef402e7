/// Never fetches in the background: iOS's default
/// `backgroundFetchIntervalNever` (reference §2.1). Costs exactly nothing.
public struct NeverPolicy: FetchPolicy {
  public static var observedEvents: ObservedEvents { .none }
  public init() {}
}

/// A plain timer: fetches every `interval` seconds, the first `phase`
/// seconds after the window start (default one interval; the analytic
/// convention of a fetch at the start is `phase` 0), whatever the device is
/// doing. A fetch still running when the timer fires makes that tick a no-op.
public struct PeriodicPolicy: FetchPolicy {
  public static var observedEvents: ObservedEvents { .none }
  /// Seconds between fetches.
  public let interval: Double
  /// Seconds from the window start to the first fetch.
  public let phase: Double

  public init(interval: Double, phase: Double? = nil) {
    precondition(interval > 0, "periodic interval must be positive")
    precondition((phase ?? 0) >= 0, "periodic phase must be non-negative")
    self.interval = interval
    self.phase = phase ?? interval
  }

  public mutating func start(_ ctx: inout PolicyContext) {
    ctx.setTimer(at: ctx.now + phase)
  }

  public mutating func timerFired(_ ctx: inout PolicyContext) {
    ctx.requestFetch()
    ctx.setTimer(at: ctx.now + interval)
  }
}
