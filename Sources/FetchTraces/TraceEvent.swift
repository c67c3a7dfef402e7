/// The kinds of rows in a canonical FetchLab trace.
///
/// Each user's block starts with ``begin`` and ends with ``end``; the events
/// between them are what the device and its user did. See the README section
/// "Trace format" for the CSV encoding of each kind.
public enum EventKind: UInt8, Sendable, CaseIterable, CustomStringConvertible {
  /// The user opened `app` in the foreground; `value` is the session length in s.
  case open
  /// Another app or the system woke the device and used the network for
  /// `value` seconds (push delivery, sync, ...). `app` is optional.
  case wake
  /// A battery level sample; `value` is the level in percent, 0...100.
  case battery
  /// The device was plugged in.
  case chargeStart
  /// The device was unplugged.
  case chargeEnd
  /// The active network changed; `value` is a ``NetworkKind`` raw value.
  case network
  /// The server-side content of `app` changed (optional in traces).
  case update
  /// A location wake: a significant location change, or the device entered
  /// or left a monitored region (Apple Core Location); `value` is a
  /// ``LocationChange`` code (see ``TraceEvent/location``).
  case location

  /// The name used in the `event` column.
  public var description: String {
    switch self {
    case .open: "open"
    case .wake: "wake"
    case .battery: "battery"
    case .chargeStart: "charge_start"
    case .chargeEnd: "charge_end"
    case .network: "network"
    case .update: "update"
    case .location: "location"
    }
  }
}

/// The network a device is on; the cellular cases select a radio profile.
public enum NetworkKind: UInt8, Sendable, CaseIterable, CustomStringConvertible {
  case offline
  case wifi
  /// Cellular of the configured default technology (LTE unless configured).
  case cellular
  case lte
  case umts3g
  case nr5g

  /// The name used in the trace's `value` column.
  public var description: String {
    switch self {
    case .offline: "offline"
    case .wifi: "wifi"
    case .cellular: "cellular"
    case .lte: "lte"
    case .umts3g: "3g"
    case .nr5g: "5g"
    }
  }

  /// Parses a `network` value; `nil` for an unknown name.
  public init?(name: some StringProtocol) {
    guard let k = NetworkKind.allCases.first(where: { $0.description == name }) else {
      return nil
    }
    self = k
  }

  /// Whether traffic on this network counts as cellular data.
  public var isCellular: Bool {
    switch self {
    case .cellular, .lte, .umts3g, .nr5g: true
    case .offline, .wifi: false
    }
  }
}

/// What a ``EventKind/location`` row reports (Apple Core Location): a
/// significant location change (the phone moved ~500 m, a cell-tower
/// change), or the device entering or leaving a monitored circular region.
package enum LocationTransition: UInt8, Sendable, CaseIterable, CustomStringConvertible {
  case significant
  case enter
  case exit

  /// The name in the trace's `value` column (before any `:region`).
  package var description: String {
    switch self {
    case .significant: "significant"
    case .enter: "enter"
    case .exit: "exit"
    }
  }
}

/// A decoded ``EventKind/location`` event: the transition and the region,
/// an index into ``UserTrace/regions`` (-1 when the row names none).
///
/// In memory the pair is one `value`: `transition + 3 · (region + 1)`, an
/// integer exactly representable in a `Double`.
package struct LocationChange: Sendable, Equatable {
  package var transition: LocationTransition
  package var region: Int32

  package init(_ transition: LocationTransition, region: Int32 = -1) {
    self.transition = transition
    self.region = region
  }

  /// The event's `value`.
  package var code: Double { Double(transition.rawValue) + 3 * Double(region + 1) }

  /// Decodes a `value`; `nil` if it is not a location code.
  package init?(code: Double) {
    guard code >= 0, code < 3 * (Double(Int32.max) + 1), code == code.rounded() else { return nil }
    let c = Int64(code)
    self.transition = LocationTransition(rawValue: UInt8(c % 3))!
    self.region = Int32(c / 3) - 1
  }
}

