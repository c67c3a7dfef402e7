import FetchModels
import FetchSimulation
import FetchTraces
import FetchWorld
import Testing

/// The device-wide OS scheduler: at `replay.scope=device` the apps of a
/// device draw iOS Minimum's daily launch and energy budgets from one
/// ``DeviceBudgetLedger``.
@Suite("Device-wide Minimum budgets")
struct DeviceBudgetTests {
  /// Every fetch launch of a replay, by app, with the UTC day it started on.
  static func replay(_ spec: String, seed: UInt64, scope: ReplayScope) throws -> [[FetchRecord]] {
    var w = WorldParameters()
    w.radios.defaultNetwork = .lte
    let t = TestTraces.user(seed: seed, days: 3, opensPerHour: 1.5, networkChangesPerDay: 3)
    let user = PreparedUser(trace: t, world: w)
    let apps: [Int32] = [0, 1]
    let contents = apps.map { ContentTimeline(trace: t, app: $0, world: w, seed: seed) }
    let r = try PolicySpec(parsing: spec).replay(
      user: user, apps: apps, contents: contents, scope: scope, seed: seed, recordEvents: true)
    return r.apps.map(\.fetches)
  }

  static func day(_ t: Double) -> Int { Int((t / 86_400).rounded(.down)) }

  /// Credit fixed at 1 and the whole day's budget released at midnight, so
  /// the launch budget is exactly `launches` per local (UTC) day.
  static let fixedCredit = "price=0,pace_slack=1,new_data_factor=1,no_data_factor=1,failed_factor=1"

  @Test("the device's daily launch budget is never exceeded, and its apps share it", arguments: 1...6)
  func launchBudget(seed: UInt64) throws {
    let spec = "ios-minimum:launches=4," + Self.fixedCredit
    let device = try Self.replay(spec, seed: seed, scope: .device)
    let alone = try Self.replay(spec, seed: seed, scope: .app)
    var perDay: [Int: Int] = [:]
    for f in device.flatMap({ $0 }) { perDay[Self.day(f.start), default: 0] += 1 }
    for (d, n) in perDay { #expect(n <= 4, "seed \(seed), day \(d): \(n) launches on the device") }
    // Alone, each app uses its own 4 a day; together they split one device's 4.
    for a in 0..<2 {
      var own: [Int: Int] = [:]
      for f in alone[a] { own[Self.day(f.start), default: 0] += 1 }
      #expect(own.values.allSatisfy { $0 <= 4 })
      #expect(device[a].count < alone[a].count, "seed \(seed), app \(a): \(device[a].count) vs \(alone[a].count) alone")
    }
    #expect(device.map(\.count).reduce(0, +) < alone.map(\.count).reduce(0, +))
  }

  @Test("the device's daily energy budget bounds the apps' total", arguments: 1...6)
  func energyBudget(seed: UInt64) throws {
    let pct = 0.05
    let spec = "ios-minimum:launches=500,energy_budget_pct=\(pct)," + Self.fixedCredit
    let budget = pct / 100 * WorldParameters().device.batteryCapacityJ
    let device = try Self.replay(spec, seed: seed, scope: .device)
    let alone = try Self.replay(spec, seed: seed, scope: .app)
    // A launch needs the energy of the day's finished fetches below the
    // budget; at most one fetch per app can be in flight at a launch, so a
    // day's fetches cost at most the budget plus one fetch per app.
    let all = device.flatMap { $0 }
    let maxFetch = all.map(\.energyJ).max() ?? 0
    var perDay: [Int: Double] = [:]
    for f in all { perDay[Self.day(f.start), default: 0] += f.energyJ }
    for (d, e) in perDay {
      #expect(e <= budget + 2 * maxFetch + 1e-9, "seed \(seed), day \(d): \(e) J, budget \(budget) J")
    }
    let aloneEnergy = alone.flatMap { $0 }.map(\.energyJ).reduce(0, +)
    let deviceEnergy = all.map(\.energyJ).reduce(0, +)
    #expect(deviceEnergy < aloneEnergy, "seed \(seed): \(deviceEnergy) J on one budget, \(aloneEnergy) J on two")
    for a in 0..<2 { #expect(device[a].count < alone[a].count, "seed \(seed), app \(a)") }
  }
}
