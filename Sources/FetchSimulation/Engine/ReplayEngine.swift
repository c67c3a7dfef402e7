import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld

/// The replay engine of ``replayDevice(_:user:apps:contents:options:)``:
/// one walk over one user's events for the lanes (apps) of one device.
///
/// Its rooms, one concern a file: the event loop
/// (`ReplayEngine+EventLoop.swift`), fetch planning and completion
/// (`+FetchPlanning`), the radio ledger of busy intervals and marginal
/// energies (`+RadioLedger`), the lanes (`AppLane.swift`, stored in
/// `_LaneBuffer.swift`), metric finishing (`AppLane+Finish.swift`), the
/// result types (`ReplayResults.swift`, `Metrics.swift`) and the checks of
/// `+Invariants`.
struct ReplayEngine {
  let u: PreparedUser
  /// The pieces of the world the engine reads (``ReplayWorld``).
  let w: ReplayWorld
  let options: ReplayOptions
  /// The apps' lanes, in the order of `apps`.
  let lanes: LaneBuffer
  /// Lane of each trace app index, -1 for apps not replayed.
  let laneOf: [Int]
  /// The opens of the replayed apps, in time order (apps in lane order at equal times).
  let appOpens: [TraceEvent]
  /// Background radio activity (the user's sessions and other apps' wakes)
  /// per interface; empty when ``ReplaySwitches/shareUserRadio`` is off.
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
  #if DEBUG
  /// The most entries `own` held on any interface after a fetch was added
  /// (what every pricing scan is bounded by; debug and test builds only).
  var peakOwnCount = 0
  #endif
  /// The promotion started by the device's latest fetch from a quiet radio,
  /// per interface: a fetch starting while it runs (at the same instant,
  /// say) transfers only once the radio is connected, at `promotedAt`.
  var promotingFrom = PerInterface(-Double.infinity)
  var promotedAt = PerInterface(-Double.infinity)
  /// The world's radio models, prepared with the user.
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
    if w.device.initialBatteryPct >= 0 { pct = w.device.initialBatteryPct }
    sampledPct = pct
    network = user.netKinds[0]
    let failing = user.world.fetch.failureProbability > 0
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
    busy = w.replay.shareUserRadio ? user.busy : [[], []]
    radios = user.radios
  }

  /// The radio model of `n` (offline: zero terms and no stages; callers
  /// check ``PreparedUser/interface(_:)`` first).
  func radio(_ n: NetworkKind) -> RadioModel { radios.models[Int(n.rawValue)] }
}

/// Merges per-app open lists (each in time order) into one, apps in the
/// given order at equal times.
func mergeOpens(_ lists: [[TraceEvent]]) -> [TraceEvent] { mergeSorted(lists) { $0.time < $1.time } }