/// One event of one user, in memory.
///
/// 24 bytes, no references: a user's trace is a flat array of these.
public struct TraceEvent: Sendable, Equatable {
  /// Unix time in seconds (UTC).
  public var time: Double
  /// Meaning depends on ``kind``: session length (s), wake duration (s),
  /// battery level (%), or a ``NetworkKind`` raw value; 0 otherwise.
  public var value: Double
  /// Index into ``UserTrace/apps``, or -1 when the event names no app.
  public var app: Int32
  /// What happened.
  public var kind: EventKind

  /// An event; `app` is -1 for device events.
  public init(time: Double, kind: EventKind, app: Int32 = -1, value: Double = 0) {
    self.time = time
    self.kind = kind
    self.app = app
    self.value = value
  }

  /// The transition and region of a ``EventKind/location`` event.
  package var location: LocationChange? {
    guard kind == .location else { return nil }
    return LocationChange(code: value)
  }

  /// The network of a ``EventKind/network`` event.
  public var network: NetworkKind? {
    guard kind == .network else { return nil }
    return NetworkKind(rawValue: UInt8(value))
  }
}

/// Everything one user's trace holds: the observation window, the time zone,
/// the app names, and the time-ordered events.
public struct UserTrace: Sendable, Equatable {
  /// The user id from the `user` column.
  public var user: String
  /// The user's time zone, from the `begin` row.
  public var timeZone: TraceTimeZone
  /// Start of the observation window, Unix s (the `begin` row).
  public var start: Double
  /// End of the observation window, Unix s (the `end` row).
  public var end: Double
  /// App names; ``TraceEvent/app`` indexes this array.
  public var apps: [String]
  /// Events within [`start`, `end`] (the `begin` and `end` rows themselves
  /// excluded), non-decreasing in time.
  public var events: [TraceEvent]
  /// Apps with `update` rows in the whole trace this one was cut from by
  /// ``split(at:)``, so that each part keeps taking those apps' content
  /// times from the trace even where its own part holds none of their rows.
  /// Empty for a trace that was never split (its events say it all).
  package var splitUpdateApps: Set<Int32> = []
  /// Region ids named by `location` rows (`enter:home`);
  /// ``LocationChange/region`` indexes this array.
  package var regions: [String] = []

  /// A user's trace; `events` must be sorted by time within [`start`, `end`].
  public init(
    user: String, timeZone: TraceTimeZone = .utc, start: Double, end: Double,
    apps: [String] = [], events: [TraceEvent] = []
  ) {
    self.user = user
    self.timeZone = timeZone
    self.start = start
    self.end = end
    self.apps = apps
    self.events = events
  }

  /// Length of the observation window in days (86,400 s).
  public var days: Double { (end - start) / 86_400 }

  /// The index of `name` in ``apps``, appending it if new.
  public mutating func appIndex(_ name: String) -> Int32 {
    if let i = apps.firstIndex(of: name) { return Int32(i) }
    apps.append(name)
    return Int32(apps.count - 1)
  }

  /// The index of region `name` in ``regions``, appending it if new.
  package mutating func regionIndex(_ name: String) -> Int32 {
    if let i = regions.firstIndex(of: name) { return Int32(i) }
    regions.append(name)
    return Int32(regions.count - 1)
  }

  /// Number of ``EventKind/open`` events per app index.
  package func openCounts() -> [Int] {
    var counts = [Int](repeating: 0, count: apps.count)
    for e in events where e.kind == .open { counts[Int(e.app)] += 1 }
    return counts
  }

  /// Checks the invariants the reader guarantees; for tests and debug builds.
  package func _checkInvariants() {
    precondition(start <= end, "trace window ends before it starts")
    var last = start
    for e in events {
      precondition(e.time >= last && e.time <= end, "events out of order or window")
      precondition(e.app < Int32(apps.count), "app index out of range")
      if e.kind == .location {
        precondition(e.location.map { $0.region < Int32(regions.count) } ?? false, "bad location code")
      }
      last = e.time
    }
  }
}
