import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld
import Foundation
import Testing

@testable import FetchSimulation

@Suite("planner policy")
struct PlannerPolicyTests {
  // MARK: the plan's arithmetic, by hand

  /// The candidate values and the now-values before each candidate, from the
  /// utilities after a fetch at `step` s bins and the activity's credit.
  private func values(
    _ p: [Double], _ base: [Double], step: Double, lambda: Double, agePerHour: Double, activity: [Double]? = nil
  ) -> (v: [Double], before: [Double]) {
    let after = PlannerMath.utilitiesAfter(bins: p.count, step: step, lambda: lambda, fresh: 1, agePerHour: agePerHour)
    let terms = ActivityTerms(activity, bins: p.count)
    return (
      PlannerMath.candidateValues(openProbability: p, baseline: base, after: after, activity: terms),
      PlannerMath.nowValueBefore(openProbability: p, baseline: base, after: after, activity: terms)
    )
  }

  @Test("utility: fresh odds minus weighted expected age (worked example)")
  func utility() {
    // λ = 1/h, one hour since the sync: P(fresh) = e^(−1); E[age] = 1 h − (1 − e^(−1)) h = e^(−1) h.
    let u = PlannerMath.utility(sinceSync: 3600, lambda: 1.0 / 3600, fresh: 1, agePerHour: 0.1)
    #expect(abs(u - 0.9 * exp(-1.0)) < 1e-12)
    #expect(PlannerMath.utility(sinceSync: 0, lambda: 1.0 / 3600, fresh: 2, agePerHour: 5) == 2)
  }

  @Test("next-open distribution from bin intensities (halving survival)")
  func nextOpen() {
    let step = 600.0
    let r: Double = M_LN2 / step
    let p = PlannerMath.nextOpenProbabilities(intensities: [r, r], step: step)
    #expect(abs(p[0] - 0.5) < 1e-12 && abs(p[1] - 0.25) < 1e-12)
  }

  @Test("candidate values, with and without the session credit (worked example)")
  func candidates() {
    // Half-life of freshness 600 s, no age weight: U(d) = 2^(−d/600).
    let step = 600.0
    let lambda: Double = M_LN2 / 600
    let p = [0.5, 0.25], base = [0.1, 0.05]
    let h: Double = pow(2, -0.5), h3: Double = pow(2, -1.5)
    let (v, b) = values(p, base, step: step, lambda: lambda, agePerHour: 0)
    // v0 = 0.5 (2^−0.5 − 0.1) + 0.25 (2^−1.5 − 0.05); v1 = 0.25 (2^−0.5 − 0.05).
    let v0: Double = 0.5 * (h - 0.1) + 0.25 * (h3 - 0.05)
    let v1: Double = 0.25 * (h - 0.05)
    #expect(abs(v[0] - v0) < 1e-12)
    #expect(abs(v[1] - v1) < 1e-12)
    // ln 2 expected activities in bin 0: the credit of bin 0 from candidate 0 is e^(−ln2/2),
    // of bin 1 e^(−ln2) = ½; candidate 1 keeps all of bin 1.
    let (w, bw) = values(p, base, step: step, lambda: lambda, agePerHour: 0, activity: [M_LN2, 0])
    let w0: Double = 0.5 * (h - 0.1) * h + 0.25 * (h3 - 0.05) * 0.5
    #expect(abs(w[0] - w0) < 1e-12)
    #expect(abs(w[1] - v[1]) < 1e-12)
    // What a fetch now adds before candidate 1: candidate 0's term of bin 0.
    let b1: Double = 0.5 * (h - 0.1)
    #expect(b[0] == 0 && abs(b[1] - b1) < 1e-12)
    #expect(abs(bw[1] - b1 * h) < 1e-12)
  }

  @Test("planning both now and later spends more than now-or-later at a large budget")
  func planBoth() {
    var one = PlannerParameters(), both = PlannerParameters()
    one.budgetJPerDay = 200
    both.budgetJPerDay = 200
    one.planBoth = 0
    both.planBoth = 1
    let (a, _) = Self.run(one), (b, _) = Self.run(both)
    #expect(b.summary.fetches > a.summary.fetches)
  }

