import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld
import Testing

@testable import FetchSimulation

/// Fetches timed to complete by given deadlines (tests): each entry wakes at
/// `wake` and asks for a fetch completing by `by`.
private struct CompletionScript: FetchPolicy {
  var plan: [(wake: Double, by: Double)]
  var i = 0

  init(plan: [(wake: Double, by: Double)]) { self.plan = plan }

  mutating func start(_ ctx: inout PolicyContext) { arm(&ctx) }

  mutating func arm(_ ctx: inout PolicyContext) {
    if i < plan.count { ctx.setTimer(at: plan[i].wake) }
  }

  mutating func timerFired(_ ctx: inout PolicyContext) {
    ctx.requestFetch(completingBy: plan[i].by)
    i += 1
  }

  mutating func fetchFinished(_ outcome: FetchOutcome, _ ctx: inout PolicyContext) { arm(&ctx) }
}

@Suite("Budgeted oracle")
struct OracleBudgetTests {
  static let seeds: [UInt64] = Array(1...10)

  static func world(refresh: Bool = true) -> WorldParameters {
    var w = WorldParameters()
    w.replay.foregroundRefresh = refresh
    w.content.ratePerHour = 1.5
    w.fetch.failureProbability = 0
    return w
  }

  static func setup(seed: UInt64, days: Double = 4, opensPerHour: Double = 1.5, refresh: Bool = true)
    -> (PreparedUser, ContentTimeline)
  {
    let trace = TestTraces.user(seed: seed, days: days, opensPerHour: opensPerHour, networkChangesPerDay: 10)
    let w = world(refresh: refresh)
    return (PreparedUser(trace: trace, world: w), ContentTimeline(trace: trace, app: 0, world: w, seed: seed))
  }

  static func run<P: FetchPolicy>(_ p: P, _ user: PreparedUser, _ content: ContentTimeline) -> AppReplay {
    var p = p
    return replay(&p, user: user, app: 0, content: content, options: ReplayOptions(seed: 1))
  }

  static func totalAge(_ r: AppReplay) -> Double { r.opens.map(\.ageS).reduce(0, +) }

  /// A random subset of at most `count` of the unbudgeted oracle's fetches.
  fileprivate static func oracleSubset(_ oracle: AppReplay, count: Int, seed: UInt64) -> CompletionScript {
    var rng = SplitMix64(seed: seed, keys: "subset")
    var fs = oracle.fetches
    for i in fs.indices.reversed() where i > 0 { fs.swapAt(i, Int(rng.uniform() * Double(i + 1))) }
    let picked = fs.prefix(count).sorted { $0.start < $1.start }
    var plan: [(wake: Double, by: Double)] = []
    var last = -Double.infinity
    for f in picked {
      plan.append((max(last, f.start - 30), f.end))
      last = f.end
    }
    return CompletionScript(plan: plan)
  }

