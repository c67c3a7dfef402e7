import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld
import Testing

@testable import FetchSimulation

/// Background wakes: location wakes, fetch on exit, BGTaskScheduler and
/// Android prefetch jobs, from their documented semantics
/// (docs/background-wakes.md), with worked examples by hand.
@Suite("Background wakes")
struct BackgroundWakeTests {
  static let t0 = 1_700_000_000.0

  /// A one-day trace of app "a" (index 0) with `rows` (times relative to t0).
  static func trace(_ rows: [TraceEvent], days: Double = 1) -> UserTrace {
    var t = UserTrace(user: "u", timeZone: .utc, start: t0, end: t0 + days * 86_400)
    _ = t.appIndex("a")
    _ = t.appIndex("b")
    t.regions = ["home", "work"]
    t.events = [TraceEvent(time: t0, kind: .network, value: Double(NetworkKind.wifi.rawValue))]
      + rows.map { var e = $0; e.time += t0; return e }
    t._checkInvariants()
    return t
  }

  static func net(_ t: Double, _ n: NetworkKind) -> TraceEvent { TraceEvent(time: t, kind: .network, value: Double(n.rawValue)) }
  static func loc(_ t: Double, _ c: LocationChange) -> TraceEvent { TraceEvent(time: t, kind: .location, value: c.code) }
  static func open(_ t: Double, app: Int32 = 0, session: Double) -> TraceEvent { TraceEvent(time: t, kind: .open, app: app, value: session) }
  static func wake(_ t: Double, _ d: Double) -> TraceEvent { TraceEvent(time: t, kind: .wake, value: d) }

  /// WiFi with no promotion, request or no-data bytes: a fetch takes the
  /// server latency plus 1000 B of response, for hand-computed times.
  static func world(latency: Double = 0) -> WorldParameters {
    var w = TestTraces.instantWorld
    w.fetch.serverLatencyS = latency
    w.replay.foregroundRefresh = false
    w.fetch.failureProbability = 0
    return w
  }

  /// Replays app 0 of `trace` with `policy`; updates every 10 min so that fetches bring new data.
  static func run<P: FetchPolicy>(_ policy: inout P, _ trace: UserTrace, world: WorldParameters) -> AppReplay {
    let user = PreparedUser(trace: trace, world: world)
    let updates = stride(from: trace.start + 1, to: trace.end, by: 600).map { $0 }
    let content = ContentTimeline(updates: updates, world: world)
    return replay(&policy, user: user, app: 0, content: content, options: ReplayOptions(seed: 1, policyKey: "test"))
  }

  // MARK: existing policies

  @Test("policies that do not register for location wakes replay identically with and without location rows")
  func othersIgnoreLocation() throws {
    var p = SyntheticPopulation.Parameters()
    let with = SyntheticPopulation(seed: 11, days: 4).user(2)
    p.locationWakes = false
    let without = SyntheticPopulation(seed: 11, days: 4, parameters: p).user(2)
    #expect(with.events.count > without.events.count)
    let world = WorldParameters()
    for spec in ["periodic:1h", "tailender:30m", "silent-push", "android-standby", "android-workmanager:15m", "imp"] {
      let s = try PolicySpec(parsing: spec)
      let r = [with, without].map { t in
        let user = PreparedUser(trace: t, world: world)
        let apps: [Int32] = [0, 1]
        let contents = apps.map { a in
          ContentTimeline(updates: t.events.filter { $0.kind == .update && $0.app == a }.map(\.time), world: world)
        }
        return s.replay(user: user, apps: apps, contents: contents, scope: .device, seed: 1, recordEvents: true)
      }
      #expect(r[0].apps.map(\.fetches) == r[1].apps.map(\.fetches), "\(spec)")
      #expect(r[0].apps.map(\.summary) == r[1].apps.map(\.summary), "\(spec)")
    }
  }

  // MARK: location-wake

