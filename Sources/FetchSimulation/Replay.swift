import FetchModels
import FetchTraces

/// Switches of one replay.
public struct ReplayOptions: Sendable {
  /// Master seed; server-failure draws use the stream keyed by it, the user,
  /// the app and `policyKey`.
  public var seed: UInt64
  /// A stable name for the policy configuration (its spec string).
  public var policyKey: String
  /// Keep per-open and per-fetch records (off for large batch runs).
  public var recordEvents: Bool

  public init(seed: UInt64 = 1, policyKey: String = "", recordEvents: Bool = true) {
    self.seed = seed
    self.policyKey = policyKey
    self.recordEvents = recordEvents
  }
}

/// Everything one replay of one (user, app, policy) produced.
public struct AppReplay: Sendable {
  public var summary: AppSummary
  /// One record per open of the app (empty unless `recordEvents`).
  public var opens: [OpenRecord]
  /// One record per fetch (empty unless `recordEvents`).
  public var fetches: [FetchRecord]
  /// Age at each open, s, sorted ascending (always kept; small).
  public var sortedAges: [Double]
}

/// Replays `user`'s trace against `policy` for the content of `app`.
///
/// A discrete-event simulation over three event sources, merged in time
/// order (at equal times: fetch completions, then trace events, then the
/// policy's timer):
/// - trace events: opens update the metrics and, when
///   ``WorldParameters/foregroundRefresh`` is on, refresh the content
///   (uncharged); network, battery and charging rows update the device
///   state; `update` rows are never shown to the policy;
/// - the policy's timer;
/// - the completion of the (single) fetch in flight.
///
/// A fetch started at `s` on a network takes the radio's promotion (if the
/// radio is idle or in a late tail stage), the uplink request, the server
/// latency, and the downlink response; it fails when the device is offline,
/// when the network changes before it completes, when it overruns
/// ``WorldParameters/fetchBudgetS``, or (with probability
/// ``WorldParameters/failureProbability``) on the server. It brings the
/// content as of its completion. Its energy is the CPU wake plus the
/// *marginal* radio energy given all other radio activity on that interface
/// (the user's sessions, other apps' wakes, the policy's earlier fetches),
/// so a fetch inside a tail someone else paid for costs only the increment.
///
/// - Complexity: O(events + fetches · log(background intervals)).
public func replay<P: FetchPolicy>(
  _ policy: inout P, user: PreparedUser, app: Int32, content: ContentTimeline,
  options: ReplayOptions = ReplayOptions()
) -> AppReplay {
  var engine = ReplayEngine(user: user, app: app, content: content, options: options)
  return engine.run(&policy)
}

struct InFlight {
  var start: Double
  var end: Double
  var failure: String  // empty unless failed
  var bytes: Double
  var energyJ: Double
  var network: NetworkKind
}

struct ReplayEngine {
  let u: PreparedUser
  let w: WorldParameters
  let app: Int32
  let content: ContentTimeline
  let updates: [Double]
  let options: ReplayOptions
  var ctx: PolicyContext
  var rng: SplitMix64

  // Content on the device: it holds updates[0..<version].
  var version = 0
  var segmentStart: Double
  var ageIntegral = 0.0
  var freshTime = 0.0
  var unseenNewData = false

  // Battery: last sampled level and the policy's energy since.
  var sampledPct: Double?
  var energySinceSampleJ = 0.0

  // The policy's own fetches per interface (recent ones only) and a scratch list.
  var own: [[BusyInterval]] = [[], []]
  var scratch: [BusyInterval] = []
  let window: [Double]  // per-interface look-around for marginal energy, s
  var inflight: InFlight?
  /// Radio profiles by ``NetworkKind`` raw value (nil offline).
  let radios: [RadioProfile?]
  // Search hints: the previous answers (times mostly move forward).
  var versionHint = 0
  var netHint = 0
  var busyHints = [0, 0]
  /// The last (version, bytes) of ``newDataBytes(version:)``.
  var lastSize = (version: -1, bytes: 0.0)

  var summary = AppSummary()
  var opens: [OpenRecord] = []
  var fetches: [FetchRecord] = []
  var ages: [Double] = []
  var aoiSum = 0.0

