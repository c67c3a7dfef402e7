import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld
import Foundation
import Testing

@testable import FetchSimulation

@Suite("IMP policy")
struct IMPPolicyTests {
  /// Two weeks (the first trains) of a heavy user on LTE: app "a" about 20
  /// times a day, app "b" 40 times, two wakes an hour, all in waking hours
  /// except the wakes.
  static func user() -> UserTrace {
    var rng = SplitMix64(seed: 33)
    var t = UserTrace(user: "imp", start: 1_767_571_200, end: 1_767_571_200 + 14 * 86_400)
    let a = t.appIndex("a"), b = t.appIndex("b")
    var ev: [TraceEvent] = [TraceEvent(time: t.start, kind: .network, value: Double(NetworkKind.lte.rawValue))]
    for d in 0..<14 {
      let day = t.start + Double(d) * 86_400
      for _ in 0..<20 {
        ev.append(TraceEvent(time: day + 7 * 3600 + rng.uniform() * 16 * 3600, kind: .open, app: a, value: 10 + rng.uniform() * 60))
      }
      for _ in 0..<40 {
        ev.append(TraceEvent(time: day + 7 * 3600 + rng.uniform() * 16 * 3600, kind: .open, app: b, value: 10 + rng.uniform() * 60))
      }
      for _ in 0..<48 { ev.append(TraceEvent(time: day + rng.uniform() * 86_400, kind: .wake, value: 2)) }
    }
    ev.sort { $0.time < $1.time }
    t.events = ev
    return t
  }

  static var world: WorldParameters {
    var w = WorldParameters()
    w.content.ratePerHour = 2
    return w
  }

  /// Replays the second week (on the charger throughout when `plugged`);
  /// returns the replay and the policy afterwards.
  static func run(_ params: IMPParameters, plugged: Bool = false) -> (AppReplay, IMPPolicy) {
    let t = user()
    var (train, test) = t.split(at: t.start + 7 * 86_400)
    if plugged { test.events.insert(TraceEvent(time: test.start, kind: .chargeStart), at: 0) }
    let population = try? HabitFitter().fitPopulation([HabitSample(trace: train, app: 0, from: train.start, to: train.end)])
    var p = IMPPolicy(params: params, world: world, training: train, app: 0, population: population)
    let r = replay(
      &p, user: PreparedUser(trace: test, world: world), app: 0,
      content: ContentTimeline(trace: test, app: 0, world: world, seed: 7), options: ReplayOptions(seed: 7))
    return (r, p)
  }

  static func params(energyPct: Double, dataMB: Double) -> IMPParameters {
    var p = IMPParameters()
    p.energyBudgetPctPerDay = energyPct
    p.dataBudgetMBPerDay = dataMB
    return p
  }

  /// IMP's energy budget is the battery's (a battery lifetime): a week on
  /// the charger leaves a budget of 0 % whole, so it fetches, and all of
  /// its energy is the charger's; off the charger the same budget stops
  /// every fetch.
  @Test("the energy budget counts battery energy only: a 0 % budget fetches on the charger, never off it")
  func chargerEnergyIsFree() {
    let (plugged, _) = Self.run(Self.params(energyPct: 0, dataMB: 1_000), plugged: true)
    #expect(plugged.summary.fetches > 0)
    #expect(plugged.summary.energyJ > 0 && plugged.summary.chargingEnergyJ == plugged.summary.energyJ)
    #expect(plugged.fetches.allSatisfy { $0.outcome.charging && $0.outcome.batteryEnergyJ == 0 })
    let (unplugged, _) = Self.run(Self.params(energyPct: 0, dataMB: 1_000))
    #expect(unplugged.summary.fetches == 0)
  }

  @Test("settings parse and print canonically")
  func settings() throws {
    let keys = IMPParameters.keys
    let p = try parseSettings("energy_budget_pct=1,data_budget_mb=2,gain=0.5", policy: "imp", defaults: IMPParameters(), keys: keys)
    #expect(p.energyBudgetPctPerDay == 1 && p.dataBudgetMBPerDay == 2 && p.gain == 0.5)
    #expect(settingsSuffix(p, defaults: IMPParameters(), keys: keys, separator: ":") == ":energy_budget_pct=1,data_budget_mb=2,gain=0.5")
    #expect(throws: PolicySpecError.self) { try parseSettings("gain=-1", policy: "imp", defaults: IMPParameters(), keys: keys) }
    #expect(throws: PolicySpecError.self) { try parseSettings("price_range=0.5", policy: "imp", defaults: IMPParameters(), keys: keys) }
  }

