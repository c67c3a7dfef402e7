import FetchModels
import FetchSupport
import FetchTraces

/// Switches of one replay.
package struct ReplayOptions: Sendable {
  /// Master seed; server-failure draws use the stream keyed by it, the user,
  /// the app and `policyKey`.
  package var seed: UInt64
  /// A stable name for the policy configuration (its spec string).
  package var policyKey: String
  /// Keep per-open and per-fetch records (off for large batch runs).
  package var recordEvents: Bool

  package init(seed: UInt64 = 1, policyKey: String = "", recordEvents: Bool = true) {
    self.seed = seed
    self.policyKey = policyKey
    self.recordEvents = recordEvents
  }
}

/// Everything one replay of one (user, app, policy) produced.
public struct AppReplay: Sendable {
  /// The app's metrics.
  public var summary: AppSummary
  /// One record per open of the app (empty unless `recordEvents`).
  public var opens: [OpenRecord]
  /// One record per fetch (empty unless `recordEvents`).
  public var fetches: [FetchRecord]
  /// The ages at stale opens (age > 0), s, in no particular order, and the
  /// number of fresh opens (age 0): together the age at every open (always
  /// kept; small).
  package var staleAges: [Double]
  package var freshOpens: Int
  /// Age at each open, s, sorted ascending: `freshOpens` zeros, then
  /// ``staleAges`` sorted.
  package var sortedAges: [Double] { [Double](repeating: 0, count: freshOpens) + staleAges.sorted() }
  /// The user's non-zero waits at opens (see ``AppSummary/meanWaitS``), s,
  /// in time order, and the number of opens that waited 0 s (fresh).
  package var waits: [Double] = []
  package var zeroWaits = 0
  /// One record per background transfer chunk (empty unless `recordEvents`).
  package var transferChunks: [TransferChunkRecord] = []
}

/// Everything one replay of one device (a user's modelled apps under one
/// policy configuration) produced.
public struct DeviceReplay: Sendable {
  /// One replay per app, in the order the apps were given.
  public var apps: [AppReplay]
  /// The device's totals.
  public var summary: DeviceSummary
}

/// Replays `user`'s trace against `policy` for the content of `app` alone,
/// with a radio of its own (`replay.scope=app`).
///
/// The same engine as ``replayDevice(_:user:apps:contents:options:)`` with
/// one app: the app's background fetches and foreground refreshes share the
/// radio with the user's activity (when ``WorldParameters/shareUserRadio``),
/// but not with other apps' fetches.
///
/// - Complexity: O(events + fetches · log(background intervals)).
package func replay<P: FetchPolicy>(
  _ policy: inout P, user: PreparedUser, app: Int32, content: ContentTimeline,
  options: ReplayOptions = ReplayOptions()
) -> AppReplay {
  var engine = ReplayEngine(user: user, apps: [app], contents: [content], options: options)
  var policies = [policy]
  let r = engine.run(&policies)
  policy = policies[0]
  return r.apps[0]
}

/// Replays one device: every app in `apps` (with its content timeline in
/// `contents`) under its own instance of the policy in `policies`, in one
/// walk over the user's events (`replay.scope=device`).
///
/// A discrete-event simulation over three event sources, merged in time
/// order (at equal times: fetch completions, then trace events, then the
/// policies' timers; among apps, in the order of `apps`):
/// - trace events: opens update the opened app's metrics and, when
///   ``WorldParameters/foregroundRefresh`` is on, refresh its content in the
///   foreground (a user-initiated fetch on the device radio, reported apart
///   from the policy's); network, battery and charging rows update the
///   device state; `update` rows are never shown to a policy;
/// - each app's policy timer;
/// - the completion of each app's (single) fetch in flight.
///
/// **One radio per interface.** A fetch started at `s` on a network takes
/// the radio's promotion (if the radio is idle or in a late tail stage), the
/// uplink request, the server latency, and the downlink response; it fails
/// when the device is offline, when the network changes before it
/// completes, when it overruns ``WorldParameters/fetchBudgetS``, or (with
/// probability ``WorldParameters/failureProbability``) on the server. It
/// brings the content as of its completion (as of its start with
/// ``WorldParameters/instantTransfers``). Its energy is the CPU wake plus
/// the *marginal* radio energy given all radio activity on that interface
/// known when it is planned: the user's sessions and other apps' wakes
/// (when shared), and every earlier fetch of every app of the device,
/// background or foreground. Fetches are charged in the order they are
/// planned (time order; at the same instant, completions before trace
/// events before timers, and apps in the order given), so the first of two
/// simultaneous fetches pays the promotion and the tail and the second only
/// its increment. The charges telescope: their sum is exactly the device's
/// radio energy with all the fetches minus without them.
///
/// - Precondition: `apps` and `contents` have the same, non-zero count, as
///   do `policies`.
/// - Complexity: O(events · apps + fetches · log(background intervals)).
package func replayDevice<P: FetchPolicy>(
  _ policies: inout [P], user: PreparedUser, apps: [Int32], contents: [ContentTimeline],
  options: ReplayOptions = ReplayOptions()
) -> DeviceReplay {
  precondition(!apps.isEmpty && apps.count == contents.count && apps.count == policies.count, "one policy and content per app")
  precondition(Set(apps).count == apps.count, "each app once")
  var engine = ReplayEngine(user: user, apps: apps, contents: contents, options: options)
  return engine.run(&policies)
}