  @Test("location-wake: one fetch per wake inside its background time; a wake whose time ends offline does not fetch")
  func locationWake() {
    let rows = [
      Self.loc(1000, LocationChange(.enter, region: 0)),  // online: fetch at 1000
      Self.net(1900, .offline),
      Self.loc(2000, LocationChange(.exit, region: 0)),  // offline until 2015: outside its 10 s, no fetch
      Self.net(2015, .wifi),
      Self.net(2900, .offline),
      Self.loc(3000, LocationChange(.significant)),  // back online at 3005: fetch then
      Self.net(3005, .wifi),
    ]
    var p = LocationWakePolicy()
    let r = Self.run(&p, Self.trace(rows), world: Self.world())
    #expect(r.fetches.map { $0.start - Self.t0 } == [1000, 3005])
    #expect(r.fetches.allSatisfy { $0.failure.isEmpty })
    #expect(p.stats.wakes == 3 && p.stats.refreshes == 2 && p.stats.expired == 1)
  }

  @Test("location-wake: a fetch later than the wake's background time is cut at its end")
  func locationWakeCut() {
    // Latency 8 s: a fetch from the wake itself finishes at +8 s; one that
    // starts 5 s late has 5 s left and is cut there.
    let rows = [
      Self.loc(1000, LocationChange(.significant)),
      Self.net(1900, .offline),
      Self.loc(2000, LocationChange(.significant)),
      Self.net(2005, .wifi),
    ]
    var p = LocationWakePolicy()
    let r = Self.run(&p, Self.trace(rows), world: Self.world(latency: 8))
    #expect(r.fetches.count == 2)
    let a = r.fetches[0], b = r.fetches[1]
    #expect(a.start - Self.t0 == 1000 && a.failure.isEmpty && a.end - a.start > 8 && a.end - a.start < 8.01)
    #expect(b.start - Self.t0 == 2005 && b.failure == "budget" && b.end - Self.t0 == 2010)
  }

  @Test("location-wake: the battery gate, the kinds registered for, the spacing")
  func locationWakeGates() throws {
    let rows = [
      TraceEvent(time: 500, kind: .battery, value: 15),
      Self.loc(1000, LocationChange(.enter, region: 0)),  // low battery: nothing
      TraceEvent(time: 1500, kind: .chargeStart),
      Self.loc(2000, LocationChange(.exit, region: 0)),  // charging: fetch
      Self.loc(2400, LocationChange(.significant)),
      Self.loc(2500, LocationChange(.enter, region: 1)),
    ]
    var p = LocationWakePolicy()
    let r = Self.run(&p, Self.trace(rows), world: Self.world())
    #expect(r.fetches.map { $0.start - Self.t0 } == [2000, 2400, 2500])
    #expect(p.stats.droppedLowPower == 1)
    var onlyRegions = LocationWakePolicy(params: try LocationWakeFamily.parse("significant=0,spacing=10m", spec: "location-wake:significant=0,spacing=10m"))
    let r2 = Self.run(&onlyRegions, Self.trace(rows), world: Self.world())
    // 2400 is significant (not registered); 2500 is within 10 min of 2000.
    #expect(r2.fetches.map { $0.start - Self.t0 } == [2000])
    #expect(onlyRegions.stats.droppedSpacing == 1)
    #expect(LocationWakeFamily.describe(onlyRegions.params) == "location-wake:significant=0,spacing=10m")
  }

