import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld
import Foundation
import Testing

@testable import FetchSimulation

/// Device-level replay: one radio per interface shared by every
/// app of the device, a worked example, both accountings, the
/// per-radio look-around window, the wait at opens.
@Suite("Device replay")
struct DeviceReplayTests {
  /// An independent specification: LTE promotion 0.26 s at 1.21 W,
  /// 100 kB at 5 Mbps at 1.288 + 0.05197·5 W, tail 11.576 s at 1.06 W, 1 J
  /// CPU per fetch, no sharing with user activity, instantaneous transfers.
  static var specWorld: WorldParameters {
    var w = ReplayEnergyTests.workedExampleWorld(.lte)
    w.radios.lte.connectedPowerW = 1.288
    w.radios.lte.tail[0].durationS = 11.576
    w.device.cpuWakeEnergyJ = 1
    w.replay.shareUserRadio = false
    w.replay.instantTransfers = true
    w.replay.scope = .app
    w.replay.alignedTimers = true
    return w
  }

  static let isolatedJ = 0.26 * 1.21 + 0.16 * (1.288 + 0.05197 * 5) + 11.576 * 1.06 + 1

  static var workedTrace: UserTrace {
    var t = UserTrace(user: "x", timeZone: .utc, start: 0, end: 86_400)
    let a = t.appIndex("a")
    var e = [100.0, 200, 5000, 6000].map { TraceEvent(time: $0, kind: .update, app: a) }
    e += [150.0, 250, 3700, 5100, 7300].map { TraceEvent(time: $0, kind: .open, app: a) }
    e.sort { $0.time < $1.time }
    t.events = e
    return t
  }

  static func run(_ spec: String, _ w: WorldParameters, _ t: UserTrace = workedTrace) throws -> AppReplay {
    let user = PreparedUser(trace: t, world: w)
    let content = ContentTimeline(trace: t, app: 0, world: w, seed: 1)
    return try PolicySpec(parsing: spec).replay(user: user, app: 0, content: content, seed: 1, recordEvents: true)
  }

