import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld

/// Why a fetch failed (`none`: it did not); the text of ``FetchRecord/failure``.
enum FetchFailure: UInt8 {
  case none, offline, budget, networkChange, server

  var text: String {
    switch self {
    case .none: ""
    case .offline: "offline"
    case .budget: "budget"
    case .networkChange: "network_change"
    case .server: "server"
    }
  }
}

/// A fetch under way. Plain data (no references), so that the engine's
/// loop reads and copies it without reference counting.
struct InFlight {
  var start: Double
  /// When the fetch completes (its content lands); `start` for instantaneous transfers.
  var end: Double
  var failure: FetchFailure
  var bytes: Double
  var energyJ: Double
  var network: NetworkKind
  /// When the server answered, Unix s: the content the fetch brings is
  /// the server's as of then (`start` for instantaneous transfers).
  var answeredAt: Double
  /// The content version the handler hands to the background transfer
  /// queue instead of downloading it (0: none; `TransferQueue.swift`).
  var handOff = 0
}

/// The state of one app of the device: its content, policy context, fetch
/// in flight and metrics.
struct AppLane {
  let content: ContentTimeline
  let updates: [Double]
  /// The trace's side of each open of the app (``PreparedUser/openContexts``)
  /// and the index of the next open to be scored (read only at a stale
  /// open, where it is checked against the open's time).
  let openContexts: [OpenContext]
  var nextOpen = 0
  var ctx: PolicyContext
  var rng: SplitMix64
  var inflight: InFlight?

  // Content on the device: it holds updates[0..<version].
  var version = 0
  var segmentStart: Double
  var ageIntegral = 0.0
  var freshTime = 0.0
  var unseenNewData = false
  var versionHint = 0

  var summary = AppSummary()
  var opens: [OpenRecord] = []
  var fetches: [FetchRecord] = []
  var ages: [Double] = []
  var waits: [Double] = []
  var zeroWaits = 0
  var aoiSum = 0.0
  /// The app's background transfer chunks (with `recordEvents`).
  var transferChunks: [TransferChunkRecord] = []

  /// Scores an open at `t` (the age, AoI and freshness of the content on
  /// the device); returns whether it is fresh (the device holds every
  /// update published by `t`).
  @inline(__always)
  mutating func scoreOpen(at t: Double, windowStart: Double, record: Bool) -> Bool {
    // Fresh: the device holds every update published by t. An update at t
    // itself leaves the open stale with age 0 (its refresh fetches it).
    let pending = version < updates.count ? updates[version] : .infinity
    let age = max(0, t - pending)
    let fresh = pending > t
    let aoi = t - (version > 0 ? updates[version - 1] : windowStart)
    summary.opens += 1
    if !fresh { ages.append(age) }
    aoiSum += aoi
    if record { opens.append(OpenRecord(time: t, ageS: age, aoiS: aoi, fresh: fresh)) }
    unseenNewData = false
    return fresh
  }

  /// What ``open(at:windowStart:record:refresh:)`` leaves to the engine.
  struct Open {
    /// Whether a foreground refresh is to be priced (a stale open with
    /// foreground refresh on); all else is done.
    var stale = false
    /// The open's index among the app's prepared opens: where its
    /// ``OpenContext`` and server version are (checked where read).
    var index = 0
    /// The server's content version at the open and the bytes of the
    /// response that brings it.
    var version = 0
    var responseBytes = 0.0
  }

  /// Scores an open at `t`; with `refresh`, finds the server's version
  /// and, for a fresh open (wait 0), syncs to it. A stale open's refresh is
  /// priced by the engine (which reads the open's trace context, so that a
  /// fresh one touches none), then
  /// ``refreshed(at:version:wait:energyJ:bytes:cellular:)``.
  @inline(__always)
  mutating func open(at t: Double, windowStart: Double, record: Bool, refresh: Bool) -> Open {
    let fresh = scoreOpen(at: t, windowStart: windowStart, record: record)
    var o = Open()
    let k = nextOpen
    o.index = k
    nextOpen += 1
    guard refresh else { return o }
    guard fresh else {
      o.stale = true
      o.version = serverVersion(atOpen: k, t)
      o.responseBytes = newDataBytes(version: o.version)
      return o
    }
    // The common case: the server holds what the device holds.
    zeroWaits += 1
    o.version = version
    return o
  }

  /// Counts a foreground refresh at `t` that brings `version`: the user's
  /// wait, s, and its energy, J, and bytes (user-initiated, apart from the
  /// policy's).
  mutating func refreshed(at t: Double, version v: Int, wait: Double, energyJ: Double, bytes: Double, cellular: Bool) {
    waits.append(wait)
    summary.foregroundRefreshes += 1
    summary.foregroundEnergyJ += energyJ
    if cellular { summary.foregroundCellularBytes += bytes } else { summary.foregroundWifiBytes += bytes }
    sync(to: v, at: t)
  }

  mutating func serverVersion(at t: Double) -> Int { content.version(at: t, hint: &versionHint) }

  /// The server's version at `t`, the time of prepared open `k`: read
  /// from ``ContentTimeline/versionsAtOpens`` when it is the version at `t`
  /// (checked against the updates on either side), else searched.
  @inline(__always)
  mutating func serverVersion(atOpen k: Int, _ t: Double) -> Int {
    if k >= 0 && k < content.versionsAtOpens.count {
      let v = Int(content.versionsAtOpens[k])
      if v >= 0 && v <= updates.count && (v == 0 || updates[v - 1] <= t) && (v == updates.count || updates[v] > t) {
        return v
      }
    }
    return serverVersion(at: t)
  }

  /// Bytes of the response bringing version `v`.
  func newDataBytes(version v: Int) -> Double { content.newDataBytes(version: v) }

  /// Adds the current content version's age and freshness over [segmentStart, t].
  @inline(__always)
  mutating func integrate(to t: Double) {
    let x = segmentStart
    guard t > x else { return }
    let firstMissing = version < updates.count ? updates[version] : .infinity
    freshTime += max(0, min(t, firstMissing) - x)
    let m = max(x, firstMissing)
    if t > m { ageIntegral += ((t - firstMissing) * (t - firstMissing) - (m - firstMissing) * (m - firstMissing)) / 2 }
    segmentStart = t
  }

  mutating func sync(to v: Int, at t: Double) {
    guard v > version else { return }
    integrate(to: t)
    // Delivery delays: summed, not kept (their p90 would need every delay,
    // ordered, which cost a quarter of a `never` replay).
    var sum = summary.deliveryDelaySumS
    updates.withUnsafeBufferPointer { u in
      var i = version
      while i < v {
        sum += max(0, t - u[i])
        i += 1
      }
    }
    summary.deliveryDelaySumS = sum
    summary.delivered += v - version
    version = v
  }
}