  @Test("conditioning the first window on the transition model keeps the total")
  func condition() {
    var p = [0.5, 0.25, 0.125]
    PlannerMath.condition(&p, firstSeconds: 600, step: 600, on: 0.2)
    // Inside: 0.5 → 0.2; outside: (0.875 − 0.2) / 0.375 = 1.8 × each.
    #expect(abs(p[0] - 0.2) < 1e-12 && abs(p[1] - 0.45) < 1e-12 && abs(p[2] - 0.225) < 1e-12)
    #expect(abs(PlannerMath.ramp(now: 0, atHorizon: 0.6, after: 900, horizon: 1800) - 0.3) < 1e-12)
    #expect(PlannerMath.ramp(now: 1, atHorizon: 0.6, after: 3600, horizon: 1800) == 0.6)
  }

  @Test("transition model: shares per other app, shrunk toward the user's overall share (worked example)")
  func transitions() {
    var t = UserTrace(user: "tr", start: 0, end: 30_000)
    let own = t.appIndex("own"), x = t.appIndex("x"), y = t.appIndex("y")
    t.events = [
      TraceEvent(time: 0, kind: .open, app: x, value: 1),  // counted: own follows at 300 (hit)
      TraceEvent(time: 300, kind: .open, app: own, value: 1),
      TraceEvent(time: 400, kind: .open, app: x, value: 1),  // own opened 100 s ago: not counted
      TraceEvent(time: 5000, kind: .open, app: y, value: 1),  // counted: own only at 9000 (miss)
      TraceEvent(time: 9000, kind: .open, app: own, value: 1),
      TraceEvent(time: 20_000, kind: .open, app: x, value: 1),  // counted: no later own open (miss)
    ]
    let m = TransitionModel(t, app: own, window: 600)
    // x: 1 of 2, y: 0 of 1, overall 1 of 3; prior 5 pseudo-opens.
    #expect(abs(m.probability(after: x)! - (1 + 5.0 / 3) / 7) < 1e-12)
    #expect(abs(m.probability(after: y)! - (5.0 / 3) / 6) < 1e-12)
    #expect(abs(m.probability(after: 9)! - 1.0 / 3) < 1e-12)
    #expect(TransitionModel(t, app: own, window: 0).probability(after: x) == nil)
  }

  @Test("settings parse and print canonically; a step beyond the horizon is refused")
  func settings() throws {
    let spec = try PolicySpec(parsing: "planner:budget=5,horizon=1h")
    #expect(spec.description == "planner:budget=5,horizon=1h")
    #expect(try PolicySpec(parsing: "planner:budget=10").description == "planner")
    #expect(throws: PolicySpecError.self) { try PolicySpec(parsing: "planner:step=2h,horizon=1h") }
    #expect(throws: PolicySpecError.self) { try PolicySpec(parsing: "planner:budget=-1") }
  }

