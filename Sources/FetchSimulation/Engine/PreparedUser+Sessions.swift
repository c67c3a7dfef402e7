import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld

/// The radio activity of the user's own sessions and of other apps' wakes,
/// as ``WorldParameters/sessions`` describes it.
///
/// Draws are deterministic: one stream per app, keyed by the run's seed,
/// the user and the app's name, read in the order of the app's opens, so
/// that every policy replayed for the user sees the same sessions.
struct SessionActivity {
  let params: SessionNetworkParameters
  let seed: UInt64
  let user: String
  let apps: [String]
  /// Apps whose content the replay models: the burst at their opens is
  /// the open's exchange with the app's server, made as
  /// ``SessionNetworkParameters/openExchange`` says (at every open under
  /// `always`; never here otherwise, where a stale open's refresh is the
  /// exchange and the engine prices it). Their user actions follow their
  /// category like any app's.
  let modelled: Set<Int32>
  var streams: [Int: SplitMix64] = [:]
  /// `params.share(app:)` by app index, NaN until first asked: the
  /// category is found by matching name fragments, too slow to repeat at
  /// every open.
  var shares: [Double]
  /// The window end: no activity is drawn past it.
  let end: Double

  init(_ sessions: SessionNetworkParameters, seed: UInt64, trace: UserTrace, modelled: [Int32]) {
    params = sessions
    self.seed = seed
    user = trace.user
    apps = trace.apps
    shares = Array(repeating: .nan, count: trace.apps.count)
    self.modelled = Set(modelled)
    end = trace.end
  }

  /// Calls `add` with each busy interval of event `e` (an open or a wake).
  ///
  /// - Complexity: O(1) for wakes and the `whole` and `open` models; under
  ///   `category`, O(session length / action interval) for a networked
  ///   session (bounded by the window).
  mutating func activity(of e: TraceEvent, _ add: (BusyInterval) -> Void) {
    if e.kind == .wake || params.model == .whole {
      add(BusyInterval(start: e.time, end: e.time + max(e.value, PreparedUser.minimumActivityS)))
      return
    }
    let burst = params.burstS
    // A modelled app's open burst is its exchange with its server.
    let isModelled = modelled.contains(e.app)
    let exchange = params.openExchange == .always
    guard params.model == .category else {
      if exchange || !isModelled { add(BusyInterval(start: e.time, end: e.time + burst)) }
      return
    }
    let a = Int(e.app)
    guard a >= 0 && a < apps.count else { return }
    var rng = streams[a] ?? SplitMix64(seed: seed, keys: "session-network", user, apps[a])
    defer { streams[a] = rng }
    if shares[a].isNaN { shares[a] = params.share(app: apps[a]) }
    let networked = rng.uniform() < shares[a]
    if isModelled ? exchange : networked { add(BusyInterval(start: e.time, end: e.time + burst)) }
    guard networked else { return }
    let sessionEnd = min(e.time + max(e.value, 0), end)
    var x = e.time + rng.exponential(rate: 1 / params.actionIntervalS)
    while x < sessionEnd {
      add(BusyInterval(start: x, end: x + burst))
      x += rng.exponential(rate: 1 / params.actionIntervalS)
    }
  }

  /// Calls `add` with the interface (0 WiFi, 1 cellular) and busy interval
  /// of each background transfer ``SessionNetworkParameters/backgroundWakesPerHour``
  /// adds: Poisson times over the window from a stream keyed by the seed
  /// and the user, each on the network in force then (none offline).
  ///
  /// - Complexity: O(w + n) for w transfers and n network changes.
  func backgroundTraffic(start: Double, netTimes: [Double], netKinds: [NetworkKind], _ add: (Int, BusyInterval) -> Void) {
    let rate = params.backgroundWakesPerHour / 3600
    guard rate > 0 else { return }
    var rng = SplitMix64(seed: seed, keys: "background-traffic", user)
    var t = start
    var i = 0
    while true {
      t += rng.exponential(rate: rate)
      guard t < end else { return }
      while i + 1 < netTimes.count && netTimes[i + 1] <= t { i += 1 }
      guard let k = PreparedUser.interface(netKinds[i]) else { continue }
      add(k, BusyInterval(start: t, end: min(t + params.backgroundWakeS, end)))
    }
  }

  /// `intervals` sorted by start with overlapping ones merged.
  ///
  /// - Complexity: O(n log n).
  static func merged(_ intervals: [BusyInterval]) -> [BusyInterval] {
    var out: [BusyInterval] = []
    out.reserveCapacity(intervals.count)
    for iv in intervals.sorted(by: { $0.start < $1.start }) {
      if let last = out.last, iv.start <= last.end {
        out[out.count - 1].end = max(last.end, iv.end)
      } else {
        out.append(iv)
      }
    }
    return out
  }
}
