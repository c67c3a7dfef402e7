import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld
import Testing

@testable import FetchSimulation

/// The background transfer queue (`TransferQueue.swift`) and the
/// `transfer:` policies, on their documented semantics
/// (docs/background-transfers.md) with hand-computed figures from the LTE
/// and WiFi profiles (AT&T ARO lte.conf; Huang et al., MobiSys 2012).
@Suite("Background transfers")
struct TransferQueueTests {
  /// 60 MB, a large item for the background transfer queue.
  static let item = 60_000_000.0

  /// No request, latency, CPU or user radio: only the radio's promotion,
  /// β, throughput term and tail remain, so every figure is by hand.
  static var world: WorldParameters {
    var w = WorldParameters()
    w.radios.defaultNetwork = .lte
    w.fetch.serverLatencyS = 0
    w.fetch.requestBytes = 0
    w.fetch.noDataBytes = 0
    w.device.cpuWakeEnergyJ = 0
    w.device.cpuActivePowerW = 0
    w.replay.shareUserRadio = false
    // The hand calculations put the first timer fetch one interval in.
    w.replay.alignedTimers = true
    w.replay.foregroundRefresh = false
    w.content.source = .trace
    return w
  }

  /// One app `pod` whose one update at 100 s publishes a 60 MB item, and
  /// the given network and charging rows.
  static func trace(_ rows: [(Double, EventKind, NetworkKind?)], end: Double = 86_400) -> UserTrace {
    var t = UserTrace(user: "x", timeZone: .utc, start: 0, end: end)
    let a = t.appIndex("pod")
    var e = [TraceEvent(time: 100, kind: .update, app: a, value: item)]
    for (time, kind, net) in rows {
      e.append(TraceEvent(time: time, kind: kind, value: net.map { Double($0.rawValue) } ?? 0))
    }
    e.sort { $0.time < $1.time }
    t.events = e
    t._checkInvariants()
    return t
  }

  static func run(_ spec: String, _ t: UserTrace, _ w: WorldParameters = world) throws -> AppReplay {
    let user = PreparedUser(trace: t, world: w)
    let content = ContentTimeline(trace: t, app: 0, world: w, seed: 1)
    return try PolicySpec(parsing: spec).replay(user: user, app: 0, content: content, seed: 1, recordEvents: true)
  }

  // LTE (AT&T ARO lte.conf): 13 Mbps down, β 1.2 W, αd 0.05197 W/Mbps,
  // promotion 0.26 s at 1.21 W, tail 10.12 s at 1.06 W.
  static let lteDownS = item * 8 / 13e6  // 36.923077 s
  static let lteThroughputW = 0.05197 * 13
  static let promotionJ = 0.26 * 1.21
  static let tailJ = 10.12 * 1.06

  @Test("a days-long transfer does not make the radio ledger grow with the fetches behind it (6 h and 24 h of 10-s fetches)")
  func ledgerBoundedBehindLongTransfer() throws {
    // A 1e12-byte item takes days on LTE; a 10-s timer adds 2,160 fetches
    // in 6 h and 8,640 in 24 h. The ledger keeps the fetches near the
    // present, so its largest size is the same for both windows.
    func peak(hours: Double) throws -> Int {
      var t = UserTrace(user: "x", timeZone: .utc, start: 0, end: hours * 3600)
      let a = t.appIndex("pod")
      t.events = [
        TraceEvent(time: 0, kind: .network, value: Double(NetworkKind.lte.rawValue)),
        TraceEvent(time: 100, kind: .update, app: a, value: 1e12),
      ]
      let user = PreparedUser(trace: t, world: Self.world)
      let content = ContentTimeline(trace: t, app: 0, world: Self.world, seed: 1)
      let options = ReplayOptions(seed: 1, policyKey: "t")
      let device = DeviceReplayInput(user: user, apps: [0], contents: [content], scope: .device, options: options, learning: nil)
      var policies = [try PolicySpec(parsing: "transfer:immediate,fetch=10s,min_bytes=0").makeBoxedPolicies(device)(0, content)]
      var engine = ReplayEngine(user: user, apps: [0], contents: [content], options: options)
      let r = engine.run(&policies)
      #expect(r.apps[0].summary.fetches >= Int(hours * 360) - 2 && r.apps[0].summary.transfersQueued == 1)
      return engine.peakOwnCount
    }
    let short = try peak(hours: 6), long = try peak(hours: 24)
    #expect(long == short && long <= 100, "largest ledger: \(short) entries over 6 h, \(long) over 24 h")
  }