  @Test("each local day spends at most the energy and data budgets plus one fetch", arguments: [
    (0.5, 5.0), (0.05, 5), (0.5, 0.3), (2, 1),
  ])
  func budgets(energyPct: Double, dataMB: Double) {
    let (r, _) = Self.run(Self.params(energyPct: energyPct, dataMB: dataMB))
    #expect(r.summary.fetches > 0)
    let budgetJ = energyPct / 100 * Self.world.device.batteryCapacityJ
    var energy: [Int: Double] = [:], bytes: [Int: Double] = [:]
    for f in r.fetches {
      let day = Int((f.start / 86_400).rounded(.down))  // UTC trace
      energy[day, default: 0] += f.energyJ
      if f.network.isCellular { bytes[day, default: 0] += f.bytes }
    }
    let maxFetchJ = r.fetches.map(\.energyJ).max() ?? 0
    let maxFetchBytes = r.fetches.map(\.bytes).max() ?? 0
    for (d, e) in energy { #expect(e <= budgetJ + maxFetchJ, "day \(d): \(e) J of \(budgetJ)") }
    for (d, b) in bytes { #expect(b <= dataMB * 1e6 + maxFetchBytes, "day \(d): \(b) B of \(dataMB) MB") }
  }

  @Test("a larger budget gives at least as many fresh opens and spends more")
  func budgetMonotone() {
    let results = [0.02, 0.1, 1].map { Self.run(Self.params(energyPct: $0, dataMB: 50)).0.summary }
    for (small, large) in zip(results, results.dropFirst()) {
      #expect(large.freshRatio >= small.freshRatio, "\(small.freshRatio) → \(large.freshRatio)")
      #expect(large.fetches >= small.fetches)
    }
    #expect(results[2].freshRatio > results[0].freshRatio)
  }

  @Test("prices rise when spending runs ahead of the budget and fall when it lags")
  func priceAdaptation() {
    let (_, tightEnergy) = Self.run(Self.params(energyPct: 0.02, dataMB: 500))
    let (_, tightData) = Self.run(Self.params(energyPct: 5, dataMB: 0.2))
    let (loose, lax) = Self.run(Self.params(energyPct: 5, dataMB: 500))
    #expect(tightEnergy.energyPrice > IMPParameters().initialEnergyPrice)
    #expect(tightData.dataPrice > IMPParameters().initialDataPrice)
    #expect(lax.energyPrice < IMPParameters().initialEnergyPrice)
    #expect(lax.dataPrice < IMPParameters().initialDataPrice)
    #expect(loose.summary.fetches > 0)
  }

  @Test("without any training history it still fetches within its budgets")
  func noTraining() {
    let (_, test) = Self.user().split(at: Self.user().start + 7 * 86_400)
    let training = UserTrace(user: test.user, start: test.start, end: test.start, apps: test.apps)
    var p = IMPPolicy(params: IMPParameters(), world: Self.world, training: training, app: 0, population: nil)
    let r = replay(
      &p, user: PreparedUser(trace: test, world: Self.world), app: 0,
      content: ContentTimeline(trace: test, app: 0, world: Self.world, seed: 7))
    #expect(r.summary.fetches > 0)
    #expect(r.summary.energyJPerDay <= IMPParameters().energyBudgetPctPerDay / 100 * Self.world.device.batteryCapacityJ + 12)
    #expect(p.energyPrice.isFinite && p.dataPrice.isFinite)
  }

  @Test("skipping the habit model when even P(open) = 1 would not pay changes no decision", arguments: [0.1, 1, 10])
  func boundIsExact(price: Double) {
    let t = Self.user()
    let (train, test) = t.split(at: t.start + 7 * 86_400)
    var params = IMPParameters()
    params.initialEnergyPrice = price
    func run(skipping: Bool) -> AppReplay {
      var p = IMPPolicy(params: params, world: Self.world, training: train, app: 0, population: nil)
      p.skipsHopeless = skipping
      return replay(
        &p, user: PreparedUser(trace: test, world: Self.world), app: 0,
        content: ContentTimeline(trace: test, app: 0, world: Self.world, seed: 7), options: ReplayOptions(seed: 7))
    }
    let skipped = run(skipping: true), asked = run(skipping: false)
    #expect(skipped.fetches.count > 0)
    #expect(skipped.fetches == asked.fetches)
    #expect(skipped.summary == asked.summary)
  }
}