  @Test("location-wake: monitoring costs a CPU wake per wake without a fetch and its standing power over the window")
  func locationMonitoringCost() throws {
    let rows = [
      TraceEvent(time: 500, kind: .battery, value: 15),
      Self.loc(1000, LocationChange(.enter, region: 0)),  // low battery: dropped, one CPU wake
      TraceEvent(time: 1500, kind: .chargeStart),
      Self.loc(2000, LocationChange(.exit, region: 0)),  // fetch (its CPU wake is in the fetch)
      Self.loc(2400, LocationChange(.significant)),  // not registered: no wake at all
      Self.loc(2500, LocationChange(.enter, region: 1)),  // spacing: dropped, one CPU wake while charging
    ]
    var w = Self.world()
    w.device.locationMonitoringW = 0.002
    let spec = "location-wake:significant=0,spacing=10m"
    var p = LocationWakePolicy(params: try LocationWakeFamily.parse("significant=0,spacing=10m", spec: spec))
    let r = Self.run(&p, Self.trace(rows), world: w)
    #expect(r.fetches.map { $0.start - Self.t0 } == [2000])
    let s = r.summary
    // 2 mW over the day (172.8 J; 169.8 J of it after the plug at 1500 s) and two 0.7-J wakes.
    #expect(abs(s.monitoringEnergyJ - (0.002 * 86_400 + 2 * 0.7)) < 1e-9)
    #expect(abs(s.energyJ - (r.fetches[0].energyJ + s.monitoringEnergyJ)) < 1e-9)
    #expect(abs(s.chargingEnergyJ - (r.fetches[0].energyJ + 0.002 * 84_900 + 0.7)) < 1e-9)
    // With no standing power only the wakes remain; a policy that does not monitor pays nothing.
    var q = LocationWakePolicy(params: p.params)
    #expect(abs(Self.run(&q, Self.trace(rows), world: Self.world()).summary.monitoringEnergyJ - 1.4) < 1e-12)
    var never = NeverPolicy()
    #expect(Self.run(&never, Self.trace(rows), world: w).summary.energyJ == 0)
  }

  // MARK: fetch-on-exit

  @Test("fetch-on-exit ios6: at the session's end, with up to 600 s of continuous time, charged for the time used")
  func fetchOnExitIOS6() throws {
    let rows = [Self.open(100, session: 60), Self.open(5000, session: 30)]
    let w = Self.world(latency: 100)  // longer than the 30 s of a fetch launch
    var p = FetchOnExitPolicy()
    let r = Self.run(&p, Self.trace(rows), world: w)
    #expect(r.fetches.map { $0.start - Self.t0 } == [160, 5030])
    for f in r.fetches {
      #expect(f.failure.isEmpty && f.result == .newData)
      let d = f.end - f.start
      #expect(d > 100 && d < 100.01)
      // CPU for the awake time used (the wake and active power over its
      // duration) plus the radio, busy the whole time.
      #expect(f.energyJ >= w.device.cpuWakeEnergyJ + w.device.cpuActivePowerW * d + w.radios.wifi.connectedPowerW * d - 1e-9)
    }
    // Over the task's time: cut at 600 s.
    var q = FetchOnExitPolicy(params: try FetchOnExitFamily.parse("task_time=50s", spec: "fetch-on-exit:task_time=50s"))
    let r2 = Self.run(&q, Self.trace(rows), world: w)
    #expect(r2.fetches.map { $0.end - $0.start } == [50, 50])
    #expect(r2.fetches.allSatisfy { $0.failure == "budget" })
  }

