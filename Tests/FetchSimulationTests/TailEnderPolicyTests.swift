import FetchModels
import FetchTraces
import FetchWorld
import Testing

@testable import FetchSimulation

@Suite("TailEnder policy")
struct TailEnderPolicyTests {
  static let seeds: [UInt64] = Array(1...12)

  static func run<P: FetchPolicy>(_ p: P, trace: UserTrace, world: WorldParameters, seed: UInt64) -> AppReplay {
    var p = p
    return replay(
      &p, user: PreparedUser(trace: trace, world: world), app: 0,
      content: ContentTimeline(trace: trace, app: 0, world: world, seed: seed), options: ReplayOptions(seed: seed))
  }

  @Test("settings parse, print only what differs, and set the deadline")
  func settings() throws {
    let keys = TailEnderParameters.keys
    let p = try parseSettings("deadline=10m,tail=5", policy: "tailender:1h,deadline=10m,tail=5", defaults: TailEnderParameters(), keys: keys)
    #expect(p.deadlineS == 600 && p.tailS == 5)
    #expect(settingsSuffix(p, defaults: TailEnderParameters(), keys: keys, separator: ",") == ",deadline=10m,tail=5s")
    #expect(settingsSuffix(TailEnderParameters(), defaults: TailEnderParameters(), keys: keys, separator: ",") == "")
    #expect(throws: PolicySpecError.self) {
      try parseSettings("speed=1", policy: "tailender:1h,speed=1", defaults: TailEnderParameters(), keys: keys)
    }
    #expect(TailEnderParameters().deadline(interval: 3600) == 1800)
    #expect(p.deadline(interval: 3600) == 600)
    #expect(p.deadline(interval: 300) == 300, "capped at the interval")
    var f = TailEnderParameters()
    f.deadlineFraction = 0.25
    #expect(f.deadline(interval: 3600) == 900)
  }

  @Test("energy per fetch is at most periodic's, and so is the total", arguments: seeds)
  func cheaperThanPeriodic(seed: UInt64) {
    let trace = TestTraces.user(seed: seed, days: 4, opensPerHour: 2)
    let w = WorldParameters()  // every fetch on LTE
    for interval in [1800.0, 3600] {
      let t = Self.run(TailEnderPolicy(interval: interval), trace: trace, world: w, seed: seed).summary
      let p = Self.run(PeriodicPolicy(interval: interval), trace: trace, world: w, seed: seed).summary
      #expect(t.fetches > 0 && t.fetches <= p.fetches)
      let perT = t.energyJ / Double(t.fetches), perP = p.energyJ / Double(p.fetches)
      #expect(perT <= perP, "interval \(interval): \(perT) J/fetch vs periodic \(perP)")
      #expect(t.energyJ <= p.energyJ)
    }
  }

  @Test("every fetch starts in [due, due + deadline], at most one per period, never offline", arguments: seeds)
  func withinDeadline(seed: UInt64) {
    let trace = TestTraces.user(seed: seed, days: 3, opensPerHour: 1, networkChangesPerDay: 8)
    let w = WorldParameters()
    for (interval, deadlineS) in [(3600.0, 0.0), (1800, 300), (900, 600)] {
      var params = TailEnderParameters()
      params.deadlineS = deadlineS
      let policy = TailEnderPolicy(interval: interval, params: params)
      let r = Self.run(policy, trace: trace, world: w, seed: seed)
      #expect(!r.fetches.isEmpty)
      var periods = Set<Int>()
      for f in r.fetches {
        let k = Int(((f.start - trace.start) / interval).rounded(.down))
        let due = trace.start + Double(k) * interval
        #expect(k >= 1 && f.start - due <= policy.deadline + 1e-6, "fetch at +\(f.start - trace.start) s, interval \(interval)")
        #expect(periods.insert(k).inserted, "two fetches in period \(k)")
        #expect(f.failure != "offline")
      }
    }
  }

  @Test("a deadline of zero is the plain timer; without other traffic fetches wait for their deadline")
  func extremes() {
    let trace = TestTraces.user(seed: 5, days: 2, opensPerHour: 1)
    let w = WorldParameters()
    var zero = TailEnderParameters()
    zero.deadlineS = 0
    zero.deadlineFraction = 0
    let t = Self.run(TailEnderPolicy(interval: 3600, params: zero), trace: trace, world: w, seed: 5)
    let p = Self.run(PeriodicPolicy(interval: 3600), trace: trace, world: w, seed: 5)
    #expect(t.fetches.map(\.start) == p.fetches.map(\.start))

    // Only the app itself is opened: its own opens are no opportunities.
    var quiet = trace
    quiet.events = trace.events.filter { $0.app == 0 }
    let q = Self.run(TailEnderPolicy(interval: 3600), trace: quiet, world: w, seed: 5)
    #expect(q.fetches.count == p.fetches.count)
    for f in q.fetches {
      // At the deadline, or at the due time itself when an open's session
      // happens to keep the radio warm then.
      let since = (f.start - trace.start).truncatingRemainder(dividingBy: 3600)
      #expect(abs(since - 1800) < 1e-6 || since < 1e-6, "fetch \(since) s into its period")
    }
    #expect(q.fetches.filter { ($0.start - trace.start).truncatingRemainder(dividingBy: 3600) > 1 }.count > q.fetches.count / 2)
  }

  @Test("an empty trace: the radio is never warm, so every fetch waits for its deadline")
  func emptyTrace() {
    var t = UserTrace(user: "e", start: 1_700_000_000, end: 1_700_000_000 + 86_400)
    _ = t.appIndex("a")
    let r = Self.run(TailEnderPolicy(interval: 3600), trace: t, world: WorldParameters(), seed: 1)
    #expect(r.fetches.count == 23)
    #expect(r.fetches.allSatisfy { ($0.start - t.start).truncatingRemainder(dividingBy: 3600) == 1800 })
    #expect(r.summary.opens == 0)
  }
}