  @Test("the split forms of the plan's arithmetic (utilities after a fetch, activity factors, survivals) give the direct formulas' bits")
  func splitArithmetic() {
    var rng = SplitMix64(seed: 5)
    for K in [1, 2, 7, 24] {
      let step = 300.0, lambda = 1e-4 + rng.uniform() * 1e-3
      let rho = (0..<K).map { _ in rng.uniform() * 1e-3 }
      let base = (0..<K).map { _ in rng.uniform() - 0.5 }
      let activity = (0..<K).map { _ in rng.uniform() * 0.4 }
      // The formulas as written before the planner kept their parts.
      var s = 1.0
      let p = rho.map { r in
        let q = exp(-max(0, r) * step)
        defer { s *= q }
        return s * (1 - q)
      }
      #expect(PlannerMath.nextOpenProbabilities(intensities: rho, step: step).map(\.bitPattern) == p.map(\.bitPattern))
      let after = (0..<K).map {
        PlannerMath.utility(sinceSync: (Double($0) + 0.5) * step, lambda: lambda, fresh: 1, agePerHour: 0.5)
      }
      var fromEdge = [Double](repeating: 1, count: K), toMid = [Double](repeating: 1, count: K)
      var edge = 0.0
      for j in 0..<K {
        fromEdge[j] = exp(min(edge, 600))
        toMid[j] = exp(-min(edge + activity[j] / 2, 1200))
        edge += activity[j]
      }
      var v = [Double](repeating: 0, count: K)
      for k in 0..<K {
        var acc = 0.0
        for j in k..<K { acc += p[j] * (after[j - k] - base[j]) * toMid[j] }
        v[k] = acc * fromEdge[k]
      }
      var before = [Double](repeating: 0, count: K), busy = [Double](repeating: 0, count: K)
      var acc = 0.0, cum = 0.0
      edge = 0
      for j in 0..<K {
        before[j] = acc
        acc += p[j] * (after[j] - base[j]) * exp(-(edge + activity[j] / 2))
        edge += activity[j]
        if j + 1 < K {
          cum += activity[j]
          busy[j + 1] = -expm1(-cum)
        }
      }
      let (got, gotBefore) = values(p, base, step: step, lambda: lambda, agePerHour: 0.5, activity: activity)
      #expect(got.map(\.bitPattern) == v.map(\.bitPattern))
      #expect(gotBefore.map(\.bitPattern) == before.map(\.bitPattern))
      #expect(ActivityTerms(activity, bins: K).busy.map(\.bitPattern) == busy.map(\.bitPattern))
      // Candidate 0 alone, then the rest: the same values.
      var split = [Double](repeating: 0, count: K)
      let terms = ActivityTerms(activity, bins: K)
      PlannerMath.candidateValues(&split, candidates: 0..<1, openProbability: p, baseline: base, after: after, activity: terms)
      PlannerMath.candidateValues(&split, candidates: 1..<K, openProbability: p, baseline: base, after: after, activity: terms)
      #expect(split.map(\.bitPattern) == v.map(\.bitPattern))
    }
  }