  @Test("fetch-on-exit ios7: chunks at the next device wakes, under the task's total time")
  func fetchOnExitIOS7() throws {
    // Exit at 160. No exit chunk. Another app's wake of 3 s at 400 (the
    // 5-s fetch is cut at 403, 3 s used), a location wake at 500 (10 s:
    // done at 505). Nothing after.
    let rows = [
      Self.open(100, session: 60), Self.wake(400, 3), Self.loc(500, LocationChange(.significant)), Self.wake(900, 5),
    ]
    let spec = "fetch-on-exit:mode=ios7,exit_chunk=0s"
    var p = FetchOnExitPolicy(params: try FetchOnExitFamily.parse("mode=ios7,exit_chunk=0s", spec: spec))
    #expect(FetchOnExitFamily.describe(p.params) == spec)
    let r = Self.run(&p, Self.trace(rows), world: Self.world(latency: 5))
    #expect(r.fetches.map { $0.start - Self.t0 } == [400, 500])
    #expect(r.fetches[0].failure == "budget" && r.fetches[0].end - Self.t0 == 403)
    #expect(r.fetches[1].failure.isEmpty)
    // A total of 5 s: 3 s at 400, the last 2 s at 500 (cut), then nothing.
    var q = FetchOnExitPolicy(params: try FetchOnExitFamily.parse("mode=ios7,task_time=5s,exit_chunk=0s", spec: "x"))
    let r2 = Self.run(&q, Self.trace(rows), world: Self.world(latency: 5))
    #expect(r2.fetches.map { $0.end - Self.t0 } == [403, 502])
    #expect(q.exhausted == 1)
    // Another app's open is a chunk too; and the app's own next open ends the task.
    let rows3 = [Self.open(100, session: 60), Self.open(200, app: 0, session: 10), Self.open(300, app: 1, session: 60)]
    var s = FetchOnExitPolicy(params: try FetchOnExitFamily.parse("mode=ios7,exit_chunk=0s", spec: "x"))
    let r3 = Self.run(&s, Self.trace(rows3), world: Self.world(latency: 5))
    #expect(r3.fetches.map { $0.start - Self.t0 } == [300])
    // The default exit chunk (5 s) fits a 1-s fetch at the exit itself.
    var e = FetchOnExitPolicy(params: try FetchOnExitFamily.parse("mode=ios7", spec: "x"))
    let r4 = Self.run(&e, Self.trace(rows), world: Self.world(latency: 1))
    #expect(r4.fetches.map { $0.start - Self.t0 } == [160])
  }

  @Test("fetch-on-exit settings: mode is ios6 or ios7, once")
  func fetchOnExitSpec() throws {
    #expect(try PolicySpec(parsing: "fetch-on-exit").description == "fetch-on-exit")
    #expect(try PolicySpec(parsing: "fetch-on-exit:mode=ios6").description == "fetch-on-exit")
    #expect(try PolicySpec(parsing: "fetch-on-exit:task_time=3m,mode=ios7").description == "fetch-on-exit:mode=ios7,task_time=3m")
    #expect(throws: PolicySpecError.self) { try PolicySpec(parsing: "fetch-on-exit:mode=ios8") }
    #expect(throws: PolicySpecError.self) { try PolicySpec(parsing: "fetch-on-exit:mode=ios7,mode=ios6") }
    #expect(throws: PolicySpecError.self) { try PolicySpec(parsing: "fetch-on-exit:chunk=1") }
  }

  // MARK: bg-processing

  /// Charging intervals of a trace.
  static func chargingIntervals(_ t: UserTrace) -> [Range<Double>] {
    var out: [Range<Double>] = []
    var since: Double?
    for e in t.events {
      if e.kind == .chargeStart, since == nil { since = e.time }
      if e.kind == .chargeEnd, let s = since {
        out.append(s..<e.time)
        since = nil
      }
    }
    if let s = since { out.append(s..<(t.end + 1)) }
    return out
  }

