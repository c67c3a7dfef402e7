import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld

/// One user's trace prepared for replay: the network timeline and the radio
/// activity of everything but the policy (the user's sessions and other
/// apps' wakes), per interface. Built once per user and shared by every app
/// and policy replayed for that user.
///
/// A class: immutable once built, and shared by reference, so that a
/// replay engine holding it costs one retain, not one per array.
package final class PreparedUser: Sendable {
  package let trace: UserTrace
  package let world: WorldParameters
  /// Times at which the network changes; the first is the window start.
  let netTimes: [Double]
  let netKinds: [NetworkKind]
  /// Merged busy intervals of background activity: [0] WiFi, [1] cellular.
  let busy: [[BusyInterval]]
  /// When the device was on the charger (from `charge_start` to
  /// `charge_end` rows), in time order.
  let charging: [BusyInterval]
  /// The open events of each app, by app index.
  let appOpens: [[TraceEvent]]
  /// The apps of a device replay prepared ahead (see ``init(trace:world:apps:)``)
  /// and their opens merged in time order.
  let deviceApps: [Int32]
  let deviceOpens: [TraceEvent]
  /// What a foreground refresh at each open needs from the trace alone, by
  /// app index, parallel to ``appOpens``: worked out once per user instead
  /// of searched at every open of every policy's replay.
  let openContexts: [[OpenContext]]
  /// The world's radios as the engine reads them.
  let radios: ReplayRadios

  /// Shortest radio activity attributed to an open or wake, s: a 0-second
  /// session still refreshes its content.
  package static let minimumActivityS = 1.0

  /// - Parameters:
  ///   - apps: the apps a device replay will cover, if known: their opens
  ///     are merged once here instead of once per replay.
  ///   - modelled: the apps whose content the replay models (their
  ///     sessions use the network; see ``SessionNetworkParameters``).
  ///   - seed: the run's seed, for the sessions' draws.
  package init(trace: UserTrace, world: WorldParameters, apps: [Int32] = [], modelled: [Int32] = [], seed: UInt64 = 1) {
    self.trace = trace
    self.world = world
    let radios = ReplayRadios(world.radios)
    self.radios = radios
    var times = [trace.start]
    var kinds = [world.radios.defaultNetwork]
    var busy: [[BusyInterval]] = [[], []]
    var sessions = SessionActivity(world.sessions, seed: seed, trace: trace, modelled: modelled.isEmpty ? apps : modelled)
    var charging: [BusyInterval] = []
    var pluggedAt: Double?
    var opens = [[TraceEvent]](repeating: [], count: trace.apps.count)
    for e in trace.events {
      switch e.kind {
      case .network:
        let n = e.network ?? .offline
        if times.last == e.time { kinds[kinds.count - 1] = n } else {
          times.append(e.time)
          kinds.append(n)
        }
      case .chargeStart:
        if pluggedAt == nil { pluggedAt = e.time }
      case .chargeEnd:
        if let p = pluggedAt { charging.append(BusyInterval(start: p, end: e.time)) }
        pluggedAt = nil
      case .open, .wake:
        if e.kind == .open { opens[Int(e.app)].append(e) }
        guard let k = PreparedUser.interface(kinds.last!) else { continue }
        sessions.activity(of: e) { busy[k].append($0) }
      default: break
      }
    }
    sessions.backgroundTraffic(start: trace.start, netTimes: times, netKinds: kinds) { busy[$0].append($1) }
    netTimes = times
    netKinds = kinds
    busy = busy.indices.map { radios.carried(busy[$0], interface: $0, netTimes: times, netKinds: kinds) }
    self.busy = busy
    if let p = pluggedAt { charging.append(BusyInterval(start: p, end: trace.end)) }
    self.charging = charging
    appOpens = opens
    var netHint = 0
    var busyHints = PerInterface(0)
    openContexts = opens.map { list in
      list.map { e in
        OpenContext(open: e.time, netTimes: times, netKinds: kinds, busy: busy, netHint: &netHint, busyHints: &busyHints)
      }
    }
    deviceApps = apps
    deviceOpens = apps.count > 1 ? mergeOpens(apps.map { a in a >= 0 && Int(a) < opens.count ? opens[Int(a)] : [] }) : []
  }

  /// The open events of app `app` (an index into the trace's apps), in time order.
  package func opens(of app: Int32) -> [TraceEvent] {
    app >= 0 && Int(app) < appOpens.count ? appOpens[Int(app)] : []
  }

  /// The ``OpenContext`` of each open of `app`, parallel to ``opens(of:)``.
  func openContexts(of app: Int32) -> [OpenContext] {
    app >= 0 && Int(app) < openContexts.count ? openContexts[Int(app)] : []
  }

  /// 0 for WiFi, 1 for any cellular network, `nil` offline.
  static func interface(_ n: NetworkKind) -> Int? {
    switch n {
    case .offline: nil
    case .wifi: 0
    default: 1
    }
  }

  /// Index into the network timeline of the network in force at `t`.
  func networkIndex(at t: Double) -> Int {
    max(0, firstIndex(in: 0..<netTimes.count) { netTimes[$0] > t } - 1)
  }

  /// The network in force at `t`.
  package func network(at t: Double) -> NetworkKind { netKinds[networkIndex(at: t)] }

  /// The first network change strictly after `t`, or `.infinity`.
  func nextNetworkChange(after t: Double) -> Double {
    let i = networkIndex(at: t) + 1
    return i < netTimes.count ? netTimes[i] : .infinity
  }

  /// ``networkIndex(at:)`` searched from `hint` (the previous answer), which
  /// is updated.
  func networkIndex(at t: Double, hint: inout Int) -> Int {
    PreparedUser.networkIndex(in: netTimes, at: t, hint: &hint)
  }

  /// The index of the network in force at `t` in a timeline of change
  /// times `netTimes` (the first is the window start), searched from `hint`
  /// (the previous answer), which is updated.
  static func networkIndex(in netTimes: [Double], at t: Double, hint: inout Int) -> Int {
    netTimes.withUnsafeBufferPointer { n in
      hint = max(0, firstIndex(count: n.count, from: hint + 1) { n[$0] > t } - 1)
    }
    return hint
  }

  /// Index of the first background interval on interface `k` ending at or after `t`.
  func firstBusy(_ k: Int, endingAtOrAfter t: Double) -> Int {
    let b = busy[k]
    return firstIndex(in: 0..<b.count) { b[$0].end >= t }
  }
}

