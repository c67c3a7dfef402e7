import FetchSupport
import FetchTraces
import Foundation
import Testing

@testable import FetchModels

@Suite("Open probabilities shared between policy settings")
struct SharedOpenProbabilitiesTests {
  /// `table`'s probability for the key, else `value` remembered (a
  /// scheduler's use of the table); counts the values computed in `computed`.
  private static func ask(
    _ table: SharedOpenProbabilities, _ t: Double, _ h: Double, _ step: Double, _ app: Double, _ any: Double,
    value: Double, computed: inout Int
  ) -> Double {
    let key = SharedOpenProbabilities.Key(
      within: h, from: t, recency: Recency(sinceAppOpenS: app, sinceAnyOpenS: any), step: step)
    if let p = table.probability(key) { return p }
    computed += 1
    table.remember(value, for: key)
    return value
  }

  @Test("each key is computed once and read back; keys differing in any one word are told apart")
  func keys() {
    let table = SharedOpenProbabilities()
    var computed = 0
    let t = 1_767_571_200.0
    #expect(Self.ask(table, t, 900, 300, 60, 30, value: 0.25, computed: &computed) == 0.25)
    #expect(Self.ask(table, t, 900, 300, 60, 30, value: 0.99, computed: &computed) == 0.25)  // read, not computed
    #expect(computed == 1)
    // One word changed at a time: a new key each.
    #expect(Self.ask(table, t + 300, 900, 300, 60, 30, value: 0.1, computed: &computed) == 0.1)
    #expect(Self.ask(table, t, 1800, 300, 60, 30, value: 0.2, computed: &computed) == 0.2)
    #expect(Self.ask(table, t, 900, 150, 60, 30, value: 0.3, computed: &computed) == 0.3)
    #expect(Self.ask(table, t, 900, 300, 61, 30, value: 0.4, computed: &computed) == 0.4)
    #expect(Self.ask(table, t, 900, 300, 60, 31, value: 0.5, computed: &computed) == 0.5)
    #expect(Self.ask(table, t, 900, 300, .infinity, 30, value: 0.6, computed: &computed) == 0.6)
    #expect(computed == 7)
    #expect(table.count == 7 && table.hits == 1 && table.misses == 7)
  }

  @Test("the table grows past half full and keeps every value", arguments: [1, 300, 5_000])
  func growth(keys n: Int) {
    let table = SharedOpenProbabilities()
    var rng = SplitMix64(seed: UInt64(n))
    let start = 1_767_571_200.0
    // Check times on a 300 s grid (the keys a run asks for) with random recencies.
    let keys = (0..<n).map { k in (start + 300 * Double(k), 60 + 86_400 * rng.uniform(), 86_400 * rng.uniform()) }
    var computed = 0
    for (k, key) in keys.enumerated() {
      let p = Self.ask(table, key.0, 900, 300, key.1, key.2, value: Double(k) / Double(n), computed: &computed)
      #expect(p == Double(k) / Double(n))
    }
    for (k, key) in keys.enumerated().reversed() {
      let p = Self.ask(table, key.0, 900, 300, key.1, key.2, value: -1, computed: &computed)
      #expect(p == Double(k) / Double(n), "key \(k)")
    }
    #expect(computed == n && table.count == n && table.misses == n && table.hits == n)
  }

  @Test("the fit cache hands out one table per fast fit, and none unless sharing is on")
  func perFit() throws {
    let trace = SyntheticPopulation(seed: 3, days: 4).user(0)
    let fitter = HabitFitter()
    let shared = HabitFitCache(trace: trace, sharesOpenProbabilities: true)
    let a = try #require(shared.openProbabilities(user: trace.user, app: 0, from: trace.start, to: trace.start + 86_400, base: trace.start + 86_400, fitter: fitter))
    let b = try #require(shared.openProbabilities(user: trace.user, app: 0, from: trace.start, to: trace.start + 86_400, base: trace.start + 86_400, fitter: fitter))
    #expect(a === b)
    for other in [
      shared.openProbabilities(user: trace.user, app: 1, from: trace.start, to: trace.start + 86_400, base: trace.start + 86_400, fitter: fitter),
      shared.openProbabilities(user: trace.user, app: 0, from: trace.start, to: trace.start + 2 * 86_400, base: trace.start + 86_400, fitter: fitter),
      shared.openProbabilities(user: trace.user, app: 0, from: trace.start, to: trace.start + 2 * 86_400, base: trace.start + 2 * 86_400, fitter: fitter),
    ] {
      #expect(try #require(other) !== a)
    }
    let alone = HabitFitCache(trace: trace)
    #expect(alone.openProbabilities(user: trace.user, app: 0, from: trace.start, to: trace.start + 86_400, base: trace.start + 86_400, fitter: fitter) == nil)
  }
}