/// The parameters of ``WorldParameters`` that one replay reads, held apart
/// so that the engine's hot path reads small, plain fields.
struct ReplayWorld {
  let requestBytes: Double
  let serverLatencyS: Double
  let noDataBytes: Double
  let fetchBudgetS: Double
  let failureProbability: Double
  let cpuWakeEnergyJ: Double
  let cpuActivePowerW: Double
  let batteryCapacityJ: Double
  let initialBatteryPct: Double
  let instantTransfers: Bool
  let foregroundRefresh: Bool
  let shareUserRadio: Bool

  init(_ w: WorldParameters) {
    requestBytes = w.requestBytes
    serverLatencyS = w.serverLatencyS
    noDataBytes = w.noDataBytes
    fetchBudgetS = w.fetchBudgetS
    failureProbability = w.failureProbability
    cpuWakeEnergyJ = w.cpuWakeEnergyJ
    cpuActivePowerW = w.cpuActivePowerW
    batteryCapacityJ = w.batteryCapacityJ
    initialBatteryPct = w.initialBatteryPct
    instantTransfers = w.instantTransfers
    foregroundRefresh = w.foregroundRefresh
    shareUserRadio = w.shareUserRadio
  }
}

/// The world's radio models as the engine reads them, by ``NetworkKind``
/// raw value: built once per user (``PreparedUser/radios``), not per replay.
///
/// Each model reads its stages from one table the radios share, held here
/// for as long as the prepared user lives, so that pricing retains nothing.
struct ReplayRadios: @unchecked Sendable {
  /// The models (offline: zero terms and no stages, never read).
  let models: [RadioModel]
  /// Every profile's stage table, one after another.
  let table: RadioStageTable
  /// The longest look-around (``RadioTerms/lookAroundS``) of the radios, s.
  let maxWindow: Double

  init(_ world: WorldParameters) {
    let profiles = world.radiosByNetwork
    table = RadioStageTable(profiles.flatMap { $0?.stages ?? [] })
    var models: [RadioModel] = []
    var first = 0
    for r in profiles {
      guard let r else {
        models.append(RadioModel(terms: RadioTerms(), stages: UnsafeBufferPointer(start: table.base, count: 0)))
        continue
      }
      models.append(RadioModel(terms: r.terms, stages: UnsafeBufferPointer(start: table.base + first, count: r.stages.count)))
      first += r.stages.count
    }
    self.models = models
    maxWindow = profiles.compactMap { $0?.terms.lookAroundS }.max() ?? 0
  }
}

/// Radio stages in one allocation of fixed size, never written after it is
/// made: the storage that ``ReplayRadios``' models point into.
final class RadioStageTable: @unchecked Sendable {
  let base: UnsafeMutablePointer<RadioStage>
  let count: Int

  init(_ stages: [RadioStage]) {
    count = stages.count
    base = .allocate(capacity: max(1, count))
    base.initialize(from: stages, count: count)
  }