  @Test("the 60 MB item on LTE: handler-only fails at 30 s and never arrives; the queue brings it, cost and delay by hand")
  func sixtyMegabytesOnLTE() throws {
    let t = Self.trace([(0, .network, .lte)])
    // The push for the update at 100 s waits for network activity, at most
    // 15 min (priority-5 batching): the handler runs at 1000 s.
    let handlerOnly = try Self.run("silent-push", t)
    #expect(handlerOnly.fetches.count == 1)
    #expect(handlerOnly.fetches[0].failure == "budget" && handlerOnly.fetches[0].start == 1000)
    #expect(handlerOnly.summary.delivered == 0 && handlerOnly.summary.transferEnergyJ == 0)
    // It moved 29.74 s of the item before the budget cut it.
    #expect(abs(handlerOnly.summary.cellularBytes - 29.74 * 13e6 / 8) < 1e-3)

    let r = try Self.run("transfer:immediate", t)
    // The handler: promotion only (no request, an empty feed), NewData.
    #expect(r.fetches.count == 1 && r.fetches[0].result == .newData)
    #expect(r.fetches[0].start == 1000 && abs(r.fetches[0].end - 1000.26) < 1e-9)
    #expect(abs(r.fetches[0].energyJ - (Self.promotionJ + Self.tailJ)) < 1e-9)
    // The transfer starts at 1000.26 inside the handler's connected state:
    // β for its 36.92 s plus the throughput term; the tail is the handler's.
    let transferJ = 1.2 * Self.lteDownS + Self.lteThroughputW * Self.lteDownS
    #expect(abs(transferJ - 69.253292) < 1e-6)
    #expect(abs(r.summary.transferEnergyJ - transferJ) < 1e-9, "\(r.summary.transferEnergyJ)")
    #expect(r.summary.transferCellularBytes == Self.item && r.summary.transferWifiBytes == 0)
    #expect(r.summary.transfersCompleted == 1 && r.summary.transferChunks == 1)
    // Handler and transfer together: the isolated-transfer formula of ``RadioProfile``.
    let isolated = Self.promotionJ + (1.2 + Self.lteThroughputW) * Self.lteDownS + Self.tailJ
    #expect(abs(r.summary.energyJ - isolated) < 1e-9)
    // Published at 100 s, on the device at 1000.26 + 36.92 s.
    #expect(r.summary.delivered == 1)
    #expect(abs(r.summary.deliveryDelaySumS - (900.26 + Self.lteDownS)) < 1e-6)
    #expect(abs(r.summary.meanDeliveryDelayS - 937.183077) < 1e-6)
  }

  @Test("a discretionary transfer waits for WiFi and charging until its deadline, then goes on any network")
  func discretionaryWaits() throws {
    // LTE until 5000 s, WiFi from 5000 s, plugged in at 8000 s.
    let rows: [(Double, EventKind, NetworkKind?)] = [(0, .network, .lte), (5000, .network, .wifi), (8000, .chargeStart, nil)]
    let t = Self.trace(rows)
    // Deadline a day: on WiFi alone (5000 s) it still waits; at 8000 s it
    // goes: WiFi promotion 0.0791 s, then 60 MB at 20 Mbps (24 s).
    let d = try Self.run("transfer:discretionary,deadline=1d", t)
    #expect(d.summary.transferCellularBytes == 0 && d.summary.transferWifiBytes == Self.item)
    #expect(abs(d.summary.deliveryDelaySumS - (8000 + 0.0791 + 24 - 100)) < 1e-6, "\(d.summary.deliveryDelaySumS)")
    // Deadline 1 h after the hand-over (the handler's end, 1000.26 s): at
    // 4600.26 s it goes on LTE, from idle (promotion, β, throughput, tail).
    let h = try Self.run("transfer:discretionary,deadline=1h", t)
    #expect(h.summary.transferCellularBytes == Self.item && h.summary.transferWifiBytes == 0)
    #expect(abs(h.summary.deliveryDelaySumS - (4600.26 + 0.26 + Self.lteDownS - 100)) < 1e-6)
    let fromIdle = Self.promotionJ + (1.2 + Self.lteThroughputW) * Self.lteDownS + Self.tailJ
    #expect(abs(h.summary.transferEnergyJ - fromIdle) < 1e-9)
    // Immediate goes at once on LTE.
    let i = try Self.run("transfer:immediate", t)
    #expect(i.summary.transferCellularBytes == Self.item)
    #expect(abs(i.summary.deliveryDelaySumS - 937.183077) < 1e-6)
  }