  @Test("bg-processing: a task that requires power never runs unplugged")
  func processingRequiresPower() throws {
    let pop = SyntheticPopulation(seed: 3, days: 7)
    var runs = 0, unpluggedWithout = 0
    for i in 0..<6 {
      let t = pop.user(i)
      let charging = Self.chargingIntervals(t)
      var p = BGProcessingPolicy()
      let r = Self.run(&p, t, world: WorldParameters())
      for f in r.fetches {
        #expect(charging.contains { $0.contains(f.start) }, "\(t.user): ran unplugged at \(f.start)")
        runs += 1
      }
      // Without the requirement it does run unplugged (the check can fail).
      var q = BGProcessingPolicy(params: try BGProcessingFamily.parse("requires_power=0", spec: "x"))
      let r2 = Self.run(&q, t, world: WorldParameters())
      unpluggedWithout += r2.fetches.filter { f in !charging.contains { $0.contains(f.start) } }.count
      // At most one run per earliest (12 h).
      for (a, b) in zip(r.fetches, r.fetches.dropFirst()) { #expect(b.start - a.start >= 12 * 3600) }
    }
    #expect(runs >= 6, "the task runs on some nights")
    #expect(unpluggedWithout > 0)
  }

  @Test("bg-processing: idle, network and spacing, by hand")
  func processingByHand() throws {
    // The user's session ends at 600: idle (30 min) from 2400; plugged in
    // at 1000. Checks every 5 min from the start: the first run is at
    // 2400, the next 12 h later (45,600, a check).
    let rows = [Self.open(500, session: 100), TraceEvent(time: 1000, kind: .chargeStart)]
    var p = BGProcessingPolicy()
    let r = Self.run(&p, Self.trace(rows), world: Self.world(latency: 200))
    #expect(r.fetches.map { $0.start - Self.t0 } == [2400, 45_600])
    // Minutes of run time: a 200-s fetch completes.
    #expect(r.fetches[0].failure.isEmpty && r.fetches[0].end - r.fetches[0].start > 200)
    // Offline while eligible: waits for the network (requires_network), runs
    // when it is back (4000), then at the first check 12 h later (47,400).
    let rows2 = rows + [Self.net(2000, .offline), Self.net(4000, .wifi)]
    var q = BGProcessingPolicy()
    let r2 = Self.run(&q, Self.trace(rows2), world: Self.world())
    #expect(r2.fetches.map { $0.start - Self.t0 } == [4000, 47_400])
    // Without requires_network it runs offline, and its fetch fails.
    var o = BGProcessingPolicy(params: try BGProcessingFamily.parse("requires_network=0", spec: "x"))
    let r3 = Self.run(&o, Self.trace(rows2), world: Self.world())
    #expect(r3.fetches.first?.start == Self.t0 + 2400 && r3.fetches.first?.failure == "offline")
  }

  // MARK: bg-app-refresh

  @Test("bg-app-refresh: no run sooner than earliest after the last; location wakes are decision points")
  func appRefresh() throws {
    let t = SyntheticPopulation(seed: 5, days: 6).user(1)
    let (train, test) = t.split(at: t.start + 3 * 86_400)
    let world = WorldParameters()
    var locationDecisions: [Int] = []
    for location in [1, 0] {
      var c = try BGAppRefreshFamily.parse("earliest=2h,location=\(location),price=0.03", spec: "x")
      c.minimum.energyBudgetPctPerDay = 5
      var p = BGAppRefreshPolicy(
        scheduler: IOSMinimumPolicy(params: c.scheduler, world: world, training: train, app: 0, population: nil),
        locationLaunches: location == 1)
      p.scheduler.logDecisions = true
      let r = Self.run(&p, test, world: world)
      #expect(r.fetches.count > 2)
      for (a, b) in zip(r.fetches, r.fetches.dropFirst()) { #expect(b.start - a.start >= 7200) }
      let times = Set(test.events.filter { $0.kind == .location }.map(\.time))
      #expect(!times.isEmpty)
      // Decisions at location rows that are not also checks or other events.
      let others = Set(test.events.filter { $0.kind != .location }.map(\.time))
      locationDecisions.append(p.scheduler.decisions.filter { times.contains($0.time) && !others.contains($0.time) }.count)
    }
    #expect(locationDecisions[0] > 0 && locationDecisions[1] == 0)
    #expect(try PolicySpec(parsing: "bg-app-refresh:earliest=30m,price=0.1").description == "bg-app-refresh:earliest=30m,price=0.1")
  }

  // MARK: push services

  @Test("silent-push services: alert pushes and FCM high priority at once; FCM normal waits out deep Doze")
  func pushServices() throws {
    // No opens, unplugged, on WiFi: deep Doze from 1800 + 270 s; the first
    // idle period (1 h) ends at 5670, then a 5-min maintenance window.
    let t = Self.trace([])
    let updates = [1000.0, 3000, 3010].map { $0 + Self.t0 }
    func starts(_ spec: String) throws -> [Double] {
      let world = Self.world()
      let user = PreparedUser(trace: t, world: world)
      let content = ContentTimeline(updates: updates, world: world)
      let r = try PolicySpec(parsing: spec).replay(user: user, app: 0, content: content, seed: 1, recordEvents: true)
      return r.fetches.map { $0.start - Self.t0 }
    }
    // APNs background push: batched (waits up to 15 min for activity there is none of).
    #expect(try starts("silent-push") == [1900, 3900])
    #expect(try starts("silent-push:service=apns-alert") == [1000, 3000, 3010])
    #expect(try starts("silent-push:service=fcm-high") == [1000, 3000, 3010])
    // In Doze from 2070: the two later pushes wait for the window at 5670 (one launch).
    #expect(try starts("silent-push:service=fcm-normal") == [1000, 5670])
    #expect(try PolicySpec(parsing: "silent-push:service=fcm-high,rate=2").description == "silent-push:rate=2,service=fcm-high")
    #expect(try PolicySpec(parsing: "silent-push:service=apns").description == "silent-push")
    #expect(throws: PolicySpecError.self) { try PolicySpec(parsing: "silent-push:service=gcm") }
  }

  // MARK: android-prefetch

  /// The replayed part of ``eveningHabit(replayOpens:)``, its habit model and
  /// the last opens and use before the replay.
  struct EveningHabit {
    var test: UserTrace
    var habit: HabitModel
    var last: (app: Double, any: Double)
    var lastUse: Double

    /// An `android-prefetch` policy with `spec`'s settings for app a.
    func prefetch(_ spec: String) throws -> AndroidPrefetchPolicy {
      AndroidPrefetchPolicy(
        params: try AndroidPrefetchFamily.parse(spec, spec: spec), habit: habit, timeZone: .utc, lastAppOpen: last.app,
        lastAnyOpen: last.any, lastUse: lastUse)
    }
  }

  /// App a opened only in the evening (19:30–20:15 UTC, four opens) for 21
  /// days of training and 5 of replay (without opens in the replay unless
  /// `replayOpens`): the replayed part, the habit model fitted on the
  /// training part, and its last opens.
  static func eveningHabit(replayOpens: Bool = true) -> EveningHabit {
    var t = UserTrace(user: "u", timeZone: .utc, start: t0 - t0.truncatingRemainder(dividingBy: 86_400), end: 0)
    t.end = t.start + 26 * 86_400
    let a = t.appIndex("a")
    t.events = [TraceEvent(time: t.start, kind: .network, value: Double(NetworkKind.wifi.rawValue))]
    for d in 0..<(replayOpens ? 26 : 21) {
      for m in [0.0, 15, 30, 45] {
        t.events.append(TraceEvent(time: t.start + Double(d) * 86_400 + 19.5 * 3600 + m * 60, kind: .open, app: a, value: 60))
      }
    }
    let (train, test) = t.split(at: t.start + 21 * 86_400)
    let habit = HabitFitter().fit(HabitSample(trace: train, app: 0, from: train.start, to: train.end), prior: nil)
    let last = OpenHistory.lastOpens(train, app: 0)
    return EveningHabit(test: test, habit: habit, last: (last.app, last.any), lastUse: StandbyQuota.lastUse(in: train, app: 0))
  }

  @Test("android-prefetch: never runs when the predicted launch is further than its threshold")
  func prefetchGate() throws {
    // Opens of app a only in the evening (19:30–20:15 UTC) for 21 days of
    // training, then 5 days of replay.
    let h = Self.eveningHabit()
    let (test, last) = (h.test, h.last)
    var fetchHours: [String: [Double]] = [:]
    for spec in ["threshold=1h,period=15m", "threshold=24h,period=15m"] {
      var p = try h.prefetch(spec)
      let r = Self.run(&p, test, world: Self.world())
      // Each run passed the gate: P(open within the threshold) ≥ 0.5, by the same model.
      var check = try h.prefetch(spec)
      for f in r.fetches {
        check.lastAppOpen = test.events.last { $0.kind == .open && $0.time <= f.start }?.time ?? last.app
        check.lastAnyOpen = check.lastAppOpen
        #expect(check.launchProbability(at: f.start) >= 0.5)
      }
      fetchHours[spec] = r.fetches.map { ($0.start.truncatingRemainder(dividingBy: 86_400)) / 3600 }
    }
    let near = try #require(fetchHours["threshold=1h,period=15m"])
    #expect(!near.isEmpty)
    // With a 1-h threshold: only in the hour or so before the evening opens.
    #expect(near.allSatisfy { $0 >= 17.5 && $0 <= 20.5 }, "\(near)")
    // With 24 h the gate always holds: runs all day.
    let far = try #require(fetchHours["threshold=24h,period=15m"])
    #expect(far.contains { $0 < 12 })
    #expect(throws: PolicySpecError.self) { try PolicySpec(parsing: "android-prefetch:threshold=30m") }
  }

  @Test("android-prefetch waits out deep Doze: no run inside an idle period; with doze=0 it runs at night")
  func prefetchUnderDoze() throws {
    // Opens in the evening only; the nights are long idle stretches.
    let h = Self.eveningHabit()
    let test = h.test
    func starts(_ spec: String) throws -> [Double] {
      var p = try h.prefetch(spec)
      return Self.run(&p, test, world: Self.world()).fetches.map(\.start)
    }
    let dozing = try starts("threshold=24h,period=15m")
    #expect(!dozing.isEmpty)
    // The same Doze inference, replayed over the trace up to each run.
    var d = DozeState(start: test.start)
    var k = 0
    for f in dozing {
      while k < test.events.count && test.events[k].time <= f { d.observe(test.events[k]); k += 1 }
      #expect(!d.isDozing(at: f), "run at \(f) inside a Doze idle period")
    }
    let awake = try starts("threshold=24h,period=15m,doze=0")
    #expect(awake.count > dozing.count)
  }

  @Test("android-prefetch runs within the app's standby bucket quota; standby=0 lifts it")
  func prefetchUnderStandbyQuota() throws {
    // Used every evening in training, never in the replay: the app ages
    // from Working set through Frequent into Rare, where the gate still
    // holds (the habit expects the evening opens) but the quota binds.
    let h = Self.eveningHabit(replayOpens: false)
    var p = try h.prefetch("threshold=24h,period=15m,doze=0")
    let r = Self.run(&p, h.test, world: Self.world())
    let window: [Double] = [600, 7200, 28_800, 86_400, 86_400]
    let maxBatches = [75, 10, 8, 3, 1]
    let thresholds: [Double] = [3600, 86_400, 3 * 86_400, 8 * 86_400]
    for f in r.fetches {
      let b = thresholds.firstIndex { f.start - h.lastUse < $0 } ?? 4
      let inWindow = r.fetches.filter { $0.start > f.start - window[b] && $0.start <= f.start }
      #expect(inWindow.count <= maxBatches[b], "\(inWindow.count) runs in the bucket-\(b) window ending \(f.start)")
    }
    let rareFrom = h.lastUse + 3 * 86_400
    let rare = r.fetches.filter { $0.start >= rareFrom }
    #expect(!rare.isEmpty && rare.count <= 3 * 2, "\(rare.count) runs in about two Rare days")
    var free = try h.prefetch("threshold=24h,period=15m,doze=0,standby=0")
    let unthrottled = Self.run(&free, h.test, world: Self.world()).fetches.filter { $0.start >= rareFrom }
    #expect(unthrottled.count > 10 * rare.count, "\(unthrottled.count) unthrottled runs against \(rare.count)")
  }
}