/// One value per radio interface (``PreparedUser/interface(_:)``: 0 WiFi,
/// 1 cellular) as two stored fields: reading or changing one is a branch,
/// without the uniqueness and bounds checks of a two-element array.
struct PerInterface<Value> {
  var wifi: Value
  var cellular: Value

  /// Both interfaces start at `value`.
  init(_ value: Value) {
    wifi = value
    cellular = value
  }

  /// The value of interface `k` (0 WiFi, otherwise cellular).
  subscript(k: Int) -> Value {
    get { k == 0 ? wifi : cellular }
    _modify {
      if k == 0 { yield &wifi } else { yield &cellular }
    }
  }
}

extension PreparedUser {
  /// Whether the device was on the charger at `t`, from the trace alone
  /// (so the same for every policy, whatever events it observes).
  ///
  /// - Complexity: O(log charging intervals).
  func isCharging(at t: Double) -> Bool {
    let i = firstIndex(count: charging.count, from: 0) { charging[$0].end > t }
    return i < charging.count && charging[i].start <= t
  }
}

// Read-only views for reports (`fetchlab report --timeline-…`); not used by
// the replay itself.
extension PreparedUser {
  /// The network timeline: each change with the time it takes effect; the
  /// first entry is the window start (``RadioSet/defaultNetwork``
  /// unless the trace sets a network there).
  package var networkChanges: [(time: Double, network: NetworkKind)] {
    Array(zip(netTimes, netKinds)).map { (time: $0.0, network: $0.1) }
  }

  /// Merged busy intervals of background radio activity (the user's
  /// sessions and other apps' wakes) on WiFi (`cellular == false`) or on
  /// cellular, as the replay's marginal-energy model sees them.
  package func backgroundBusy(cellular: Bool) -> [BusyInterval] { busy[cellular ? 1 : 0] }
}

/// The trace's side of a foreground refresh at one open: the network in
/// force and the user's radio activity around the open (never the
/// policy's fetches, which the replay adds).
struct OpenContext: Sendable {
  /// The open's time, Unix s (to check that a replay reads the right one).
  let time: Double
  /// Index into the network timeline at the open.
  let network: Int
  /// The end of the user's last activity on the open's interface before
  /// the open (at `time.nextDown`): `time.nextDown` itself while a session
  /// is running then, `-∞` when there was none (or offline).
  let quietSince: Double
  /// The end of the user's activity interval that holds the open's instant
  /// on its interface (a refresh ending by then adds nothing), `-∞` if none.
  let coverEnd: Double

  /// - Complexity: O(log distance) from the hints, which are updated (opens
  ///   of one app come in time order).
  init(
    open t: Double, netTimes: [Double], netKinds: [NetworkKind], busy: [[BusyInterval]], netHint: inout Int,
    busyHints: inout PerInterface<Int>
  ) {
    time = t
    network = PreparedUser.networkIndex(in: netTimes, at: t, hint: &netHint)
    guard let k = PreparedUser.interface(netKinds[network]) else {
      quietSince = -.infinity
      coverEnd = -.infinity
      return
    }
    let b = busy[k]
    let before = t.nextDown
    let i = firstIndex(count: b.count, from: busyHints[k]) { b[$0].end >= before }
    quietSince = i < b.count && b[i].start <= before ? before : i > 0 ? b[i - 1].end : -.infinity
    let c = firstIndex(count: b.count, from: i) { b[$0].end >= t }
    busyHints[k] = c
    coverEnd = c < b.count && b[c].start <= t ? b[c].end : -.infinity
  }
}
