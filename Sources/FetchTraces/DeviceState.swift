import FetchSupport
import Foundation

/// The phone's state over time, read from a trace's `charge_start` /
/// `charge_end`, `network` and `battery` rows: what a policy could know at a
/// moment `t` (only rows at times ≤ t), and what actually happened later
/// (the outcomes the device models are scored on).
///
/// - The charging state is known from the first charge row on; before it,
///   it is unknown (no guess from the row's opposite).
/// - The network class (WiFi, cellular of any kind, offline) is known from
///   the first `network` row on and holds until the next one.
/// - The battery level at `t` is the last `battery` sample at or before `t`
///   (sample and hold).
package struct DeviceTimeline: Sendable {
  /// Network classes, as used by the device models.
  package enum NetworkClass: Int, Sendable, CaseIterable {
    case wifi = 0, cellular = 1, offline = 2
  }

  /// Charge rows in time order: times, state after each, and the start of
  /// the run of equal states each belongs to (a repeated row does not
  /// restart the state's duration).
  private(set) var chargeTimes: [Double] = [], chargePlugged: [Bool] = [], chargeSince: [Double] = []
  /// Network rows in time order: times, class after each, start of the run.
  private(set) var networkTimes: [Double] = [], networkKind: [NetworkClass] = [], networkSince: [Double] = []
  /// Battery samples in time order: times and levels, %.
  private(set) var batteryTimes: [Double] = [], batteryLevels: [Double] = []

  /// Reads the device rows of `trace`.
  ///
  /// - Complexity: O(events).
  package init(_ trace: UserTrace) {
    for e in trace.events { append(e) }
  }

  /// Records `e` if it is a device row (charge, network, battery); other
  /// kinds are ignored. Rows must come in time order.
  ///
  /// - Complexity: amortised O(1).
  package mutating func append(_ e: TraceEvent) {
    switch e.kind {
    case .chargeStart, .chargeEnd:
      precondition(chargeTimes.last.map { $0 <= e.time } ?? true, "device rows must come in time order")
      let on = e.kind == .chargeStart
      chargeSince.append(chargePlugged.last == on ? chargeSince.last! : e.time)
      chargeTimes.append(e.time)
      chargePlugged.append(on)
    case .battery:
      precondition(batteryTimes.last.map { $0 <= e.time } ?? true, "device rows must come in time order")
      batteryTimes.append(e.time)
      batteryLevels.append(e.value)
    case .network:
      guard let k = e.network else { return }
      precondition(networkTimes.last.map { $0 <= e.time } ?? true, "device rows must come in time order")
      let c: NetworkClass = k == .wifi ? .wifi : k == .offline ? .offline : .cellular
      networkSince.append(networkKind.last == c ? networkSince.last! : e.time)
      networkTimes.append(e.time)
      networkKind.append(c)
    default: break
    }
  }

  /// Whether the trace has any charge / network / battery rows.
  package var hasCharging: Bool { !chargeTimes.isEmpty }
  package var hasNetwork: Bool { !networkTimes.isEmpty }
  package var hasBattery: Bool { !batteryTimes.isEmpty }

  /// Index of the last time ≤ t, or nil.
  ///
  /// - Complexity: O(log n).
  static func last(_ a: [Double], atOrBefore t: Double) -> Int? {
    let after = firstIndex(in: 0..<a.count) { a[$0] > t }
    return after > 0 ? after - 1 : nil
  }

  /// The charging state at `t` and when it began, or nil before the first
  /// charge row.
  package func charging(at t: Double) -> (plugged: Bool, since: Double)? {
    guard let i = Self.last(chargeTimes, atOrBefore: t) else { return nil }
    return (chargePlugged[i], chargeSince[i])
  }

  /// The network class at `t` and when it began, or nil before the first
  /// network row.
  package func network(at t: Double) -> (kind: NetworkClass, since: Double)? {
    guard let i = Self.last(networkTimes, atOrBefore: t) else { return nil }
    return (networkKind[i], networkSince[i])
  }

  /// The last battery sample at or before `t`, or nil.
  package func level(at t: Double) -> (level: Double, time: Double)? {
    guard let i = Self.last(batteryTimes, atOrBefore: t) else { return nil }
    return (batteryLevels[i], batteryTimes[i])
  }

  /// Whether the phone is on the charger at some moment of [t, t + h]:
  /// plugged at `t` or a `charge_start` in (t, t + h]. Nil when the state at
  /// `t` is unknown.
  package func pluggedWithin(_ h: Double, from t: Double) -> Bool? {
    guard let i = Self.last(chargeTimes, atOrBefore: t) else { return nil }
    if chargePlugged[i] { return true }
    var k = i + 1
    while k < chargeTimes.count && chargeTimes[k] <= t + h {
      if chargePlugged[k] { return true }
      k += 1
    }
    return false
  }
}

/// Logging gaps: stretches of at least ``minimumSeconds`` (default 24 h)
/// without a trace row of any kind — between two successive rows, or
/// between the window's start or end and the nearest row. A test point whose
/// horizon `[t, t + h]` overlaps a gap is "inside a gap": the logger was
/// probably off, and any prediction that the user is idle there is scored
/// against an outcome that was not recorded.
package struct LoggingGaps: Sendable, Equatable {
  /// Gap length threshold, s.
  package static let defaultMinimumSeconds = 86_400.0

  /// The gaps, as open intervals (a, b), in time order, disjoint.
  package private(set) var intervals: [ClosedRange<Double>]

  /// The gaps of `trace` over its window [start, end].
  ///
  /// - Complexity: O(events).
  package init(_ trace: UserTrace, minimumSeconds: Double = LoggingGaps.defaultMinimumSeconds) {
    precondition(minimumSeconds > 0, "a gap must be longer than 0 s")
    var out: [ClosedRange<Double>] = []
    var previous = trace.start
    for e in trace.events where e.time >= trace.start && e.time <= trace.end {
      if e.time - previous >= minimumSeconds { out.append(previous...e.time) }
      previous = max(previous, e.time)
    }
    if trace.end - previous >= minimumSeconds { out.append(previous...trace.end) }
    intervals = out
  }

  /// Whether the open interval (a, b) of the horizon overlaps the inside of a gap.
  package func overlaps(_ a: Double, _ b: Double) -> Bool {
    let k = firstIndex(in: 0..<intervals.count) { intervals[$0].upperBound > a }  // the first gap ending after a
    return k < intervals.count && intervals[k].lowerBound < b
  }

  /// Total gap time inside [a, b], s.
  package func seconds(in a: Double, _ b: Double) -> Double {
    intervals.reduce(0) { $0 + max(0, min(b, $1.upperBound) - max(a, $1.lowerBound)) }
  }
}
