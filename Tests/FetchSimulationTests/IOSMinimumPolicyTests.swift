import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld
import Foundation
import Testing

@testable import FetchSimulation

@Suite("iOS Minimum policy")
struct IOSMinimumPolicyTests {
  @Test("policy strings parse and print canonically")
  func parsing() throws {
    #expect(try PolicySpec(parsing: "ios-minimum").description == "ios-minimum")
    #expect(try PolicySpec(parsing: "ios-minimum:price=2,spacing=30m").description == "ios-minimum:spacing=30m,price=2")
    let c = try PolicySpec(parsing: "ios-custom:1h")
    #expect(c.description == "ios-custom:1h")
    let custom = try #require(c.configuration(of: IOSCustomFamily.self))
    #expect(custom.interval == 3600 && custom.parameters.minSpacingS == 3600)
    #expect(c.configuration(of: IOSMinimumFamily.self) == nil)
    #expect(try PolicySpec(parsing: "ios-custom:2h,price=0.5").description == "ios-custom:2h,price=0.5")
    #expect(throws: PolicySpecError.self) { try PolicySpec(parsing: "ios-minimum:speed=3") }
    #expect(throws: PolicySpecError.self) { try PolicySpec(parsing: "ios-minimum:price=-1") }
    #expect(throws: PolicySpecError.self) { try PolicySpec(parsing: "ios-custom") }
    #expect(throws: PolicySpecError.self) { try PolicySpec(parsing: "ios-minimum:cellular_share=2") }
    for s in ["ios-minimum:value=10,price=3", "ios-custom:45m,launches=12"] {
      #expect(try PolicySpec(parsing: PolicySpec(parsing: s).description) == PolicySpec(parsing: s))
    }
  }

  @Test("the update-rate estimate recovers λ from NewData/NoData outcomes")
  func rateEstimate() {
    var rng = SplitMix64(seed: 4)
    let lambda = 2.0 / 3600
    var ev: [(gap: Double, new: Bool)] = []
    for _ in 0..<2000 {
      let gap = 300 + rng.uniform() * 7200
      ev.append((gap, rng.uniform() < -expm1(-lambda * gap)))
    }
    let est = UpdateRateEvidence.estimateRate(ev, prior: 1.0 / 3600)
    #expect(abs(est / lambda - 1) < 0.1, "estimate \(est * 3600)/h")
    #expect(abs(UpdateRateEvidence.estimateRate([], prior: 1.0 / 3600) * 3600 - 1) < 1e-6)
  }

  /// A week-long user who opens app "a" every evening and uses other apps
  /// often, on LTE, with a battery that spends two days under 20 %.
  static func user() -> UserTrace {
    var rng = SplitMix64(seed: 21)
    var t = UserTrace(user: "m", start: 1_767_571_200, end: 1_767_571_200 + 14 * 86_400)
    let a = t.appIndex("a"), b = t.appIndex("b")
    var ev: [TraceEvent] = [TraceEvent(time: t.start, kind: .network, value: Double(NetworkKind.lte.rawValue))]
    for d in 0..<14 {
      let day = t.start + Double(d) * 86_400
      for k in 0..<3 { ev.append(TraceEvent(time: day + 19 * 3600 + Double(k) * 1800 + rng.uniform() * 600, kind: .open, app: a, value: 30)) }
      for _ in 0..<20 { ev.append(TraceEvent(time: day + 8 * 3600 + rng.uniform() * 14 * 3600, kind: .open, app: b, value: 20)) }
      for h in stride(from: 0, to: 24, by: 2) {
        let low = d == 9 || d == 10
        ev.append(TraceEvent(time: day + Double(h) * 3600, kind: .battery, value: low ? 12 : 70))
      }
    }
    ev.sort { $0.time < $1.time }
    t.events = ev
    return t
  }

  static func run(_ spec: PolicySpec, world: WorldParameters = WorldParameters()) -> AppReplay {
    let t = user()
    let (train, test) = t.split(at: t.start + 7 * 86_400)
    let population = try? HabitFitter().fitPopulation([HabitSample(trace: train, app: 0, from: train.start, to: train.end)])
    return spec.replay(
      user: PreparedUser(trace: test, world: world), app: 0,
      content: ContentTimeline(trace: test, app: 0, world: world, seed: 3), seed: 3, recordEvents: true,
      learning: LearningContext(training: train, population: population))
  }