  @Test("a newer item supersedes a waiting one and keeps its deadline (frequent updates cannot postpone it for ever)")
  func supersedingKeepsTheDeadline() throws {
    var t = Self.trace([(0, .network, .lte)])
    t.events.append(TraceEvent(time: 2000, kind: .update, app: 0, value: Self.item))
    t.events.sort { $0.time < $1.time }
    // Hand-overs at 1000.26 s and 2900.26 s (each push batched 900 s); the
    // second inherits the first's deadline, 4600.26 s, and brings both.
    let r = try Self.run("transfer:discretionary,deadline=1h", t)
    let arrival = 4600.26 + 0.26 + Self.lteDownS
    #expect(r.summary.delivered == 2 && r.summary.transfersQueued == 2 && r.summary.transfersCompleted == 1)
    #expect(abs(r.summary.deliveryDelaySumS - ((arrival - 100) + (arrival - 2000))) < 1e-6, "\(r.summary.deliveryDelaySumS)")
    #expect(r.summary.transferCellularBytes == Self.item)
  }

  @Test("unplugged mid-transfer, a discretionary transfer pauses and resumes from its bytes at the next plug-in")
  func discretionaryPausesOnUnplug() throws {
    let rows: [(Double, EventKind, NetworkKind?)] = [
      (0, .network, .wifi), (8000, .chargeStart, nil), (8010, .chargeEnd, nil), (9000, .chargeStart, nil),
    ]
    let r = try Self.run("transfer:discretionary,deadline=1d", Self.trace(rows))
    // 8000.0791...8010 at 20 Mbps, then the rest from 9000 s (promotion again).
    let first = (8010 - 8000.0791) * 20e6 / 8
    let rest = Self.item - first
    #expect(r.summary.transferChunks == 2 && r.summary.transferWifiBytes == Self.item)
    #expect(abs(r.summary.deliveryDelaySumS - (9000 + 0.0791 + rest * 8 / 20e6 - 100)) < 1e-6)
  }

  @Test("a transfer cut by a network loss resumes later without downloading again what it has (bytes and energy by hand)")
  func resumesAfterNetworkLoss() throws {
    // Offline from 1020 s to 2000 s, in the middle of the transfer.
    let rows: [(Double, EventKind, NetworkKind?)] = [(0, .network, .lte), (1020, .network, .offline), (2000, .network, .lte)]
    let r = try Self.run("transfer:immediate", Self.trace(rows))
    // Chunk 1: 1000.26 → 1020 s, 19.74 s down inside the handler's connected state.
    let d1 = 1020 - 1000.26
    let b1 = d1 * 13e6 / 8
    let e1 = 1.2 * d1 + Self.lteThroughputW * d1
    // Chunk 2 at 2000 s, the radio idle again: a range request for the rest.
    let d2 = (Self.item - b1) * 8 / 13e6
    let e2 = Self.promotionJ + 1.2 * d2 + Self.tailJ + Self.lteThroughputW * d2
    #expect(r.summary.transferChunks == 2 && r.summary.transfersCompleted == 1)
    // Every byte once: the bytes of both chunks are exactly the item.
    #expect(abs(r.summary.transferCellularBytes - Self.item) < 1e-6, "\(r.summary.transferCellularBytes)")
    #expect(abs(r.summary.transferEnergyJ - (e1 + e2)) < 1e-9, "\(r.summary.transferEnergyJ) vs \(e1 + e2)")
    #expect(abs(r.summary.deliveryDelaySumS - (2000.26 + d2 - 100)) < 1e-6)
    // More than one uninterrupted transfer (one promotion and tail more),
    // less than downloading the item twice.
    let whole = 1.2 * Self.lteDownS + Self.lteThroughputW * Self.lteDownS
    #expect(r.summary.transferEnergyJ > whole && r.summary.transferEnergyJ < 2 * whole)
  }