  init(user: PreparedUser, app: Int32, content: ContentTimeline, options: ReplayOptions) {
    u = user
    w = user.world
    self.app = app
    self.content = content
    updates = content.updates
    self.options = options
    let t = user.trace
    ctx = PolicyContext(
      now: t.start, app: app, appName: t.apps[Int(app)], windowStart: t.start, timeZone: t.timeZone,
      network: user.netKinds[0])
    rng = SplitMix64(seed: options.seed, keys: "fetch-failure", t.user, t.apps[Int(app)], options.policyKey)
    segmentStart = t.start
    if w.initialBatteryPct >= 0 { sampledPct = w.initialBatteryPct }
    ctx.batteryPct = sampledPct
    window = [NetworkKind.wifi, .cellular].map { n in
      let r = user.world.radio(for: n)!
      return r.tailDurationS + r.promotionTimeS + 1
    }
    radios = NetworkKind.allCases.map { user.world.radio(for: $0) }
    summary.days = t.days
    summary.updates = updates.count
  }

  mutating func serverVersion(at t: Double) -> Int { content.version(at: t, hint: &versionHint) }

  /// Bytes of the response bringing version `v` (cached: a policy often asks twice).
  mutating func newDataBytes(version v: Int) -> Double {
    if lastSize.version != v { lastSize = (v, content.newDataBytes(version: v)) }
    return lastSize.bytes
  }

  func radio(_ n: NetworkKind) -> RadioProfile? { radios[Int(n.rawValue)] }