  @Test("it fetches, and never while the battery is under the gate and not charging")
  func batteryGate() throws {
    let r = Self.run(try PolicySpec(parsing: "ios-minimum:price=0.2"))
    #expect(r.summary.fetches > 0)
    let low = (9...10).map { Self.user().start + Double($0) * 86_400 }
    for f in r.fetches {
      #expect(!(f.start >= low[0] && f.start < low[1] + 86_400), "fetch at \(f.start) while battery 12 %")
    }
  }

  @Test("launches respect the rate limit and ios-custom's floor")
  func spacing() throws {
    for (s, gap) in [("ios-minimum:price=0", 900.0), ("ios-custom:2h,price=0", 7200)] {
      let r = Self.run(try PolicySpec(parsing: s))
      #expect(r.fetches.count > 3)
      for (x, y) in zip(r.fetches, r.fetches.dropFirst()) { #expect(y.start - x.start >= gap - 1e-6, "\(s)") }
    }
  }

  @Test("the cellular data budget is never exceeded", arguments: [2e6, 2e7])
  func dataBudget(monthly: Double) throws {
    let r = Self.run(try PolicySpec(parsing: "ios-minimum:price=0,cellular_monthly_bytes=\(Int(monthly)),cellular_share=1"))
    // The test week lies in one calendar month (2026-01-12..19): cumulative
    // cellular bytes stay within the paced allowance of the last day.
    let cellular = r.fetches.filter(\.network.isCellular).map(\.bytes).reduce(0, +)
    // A launch is allowed when the spending plus the expected bytes fit, so
    // the total may pass the allowance by one response's excess over that.
    let w = WorldParameters()
    let excess = max(0, (r.fetches.map(\.bytes).max() ?? 0) - (w.fetch.requestBytes + w.fetch.newDataMedianBytes))
    #expect(cellular <= monthly * 19 / 31 + excess + 1)
    #expect(r.summary.cellularBytes == cellular)
  }

  @Test("a higher energy price never costs more energy")
  func priceMonotone() throws {
    let e = try [0.1, 1, 10].map { Self.run(try PolicySpec(parsing: "ios-minimum:price=\($0)")).summary.energyJ }
    #expect(e[0] >= e[1] && e[1] >= e[2], "\(e)")
  }

  /// A synthetic phone in New York: its whole trace, the training part
  /// (8 days), the replayed part (6 days), its three most opened apps and
  /// their content timelines.
  struct Phone {
    var trace: UserTrace
    var train: UserTrace
    var test: UserTrace
    var apps: [Int32]
    var contents: [ContentTimeline]
  }

  /// `count` synthetic phones (network, battery, charging, wakes) of
  /// population `seed` whose replayed week holds New York's change to
  /// daylight time (2026-03-08).
  static func newYorkPhones(seed: UInt64, count: Int, world: WorldParameters) -> [Phone] {
    var pp = SyntheticPopulation.Parameters()
    pp.startDate = "2026-02-26"
    let pop = SyntheticPopulation(seed: seed, days: 14, parameters: pp)
    return (0..<count).map { u in
      var t = pop.user(u)
      t.timeZone = .named("America/New_York")
      let (train, test) = t.split(at: t.start + 8 * 86_400)
      let apps = Array(t.openCounts().enumerated().sorted { $0.element > $1.element }.prefix(3).map { Int32($0.offset) })
      let contents = apps.map { ContentTimeline(trace: test, app: $0, world: world, seed: 5) }
      return Phone(trace: t, train: train, test: test, apps: apps, contents: contents)
    }
  }

  /// Expects two device replays to have the same fetches, opens and summaries, app by app.
  static func expectSameReplay(
    _ a: DeviceReplay, _ b: DeviceReplay, _ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation
  ) {
    #expect(a.apps.map(\.fetches) == b.apps.map(\.fetches), comment, sourceLocation: sourceLocation)
    #expect(a.apps.map(\.opens) == b.apps.map(\.opens), comment, sourceLocation: sourceLocation)
    #expect(a.apps.map(\.summary) == b.apps.map(\.summary), comment, sourceLocation: sourceLocation)
  }

  @Test(
    "passing over checks that stop at a gate changes nothing (device budgets, a DST change, refits)",
    arguments: [
      "ios-minimum", "ios-custom:1h", "ios-minimum:launches=6,energy_budget_pct=0.05",
      "ios-minimum:spacing=40m,check=7m,refit_hour=2.5,pace_slack=0", "ios-minimum:price=0.05,launches=20",
    ])
  func passingOverChecks(spec: String) throws {
    let settings = try PolicySpec(parsing: spec)
    let params = try #require(
      settings.configuration(of: IOSMinimumFamily.self) ?? settings.configuration(of: IOSCustomFamily.self)?.parameters)
    let world = WorldParameters()
    var passed = 0
    for (u, phone) in Self.newYorkPhones(seed: 11, count: 4, world: world).enumerated() {
      func replay(passingOver: Bool) -> (DeviceReplay, Int) {
        let fits = HabitFitCache(trace: phone.trace), ledger = DeviceBudgetLedger()
        var ps = phone.apps.map {
          var p = IOSMinimumPolicy(
            params: params, world: world, training: phone.train, app: $0, population: nil, fits: fits, ledger: ledger)
          p.passesOverGatedChecks = passingOver
          return p
        }
        let r = replayDevice(
          &ps, user: PreparedUser(trace: phone.test, world: world), apps: phone.apps, contents: phone.contents)
        return (r, ps.map(\.checksPassedOver).reduce(0, +))
      }
      let (fast, n) = replay(passingOver: true)
      let (every, none) = replay(passingOver: false)
      #expect(none == 0)
      Self.expectSameReplay(fast, every, "user \(u)")
      passed += n
    }
    // The test exercises the shortcut.
    #expect(passed > 0)
  }

