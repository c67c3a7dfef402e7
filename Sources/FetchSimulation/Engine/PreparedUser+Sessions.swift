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
  /// Apps whose content the replay models: their sessions always use the
  /// network (the app talks to its server at every open, whether or not it
  /// has news; a stale open's refresh rides that exchange).
  let modelled: Set<Int32>
  var streams: [Int: SplitMix64] = [:]
  /// `params.share(app:)` by app index, NaN until first asked: the
  /// category is found by matching name fragments, too slow to repeat at
  /// every open.
  var shares: [Double]
  /// The window end: no activity is drawn past it.
  let end: Double

  init(_ world: WorldParameters, seed: UInt64, trace: UserTrace, modelled: [Int32]) {
    params = world.sessions
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
    guard params.model == .category else {
      add(BusyInterval(start: e.time, end: e.time + burst))
      return
    }
    let a = Int(e.app)
    guard a >= 0 && a < apps.count else { return }
    var rng = streams[a] ?? SplitMix64(seed: seed, keys: "session-network", user, apps[a])
    defer { streams[a] = rng }
    if shares[a].isNaN { shares[a] = modelled.contains(e.app) ? 1 : params.share(app: apps[a]) }
    let share = shares[a]
    guard rng.uniform() < share else { return }
    add(BusyInterval(start: e.time, end: e.time + burst))
    let sessionEnd = min(e.time + max(e.value, 0), end)
    var x = e.time + rng.exponential(rate: 1 / params.actionIntervalS)
    while x < sessionEnd {
      add(BusyInterval(start: x, end: x + burst))
      x += rng.exponential(rate: 1 / params.actionIntervalS)
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