  deinit {
    base.deinitialize(count: count)
    base.deallocate()
  }
}

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
  /// the device); returns whether it is fresh (age 0).
  @inline(__always)
  mutating func scoreOpen(at t: Double, windowStart: Double, record: Bool) -> Bool {
    let age = version < updates.count ? max(0, t - updates[version]) : 0
    let fresh = age == 0
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
    zeroWaits += 1
    // Nothing at t itself (the common case): the server holds what the
    // device holds, found without a search or a sync; else an update at t
    // lands.
    if version < updates.count && updates[version] <= t {
      o.version = serverVersion(atOpen: k, t)
      sync(to: o.version, at: t)
    } else {
      o.version = version
    }
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

/// The engine's lanes in one allocation of fixed size, reached by pointer:
/// an access (`lanes[j].x += 1`) is an offset, without the uniqueness and
/// bounds checks of a mutation through an array (about 3 % of a
/// `periodic:1h` replay). The engine is the only owner; lanes are never
/// added or removed.
final class LaneBuffer {
  private let base: UnsafeMutablePointer<AppLane>
  /// The number of lanes.
  let count: Int

  /// `count` lanes, lane `j` made by `make(j)` in place.
  init(count: Int, _ make: (Int) -> AppLane) {
    self.count = count
    base = .allocate(capacity: max(1, count))
    for j in 0..<count { (base + j).initialize(to: make(j)) }
  }

  deinit {
    base.deinitialize(count: count)
    base.deallocate()
  }

  var indices: Range<Int> { 0..<count }

  /// Lane `j`.
  ///
  /// - Precondition: `0 <= j < count` (checked in debug builds only).
  subscript(j: Int) -> AppLane {
    unsafeAddress {
      assert(j >= 0 && j < count, "lane \(j) of \(count)")
      return UnsafePointer(base + j)
    }
    unsafeMutableAddress {
      assert(j >= 0 && j < count, "lane \(j) of \(count)")
      return base + j
    }
  }
}

struct ReplayEngine {
  let u: PreparedUser
  /// The world's scalars the engine reads (not the whole, large, world:
  /// reading a field of a stored `WorldParameters` in a mutating method
  /// copied all of it).
  let w: ReplayWorld
  let options: ReplayOptions
  /// The apps' lanes, in the order of `apps`.
  let lanes: LaneBuffer
  /// Lane of each trace app index, -1 for apps not replayed.
  let laneOf: [Int]
  /// The opens of the replayed apps, in time order (apps in lane order at equal times).
  let appOpens: [TraceEvent]
  /// Background radio activity (the user's sessions and other apps' wakes)
  /// per interface; empty when ``WorldParameters/shareUserRadio`` is off.
  let busy: [[BusyInterval]]

  // Device state.
  var network: NetworkKind
  var isCharging = false
  // Battery: last sampled level and the device's fetch energy since.
  var sampledPct: Double?
  var energySinceSampleJ = 0.0

  /// The device's background transfers (`TransferQueue.swift`).
  var transfers = TransferQueue()

  // Every fetch of the device per interface (recent ones, sorted by start).
  var own = PerInterface<[BusyInterval]>([])
  /// The longest interval in `own`, s (bounds the backward scan of ``quietGap(_:at:)``).
  var longestOwnS = 0.0
  /// The world's radios (profiles, plain terms, tail stages, look-around
  /// windows), prepared with the user.
  let radios: ReplayRadios
  /// The longest budget a fetch was given (``PolicyContext/requestFetch(withinS:)``), s.
  var longestBudgetS = 0.0
  // Search hints: the previous answers (times mostly move forward).
  var netHint = 0
  var busyHints = PerInterface(0)

  init(user: PreparedUser, apps: [Int32], contents: [ContentTimeline], options: ReplayOptions) {
    u = user
    w = ReplayWorld(user.world)
    self.options = options
    let t = user.trace
    var pct: Double?
    if w.initialBatteryPct >= 0 { pct = w.initialBatteryPct }
    sampledPct = pct
    network = user.netKinds[0]
    let failing = user.world.failureProbability > 0
    lanes = LaneBuffer(count: apps.count) { i in
      let app = apps[i], content = contents[i]
      var ctx = PolicyContext(
        now: t.start, app: app, appName: t.apps[Int(app)], windowStart: t.start, timeZone: t.timeZone,
        network: user.netKinds[0])
      ctx.batteryPct = pct
      var lane = AppLane(
        content: content, updates: content.updates, openContexts: user.openContexts(of: app), ctx: ctx,
        // Drawn from only with server failures on: otherwise not keyed (the
        // string hashing cost more than a `never` replay's setup).
        rng: failing
          ? SplitMix64(seed: options.seed, keys: "fetch-failure", t.user, t.apps[Int(app)], options.policyKey)
          : SplitMix64(seed: options.seed),
        segmentStart: t.start)
      lane.summary.days = t.days
      lane.summary.updates = content.updates.count
      lane.ages.reserveCapacity(lane.openContexts.count)
      lane.waits.reserveCapacity(lane.openContexts.count)
      return lane
    }
    var laneOf = [Int](repeating: -1, count: t.apps.count)
    for (i, a) in apps.enumerated() where a >= 0 && Int(a) < laneOf.count && laneOf[Int(a)] < 0 { laneOf[Int(a)] = i }
    self.laneOf = laneOf
    appOpens =
      apps.count == 1 ? user.opens(of: apps[0]) : apps == user.deviceApps ? user.deviceOpens : mergeOpens(apps.map { user.opens(of: $0) })
    busy = w.shareUserRadio ? user.busy : [[], []]
    radios = user.radios
  }

  /// The radio model of `n` (offline: zero terms and no stages; callers
  /// check ``PreparedUser/interface(_:)`` first).
  func radio(_ n: NetworkKind) -> RadioModel { radios.models[Int(n.rawValue)] }

  // The families reach the engine through the registry's existential
  // metatypes, so its callers are not specialized: these pre-specialized
  // copies (one per built-in policy; the generic entry dispatches to them
  // at run time) keep the per-event calls static. A policy registered from
  // outside runs the generic code, with the same results.
  @_specialize(where P == NeverPolicy)
  @_specialize(where P == PeriodicPolicy)
  @_specialize(where P == OraclePolicy)
  @_specialize(where P == BudgetOraclePolicy)
  @_specialize(where P == MinimumPolicy)
  @_specialize(where P == PlannerPolicy)
  @_specialize(where P == SilentPushPolicy)
  @_specialize(where P == WorkManagerPolicy)
  @_specialize(where P == StandbyPolicy)
  @_specialize(where P == TailEnderPolicy)
  @_specialize(where P == IMPPolicy)
  @_specialize(where P == TransferPolicy)
  @_specialize(where P == LocationWakePolicy)
  @_specialize(where P == FetchOnExitPolicy)
  @_specialize(where P == BGAppRefreshPolicy)
  @_specialize(where P == BGProcessingPolicy)
  @_specialize(where P == AndroidPrefetchPolicy)
  @_specialize(where P == AnyFetchPolicy)
  mutating func run<P: FetchPolicy>(_ policies: inout [P]) -> DeviceReplay {
    // Policies that ignore most events only need the apps' opens.
    let all = P.observedEvents == .all || P.observedEvents == .allWithLocation
    let location = P.observedEvents == .allWithLocation
    let events = all ? u.trace.events : appOpens
    let end = u.trace.end
    let n = lanes.count
    var i = 0
    for j in 0..<n {
      updateRadio(P.self, j)
      policies[j].start(&lanes[j].ctx)
      handleRequest(j)
    }
    // The earliest completion and timer over the lanes change only when a
    // policy is called or a fetch completes: scanned again only then.
    var tDone = Double.infinity, done = 0
    var tTimer = Double.infinity, timer = 0
    var rescan = true
    while true {
      let tEvent = i < events.count ? events[i].time : .infinity
      if rescan {
        tDone = .infinity
        tTimer = .infinity
        for j in 0..<n {
          if let f = lanes[j].inflight, f.end < tDone { tDone = f.end; done = j }
          if lanes[j].ctx.timerAt < tTimer { tTimer = lanes[j].ctx.timerAt; timer = j }
        }
        rescan = false
      }
      // Background transfers: after everything else at the same instant.
      let tTransfer = transfers.nextTime
      if tTransfer < tDone && tTransfer < tEvent && tTransfer < tTimer && tTransfer <= end {
        stepTransfers(at: tTransfer)
        continue
      }
      if tDone <= tEvent && tDone <= tTimer && tDone <= end {
        lanes[done].ctx.now = tDone
        updateRadio(P.self, done)
        complete(done, &policies[done], notify: true)
        rescan = true
      } else if tEvent <= tTimer && tEvent <= end {
        let e = events[i]
        i += 1
        if all {
          // Location rows change no device state: skipped unless shown.
          if e.kind == .location && !location { continue }
          guard apply(e) else { continue }
          for j in 0..<n {
            lanes[j].ctx.now = tEvent
            updateRadio(P.self, j)
            policies[j].observe(e, &lanes[j].ctx)
            handleRequest(j)
          }
          rescan = true
        } else {
          let j = laneOf[Int(e.app)]
          recordOpen(j, at: e.time)
          guard P.observedEvents == .appOpens else {
            // The policy sees no opens, so they move no completion, timer
            // or transfer: every open before the next of those (the order
            // of the branches above) is scored here in one run.
            let through = min(tTimer, tTransfer, end)
            while i < events.count {
              let t = events[i].time
              guard t < tDone && t <= through else { break }
              recordOpen(laneOf[Int(events[i].app)], at: t)
              i += 1
            }
            continue
          }
          lanes[j].ctx.now = tEvent
          updateRadio(P.self, j)
          policies[j].observe(e, &lanes[j].ctx)
          handleRequest(j)
          rescan = true
        }
      } else if tTimer <= end {
        lanes[timer].ctx.now = tTimer
        lanes[timer].ctx.timerAt = .infinity
        updateRadio(P.self, timer)
        policies[timer].timerFired(&lanes[timer].ctx)
        handleRequest(timer)
        rescan = true
      } else {
        break
      }
    }
    for j in 0..<n where lanes[j].inflight != nil {
      lanes[j].ctx.now = lanes[j].inflight!.end
      complete(j, &policies[j], notify: false)
    }
    let apps = (0..<n).map { finish($0) }
    #if DEBUG
    _checkInvariants(apps)
    #endif
    return DeviceReplay(apps: apps, summary: DeviceSummary(apps))
  }

  /// Refreshes ``PolicyContext/radioQuietGapS`` of lane `j` for policies that read it.
  mutating func updateRadio<P: FetchPolicy>(_: P.Type, _ j: Int) {
    guard P.observesRadio else { return }
    if let k = PreparedUser.interface(lanes[j].ctx.network) {
      lanes[j].ctx.radioQuietGapS = quietGap(k, at: lanes[j].ctx.now)
    } else {
      lanes[j].ctx.radioQuietGapS = .infinity
    }
  }

  /// Applies a trace event to the device state; returns whether the policies see it.
  mutating func apply(_ e: TraceEvent) -> Bool {
    switch e.kind {
    case .update:
      return false
    case .open:
      let j = Int(e.app) < laneOf.count ? laneOf[Int(e.app)] : -1
      if j >= 0 { recordOpen(j, at: e.time) }
    case .network:
      network = e.network ?? .offline
      for j in lanes.indices { lanes[j].ctx.network = network }
    case .battery:
      sampledPct = e.value
      energySinceSampleJ = 0
      for j in lanes.indices { lanes[j].ctx.batteryPct = e.value }
    case .chargeStart:
      isCharging = true
      for j in lanes.indices { lanes[j].ctx.isCharging = true }
    case .chargeEnd:
      isCharging = false
      for j in lanes.indices { lanes[j].ctx.isCharging = false }
    case .wake, .location:
      break
    }
    return true
  }

  /// Scores an open of lane `j`'s app at `t` and, with foreground refresh,
  /// refreshes its content (after scoring: an open does not see a refresh at
  /// its own instant).
  ///
  /// The open is fresh when the age is 0 (an update at the open's instant
  /// included). A stale open on a network fetches in the foreground: the
  /// radio state just before the open decides the promotion, and the
  /// user's wait is promotion + request + server latency + response; a
  /// fresh open waits 0 s; an offline open's wait is not measured.
  ///
  /// Most opens are fresh and end in the lane's side; a stale one's
  /// refresh is priced out of line (``refreshStale(_:_:at:)``), which keeps
  /// this function's frame small. (Marked `@inline(__always)`, it is still
  /// called, not inlined, from the specialized event loops: seen in the
  /// disassembly.)
  @inline(__always)
  mutating func recordOpen(_ j: Int, at t: Double) {
    // The lane's side (score, trace context, server version, a fresh
    // open's wait and sync) in one access to it.
    let o = lanes[j].open(at: t, windowStart: u.trace.start, record: options.recordEvents, refresh: w.foregroundRefresh)
    if o.stale { refreshStale(j, o, at: t) }
  }

  /// Prices the foreground refresh of stale open `o` of lane `j` at `t`
  /// (see ``recordOpen(_:at:)``).
  @inline(never)
  mutating func refreshStale(_ j: Int, _ o: AppLane.Open, at t: Double) {
    // Prepared with the user; worked out here only if the replay's opens
    // and the prepared ones ever disagreed.
    let c: OpenContext
    if o.index < lanes[j].openContexts.count && lanes[j].openContexts[o.index].time == t {
      c = lanes[j].openContexts[o.index]
    } else {
      c = OpenContext(open: t, netTimes: u.netTimes, netKinds: u.netKinds, busy: u.busy, netHint: &netHint, busyHints: &busyHints)
    }
    let net = u.netKinds[c.network]
    guard let k = PreparedUser.interface(net) else {
      lanes[j].sync(to: o.version, at: t)
      return
    }
    let r = radio(net)
    let x = r.transferTime(downBytes: o.responseBytes, upBytes: w.requestBytes)
    // The user's activity counts only when the radio is shared with it.
    let quietSince = w.shareUserRadio ? c.quietSince : -.infinity
    let coverEnd = w.shareUserRadio ? c.coverEnd : -.infinity
    let before = t.nextDown
    let gap = quietSince == before ? 0 : before - lastActivity(k, at: before, after: quietSince)
    let wait = r.promotion(afterGap: gap).timeS + x.up + w.serverLatencyS + x.down
    let iv = BusyInterval(start: t, end: t + wait)
    var energy = r.throughputEnergy(downS: x.down, upS: x.up)
    // Inside the user's session that opened the app: no radio energy
    // added and no one else's changed, exactly.
    if coverEnd < iv.end {
      energy += marginalEnergy(k, net, iv)
      addOwn(k, iv, now: t)
    }
    lanes[j].refreshed(
      at: t, version: o.version, wait: wait, energyJ: energy, bytes: w.requestBytes + o.responseBytes,
      cellular: net.isCellular)
  }

  mutating func handleRequest(_ j: Int) {
    guard let r = lanes[j].ctx.request else { return }
    lanes[j].ctx.request = nil
    let now = lanes[j].ctx.now
    guard lanes[j].inflight == nil, now < u.trace.end else { return }
    let f: InFlight
    switch r {
    case .now:
      f = plan(j, start: now, completion: nil)
    case .completing(let t):
      if let (start, end) = latestCompletion(j, by: t) {
        f = plan(j, start: start, completion: end)
      } else {
        f = plan(j, start: now, completion: nil)
      }
    case .within(let budget):
      longestBudgetS = max(longestBudgetS, budget)
      f = plan(j, start: now, completion: nil, budget: budget)
    }
    lanes[j].inflight = f
    lanes[j].ctx.fetchInFlight = true
  }

  /// Seconds since interface `k` was last busy at `t` (0 while busy, ∞ if
  /// never), counting the user's activity (when shared) and the device's
  /// fetches that started by `t`.
  mutating func quietGap(_ k: Int, at t: Double) -> Double {
    let i = firstBusy(k, endingAtOrAfter: t)
    // Read in place (a copy of the list retained and released it).
    let (inside, userEnd) = busy[k].withUnsafeBufferPointer { b in
      (i < b.count && b[i].start <= t, i > 0 ? b[i - 1].end : -Double.infinity)
    }
    if inside { return 0 }
    return t - lastActivity(k, at: t, after: userEnd)
  }

  /// The end of the last activity on interface `k` by `t` (capped at `t`):
  /// the later of `last` (the user's, from the caller) and the device's
  /// fetches that started by `t`.
  ///
  /// `mutating` only so that it borrows the engine: called from the
  /// engine's mutating methods, a non-mutating call copied all of it.
  mutating func lastActivity(_ k: Int, at t: Double, after last: Double) -> Double {
    var last = last
    // Own intervals are sorted by start; none that starts more than the
    // longest one before `last` can end after it.
    let o = own[k]
    var m = o.count - 1
    while m >= 0 {
      if o[m].start + longestOwnS < last { break }
      if o[m].start <= t { last = max(last, min(o[m].end, t)) }
      m -= 1
    }
    return last
  }

  /// The first interval of the user's activity on interface `k` that ends
  /// at or after `t`, searched from the previous answer (which is updated).
  mutating func firstBusy(_ k: Int, endingAtOrAfter t: Double) -> Int {
    let hint = busyHints[k]
    let i = busy[k].withUnsafeBufferPointer { p in firstIndex(count: p.count, from: hint) { p[$0].end >= t } }
    busyHints[k] = i
    return i
  }

  /// The latest (start, end) at or before `t` at which a fetch can run
  /// whole inside one online network segment, starting no earlier than now;
  /// `nil` if there is none (oracles).
  mutating func latestCompletion(_ j: Int, by t: Double) -> (Double, Double)? {
    let now = lanes[j].ctx.now
    var d = t
    while d > now {
      // The segment a fetch ending at d runs in: the last change before d.
      var i = u.networkIndex(at: d, hint: &netHint)
      if i > 0 && u.netTimes[i] == d { i -= 1 }
      let segStart = u.netTimes[i]
      if u.netKinds[i] != .offline {
        let s = startToComplete(j, by: d, on: u.netKinds[i])
        if s >= max(segStart, now) { return (s, d) }
      }
      guard i > 0 else { return nil }
      d = segStart
    }
    return nil
  }

  /// The latest start from which a fetch on `net` finishes by `t`.
  mutating func startToComplete(_ j: Int, by t: Double, on net: NetworkKind) -> Double {
    guard let k = PreparedUser.interface(net) else { return t }
    let r = radio(net)
    let v = lanes[j].serverVersion(at: t)
    let bytes = v > lanes[j].version ? lanes[j].newDataBytes(version: v) : w.noDataBytes
    let x = r.transferTime(downBytes: bytes, upBytes: w.requestBytes)
    let base = x.up + w.serverLatencyS + x.down
    let p0 = r.promotion(afterGap: quietGap(k, at: t - base)).timeS
    var s = t - base - p0
    let p1 = r.promotion(afterGap: quietGap(k, at: s)).timeS
    if p1 > p0 { s = t - base - p1 }
    return s
  }

  /// Works out lane `j`'s fetch starting at `s`: its completion, failure,
  /// bytes and energy, and puts it on the device radio.
  /// `budget` replaces ``WorldParameters/fetchBudgetS`` for this fetch.
  mutating func plan(_ j: Int, start s: Double, completion forced: Double?, budget: Double? = nil) -> InFlight {
    let seg = u.networkIndex(at: s, hint: &netHint)
    let net = u.netKinds[seg]
    let cpuWake = w.cpuWakeEnergyJ
    guard let k = PreparedUser.interface(net) else {
      return InFlight(start: s, end: s, failure: .offline, bytes: 0, energyJ: cpuWake, network: net)
    }
    let instant = w.instantTransfers
    let r = radio(net)
    let promoS = r.promotion(afterGap: quietGap(k, at: s)).timeS
    let x0 = r.transferTime(downBytes: 0, upBytes: w.requestBytes)
    let response = instant ? s : forced ?? (s + promoS + x0.up + w.serverLatencyS)
    let version = lanes[j].version
    let v = lanes[j].serverVersion(at: response)
    var respBytes = v > version ? lanes[j].newDataBytes(version: v) : w.noDataBytes
    // A large item goes to the background transfer queue: the handler gets
    // the feed (a no-data-sized response) and hands the item over.
    var handOff = 0
    if v > version, let ts = lanes[j].ctx.transfers, respBytes >= ts.minBytes {
      handOff = v
      respBytes = w.noDataBytes
    }
    let x = r.transferTime(downBytes: respBytes, upBytes: w.requestBytes)
    var end = max(forced ?? 0, s + promoS + x.up + w.serverLatencyS + x.down)
    var failure = FetchFailure.none
    var downS = x.down
    var bytes = w.requestBytes + respBytes
    let nextChange = seg + 1 < u.netTimes.count ? u.netTimes[seg + 1] : .infinity
    let budgetEnd = s + (budget ?? w.fetchBudgetS)
    let cut = min(budgetEnd, nextChange)
    if cut < end && !instant {
      failure = cut == budgetEnd ? .budget : .networkChange
      let frac = max(0, min(1, (cut - (end - x.down)) / x.down))
      downS = x.down * frac
      bytes = w.requestBytes + respBytes * frac
      end = cut
    } else if w.failureProbability > 0 && lanes[j].rng.uniform() < w.failureProbability {
      failure = .server
      bytes = w.requestBytes + w.noDataBytes
      downS = r.transferTime(downBytes: w.noDataBytes, upBytes: 0).down
    }
    let iv = BusyInterval(start: s, end: end)
    let radioJ = marginalEnergy(k, net, iv) + r.throughputEnergy(downS: downS, upS: x.up)
    addOwn(k, iv, now: lanes[j].ctx.now)
    let energy = cpuWake + w.cpuActivePowerW * (end - s) + radioJ
    return InFlight(
      start: s, end: instant ? s : end, failure: failure, bytes: bytes, energyJ: energy, network: net,
      handOff: failure == .none ? handOff : 0)
  }

  /// Puts `iv` on interface `k`'s list of device fetches (sorted by start).
  /// Beyond 64 entries it drops the oldest (keeping at least 32) that end
  /// more than the longest look-around before `now`: every later fetch
  /// starts at or after `now`, so they cannot reach it.
  mutating func addOwn(_ k: Int, _ iv: BusyInterval, now: Double) {
    var m = own[k].count
    while m > 0 && own[k][m - 1].start > iv.start { m -= 1 }
    // Mostly the latest start: appended (an insert at the end went through
    // the generic subrange replacement).
    if m == own[k].count { own[k].append(iv) } else { own[k].insert(iv, at: m) }
    longestOwnS = max(longestOwnS, iv.end - iv.start)
    guard own[k].count > 64 else { return }
    var drop = 0
    while drop < own[k].count - 32 && own[k][drop].end < now - radios.maxWindow { drop += 1 }
    own[k].removeFirst(drop)
  }

  /// E(S ∪ {f}) − E(S) on interface `k` with the radio of `net`, where S is
  /// the background activity and the device's earlier fetches near f.
  /// Intervals further than the radio's tail (plus promotion) from f cannot
  /// change the difference, so the window is exact.
  ///
  /// One pass over the intervals of the window (the background list from
  /// its search hint, merged with the device's fetches) prices the set
  /// without `f` and, forked where `f` falls in start order, the set with
  /// it (``RadioModel/marginalEnergy(of:background:from:own:from:lo:hi:)``),
  /// without building either list, and priced from the stage table without
  /// reference counting.
  ///
  /// - Complexity: O(intervals within the window + log distance of the hint).
  mutating func marginalEnergy(_ k: Int, _ net: NetworkKind, _ f: BusyInterval) -> Double {
    let radio = radio(net)
    let d = radio.terms.lookAroundS
    let lo = f.start - d, hi = f.end + d
    let first = firstBusy(k, endingAtOrAfter: lo)
    // Sorted by start: none that starts more than the longest one before
    // `lo` can reach the window.
    let reach = lo - longestOwnS
    return busy[k].withUnsafeBufferPointer { b in
      own[k].withUnsafeBufferPointer { o in
        let start = firstIndex(in: 0..<o.count) { o[$0].start >= reach }
        return radio.marginalEnergy(of: f, background: b, from: first, own: o, from: start, lo: lo, hi: hi)
      }
    }
  }

  mutating func complete<P: FetchPolicy>(_ j: Int, _ policy: inout P, notify: Bool) {
    let f = lanes[j].inflight!
    lanes[j].inflight = nil
    lanes[j].ctx.fetchInFlight = false
    var result = FetchResult.failed
    if f.handOff > 0, let ts = lanes[j].ctx.transfers {
      // An item the queue already holds (a discretionary one waiting, seen
      // again by a periodic fetch) is nothing new to the handler.
      let queued = transfers.waiting.contains { $0.lane == j && $0.version >= f.handOff }
      result = queued ? .noData : .newData
      enqueueTransfer(j, version: f.handOff, at: f.end, settings: ts)
    } else if f.failure == .none {
      let v = lanes[j].serverVersion(at: f.end)
      if v > lanes[j].version {
        result = .newData
        if lanes[j].unseenNewData { lanes[j].summary.wasted += 1 }
        lanes[j].unseenNewData = true
        lanes[j].sync(to: v, at: min(f.end, u.trace.end))
      } else {
        result = .noData
      }
    }
    lanes[j].summary.fetches += 1
    switch result {
    case .newData: lanes[j].summary.newData += 1
    case .noData: lanes[j].summary.noData += 1
    case .failed: lanes[j].summary.failed += 1
    }
    lanes[j].summary.energyJ += f.energyJ
    if f.network.isCellular { lanes[j].summary.cellularBytes += f.bytes } else { lanes[j].summary.wifiBytes += f.bytes }
    drainBattery(f.energyJ, charging: isCharging)
    if options.recordEvents {
      lanes[j].fetches.append(FetchRecord(
        start: f.start, end: f.end, result: result, bytes: f.bytes, energyJ: f.energyJ, network: f.network,
        failure: f.failure.text))
    }
    guard notify else { return }
    policy.fetchFinished(
      FetchOutcome(start: f.start, end: f.end, result: result, bytes: f.bytes, energyJ: f.energyJ, network: f.network),
      &lanes[j].ctx)
    handleRequest(j)
  }

  /// Counts `energyJ` of the device's background work against the battery
  /// (not while `charging`) and shows every app's policy the level it
  /// implies: the last sample less the energy since, as % of capacity.
  mutating func drainBattery(_ energyJ: Double, charging: Bool) {
    if !charging { energySinceSampleJ += energyJ }
    if let p = sampledPct {
      let pct = max(0, p - 100 * energySinceSampleJ / w.batteryCapacityJ)
      for m in lanes.indices { lanes[m].ctx.batteryPct = pct }
    }
  }

  mutating func finish(_ j: Int) -> AppReplay {
    lanes[j].integrate(to: u.trace.end)
    return lanes[j].finish(span: u.trace.end - u.trace.start)
  }
}

extension AppLane {
  /// The app's replay: its figures worked out over a window of `span` s,
  /// its records moved out of the lane (not copied: the lane is spent).
  mutating func finish(span: Double) -> AppReplay {
    var s = summary
    var ages: [Double] = []
    var waits: [Double] = []
    var opens: [OpenRecord] = []
    var fetches: [FetchRecord] = []
    var chunks: [TransferChunkRecord] = []
    swap(&ages, &self.ages)
    swap(&waits, &self.waits)
    swap(&opens, &self.opens)
    swap(&fetches, &self.fetches)
    swap(&chunks, &transferChunks)
    if unseenNewData { s.wasted += 1 }
    let n = s.opens
    let fresh = n - ages.count
    if n == 0 {
      // No scored opens: staleness is undefined, not zero.
      s.meanAgeS = .nan
      s.p50AgeS = .nan
      s.p90AgeS = .nan
      s.p99AgeS = .nan
      s.freshRatio = .nan
      s.meanAoiS = .nan
    } else {
      // Fresh opens have age 0 (they add nothing to the sum); the stale
      // ages are summed in time order, their quantiles found by selection
      // (a sort cost a fifth of a `never` replay).
      s.meanAgeS = ages.reduce(0, +) / Double(n)
      ages.withUnsafeMutableBufferPointer { p in
        var placed = 0
        s.p50AgeS = Quantile.type7(zeros: fresh, selectingIn: p, 0.5, placed: &placed)
        s.p90AgeS = Quantile.type7(zeros: fresh, selectingIn: p, 0.9, placed: &placed)
        s.p99AgeS = Quantile.type7(zeros: fresh, selectingIn: p, 0.99, placed: &placed)
      }
      s.freshRatio = Double(fresh) / Double(n)
      s.meanAoiS = aoiSum / Double(n)
    }
    if zeroWaits + waits.count > 0 {
      s.meanWaitS = waits.reduce(0, +) / Double(zeroWaits + waits.count)
      // Selected in a copy on the stack: the waits stay in time order.
      s.p90WaitS = withUnsafeTemporaryAllocation(of: Double.self, capacity: waits.count) { p in
        _ = p.initialize(fromContentsOf: waits)
        var placed = 0
        return Quantile.type7(zeros: zeroWaits, selectingIn: p, 0.9, placed: &placed)
      }
    }
    if span > 0 {
      s.timeAvgAgeS = ageIntegral / span
      s.timeFreshRatio = freshTime / span
    }
    return AppReplay(
      summary: s, opens: opens, fetches: fetches, staleAges: ages, freshOpens: fresh, waits: waits,
      zeroWaits: zeroWaits, transferChunks: chunks)
  }
}

/// Merges per-app open lists (each in time order) into one, apps in the
/// given order at equal times.
func mergeOpens(_ lists: [[TraceEvent]]) -> [TraceEvent] { mergeSorted(lists) { $0.time < $1.time } }
