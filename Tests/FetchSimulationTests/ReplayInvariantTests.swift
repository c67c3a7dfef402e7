import FetchTraces
import Testing

@testable import FetchWorld

@testable import FetchSimulation

@Suite("Replay invariants on random traces")
struct ReplayInvariantTests {
  static let seeds: [UInt64] = Array(1...12)

  static func world(refresh: Bool, serverFailures: Double = 0.05) -> WorldParameters {
    var w = WorldParameters()
    w.replay.foregroundRefresh = refresh
    w.content.ratePerHour = 1.5
    w.fetch.failureProbability = serverFailures
    return w
  }

  @Test("never costs exactly zero energy and zero bytes", arguments: seeds)
  func neverIsFree(seed: UInt64) {
    let trace = TestTraces.user(seed: seed, days: 3, opensPerHour: 2, networkChangesPerDay: 12)
    for refresh in [true, false] {
      let r = PolicySpec.never.replay(
        user: PreparedUser(trace: trace, world: Self.world(refresh: refresh)), app: 0,
        content: ContentTimeline(trace: trace, app: 0, world: Self.world(refresh: refresh), seed: seed),
        seed: seed, recordEvents: true)
      #expect(r.summary.energyJ == 0)
      #expect(r.summary.cellularBytes == 0 && r.summary.wifiBytes == 0)
      #expect(r.summary.fetches == 0 && r.fetches.isEmpty)
    }
  }

  @Test("the oracle is never staler than periodic at any open and fetches at most once per open", arguments: seeds)
  func oracleDominates(seed: UInt64) {
    let trace = TestTraces.user(seed: seed, days: 4, opensPerHour: 1.5, networkChangesPerDay: 10)
    for refresh in [true, false] {
      let w = Self.world(refresh: refresh, serverFailures: 0)
      let user = PreparedUser(trace: trace, world: w)
      for app in Int32(0)...1 {
        let content = ContentTimeline(trace: trace, app: app, world: w, seed: seed)
        let oracle = PolicySpec.oracle.replay(user: user, app: app, content: content, seed: seed, recordEvents: true)
        #expect(oracle.summary.fetches <= oracle.summary.opens)
        for interval in [60.0, 900, 3600, 14_400] {
          let periodic = PolicySpec.periodic(interval: interval).replay(
            user: user, app: app, content: content, seed: seed, recordEvents: true)
          #expect(periodic.opens.count == oracle.opens.count)
          for (o, p) in zip(oracle.opens, periodic.opens) {
            #expect(o.ageS <= p.ageS, "open at \(o.time): oracle \(o.ageS) s > periodic:\(interval) \(p.ageS) s")
          }
        }
      }
    }
  }