  @Test("an item below min_bytes is the handler's: transfer replays exactly as silent-push")
  func smallItemsStayInTheHandler() throws {
    var w = Self.world
    w.fetch.requestBytes = 500
    w.device.cpuWakeEnergyJ = 0.3
    let t = TestTraces.user(seed: 7, days: 3, opensPerHour: 1, networkChangesPerDay: 6)
    let user = PreparedUser(trace: t, world: w)
    let content = ContentTimeline(updates: stride(from: t.start + 500, to: t.end, by: 3 * 3600).map { $0 }, world: w)
    let push = try PolicySpec(parsing: "silent-push").replay(user: user, app: 0, content: content, seed: 1, recordEvents: true)
    let xfer = try PolicySpec(parsing: "transfer:immediate").replay(user: user, app: 0, content: content, seed: 1, recordEvents: true)
    #expect(push.fetches.count > 5)
    #expect(push.fetches == xfer.fetches && push.opens == xfer.opens)
    #expect(push.summary == xfer.summary)
  }

  @Test("the fetch trigger: an hourly background fetch discovers the 60 MB item on LTE and hands it over; handler-only periodic:1h fails every hour")
  func periodicFetchHandsOver() throws {
    let t = Self.trace([(0, .network, .lte)])
    // The timer's first fetch is one interval after the window start: 3600 s.
    // Each hourly fetch from an idle radio: promotion, then 29.74 s of the
    // item before the 30 s budget cuts it; the next starts again from zero.
    let handlerOnly = try Self.run("periodic:1h", t)
    let hourly = handlerOnly.fetches.count
    #expect(hourly >= 23 && handlerOnly.fetches[0].start == 3600)
    #expect(handlerOnly.fetches.allSatisfy { $0.failure == "budget" })
    #expect(handlerOnly.summary.delivered == 0 && handlerOnly.summary.transfersQueued == 0)
    #expect(abs(handlerOnly.summary.cellularBytes - Double(hourly) * 29.74 * 13e6 / 8) < 1e-3)
    let failedJ = Self.promotionJ + (1.2 + Self.lteThroughputW) * 29.74 + Self.tailJ
    #expect(abs(handlerOnly.summary.energyJ - Double(hourly) * failedJ) < 1e-6, "\(handlerOnly.summary.energyJ)")

    let r = try Self.run("transfer:immediate,fetch=1h", t)
    // Same timer; the fetch at 3600 s gets the feed (promotion only) and
    // reports NewData, every later one NoData (the app has the item).
    #expect(r.fetches.count == hourly && r.fetches.map(\.start) == handlerOnly.fetches.map(\.start))
    #expect(r.fetches[0].result == .newData && abs(r.fetches[0].end - 3600.26) < 1e-9)
    #expect(r.fetches.dropFirst().allSatisfy { $0.result == .noData && $0.failure.isEmpty })
    #expect(r.summary.transfersQueued == 1 && r.summary.transfersCompleted == 1 && r.summary.transferChunks == 1)
    // The transfer rides the handler's connected state from 3600.26 s:
    // β and throughput for 36.92 s, as for the push trigger.
    #expect(abs(r.summary.transferEnergyJ - 69.253292) < 1e-6, "\(r.summary.transferEnergyJ)")
    #expect(r.summary.transferCellularBytes == Self.item)
    // Handler, transfer and the other fetches (promotion and tail each).
    let isolated = Self.promotionJ + (1.2 + Self.lteThroughputW) * Self.lteDownS + Self.tailJ
    let emptyJ = Self.promotionJ + Self.tailJ
    #expect(abs(r.summary.energyJ - (isolated + Double(hourly - 1) * emptyJ)) < 1e-6, "\(r.summary.energyJ)")
    // Published at 100 s, on the device at 3600.26 + 36.92 s.
    #expect(r.summary.delivered == 1)
    #expect(abs(r.summary.deliveryDelaySumS - (3500.26 + Self.lteDownS)) < 1e-6, "\(r.summary.deliveryDelaySumS)")
    // Discretionary, on LTE and unplugged: waits its 2 h deadline from the
    // hand-over, 10800.26 s, the end of the hourly fetch at 10800 s. It
    // starts in that fetch's connected state (no promotion of its own).
    let d = try Self.run("transfer:discretionary,deadline=2h,fetch=1h", t)
    #expect(abs(d.summary.deliveryDelaySumS - (3600.26 + 7200 + Self.lteDownS - 100)) < 1e-6, "\(d.summary.deliveryDelaySumS)")
    #expect(abs(d.summary.transferEnergyJ - 69.253292) < 1e-6, "\(d.summary.transferEnergyJ)")
    // The fetch at 7200 s finds the item already queued: NoData, the feed alone.
    #expect(d.fetches.map(\.result).prefix(3) == [.newData, .noData, .noData] && d.summary.transfersQueued == 1)
  }