  @Test("the worked example comes out exactly (foreground refresh on and off)")
  func workedExample() throws {
    var w = Self.specWorld
    #expect(abs(Self.isolatedJ - 13.832816) < 1e-12)
    let p = try Self.run("periodic:1h,phase=0", w)
    #expect(p.opens.map(\.ageS) == [50, 50, 0, 100, 0])
    #expect(p.opens.map(\.aoiS) == [150, 150, 3500, 4900, 1300])
    #expect(p.fetches.count == 24)
    for f in p.fetches { #expect(abs(f.energyJ - 13.832816) < 1e-9) }
    #expect(abs(p.summary.energyJ - 24 * 13.832816) < 1e-8)
    let n = try Self.run("never", w)
    #expect(n.opens.map(\.ageS) == [50, 50, 0, 100, 1300])
    #expect(n.opens.map(\.aoiS) == [150, 150, 3500, 4900, 2300])
    #expect(n.fetches.isEmpty && n.summary.energyJ == 0)
    w.replay.foregroundRefresh = false
    #expect(try Self.run("periodic:1h,phase=0", w).opens.map(\.ageS) == [50, 150, 0, 100, 0])
    #expect(try Self.run("never", w).opens.map(\.ageS) == [50, 150, 3600, 5000, 7200])
    // The default phase is one interval: the first fetch an hour in.
    #expect(try Self.run("periodic:1h", w).fetches.first?.start == 3600)
  }

  /// Per-flow accounting (TailEnder-style): each fetch pays its whole
  /// transfer plus the tail it extends; one at or after the tail's end pays
  /// from idle. An independent check of the worked example's figures.
  static func perFlowJ(_ starts: [Double]) -> Double {
    let xfer = 0.16 * (1.288 + 0.05197 * 5), tailW = 1.06, tailS = 11.576
    var busyEnd = -Double.infinity, total = 0.0
    for s in starts {
      if s >= busyEnd + tailS {
        total += isolatedJ
        busyEnd = s + 0.42
      } else {
        let end = max(busyEnd, s + 0.16)
        total += xfer + (end - busyEnd) * tailW + 1
        busyEnd = end
      }
    }
    return total
  }

  @Test(
    "marginal vs per-flow accounting on one radio",
    arguments: [
      ([0.0, 5, 5.1, 100], 35.291344, 34.938464),
      ([0.0, 0.1, 11.9, 23.7], 42.499344, 42.123664),
    ])
  func accountings(starts: [Double], perFlow: Double, marginal: Double) {
    #expect(abs(Self.perFlowJ(starts) - perFlow) < 1e-9)
    let w = Self.specWorld
    var p = ScriptedPolicy(times: starts)
    let t = UserTrace(user: "x", start: 0, end: 1000, apps: ["a"], events: [])
    let r = replay(&p, user: PreparedUser(trace: t, world: w), app: 0, content: ContentTimeline(updates: [], world: w))
    #expect(r.fetches.map(\.start) == starts)
    let total = r.fetches.map(\.energyJ).reduce(0, +)
    #expect(abs(total - marginal) < 1e-9, "marginal total \(total)")
  }

  /// Two fetches `gap` seconds apart (end of the first to start of the
  /// second) on `net`: the second's charge must equal E(both) − E(first)
  /// computed over the whole set, for every radio and gap in its tail.
  @Test(
    "a fetch in the late tail is charged from the tail, for every radio",
    arguments: [
      (NetworkKind.lte, nil as Double?), (.umts3g, nil), (.nr5g, nil), (.wifi, nil), (.nr5g, 20.0), (.lte, 20.0),
    ])
  func lateTail(net: NetworkKind, sweptTail: Double?) throws {
    var w = ReplayEnergyTests.workedExampleWorld(net)
    if let s = sweptTail {
      let name = net == .nr5g ? "radio.5g_nsa_low_band.tail_s" : "radio.lte.tail_s"
      #expect(w.set(name, to: .number(s)) == nil)
    }
    let radio = w.radios.radio(for: net)!
    let t = UserTrace(user: "x", start: 0, end: 10_000, apps: ["a"], events: [])
    let first = ReplayEnergyTests.fetchEnergies(w, at: [100], trace: t)
    #expect(first.count == 1)
    var p0 = ScriptedPolicy(times: [100])
    let r0 = replay(&p0, user: PreparedUser(trace: t, world: w), app: 0, content: ContentTimeline(updates: [], world: w))
    let end0 = r0.fetches[0].end
    // Half-way, near the end, and 15 s (the review's 3G case: in FACH, beyond LTE's tail).
    let gaps = [0.5 * radio.tailDurationS, 0.95 * radio.tailDurationS] + (radio.tailDurationS > 15 ? [15] : [])
    for gap in gaps {
      let s = end0 + gap
      var p = ScriptedPolicy(times: [100, s])
      let r = replay(&p, user: PreparedUser(trace: t, world: w), app: 0, content: ContentTimeline(updates: [], world: w))
      #expect(r.fetches.count == 2)
      let ivs = r.fetches.map { BusyInterval(start: $0.start, end: $0.end) }
      let x = radio.transferTime(downBytes: 100_000, upBytes: 0)
      let expected = radio.energy(ofSorted: ivs) - radio.energy(ofSorted: [ivs[0]]) + radio.throughputEnergy(downS: x.down, upS: 0)
      #expect(abs(r.fetches[1].energyJ - expected) < 1e-9, "\(net) tail \(radio.tailDurationS) after \(gap) s: \(r.fetches[1].energyJ) vs \(expected)")
      #expect(r.fetches[1].energyJ < first[0] - 1e-6, "\(net): a fetch in the tail costs less than one from idle")
    }
  }

  @Test("two apps on one device with aligned timers share the promotion and the tail; app scope charges each in full")
  func tailSharedAcrossApps() {
    var w = ReplayEnergyTests.workedExampleWorld(.lte)
    w.device.cpuWakeEnergyJ = 1
    w.replay.alignedTimers = true
    let t = UserTrace(user: "x", start: 0, end: 4 * 3600, apps: ["a", "b"], events: [])
    let user = PreparedUser(trace: t, world: w)
    let contents = [ContentTimeline(updates: [], world: w), ContentTimeline(updates: [], world: w)]
    let device = PolicySpec.periodic(interval: 3600).replay(
      user: user, apps: [0, 1], contents: contents, scope: .device, seed: 1, recordEvents: true)
    let apps = PolicySpec.periodic(interval: 3600).replay(
      user: user, apps: [0, 1], contents: contents, scope: .app, seed: 1, recordEvents: true)
    let alone = w.radios.lte.isolatedTransferEnergy(downBytes: 100_000) + 1
    let second = 0.16 * 0.05197 * 5 + 1  // throughput inside the first's busy time, and the CPU wake
    #expect(device.apps[0].fetches.count == 3 && device.apps[1].fetches.count == 3)
    for f in device.apps[0].fetches { #expect(abs(f.energyJ - alone) < 1e-9) }
    for f in device.apps[1].fetches { #expect(abs(f.energyJ - second) < 1e-9) }
    #expect(abs(device.summary.energyJ - 3 * (alone + second)) < 1e-9)
    #expect(abs(apps.summary.energyJ - 6 * alone) < 1e-9)
    // Contents are independent: the same staleness either way.
    #expect(device.apps.map(\.summary.fetches) == apps.apps.map(\.summary.fetches))
  }

  @Test("independent apps' timers start at their own seeded phases: stable across policies and settings, new with the seed")
  func seededPhases() throws {
    var w = ReplayEnergyTests.workedExampleWorld(.lte)
    w.device.cpuWakeEnergyJ = 1
    let t = UserTrace(user: "x", start: 0, end: 4 * 3600, apps: ["a", "b"], events: [])
    let user = PreparedUser(trace: t, world: w)
    let contents = [ContentTimeline(updates: [], world: w), ContentTimeline(updates: [], world: w)]
    func firstStarts(_ spec: String, seed: UInt64) throws -> [Double] {
      try PolicySpec(parsing: spec).replay(user: user, apps: [0, 1], contents: contents, scope: .device, seed: seed, recordEvents: true)
        .apps.map { $0.fetches[0].start }
    }
    // The phase is a fraction of the interval, the same for every timer family.
    let hourly = try firstStarts("periodic:1h", seed: 1)
    let half = try firstStarts("periodic:30m", seed: 1)
    let tail = try firstStarts("tailender:1h,deadline_frac=0", seed: 1)
    #expect(hourly[0] != hourly[1])
    for i in 0..<2 {
      #expect(hourly[i] > 0 && hourly[i] <= 3600)
      #expect(abs(half[i] - hourly[i] / 2) < 1e-9)
      #expect(abs(tail[i] - hourly[i]) < 1e-9)
    }
    #expect(try firstStarts("periodic:1h", seed: 2) != hourly)
    // Apart by more than a tail, each pays in full: no free batching.
    let d = try PolicySpec(parsing: "periodic:1h").replay(
      user: user, apps: [0, 1], contents: contents, scope: .device, seed: 1, recordEvents: true)
    let alone = w.radios.lte.isolatedTransferEnergy(downBytes: 100_000) + 1
    if abs(hourly[0] - hourly[1]) > 20 {
      #expect(abs(d.summary.energyJ - Double(d.summary.fetches) * alone) < 1e-6)
    }
    var aligned = w
    aligned.replay.alignedTimers = true
    let a = try PolicySpec(parsing: "periodic:1h").replay(
      user: PreparedUser(trace: t, world: aligned), apps: [0, 1], contents: contents, scope: .device, seed: 1, recordEvents: true)
    #expect(a.apps.map { $0.fetches[0].start } == [3600, 3600])
    #expect(a.summary.energyJ < d.summary.energyJ)
  }

  @Test(
    "per-fetch charges sum to the device's radio energy with the fetches minus without",
    arguments: ["periodic:20m", "tailender:30m", "oracle", "periodic:7m,phase=0"])
  func chargesTelescope(spec: String) throws {
    var w = ReplayEnergyTests.workedExampleWorld(.lte)
    w.radios.lte.downlinkWPerMbps = 0
    w.radios.lte.uplinkWPerMbps = 0
    w.replay.foregroundRefresh = false
    w.content.source = .model
    let t = TestTraces.user(seed: 4, days: 2, opensPerHour: 2, sessionS: 20)
    let user = PreparedUser(trace: t, world: w)
    let apps: [Int32] = [0, 1]
    let contents = apps.map { ContentTimeline(trace: t, app: $0, world: w, seed: 3) }
    let r = try PolicySpec(parsing: spec).replay(user: user, apps: apps, contents: contents, scope: .device, seed: 1, recordEvents: true)
    let fetches = r.apps.flatMap(\.fetches).sorted { $0.start < $1.start }
    #expect(fetches.count > 10)
    let bg = user.backgroundBusy(cellular: true)
    let all = (bg + fetches.map { BusyInterval(start: $0.start, end: $0.end) }).sorted { $0.start < $1.start }
    let direct = w.radios.lte.energy(ofSorted: all) - w.radios.lte.energy(ofSorted: bg)
    #expect(abs(r.summary.energyJ - direct) < 1e-6 * max(1, direct), "\(spec): charges \(r.summary.energyJ) vs device \(direct)")
  }

  @Test("the wait: stale open on LTE from idle, fresh open, open during a tail")
  func waits() throws {
    var w = ReplayEnergyTests.workedExampleWorld(.lte)
    w.fetch.serverLatencyS = 0.3
    w.fetch.requestBytes = 1000
    w.replay.shareUserRadio = false
    var t = UserTrace(user: "x", timeZone: .utc, start: 0, end: 10_000)
    let a = t.appIndex("a")
    t.events = [
      TraceEvent(time: 100, kind: .update, app: a), TraceEvent(time: 1000, kind: .open, app: a),  // stale, idle
      TraceEvent(time: 2000, kind: .open, app: a),  // fresh
      TraceEvent(time: 2500, kind: .update, app: a), TraceEvent(time: 3000, kind: .open, app: a),  // stale, in the tail
    ]
    var p = ScriptedPolicy(times: [2994])
    let user = PreparedUser(trace: t, world: w)
    let r = replay(&p, user: user, app: 0, content: ContentTimeline(trace: t, app: 0, world: w, seed: 1))
    let up = 1000 * 8 / (w.radios.lte.uplinkMbps * 1e6)
    // A launch's TCP and TLS 1.3 handshakes: 2 LTE round trips of 70 ms.
    let setup = 2 * 0.07
    let fromIdle = 0.26 + setup + up + 0.3 + 0.16
    let inTail = setup + up + 0.3 + 0.16
    // The background fetch at 2994 brought the update at 2500: the open at 3000 is fresh.
    #expect(r.opens.map(\.fresh) == [false, true, true])
    #expect(r.waits == [fromIdle] && r.zeroWaits == 2)
    #expect(abs(r.summary.meanWaitS - fromIdle / 3) < 1e-12)
    // Without the background fetch the third open is stale; the radio is idle by then.
    var n = NeverPolicy()
    let never = replay(&n, user: user, app: 0, content: ContentTimeline(trace: t, app: 0, world: w, seed: 1))
    #expect(never.waits == [fromIdle, fromIdle] && never.zeroWaits == 1)
    // p90 (type 7) of 0, w, w is w.
    #expect(abs(never.summary.p90WaitS - fromIdle) < 1e-12 && abs(never.summary.meanWaitS - 2 * fromIdle / 3) < 1e-12)
    // A background fetch ending ~4 s before the open leaves the radio in its tail: no promotion.
    var t2 = t
    t2.events.removeAll { $0.time == 2500 }
    t2.events.append(TraceEvent(time: 2996, kind: .update, app: a))
    t2.events.sort { $0.time < $1.time }
    var q = ScriptedPolicy(times: [2995])
    let r2 = replay(&q, user: PreparedUser(trace: t2, world: w), app: 0, content: ContentTimeline(trace: t2, app: 0, world: w, seed: 1))
    #expect(r2.opens.map(\.fresh) == [false, true, false])
    // Waits in time order: from idle at 1000, in the tail at 3000.
    #expect(r2.waits.count == 2 && r2.zeroWaits == 1)
    #expect(abs(r2.waits[0] - fromIdle) < 1e-12 && abs(r2.waits[1] - inTail) < 1e-12)
    // Foreground energy from idle: the whole isolated transfer, not charged to the policy.
    let idleJ = w.radios.lte.marginalEnergyEstimate(afterQuietGap: .infinity, downBytes: 100_000, upBytes: 1000, extraConnectedS: 0.3 + setup)
    #expect(abs(never.summary.foregroundEnergyJ - 2 * idleJ) < 1e-9)
    #expect(never.summary.foregroundRefreshes == 2 && never.summary.energyJ == 0)
    #expect(never.summary.foregroundCellularBytes == 2 * 101_000)
  }

  @Test("fresh means the device holds every update: one at the open's instant leaves the open stale at age 0")
  func updateAtOpenInstantIsStale() throws {
    var t = UserTrace(user: "x", timeZone: .utc, start: 0, end: 1000)
    let a = t.appIndex("a")
    t.events = [TraceEvent(time: 500, kind: .update, app: a), TraceEvent(time: 500, kind: .open, app: a)]
    let r = try Self.run("never", Self.specWorld, t)
    #expect(r.opens.map(\.ageS) == [0])
    #expect(r.opens.map(\.fresh) == [false])
    #expect(r.summary.freshRatio == 0)
  }

  @Test("an update at an open's very instant is fetched by that open's refresh: its bytes, energy and wait are counted")
  func updateAtOpenInstant() throws {
    var t = UserTrace(user: "x", timeZone: .utc, start: 0, end: 10_000)
    let a = t.appIndex("a")
    t.events = [TraceEvent(time: 3600, kind: .update, app: a), TraceEvent(time: 3600, kind: .open, app: a, value: 10)]
    var w = Self.specWorld
    // The worked example's transfer alone, without a launch's handshakes.
    w.fetch.openHandshakeRTTs = 0
    let r = try Self.run("never", w, t)
    #expect(r.opens.map(\.ageS) == [0])
    #expect(r.summary.foregroundRefreshes == 1)
    // 100 kB at 5 Mbps after an LTE promotion, from an idle radio (no sharing with the session).
    #expect(r.summary.foregroundCellularBytes + r.summary.foregroundWifiBytes == 100_000)
    #expect(abs(r.summary.foregroundEnergyJ - (Self.isolatedJ - 1)) < 1e-9, "\(r.summary.foregroundEnergyJ)")
  }

  @Test("% battery counts only energy drawn from the battery; energy drawn while charging is reported apart")
  func batteryExcludesCharging() throws {
    var t = UserTrace(user: "x", timeZone: .utc, start: 0, end: 86_400)
    _ = t.appIndex("a")
    // On the charger for the first 6 hours.
    t.events = [TraceEvent(time: 0, kind: .chargeStart), TraceEvent(time: 6 * 3600, kind: .chargeEnd)]
    let w = Self.specWorld
    let r = try Self.run("periodic:1h,phase=aligned", w, t)
    // Fetches at 1 h ... 24 h; those before 6 h (1 h ... 5 h) ran on the charger.
    let charging = r.fetches.filter { $0.start < 6 * 3600 }.map(\.energyJ).reduce(0, +)
    #expect(r.fetches.count == 23 && charging > 0, "\(r.fetches.map(\.start))")
    #expect(abs(r.summary.chargingEnergyJ - charging) < 1e-9)
    let capacity = w.device.batteryCapacityJ
    #expect(abs(r.summary.batteryPctPerDay(capacityJ: capacity) - (r.summary.energyJ - charging) / capacity * 100) < 1e-12)
    #expect(abs(r.summary.chargingEnergyJPerDay - charging) < 1e-9)
  }

  @Test("an app without opens has undefined (NaN) staleness, not 0 s and 0 % fresh")
  func zeroOpens() throws {
    var t = UserTrace(user: "x", timeZone: .utc, start: 0, end: 10_000)
    let a = t.appIndex("a")
    t.events = [TraceEvent(time: 500, kind: .update, app: a)]
    let r = try Self.run("periodic:1h", Self.specWorld, t)
    #expect(r.summary.opens == 0 && r.summary.fetches == 2)
    for x in [r.summary.meanAgeS, r.summary.p50AgeS, r.summary.p90AgeS, r.summary.p99AgeS, r.summary.freshRatio, r.summary.meanAoiS] {
      #expect(x.isNaN)
    }
    #expect(r.summary.timeAvgAgeS > 0 && r.summary.energyJ > 0)
  }

  @Test("periodic phase: parsed, canonical, bounded")
  func periodicPhase() throws {
    #expect(try PolicySpec(parsing: "periodic:1h,phase=0").description == "periodic:1h,phase=0s")
    #expect(try PolicySpec(parsing: "periodic:1h,phase=15m") == .periodic(interval: 3600, phase: 900))
    #expect(try PolicySpec(parsing: "periodic:1h,phase=1h") == .periodic(interval: 3600, phase: 3600))
    #expect(try PolicySpec(parsing: "periodic:1h,phase=aligned") == .periodic(interval: 3600, phase: 3600))
    #expect(try PolicySpec(parsing: "periodic:1h,phase=1h").description == "periodic:1h,phase=aligned")
    #expect(try PolicySpec(parsing: "periodic:1h") != .periodic(interval: 3600, phase: 3600))
    let round = try PolicySpec(parsing: "periodic:30m,phase=10m")
    #expect(try PolicySpec(parsing: round.description) == round)
    for bad in ["periodic:1h,phase=2h", "periodic:1h,phase=-1", "periodic:1h,foo=1", "periodic:1h,phase"] {
      #expect(throws: PolicySpecError.self, "\(bad)") { try PolicySpec(parsing: bad) }
    }
  }
}