  @Test("ages are non-negative, fresh opens have age 0, energy and bytes non-negative", arguments: seeds)
  func basicInvariants(seed: UInt64) {
    let trace = TestTraces.user(seed: seed, days: 3, opensPerHour: 2, networkChangesPerDay: 8)
    let w = Self.world(refresh: seed % 2 == 0)
    let user = PreparedUser(trace: trace, world: w)
    let content = ContentTimeline(trace: trace, app: 0, world: w, seed: seed)
    for spec in [PolicySpec.periodic(interval: 600), .oracle] {
      let r = spec.replay(user: user, app: 0, content: content, seed: seed, recordEvents: true)
      for o in r.opens {
        #expect(o.ageS >= 0 && o.aoiS >= o.ageS - 1e-9)
        #expect(o.fresh == (o.ageS == 0))
      }
      for f in r.fetches {
        #expect(f.energyJ >= 0 && f.bytes >= 0 && f.end >= f.start)
        #expect(f.end - f.start <= w.fetch.fetchBudgetS + 1e-9)
        #expect((f.result == .failed) == !f.failure.isEmpty)
        if f.network == .offline { #expect(f.result == .failed && f.bytes == 0) }
      }
      let s = r.summary
      #expect(s.newData + s.noData + s.failed == s.fetches)
      #expect(s.wasted <= s.newData)
      #expect(s.freshRatio >= 0 && s.freshRatio <= 1)
      #expect(s.p50AgeS <= s.p90AgeS && s.p90AgeS <= s.p99AgeS)
    }
  }

  @Test("more frequent periodic fetching costs more energy and is fresher on average")
  func periodicMonotone() {
    let trace = TestTraces.user(seed: 5, days: 10, opensPerHour: 2)
    var w = WorldParameters()
    w.replay.foregroundRefresh = false
    let user = PreparedUser(trace: trace, world: w)
    let content = ContentTimeline(trace: trace, app: 0, world: w, seed: 5)
    let rs = [14_400.0, 3600, 900].map {
      PolicySpec.periodic(interval: $0).replay(user: user, app: 0, content: content, seed: 5, recordEvents: false).summary
    }
    #expect(rs[0].energyJ < rs[1].energyJ && rs[1].energyJ < rs[2].energyJ)
    #expect(rs[0].timeAvgAgeS > rs[1].timeAvgAgeS && rs[1].timeAvgAgeS > rs[2].timeAvgAgeS)
  }

  @Test("foreground refresh resets staleness at each open without charging the policy")
  func foregroundRefresh() {
    var w = WorldParameters()
    w.content.source = .trace
    var t = UserTrace(user: "x", start: 0, end: 1000)
    _ = t.appIndex("a")
    t.events = [
      TraceEvent(time: 100, kind: .update, app: 0), TraceEvent(time: 200, kind: .open, app: 0, value: 5),
      TraceEvent(time: 300, kind: .open, app: 0, value: 5),
    ]
    let content = ContentTimeline(trace: t, app: 0, world: w, seed: 1)
    #expect(content.updates == [100])
    var p = NeverPolicy()
    let on = replay(&p, user: PreparedUser(trace: t, world: w), app: 0, content: content)
    #expect(on.opens.map(\.ageS) == [100, 0])
    #expect(on.opens.map(\.aoiS) == [200, 200])
    #expect(on.summary.energyJ == 0)
    w.replay.foregroundRefresh = false
    let off = replay(&p, user: PreparedUser(trace: t, world: w), app: 0, content: content)
    #expect(off.opens.map(\.ageS) == [100, 200])
  }

  @Test("fetch failures: offline, budget overrun and network change")
  func failures() {
    var w = ReplayEnergyTests.workedExampleWorld(.offline)
    var t = UserTrace(user: "x", start: 0, end: 10_000)
    _ = t.appIndex("a")
    t.events = [
      TraceEvent(time: 200, kind: .network, value: Double(NetworkKind.umts3g.rawValue)),
      TraceEvent(time: 500, kind: .network, value: Double(NetworkKind.wifi.rawValue)),
      TraceEvent(time: 500.05, kind: .network, value: Double(NetworkKind.lte.rawValue)),
    ]
    w.radios.umts3g.downlinkMbps = 0.01  // 100 KB takes 80 s > 30 s budget
    var p = ScriptedPolicy(times: [100, 300, 500])
    let r = replay(&p, user: PreparedUser(trace: t, world: w), app: 0, content: ContentTimeline(updates: [], world: w))
    #expect(r.fetches.map(\.failure) == ["offline", "budget", "network_change"])
    #expect(r.fetches[1].end - r.fetches[1].start == 30)
    #expect(r.fetches[0].energyJ == 0 && r.fetches[0].bytes == 0)
  }

  @Test(
    "the server's version at each open, prepared with the content, is the searched one; a replay reading it equals one searching, and one given wrong values checks and searches",
    arguments: seeds)
  func versionsAtOpens(seed: UInt64) {
    let trace = TestTraces.user(seed: seed, days: 3, opensPerHour: 3, networkChangesPerDay: 8)
    let w = Self.world(refresh: true, serverFailures: 0)
    let user = PreparedUser(trace: trace, world: w)
    for app in Int32(0)...1 {
      let content = ContentTimeline(trace: trace, app: app, world: w, seed: seed)
      let opens = trace.events.filter { $0.kind == .open && $0.app == app }
      #expect(content.versionsAtOpens.count == opens.count)
      #expect(zip(opens, content.versionsAtOpens).allSatisfy { content.version(at: $0.time) == Int($1) })
      var searched = content
      searched.versionsAtOpens = []
      var wrong = content
      wrong.versionsAtOpens = content.versionsAtOpens.map { $0 + 1 }
      for policy in [PolicySpec.never, .periodic(interval: 3600)] {
        let want = policy.replay(user: user, app: app, content: content, seed: seed, recordEvents: true)
        #expect(want.summary.foregroundRefreshes > 0)
        for c in [searched, wrong] {
          let got = policy.replay(user: user, app: app, content: c, seed: seed, recordEvents: true)
          #expect(got.summary == want.summary && got.opens == want.opens && got.waits == want.waits)
        }
      }
    }
    #expect(ContentTimeline(updates: [1, 2]).versionsAtOpens.isEmpty)
  }

  @Test("_checkInvariants: a finished replay holds them, and each corrupted charge or time is caught")
  func engineInvariantsCatchCorruption() {
    let trace = TestTraces.user(seed: 7, days: 2, opensPerHour: 2, networkChangesPerDay: 8)
    let w = Self.world(refresh: true)
    let user = PreparedUser(trace: trace, world: w)
    let contents = [Int32(0), 1].map { ContentTimeline(trace: trace, app: $0, world: w, seed: 7) }
    var engine = ReplayEngine(
      user: user, apps: [0, 1], contents: contents, options: ReplayOptions(seed: 7, policyKey: "t", recordEvents: true))
    var policies = [ScriptedPolicy(times: [trace.start + 3600, trace.start + 7200]), ScriptedPolicy(times: [trace.start + 60])]
    let result = engine.run(&policies)
    #expect(result.apps.map(\.summary.fetches) == [2, 1])
    #expect(engine.invariantViolations(result.apps).isEmpty)

    var energy = result.apps
    energy[0].summary.energyJ += 1
    #expect(engine.invariantViolations(energy).contains { $0.contains("fetch energies sum to") })
    var outcomes = result.apps
    outcomes[1].summary.noData += 1
    #expect(engine.invariantViolations(outcomes).contains { $0.contains("do not add up") })
    // The records have moved from the lanes to the results: corrupted there.
    var late = result.apps
    late[0].fetches[1].start = late[0].fetches[0].start - 1
    #expect(engine.invariantViolations(late).contains { $0.contains("out of order") })
    var overBudget = result.apps
    overBudget[1].fetches[0].end = overBudget[1].fetches[0].start + w.fetch.fetchBudgetS + 1
    #expect(engine.invariantViolations(overBudget).contains { $0.contains("exceeds the fetch budget") })
  }
}