  @Test("decisions that reuse the decisions before them (intensities, baselines, survivals, activity factors) launch exactly as decisions computing everything afresh")
  func rememberedDecisions() {
    let population = SyntheticPopulation(seed: 20260601, days: 14)
    var launches = 0
    for u in 0..<3 {
      let trace = population.user(u)
      let (train, test) = trace.split(at: trace.start + 10 * 86_400)
      var counts: [Int32: Int] = [:]
      for e in trace.events where e.kind == .open { counts[e.app, default: 0] += 1 }
      let app = counts.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }!.key
      let world = WorldParameters()
      var results: [[FetchRecord]] = []
      var logs: [[PlannerDecision]] = []
      for (remembers, logging) in [(true, false), (false, false), (true, true), (false, true)] {
        var p = PlannerPolicy(params: PlannerParameters(), world: world, training: train, app: app, population: nil)
        p.remembers = remembers
        p.logDecisions = logging
        let r = replay(
          &p, user: PreparedUser(trace: test, world: world), app: app,
          content: ContentTimeline(trace: test, app: app, world: world, seed: 3), options: ReplayOptions(seed: 3))
        results.append(r.fetches)
        logs.append(p.decisions)
      }
      let sameFetches = results[0] == results[1] && results[0] == results[2]
      let sameDecisions = logs[2] == logs[3]
      #expect(sameFetches, "user \(u): \(results.map(\.count)) fetches")
      #expect(sameDecisions, "user \(u): \(logs[2].count) and \(logs[3].count) decisions")
      launches += results[0].count
    }
    #expect(launches > 20)
  }

  @Test("planner settings replayed with one learning context fit the device models once, with the results of separate fits")
  func sharedDeviceModels() throws {
    let trace = SyntheticPopulation(seed: 20260601, days: 14).user(1)
    let (train, test) = trace.split(at: trace.start + 10 * 86_400)
    let world = WorldParameters()
    let user = PreparedUser(trace: test, world: world)
    let content = ContentTimeline(trace: test, app: 0, world: world, seed: 4)
    let specs = try ["planner:budget=5", "planner:budget=50", "planner:budget=50,session_credit=0"].map {
      try PolicySpec(parsing: $0)
    }
    let shared = LearningContext(training: train, population: nil)
    for spec in specs {
      let together = spec.replay(user: user, app: 0, content: content, seed: 4, recordEvents: true, learning: shared)
      let alone = spec.replay(
        user: user, app: 0, content: content, seed: 4, recordEvents: true,
        learning: LearningContext(training: train, population: nil))
      let same = together.fetches == alone.fetches
      #expect(same, "\(spec): \(together.fetches.count) and \(alone.fetches.count) fetches")
    }
    #expect(shared.deviceModels.computed == 1)
    #expect(PlannerPolicy.fitDeviceModels(train) != nil)  // the models exist, so the sharing is exercised
  }

  // MARK: behaviour in replay

  /// IMP's test user (LTE, two wakes an hour, another app 40 times a day):
  /// the second week replayed under the planner.
  /// (Or `t`'s second week, content and failures drawn with `seed`.)
  static func run(
    _ params: PlannerParameters, trace t: UserTrace = IMPPolicyTests.user(), seed: UInt64 = 7
  ) -> (AppReplay, PlannerPolicy) {
    let world = IMPPolicyTests.world
    let (train, test) = t.split(at: t.start + 7 * 86_400)
    let population = try? HabitFitter().fitPopulation([HabitSample(trace: train, app: 0, from: train.start, to: train.end)])
    var p = PlannerPolicy(params: params, world: world, training: train, app: 0, population: population)
    let r = replay(
      &p, user: PreparedUser(trace: test, world: world), app: 0,
      content: ContentTimeline(trace: test, app: 0, world: world, seed: seed), options: ReplayOptions(seed: seed))
    return (r, p)
  }

  @Test("each local day spends at most the budget plus one fetch; fetches ride other radio activity", arguments: [5.0, 20, 60])
  func budget(_ b: Double) {
    var params = PlannerParameters()
    params.budgetJPerDay = b
    let (r, p) = Self.run(params)
    #expect(r.summary.fetches > 0)
    // By the planner's budget day (from its start hour; the trace is in UTC).
    var energy: [Int: Double] = [:]
    for f in r.fetches { energy[Int(((f.start - p.budget.dayStartHour * 3600) / 86_400).rounded(.down)), default: 0] += f.energyJ }
    // One isolated LTE fetch costs about 12 J.
    for (day, e) in energy { #expect(e <= b + 13, "day \(day): \(e) J for a budget of \(b) J") }
    // An isolated LTE fetch costs ≈ 12 J; inside others' activity ≈ 1 J.
    let mean = r.fetches.map(\.energyJ).reduce(0, +) / Double(r.fetches.count)
    #expect(mean < 4, "mean energy per fetch \(mean) J")
  }

  /// The budget is the battery's: a test week on the charger leaves a
  /// budget of 0 J whole, so the planner fetches, all on the charger's
  /// energy; off the charger the same budget stops every fetch.
  @Test("the budget counts battery energy only: 0 J a day fetches on the charger, never off it")
  func chargerEnergyIsFree() {
    var params = PlannerParameters()
    params.budgetJPerDay = 0
    var t = IMPPolicyTests.user()
    let split = t.start + 7 * 86_400
    t.events.insert(TraceEvent(time: split, kind: .chargeStart), at: t.events.firstIndex { $0.time >= split }!)
    let (plugged, _) = Self.run(params, trace: t)
    #expect(plugged.summary.fetches > 0)
    #expect(plugged.fetches.allSatisfy { $0.outcome.charging && $0.outcome.batteryEnergyJ == 0 })
    #expect(Self.run(params).0.summary.fetches == 0)
  }

  @Test("an empty training window: no transition or device model, no activity; the replay still runs within budget")
  func emptyTraining() {
    let t = IMPPolicyTests.user()
    let world = IMPPolicyTests.world
    let (train, test) = t.split(at: t.start)
    #expect(PlannerPolicy.fitDeviceModels(train) == nil)
    #expect(PlannerPolicy.activityRates(train, app: 0).allSatisfy { $0 == 0 })
    #expect(TransitionModel(train, app: 0, window: 600).probability(after: 1) == nil)
    var params = PlannerParameters()
    params.budgetJPerDay = 20
    var p = PlannerPolicy(params: params, world: world, training: train, app: 0, population: nil)
    let r = replay(
      &p, user: PreparedUser(trace: test, world: world), app: 0,
      content: ContentTimeline(trace: test, app: 0, world: world, seed: 7), options: ReplayOptions(seed: 7))
    #expect(r.summary.energyJ.isFinite && r.summary.energyJ <= (20 + 13) * 14)
  }

  @Test("spending follows the budget: no launch cap, spacing or now-or-later choice stops it below the budget")
  func spendingGrows() {
    // Energy per day of the test week at budgets 20, 60 and 200 J/day.
    let perDay = [20.0, 60, 200].map { b -> Double in
      var params = PlannerParameters()
      params.budgetJPerDay = b
      return Self.run(params).0.summary.energyJ / 7
    }
    // Each budget is at least half spent, and each larger one buys more
    // (a now-or-later choice, 48 launches a day and 10 min spacing held it
    // to 10.9, 22.5 and 39.5 J/day).
    #expect(perDay[1] > perDay[0] && perDay[2] > perDay[1], "\(perDay)")
    for (b, e) in zip([20.0, 60, 200], perDay) { #expect(e >= 0.5 * b, "\(perDay)") }
    // And stays within the budget (plus one isolated LTE fetch a day).
    for (b, e) in zip([20.0, 60, 200], perDay) { #expect(e <= b + 13, "\(perDay)") }
  }

  /// With a fixed price no budget binds: the same fetches at a budget of
  /// 0 J (which alone would stop every fetch off the charger) and of 10⁶ J.
  /// A price no open's value reaches stops every fetch, and a lower price
  /// spends more for fresher opens.
  @Test("a fixed price of a joule: no budget binds; a lower price spends more for fresher opens")
  func fixedPrice() {
    func run(price: Double, budget: Double = 0) -> AppReplay {
      var params = PlannerParameters()
      params.fixedPrice = price
      params.budgetJPerDay = budget
      return Self.run(params).0
    }
    let cheap = run(price: 0.01), dear = run(price: 0.1), rich = run(price: 0.01, budget: 1e6)
    let same = cheap.fetches.map(\.start) == rich.fetches.map(\.start)
    #expect(same, "\(cheap.fetches.count) fetches at 0 J, \(rich.fetches.count) at 10⁶ J")
    #expect(dear.summary.fetches > 0 && cheap.summary.fetches > dear.summary.fetches)
    #expect(cheap.summary.energyJ > dear.summary.energyJ)
    #expect(cheap.summary.freshRatio > dear.summary.freshRatio)
    #expect(run(price: 1e6).summary.fetches == 0)
  }

  @Test("a larger budget buys fresher opens")
  func monotone() {
    var low = PlannerParameters(), high = PlannerParameters()
    low.budgetJPerDay = 3
    high.budgetJPerDay = 60
    let (a, _) = Self.run(low), (b, _) = Self.run(high)
    #expect(b.summary.energyJ > a.summary.energyJ)
    #expect(b.summary.freshRatio > a.summary.freshRatio)
  }

  /// A week of training and a test week: LTE all day, WiFi from 18:00 to
  /// 08:00, the app opened daily at 18:20 and 12:00 (UTC trace).
  static func commuter() -> (train: UserTrace, test: UserTrace) {
    var t = UserTrace(user: "wifi", start: 1_767_571_200, end: 1_767_571_200 + 14 * 86_400)
    let a = t.appIndex("a")
    var ev: [TraceEvent] = []
    for d in 0..<14 {
      let day = t.start + Double(d) * 86_400
      ev.append(TraceEvent(time: day + 8 * 3600, kind: .network, value: Double(NetworkKind.lte.rawValue)))
      ev.append(TraceEvent(time: day + 12 * 3600, kind: .open, app: a, value: 30))
      ev.append(TraceEvent(time: day + 18 * 3600, kind: .network, value: Double(NetworkKind.wifi.rawValue)))
      ev.append(TraceEvent(time: day + 18 * 3600 + 1200, kind: .open, app: a, value: 30))
    }
    t.events = [TraceEvent(time: t.start, kind: .network, value: Double(NetworkKind.wifi.rawValue))] + ev
    return t.split(at: t.start + 7 * 86_400)
  }

  @Test("with the device models, a coming WiFi period makes a later fetch cheaper than one on LTE now")
  func defersToWiFi() throws {
    let (train, test) = Self.commuter()
    let models = try #require(PlannerPolicy.fitDeviceModels(train))
    var withModels: [PlannerDecision] = [], without: [PlannerDecision] = []
    for use in [true, false] {
      var params = PlannerParameters()
      params.useDeviceModels = use ? 1 : 0
      params.budgetJPerDay = 100
      var p = PlannerPolicy(
        params: params, world: WorldParameters(), training: train, app: 0, population: nil,
        deviceModels: use ? models : nil)
      p.logDecisions = true
      _ = replay(
        &p, user: PreparedUser(trace: test, world: WorldParameters()), app: 0,
        content: ContentTimeline(trace: test, app: 0, world: WorldParameters(), seed: 3), options: ReplayOptions(seed: 3))
      if use { withModels = p.decisions } else { without = p.decisions }
    }
    // Decisions on LTE in the half hour before WiFi comes (17:30–18:00).
    func late(_ d: PlannerDecision) -> Bool {
      let h = (d.time - test.start).truncatingRemainder(dividingBy: 86_400) / 3600
      return h >= 17.5 && h < 18 && d.costNowJ > 5
    }
    let a = withModels.filter(late), b = without.filter(late)
    #expect(!a.isEmpty && !b.isEmpty)
    #expect(a.contains { ($0.pWiFi ?? 0) > 0.5 && $0.bestLaterCostJ < 0.5 * $0.costNowJ && !$0.launched })
    #expect(!b.contains { $0.bestLaterCostJ < 0.5 * $0.costNowJ })
    #expect(b.allSatisfy { $0.pWiFi == nil })
  }

  // MARK: pacing the budget

  @Test("the quiet hour is the hour with the smallest share of the opens, the first on ties")
  func quietHour() {
    // Hourly shares 0.05 everywhere but 0.02 at 3 and at 5: cumulative sums.
    var hourly = [Double](repeating: 0.05, count: 24)
    hourly[3] = 0.02
    hourly[5] = 0.02
    var acc = 0.0
    let pace = hourly.map { acc += $0; return acc }
    #expect(PlannerBudget.quietHour(pace) == 3)
    hourly[3] = 0.03
    acc = 0
    #expect(PlannerBudget.quietHour(hourly.map { acc += $0; return acc }) == 5)
  }

  @Test("gap-weighted pacing: each open weighs the time since the app's previous open (worked example)")
  func gapPacing() {
    // Two opens in training: 01:00 (the first: its previous open unknown,
    // it weighs the 24 h cap) and 10:00, 9 h later; the pseudo-opens weigh
    // the mean weight, 16.5 h, each, 24 of them spread as the population's
    // hourly shares.
    var t = UserTrace(user: "g", start: 0, end: 86_400)
    let a = t.appIndex("a")
    t.events = [TraceEvent(time: 3600, kind: .open, app: a, value: 1), TraceEvent(time: 36_000, kind: .open, app: a, value: 1)]
    let pace = PlannerBudget.gapPacing(t, apps: [a])
    let prior = ContentUpdates.ubiqlogHourlyShare
    let mean = (86_400 + 32_400) / 2.0
    let total = 86_400 + 32_400 + 24 * mean
    #expect(abs(pace[0] - 24 * mean * prior[0] / total) < 1e-12)
    #expect(abs(pace[9] - (86_400 + 24 * mean * prior[0...9].reduce(0, +)) / total) < 1e-12)
    #expect(abs(pace[10] - (86_400 + 32_400 + 24 * mean * prior[0...10].reduce(0, +)) / total) < 1e-12)
    #expect(abs(pace[23] - 1) < 1e-12)
    // A long night before the first open of the morning: its hour holds a
    // larger share than by the count of opens.
    let (train, _) = Self.sleeper().split(at: Self.sleeper().start + 7 * 86_400)
    let byGap = PlannerBudget.gapPacing(train, apps: [0]), byCount = UsagePacing.pacing(training: train, app: 0)
    #expect(byGap[7] - byGap[6] > 2 * (byCount[7] - byCount[6]), "\(byGap[7] - byGap[6]) against \(byCount[7] - byCount[6])")
  }

  @Test("the budget day starts at the day-start hour; the replay's first budget day counts its part before the window as spent")
  func budgetDay() {
    let (train, test) = Self.sleeper().split(at: Self.sleeper().start + 7 * 86_400)
    var params = PlannerParameters()
    params.budgetJPerDay = 50
    params.dayStartHour = 4
    for startHour in [4.0, 18] {
      var p = PlannerPolicy(params: params, world: IMPPolicyTests.world, training: train, app: 0, population: nil)
      #expect(p.budget.dayStartHour == 4)
      let w = test.start + startHour * 3600
      #expect(abs(p.budget.released(at: w) - (startHour == 4 ? params.paceSlack : min(1, params.paceSlack + p.budget.pace[17] - p.budget.pace[3]))) < 1e-12)
      var ctx = PolicyContext(now: w, app: 0, appName: "a", windowStart: w, timeZone: train.timeZone, network: .lte)
      p.decide(&ctx)
      // From 04:00 nothing is spent; from 18:00, the opens' share from 04:00 to 18:00.
      let before = startHour == 4 ? 0 : (p.budget.pace[17] - p.budget.pace[3]) * params.budgetJPerDay
      #expect(abs(p.budget.spentToday - before) < 1e-9, "window from \(startHour) h: \(p.budget.spentToday) J")
      if startHour == 18 { #expect(p.budget.spentToday > 10) }
    }
    // The default starts the day at the quiet hour of the pacing.
    let q = PlannerPolicy(params: PlannerParameters(), world: IMPPolicyTests.world, training: train, app: 0, population: nil)
    #expect(q.budget.dayStartHour == PlannerBudget.quietHour(UsagePacing.pacing(training: train, app: 0)))
  }

  /// Two weeks on LTE of a user who sleeps from about 22:00 to 07:40: the
  /// app is opened first thing in the morning (07:40–08:00), before any
  /// other activity, then ten times from 10:00 to 22:00; another app 20
  /// times from 10:00 to 22:00; no wakes (UTC trace).
  static func sleeper() -> UserTrace {
    var rng = SplitMix64(seed: 12)
    var t = UserTrace(user: "sleeper", start: 1_767_571_200, end: 1_767_571_200 + 14 * 86_400)
    let a = t.appIndex("a"), b = t.appIndex("b")
    var ev: [TraceEvent] = [TraceEvent(time: t.start, kind: .network, value: Double(NetworkKind.lte.rawValue))]
    for d in 0..<14 {
      let day = t.start + Double(d) * 86_400
      ev.append(TraceEvent(time: day + 7 * 3600 + 2400 + rng.uniform() * 1200, kind: .open, app: a, value: 30))
      for h in [10.0, 11, 12, 13, 14, 15.5, 17, 18.5, 20, 21.8] {
        ev.append(TraceEvent(time: day + h * 3600 + rng.uniform() * 600, kind: .open, app: a, value: 30))
      }
      for _ in 0..<20 {
        ev.append(TraceEvent(time: day + 10 * 3600 + rng.uniform() * 12 * 3600, kind: .open, app: b, value: 10 + rng.uniform() * 60))
      }
    }
    ev.sort { $0.time < $1.time }
    t.events = ev
    return t
  }

  /// Mean age, s, of the sleeper's first open of each test-week morning under `params`.
  static func morningAge(_ params: PlannerParameters) -> Double {
    let t = sleeper()
    let test = t.split(at: t.start + 7 * 86_400).test
    let r = run(params, trace: t, seed: 5).0
    let mornings = r.opens.filter { ($0.time - test.start).truncatingRemainder(dividingBy: 86_400) < 8 * 3600 }
    precondition(mornings.count == 7, "one morning open a day")
    return mornings.map(\.ageS).reduce(0, +) / Double(mornings.count)
  }

  @Test("the first open of a morning gets its fetch: the budget is released with the age the opens would see, not their count")
  func morningFetch() {
    var params = PlannerParameters()
    params.budgetJPerDay = 40
    var byCount = params
    byCount.paceByGap = 0
    let now = Self.morningAge(params), before = Self.morningAge(byCount)
    // Paced by the count of opens, the 12 J fetch from idle LTE does not fit
    // the morning's released budget (8 J up front and the morning open's
    // share, one open in eleven) until after the open: the night's age
    // (about 9 h) is shown. Weighted by the time since the previous open,
    // the morning open's share (about a third of the day's) releases it.
    #expect(before > 5 * 3600, "\(before) s")
    #expect(now < 0.25 * before, "\(now) s against \(before) s")
  }

}