  @Test("with the fetch trigger, an item below min_bytes is the handler's: transfer replays exactly as periodic", arguments: ["1h", "20m"])
  func smallItemsReplayAsPeriodic(interval: String) throws {
    var w = Self.world
    w.fetch.requestBytes = 500
    w.device.cpuWakeEnergyJ = 0.3
    let t = TestTraces.user(seed: 9, days: 3, opensPerHour: 1, networkChangesPerDay: 6)
    let user = PreparedUser(trace: t, world: w)
    let content = ContentTimeline(updates: stride(from: t.start + 500, to: t.end, by: 2 * 3600).map { $0 }, world: w)
    let timer = try PolicySpec(parsing: "periodic:" + interval).replay(user: user, app: 0, content: content, seed: 1, recordEvents: true)
    for mode in ["immediate", "discretionary,deadline=1d"] {
      let xfer = try PolicySpec(parsing: "transfer:\(mode),fetch=" + interval).replay(
        user: user, app: 0, content: content, seed: 1, recordEvents: true)
      #expect(timer.fetches.count > 30 && timer.summary.newData > 10)
      #expect(timer.fetches == xfer.fetches && timer.opens == xfer.opens, "\(mode)")
      #expect(timer.summary == xfer.summary, "\(mode)")
    }
    // The same trace with every item large: the queue takes them all.
    let big = ContentTimeline(
      updates: content.updates, world: w, itemBytes: [Double](repeating: 5e6, count: content.updates.count))
    let q = try PolicySpec(parsing: "transfer:immediate,fetch=" + interval).replay(user: user, app: 0, content: big, seed: 1, recordEvents: true)
    #expect(q.summary.transfersQueued > 10 && q.summary.transfersQueued == q.summary.newData)
  }