  @Test("settings sharing their open probabilities replay as each does alone (other prices, horizons, refit hours, floors)")
  func sharedOpenProbabilities() throws {
    let specs = try [
      "ios-minimum:price=0.05", "ios-minimum", "ios-minimum:price=2", "ios-custom:1h", "ios-minimum:horizon=30m",
      "ios-minimum:price=0.05,refit_hour=2.5",
    ].map { try PolicySpec(parsing: $0) }
    #expect(PolicySpec.sharesOpenProbabilities(specs))
    #expect(!PolicySpec.sharesOpenProbabilities(Array(specs.prefix(2))))
    #expect(!PolicySpec.sharesOpenProbabilities([specs[0], try PolicySpec(parsing: "planner")]))
    // Every setting at device scope.
    let world = WorldParameters()
    var hits = 0
    for (u, phone) in Self.newYorkPhones(seed: 12, count: 3, world: world).enumerated() {
      let (train, apps) = (phone.train, phone.apps)
      let user = PreparedUser(trace: phone.test, world: world, apps: apps)
      let shared = LearningContext(
        training: train, population: nil, fits: HabitFitCache(trace: phone.trace, sharesOpenProbabilities: true))
      for spec in specs {
        let together = spec.replay(
          user: user, apps: apps, contents: phone.contents, scope: .device, seed: 5, recordEvents: true,
          learning: shared)
        let alone = spec.replay(
          user: user, apps: apps, contents: phone.contents, scope: .device, seed: 5, recordEvents: true,
          learning: LearningContext(training: train, population: nil, fits: HabitFitCache(trace: phone.trace)))
        Self.expectSameReplay(together, alone, "user \(u), \(spec)")
      }
      // The training fit's probabilities (the replay's first day) were read by later settings.
      for a in apps {
        let table = try #require(
          shared.fits.openProbabilities(
            user: phone.trace.user, app: a, from: train.start, to: train.end, base: train.end, fitter: HabitFitter()))
        hits += table.hits
      }
    }
    #expect(hits > 0)
  }

  @Test("the checks passed over end at the first one a gate may not stop, a new local day or a due refit")
  func nextCheckBounds() throws {
    var params = IOSMinimumParameters()
    params.minSpacingS = 7200
    let training = TestTraces.user(seed: 1, days: 2, opensPerHour: 1)
    let day = 19_700
    let ten = Double(day) * 86_400 + 10 * 3600, late = ten + 13 * 3600  // 10:00 and 23:00 UTC
    func policy(lastLaunch: Double = -.infinity, launches: Int = 0) -> IOSMinimumPolicy {
      var p = IOSMinimumPolicy(params: params, world: WorldParameters(), training: training, app: 0, population: nil)
      p.day = day
      p.lastLaunch = lastLaunch
      p.launchesToday = launches
      return p
    }
    // Rate-limited for two hours: the first check that may launch.
    var p = policy(lastLaunch: ten)
    #expect(p.nextCheck(after: ten, fetchPending: true) == ten + 7200)
    #expect(p.checksPassedOver == 23)
    // No later than a due refit, nor past local midnight.
    p = policy(lastLaunch: ten)
    p.habit.nextRefit = ten + 1000
    #expect(p.nextCheck(after: ten, fetchPending: false) == ten + 1200)
    p = policy(lastLaunch: late)
    #expect(p.nextCheck(after: late, fetchPending: false) == late + 3600)
    // Past the day's launch budget: the day's remaining checks, unless a
    // fetch is pending (its outcome may raise the credit) or decisions are logged.
    p = policy(launches: 500)
    #expect(p.nextCheck(after: ten, fetchPending: false) == ten + 14 * 3600)
    p = policy(launches: 500)
    #expect(p.nextCheck(after: ten, fetchPending: true) == ten + 300)
    p = policy(lastLaunch: ten)
    p.logDecisions = true
    #expect(p.nextCheck(after: ten, fetchPending: false) == ten + 300)
    #expect(p.checksPassedOver == 0)
  }

  @Test("the shared pacing is each app's own, bit for bit, and another window is paced alone")
  func sharedPacing() {
    var t = SyntheticPopulation(seed: 2, days: 10).user(3)
    t.timeZone = .named("Europe/Berlin")
    let (train, test) = t.split(at: t.start + 7 * 86_400)
    // One app's pacing counted on its own, as the scheduler first did.
    func alone(_ trace: UserTrace, _ app: Int32) -> [Double] {
      var clock = LocalClock(trace.timeZone)
      var counts = ContentUpdates.ubiqlogHourlyShare.map { $0 * 24 }
      for e in trace.events where e.kind == .open && e.app == app { counts[min(23, Int(clock.hourOfDay(e.time)))] += 1 }
      return UsagePacing.cumulativeShares(counts)
    }
    let shared = TrainingPacing()
    for app in Int32(0)..<Int32(t.apps.count) {
      #expect(shared.pace(train, app: app) == UsagePacing.pacing(training: train, app: app))
      #expect(UsagePacing.pacing(training: train, app: app, shared: shared) == alone(train, app))
      #expect(UsagePacing.pacing(training: train, app: app, shared: nil) == alone(train, app))
      #expect(UsagePacing.pacing(training: train, app: app) == alone(train, app))
    }
    #expect(UsagePacing.pacing(training: train, app: -1) == alone(train, -1))
    #expect(shared.pace(test, app: 0) == UsagePacing.pacing(training: test, app: 0))
    #expect(shared.pace(train, app: 0) != shared.pace(test, app: 0))
  }

  @Test("skipping the habit model when even P(open) = 1 would not pay changes no decision", arguments: [0.2, 1, 5])
  func boundIsExact(price: Double) throws {
    let t = Self.user()
    let (train, test) = t.split(at: t.start + 7 * 86_400)
    var params = IOSMinimumParameters()
    params.energyPrice = price
    let world = WorldParameters()
    func replay(logging: Bool) -> (AppReplay, [IOSMinimumDecision]) {
      var p = IOSMinimumPolicy(
        params: params, world: world, training: train, app: 0, population: nil, fits: HabitFitCache(trace: t))
      // With the log on, every decision asks the habit model.
      p.logDecisions = logging
      let r = FetchSimulation.replay(
        &p, user: PreparedUser(trace: test, world: world), app: 0,
        content: ContentTimeline(trace: test, app: 0, world: world, seed: 3))
      return (r, p.decisions)
    }
    let (pruned, _) = replay(logging: false)
    let (full, decisions) = replay(logging: true)
    #expect(pruned.fetches == full.fetches)
    #expect(pruned.summary == full.summary)
    // The bound does skip some: decisions whose benefit at P(open) = 1 is below the cost.
    #expect(decisions.contains { $0.factor == .benefitBelowCost && $0.benefitJ / max($0.pOpen, 1e-300) < $0.costJ })
    #expect(decisions.contains { $0.launched })
  }
}