  /// Adds the current content version's age and freshness over [segmentStart, t].
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
    version = v
  }

  mutating func run<P: FetchPolicy>(_ policy: inout P) -> AppReplay {
    // Policies that ignore most events only need the app's opens.
    let all = P.observedEvents == .all
    let events = all ? u.trace.events : u.opens(of: app)
    let end = u.trace.end
    var i = 0
    updateRadio(P.self)
    policy.start(&ctx)
    handleRequest()
    while true {
      let tEvent = i < events.count ? events[i].time : .infinity
      let tDone = inflight?.end ?? .infinity
      let tTimer = ctx.timerAt
      if tDone <= tEvent && tDone <= tTimer && tDone <= end {
        ctx.now = tDone
        updateRadio(P.self)
        complete(&policy, notify: true)
      } else if tEvent <= tTimer && tEvent <= end {
        ctx.now = tEvent
        let e = events[i]
        i += 1
        if all {
          guard apply(e) else { continue }
        } else {
          recordOpen(at: e.time)
          guard P.observedEvents == .appOpens else { continue }
        }
        updateRadio(P.self)
        policy.observe(e, &ctx)
        handleRequest()
      } else if tTimer <= end {
        ctx.now = tTimer
        ctx.timerAt = .infinity
        updateRadio(P.self)
        policy.timerFired(&ctx)
        handleRequest()
      } else {
        break
      }
    }
    if inflight != nil {
      ctx.now = inflight!.end
      complete(&policy, notify: false)
    }
    return finish()
  }

  /// Refreshes ``PolicyContext/radioQuietGapS`` for policies that read it.
  mutating func updateRadio<P: FetchPolicy>(_: P.Type) {
    guard P.observesRadio else { return }
    if let k = PreparedUser.interface(ctx.network) {
      ctx.radioQuietGapS = quietGap(k, at: ctx.now)
    } else {
      ctx.radioQuietGapS = .infinity
    }
  }

  /// Applies a trace event to the device state; returns whether the policy sees it.
  mutating func apply(_ e: TraceEvent) -> Bool {
    switch e.kind {
    case .update:
      return false
    case .open:
      if e.app == app { recordOpen(at: e.time) }
    case .network:
      ctx.network = e.network ?? .offline
    case .battery:
      sampledPct = e.value
      energySinceSampleJ = 0
      ctx.batteryPct = e.value
    case .chargeStart:
      ctx.isCharging = true
    case .chargeEnd:
      ctx.isCharging = false
    case .wake:
      break
    }
    return true
  }

  mutating func recordOpen(at t: Double) {
    let fresh = version >= updates.count || updates[version] > t
    let age = fresh ? 0 : t - updates[version]
    let aoi = t - (version > 0 ? updates[version - 1] : u.trace.start)
    summary.opens += 1
    if !fresh { ages.append(age) }
    aoiSum += aoi
    if options.recordEvents { opens.append(OpenRecord(time: t, ageS: age, aoiS: aoi, fresh: fresh)) }
    unseenNewData = false
    if w.foregroundRefresh { sync(to: serverVersion(at: t), at: t) }
  }

  mutating func handleRequest() {
    guard let r = ctx.request else { return }
    ctx.request = nil
    guard inflight == nil, ctx.now < u.trace.end else { return }
    switch r {
    case .now:
      inflight = plan(start: ctx.now, completion: nil)
    case .completing(let t):
      if let (start, end) = latestCompletion(by: t) {
        inflight = plan(start: start, completion: end)
      } else {
        inflight = plan(start: ctx.now, completion: nil)
      }
    }
    ctx.fetchInFlight = true
  }

  /// Seconds since interface `k` was last busy at `t` (0 while busy, ∞ if never).
  mutating func quietGap(_ k: Int, at t: Double) -> Double {
    let b = u.busy[k]
    let i = u.firstBusy(k, endingAtOrAfter: t, hint: &busyHints[k])
    if i < b.count && b[i].start <= t { return 0 }
    var last = i > 0 ? b[i - 1].end : -Double.infinity
    if let o = own[k].last { last = max(last, min(o.end, t)) }
    return t - last
  }

  /// The latest (start, end) at or before `t` at which a fetch can run
  /// whole inside one online network segment, starting no earlier than now;
  /// `nil` if there is none (oracles).
  mutating func latestCompletion(by t: Double) -> (Double, Double)? {
    var d = t
    while d > ctx.now {
      // The segment a fetch ending at d runs in: the last change before d.
      var i = u.networkIndex(at: d, hint: &netHint)
      if i > 0 && u.netTimes[i] == d { i -= 1 }
      let segStart = u.netTimes[i]
      if u.netKinds[i] != .offline {
        let s = startToComplete(by: d, on: u.netKinds[i])
        if s >= max(segStart, ctx.now) { return (s, d) }
      }
      guard i > 0 else { return nil }
      d = segStart
    }
    return nil
  }

  /// The latest start from which a fetch on `net` finishes by `t`.
  mutating func startToComplete(by t: Double, on net: NetworkKind) -> Double {
    guard let k = PreparedUser.interface(net), let radio = radio(net) else { return t }
    let v = serverVersion(at: t)
    let bytes = v > version ? newDataBytes(version: v) : w.noDataBytes
    let x = radio.transferTime(downBytes: bytes, upBytes: w.requestBytes)
    let base = x.up + w.serverLatencyS + x.down
    let p0 = radio.promotion(afterGap: quietGap(k, at: t - base)).timeS
    var s = t - base - p0
    let p1 = radio.promotion(afterGap: quietGap(k, at: s)).timeS
    if p1 > p0 { s = t - base - p1 }
    return s
  }

  /// Works out a fetch starting at `s`: its end, failure, bytes and energy.
  mutating func plan(start s: Double, completion forced: Double?) -> InFlight {
    let seg = u.networkIndex(at: s, hint: &netHint)
    let net = u.netKinds[seg]
    let cpuWake = w.cpuWakeEnergyJ
    guard let k = PreparedUser.interface(net), let radio = radio(net) else {
      return InFlight(start: s, end: s, failure: "offline", bytes: 0, energyJ: cpuWake, network: net)
    }
    let promo = radio.promotion(afterGap: quietGap(k, at: s))
    let x0 = radio.transferTime(downBytes: 0, upBytes: w.requestBytes)
    let response = forced ?? (s + promo.timeS + x0.up + w.serverLatencyS)
    let v = serverVersion(at: response)
    let respBytes = v > version ? newDataBytes(version: v) : w.noDataBytes
    let x = radio.transferTime(downBytes: respBytes, upBytes: w.requestBytes)
    var end = max(forced ?? 0, s + promo.timeS + x.up + w.serverLatencyS + x.down)
    var failure = ""
    var downS = x.down
    var bytes = w.requestBytes + respBytes
    let nextChange = seg + 1 < u.netTimes.count ? u.netTimes[seg + 1] : .infinity
    let cut = min(s + w.fetchBudgetS, nextChange)
    if cut < end {
      failure = cut == s + w.fetchBudgetS ? "budget" : "network_change"
      let frac = max(0, min(1, (cut - (end - x.down)) / x.down))
      downS = x.down * frac
      bytes = w.requestBytes + respBytes * frac
      end = cut
    } else if w.failureProbability > 0 && rng.uniform() < w.failureProbability {
      failure = "server"
      bytes = w.requestBytes + w.noDataBytes
      downS = radio.transferTime(downBytes: w.noDataBytes, upBytes: 0).down
    }
    let radioJ = marginalEnergy(k, radio, BusyInterval(start: s, end: end))
      + radio.throughputEnergy(downS: downS, upS: x.up)
    own[k].append(BusyInterval(start: s, end: end))
    if own[k].count > 64 { own[k].removeFirst(32) }
    let energy = cpuWake + w.cpuActivePowerW * (end - s) + radioJ
    return InFlight(start: s, end: end, failure: failure, bytes: bytes, energyJ: energy, network: net)
  }

  /// E(S ∪ {f}) − E(S) on interface `k`, where S is the background activity
  /// and the policy's earlier fetches near f.
  mutating func marginalEnergy(_ k: Int, _ radio: RadioProfile, _ f: BusyInterval) -> Double {
    let d = window[k]
    scratch.removeAll(keepingCapacity: true)
    let b = u.busy[k]
    var i = u.firstBusy(k, endingAtOrAfter: f.start - d, hint: &busyHints[k])
    var ownList = own[k][...]
    while let o = ownList.first, o.end < f.start - d { ownList = ownList.dropFirst() }
    // Merge the two start-sorted lists.
    while true {
      let bg = i < b.count && b[i].start <= f.end + d ? b[i] : nil
      let ow = ownList.first
      if bg == nil && ow == nil { break }
      if let bg, ow == nil || bg.start <= ow!.start {
        scratch.append(bg)
        i += 1
      } else {
        scratch.append(ow!)
        ownList = ownList.dropFirst()
      }
    }
    let before = radio.energy(ofSorted: scratch)
    let at = scratch.firstIndex { $0.start > f.start } ?? scratch.count
    scratch.insert(f, at: at)
    let after = radio.energy(ofSorted: scratch)
    return max(0, after - before)
  }

  mutating func complete<P: FetchPolicy>(_ policy: inout P, notify: Bool) {
    let f = inflight!
    inflight = nil
    ctx.fetchInFlight = false
    var result = FetchResult.failed
    if f.failure.isEmpty {
      let v = serverVersion(at: f.end)
      if v > version {
        result = .newData
        if unseenNewData { summary.wasted += 1 }
        unseenNewData = true
        sync(to: v, at: min(f.end, u.trace.end))
      } else {
        result = .noData
      }
    }
    summary.fetches += 1
    switch result {
    case .newData: summary.newData += 1
    case .noData: summary.noData += 1
    case .failed: summary.failed += 1
    }
    summary.energyJ += f.energyJ
    if f.network.isCellular { summary.cellularBytes += f.bytes } else { summary.wifiBytes += f.bytes }
    if !ctx.isCharging { energySinceSampleJ += f.energyJ }
    if let p = sampledPct {
      ctx.batteryPct = max(0, p - 100 * energySinceSampleJ / w.batteryCapacityJ)
    }
    if options.recordEvents {
      fetches.append(FetchRecord(
        start: f.start, end: f.end, result: result, bytes: f.bytes, energyJ: f.energyJ, network: f.network,
        failure: f.failure))
    }
    guard notify else { return }
    policy.fetchFinished(
      FetchOutcome(start: f.start, end: f.end, result: result, bytes: f.bytes, energyJ: f.energyJ, network: f.network),
      &ctx)
    handleRequest()
  }

  mutating func finish() -> AppReplay {
    integrate(to: u.trace.end)
    if unseenNewData { summary.wasted += 1 }
    let n = summary.opens
    var all: [Double] = []
    if n > 0 {
      // Fresh opens have age 0: pad the sorted stale ages with zeros.
      ages.sort()
      all = [Double](repeating: 0, count: n - ages.count) + ages
      summary.meanAgeS = all.reduce(0, +) / Double(n)
      summary.p50AgeS = quantile(sorted: all, 0.5)
      summary.p90AgeS = quantile(sorted: all, 0.9)
      summary.p99AgeS = quantile(sorted: all, 0.99)
      summary.freshRatio = Double(n - ages.count) / Double(n)
      summary.meanAoiS = aoiSum / Double(n)
    }
    let span = u.trace.end - u.trace.start
    if span > 0 {
      summary.timeAvgAgeS = ageIntegral / span
      summary.timeFreshRatio = freshTime / span
    }
    return AppReplay(summary: summary, opens: opens, fetches: fetches, sortedAges: all)
  }
}