  @Test("gates hold on random traces: discretionary transfers before their deadline never use cellular; handler fetches stay within 30 s; bytes never exceed the items")
  func gatesHoldOnRandomTraces() throws {
    var w = Self.world
    w.fetch.requestBytes = 0
    for seed in UInt64(1)...12 {
      var t = TestTraces.user(seed: seed, days: 4, opensPerHour: 0.5, networkChangesPerDay: 10)
      let a = t.appIndex("pod")
      var rng = SplitMix64(seed: seed, keys: "gates")
      var extra: [TraceEvent] = []
      var x = t.start
      while true {
        x += rng.exponential(rate: 4 / 86_400)
        guard x < t.end else { break }
        extra.append(TraceEvent(time: x, kind: .update, app: a, value: (20e6 * (1 + rng.uniform())).rounded()))
      }
      var y = t.start
      var on = false
      while true {
        y += rng.exponential(rate: 3 / 86_400)
        guard y < t.end else { break }
        on.toggle()
        extra.append(TraceEvent(time: y, kind: on ? .chargeStart : .chargeEnd))
      }
      t.events = (t.events + extra).sorted { $0.time < $1.time }
      let items = extra.filter { $0.kind == .update }.map(\.value)
      let user = PreparedUser(trace: t, world: w)
      let content = ContentTimeline(trace: t, app: a, world: w, seed: 1)
      for spec in ["transfer:discretionary,deadline=30d", "transfer:immediate", "transfer:discretionary,deadline=2h"] {
        let r = try PolicySpec(parsing: spec).replay(user: user, app: a, content: content, seed: 1, recordEvents: true)
        let s = r.summary
        if spec.hasSuffix("30d") { #expect(s.transferCellularBytes == 0, "seed \(seed): \(spec)") }
        #expect(r.fetches.allSatisfy { $0.end - $0.start <= w.fetch.fetchBudgetS + 1e-6 })
        #expect(s.transferCellularBytes + s.transferWifiBytes <= items.reduce(0, +) + 1e-3, "seed \(seed): \(spec)")
        #expect(s.transfersCompleted <= s.transfersQueued && s.delivered <= s.updates)
      }
    }
  }

  @Test("the policy strings parse, print back and refuse bad input")
  func parsing() throws {
    #expect(try PolicySpec(parsing: "transfer:discretionary,deadline=24h").description == "transfer:discretionary,deadline=1d")
    #expect(try PolicySpec(parsing: "transfer:immediate").description == "transfer:immediate")
    #expect(try PolicySpec(parsing: "transfer:immediate,min_bytes=5000").description == "transfer:immediate,min_bytes=5000")
    #expect(try PolicySpec(parsing: "transfer:immediate,min_bytes=5000,fetch=60m").description == "transfer:immediate,fetch=1h,min_bytes=5000")
    #expect(try PolicySpec(parsing: "transfer:discretionary,fetch=30m,deadline=6h").description == "transfer:discretionary,deadline=6h,fetch=30m")
    #expect(try PolicySpec(parsing: "transfer:immediate,fetch=2h").expectedFetchesPerDay == 12)
    #expect(try PolicySpec(parsing: "transfer:immediate,fetch=2h").fetchSpacingBound == 900)
    #expect(try PolicySpec(parsing: "transfer:immediate").fetchSpacingBound == nil)
    for bad in [
      "transfer", "transfer:later", "transfer:immediate,deadline=2h", "transfer:discretionary,deadline=-1h",
      "transfer:immediate,fetch=0", "transfer:immediate,fetch=0.5s", "transfer:immediate,fetch=1h,fetch=2h", "transfer:immediate,fetch=soon",
    ] {
      #expect(throws: PolicySpecError.self, "\(bad)") { try PolicySpec(parsing: bad) }
    }
  }
}

extension TransferQueueTests {
  @Test("fetch and transfer charges telescope on one device radio: their sum is E(all activity) − E(user activity)", arguments: ["transfer:immediate", "transfer:discretionary,deadline=3h"])
  func chargesTelescope(spec: String) throws {
    var w = ReplayEnergyTests.workedExampleWorld(.lte)
    w.replay.foregroundRefresh = false
    w.device.cpuWakeEnergyJ = 0
    w.device.cpuActivePowerW = 0
    // Throughput terms are outside E; set them to 0 to compare radio energy alone.
    w.radios.lte.downlinkWPerMbps = 0
    w.radios.lte.uplinkWPerMbps = 0
    w.radios.wifi.downlinkWPerMbps = 0
    w.radios.wifi.uplinkWPerMbps = 0
    var t = TestTraces.user(seed: 5, days: 2, opensPerHour: 2, sessionS: 20)
    // LTE, with four offline hours-long gaps (one interface: every chunk on LTE).
    var extra: [TraceEvent] = []
    for x: Double in [3600, 20_000, 50_000, 90_000] {
      extra.append(TraceEvent(time: t.start + x, kind: .network, value: Double(NetworkKind.offline.rawValue)))
      extra.append(TraceEvent(time: t.start + x + 900, kind: .network, value: Double(NetworkKind.lte.rawValue)))
    }
    t.events = (t.events + extra).sorted { $0.time < $1.time }
    let user = PreparedUser(trace: t, world: w)
    let apps: [Int32] = [0, 1]
    var contents: [ContentTimeline] = []
    for a in apps {
      let times: [Double] = Array(stride(from: t.start + 1000 + Double(a) * 400, to: t.end, by: 5 * 3600))
      contents.append(ContentTimeline(updates: times, world: w, itemBytes: [Double](repeating: 2e9, count: times.count)))
    }
    let r: DeviceReplay = try PolicySpec(parsing: spec).replay(
      user: user, apps: apps, contents: contents, scope: .device, seed: 1, recordEvents: true)
    let chunks: [TransferChunkRecord] = r.apps.flatMap { $0.transferChunks }
    #expect(chunks.count > 5, "\(spec)")
    #expect(chunks.contains { !$0.completes }, "\(spec): some chunk cut by a network loss")
    let fetches: [FetchRecord] = r.apps.flatMap { $0.fetches }
    var intervals: [BusyInterval] = fetches.map { BusyInterval(start: $0.start, end: $0.end) }
    intervals += chunks.map { BusyInterval(start: $0.start, end: $0.end) }
    let bg: [BusyInterval] = user.backgroundBusy(cellular: true)
    let all: [BusyInterval] = (bg + intervals).sorted { $0.start < $1.start }
    let direct = w.radios.lte.energy(ofSorted: all) - w.radios.lte.energy(ofSorted: bg)
    #expect(abs(r.summary.energyJ - direct) < 1e-6 * max(1, direct), "\(spec): charges \(r.summary.energyJ) vs device \(direct)")
  }
}