  @Test("budget arguments parse and print canonically")
  func parsing() {
    #expect(OracleBudgetLimit(argument: "4") == .fetchesPerDay(4))
    #expect(OracleBudgetLimit(argument: "2.5") == .fetchesPerDay(2.5))
    #expect(OracleBudgetLimit(argument: "50J") == .joulesPerDay(50))
    for s in ["4", "2.5", "50J", "0.5J", "0"] { #expect(OracleBudgetLimit(argument: s)?.description == s) }
    for s in ["", "J", "x", "-1", "4j", "inf", "nanJ", "4 J"] { #expect(OracleBudgetLimit(argument: s) == nil, "\(s)") }
    #expect(OracleBudgetLimit.fetchesPerDay(2.5).total(days: 3) == 7)
    #expect(OracleBudgetLimit.fetchesPerDay(1).total(days: 3) == 3)
    #expect(OracleBudgetLimit.joulesPerDay(10).total(days: 2.5) == 25)
    let keys = OracleBudgetParameters.keys
    #expect((try? parseSettings("exact_limit=0", policy: "oracle-budget:4,exact_limit=0", defaults: OracleBudgetParameters(), keys: keys))?.exactWorkLimit == 0)
  }

  @Test("with B fetches its mean age beats every policy using at most B fetches", arguments: seeds)
  func countBudgetDominates(seed: UInt64) {
    let (user, content) = Self.setup(seed: seed)
    let never = Self.run(NeverPolicy(), user, content)
    let oracle = Self.run(OraclePolicy(user: user, app: 0, content: content), user, content)
    let periodic = [7200.0, 14_400, 21_600, 43_200, 86_400, 172_800].map { Self.run(PeriodicPolicy(interval: $0), user, content) }
    for perDay in [0.5, 1, 2, 4, 8] {
      let policy = OracleBudgetPolicy(budget: .fetchesPerDay(perDay), user: user, app: 0, content: content)
      let b = Int(policy.totalBudget)
      #expect(policy.isExact)
      let r = Self.run(policy, user, content)
      let age = Self.totalAge(r)
      #expect(r.summary.fetches <= b)
      #expect(abs(age - policy.plannedTotalAgeS) <= 1e-6 * max(1, age), "planned \(policy.plannedTotalAgeS) s, replayed \(age) s")
      #expect(age <= Self.totalAge(never) + 1e-6)
      for p in periodic where p.summary.fetches <= b {
        #expect(age <= Self.totalAge(p) + 1e-6, "budget \(b): \(age) s vs periodic with \(p.summary.fetches) fetches \(Self.totalAge(p)) s")
      }
      for k in 0..<3 {
        let s = Self.run(Self.oracleSubset(oracle, count: b, seed: seed &+ UInt64(k)), user, content)
        #expect(s.summary.fetches <= b)
        #expect(age <= Self.totalAge(s) + 1e-6, "budget \(b): \(age) s vs oracle subset \(Self.totalAge(s)) s")
      }
    }
  }

  @Test("with at least the oracle's fetch count it matches the oracle at every open", arguments: seeds)
  func enoughBudgetIsTheOracle(seed: UInt64) {
    for refresh in [true, false] {
      let (user, content) = Self.setup(seed: seed, refresh: refresh)
      let oracle = Self.run(OraclePolicy(user: user, app: 0, content: content), user, content)
      let perDay = Double(oracle.summary.fetches) / user.trace.days + 0.01
      let policy = OracleBudgetPolicy(budget: .fetchesPerDay(perDay), user: user, app: 0, content: content)
      let r = Self.run(policy, user, content)
      #expect(r.summary.fetches <= oracle.summary.fetches)
      #expect(r.opens.map(\.ageS) == oracle.opens.map(\.ageS), "refresh \(refresh)")
    }
  }

  @Test("the energy budget holds and mean age is non-increasing in it", arguments: seeds)
  func energyBudget(seed: UInt64) {
    let (user, content) = Self.setup(seed: seed)
    var lastAge = Double.infinity
    for perDay in [0.0, 1, 2, 5, 10, 20, 50, 200] {
      let policy = OracleBudgetPolicy(budget: .joulesPerDay(perDay), user: user, app: 0, content: content)
      let r = Self.run(policy, user, content)
      let total = perDay * user.trace.days
      #expect(policy.plannedEnergyJ <= total + 1e-9)
      // Tolerance: the engine's charge differs from the plan's
      // background-only estimate only through tails shared between the
      // policy's own fetches, which lower it.
      let battery = r.summary.energyJ - r.summary.chargingEnergyJ
      #expect(battery <= total * 1.01 + 1, "\(battery) J of \(total) J")
      let age = Self.totalAge(r)
      #expect(abs(age - policy.plannedTotalAgeS) <= 1e-6 * max(1, age))
      #expect(age <= lastAge + 1e-6, "\(perDay) J/day: \(age) s > \(lastAge) s")
      lastAge = age
    }
    #expect(OracleBudgetPolicy(budget: .joulesPerDay(0), user: user, app: 0, content: content).plannedOpens.isEmpty)
  }

  /// The budget is battery energy: on the charger the whole window, a
  /// fetch costs the budget nothing, so 0 J a day buys every candidate the
  /// unbudgeted oracle would fetch: it is as fresh, and all its energy is
  /// the charger's.
  @Test("an energy budget counts battery energy only: on the charger 0 J a day is as fresh as the unbudgeted oracle", arguments: seeds.prefix(3))
  func chargerEnergyIsFree(seed: UInt64) {
    var trace = TestTraces.user(seed: seed, days: 4, opensPerHour: 1.5, networkChangesPerDay: 10)
    trace.events.insert(TraceEvent(time: trace.start, kind: .chargeStart), at: 0)
    let w = Self.world()
    let user = PreparedUser(trace: trace, world: w)
    let content = ContentTimeline(trace: trace, app: 0, world: w, seed: seed)
    let free = OracleBudgetPolicy(budget: .joulesPerDay(0), user: user, app: 0, content: content)
    let oracle = Self.run(OraclePolicy(user: user, app: 0, content: content), user, content)
    #expect(!free.plannedOpens.isEmpty && free.plannedEnergyJ == 0)
    let r = Self.run(free, user, content)
    #expect(Self.totalAge(r) <= Self.totalAge(oracle) + 1e-6, "\(Self.totalAge(r)) s against the oracle's \(Self.totalAge(oracle)) s")
    #expect(r.summary.energyJ > 0 && r.summary.chargingEnergyJ == r.summary.energyJ)
    // The best timer in hindsight prices its ticks the same way.
    var timer = OracleBudgetParameters()
    timer.knowledge = .none
    let fixed = OracleBudgetPolicy(budget: .joulesPerDay(0), user: user, app: 0, content: content, params: timer)
    #expect((fixed.fixedSchedule?.period ?? 0) > 0 && fixed.plannedEnergyJ == 0)
  }

  @Test("without foreground refresh the dynamic program is exact and beats the greedy and timers", arguments: seeds)
  func noRefresh(seed: UInt64) {
    let (user, content) = Self.setup(seed: seed, refresh: false)
    var greedyOnly = OracleBudgetParameters()
    greedyOnly.exactWorkLimit = 0
    let periodic = [14_400.0, 21_600, 43_200, 86_400].map { Self.run(PeriodicPolicy(interval: $0), user, content) }
    for perDay in [1.0, 2, 4] {
      let exact = OracleBudgetPolicy(budget: .fetchesPerDay(perDay), user: user, app: 0, content: content)
      let greedy = OracleBudgetPolicy(
        budget: .fetchesPerDay(perDay), user: user, app: 0, content: content, params: greedyOnly)
      #expect(exact.isExact)
      #expect(exact.plannedTotalAgeS <= greedy.plannedTotalAgeS + 1e-6)
      let r = Self.run(exact, user, content)
      let age = Self.totalAge(r)
      #expect(r.summary.fetches <= Int(exact.totalBudget))
      #expect(abs(age - exact.plannedTotalAgeS) <= 1e-6 * max(1, age))
      for p in periodic where p.summary.fetches <= Int(exact.totalBudget) {
        #expect(age <= Self.totalAge(p) + 1e-6)
      }
    }
  }

  @Test("the dynamic program equals brute force on small cases", arguments: seeds)
  func bruteForce(seed: UInt64) {
    let (user, content) = Self.setup(seed: seed, days: 1, opensPerHour: 0.4, refresh: false)
    let planner = OracleBudgetPlanner(user: user, app: 0, content: content)
    let m = planner.candidates.count
    guard m <= 16 else { return }
    for budget in 1...4 {
      let (chosen, exact) = planner.selectCount(budget, exactWorkLimit: 1e12)
      #expect(exact && chosen.count <= budget)
      var best = Double.infinity
      for mask in 0..<(1 << m) where mask.nonzeroBitCount <= budget {
        best = min(best, planner.totalAge(chosen: (0..<m).filter { mask & (1 << $0) != 0 }))
      }
      #expect(abs(planner.totalAge(chosen: chosen) - best) <= 1e-6 * max(1, best), "budget \(budget), \(m) candidates")
    }
  }

  @Test("no opens, a zero budget or an absurd one: nothing breaks")
  func degenerate() {
    var t = UserTrace(user: "e", start: 1_700_000_000, end: 1_700_000_000 + 86_400)
    _ = t.appIndex("a")
    let w = Self.world()
    let user = PreparedUser(trace: t, world: w)
    let content = ContentTimeline(trace: t, app: 0, world: w, seed: 1)
    for b in [OracleBudgetLimit.fetchesPerDay(1e300), .joulesPerDay(1e300), .fetchesPerDay(0)] {
      let p = OracleBudgetPolicy(budget: b, user: user, app: 0, content: content)
      #expect(p.plannedOpens.isEmpty && p.plannedTotalAgeS == 0)
      #expect(Self.run(p, user, content).summary.fetches == 0)
    }
    let (u2, c2) = Self.setup(seed: 3)
    let none = OracleBudgetPolicy(budget: .fetchesPerDay(0), user: u2, app: 0, content: c2)
    #expect(none.plannedOpens.isEmpty)
    #expect(Self.run(none, u2, c2).opens.map(\.ageS) == Self.run(NeverPolicy(), u2, c2).opens.map(\.ageS))
    let all = OracleBudgetPolicy(budget: .fetchesPerDay(1e300), user: u2, app: 0, content: c2)
    #expect(all.isExact && all.plannedOpens.count <= OracleBudgetPlanner(user: u2, app: 0, content: c2).candidates.count)
  }
}
