import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld
import Foundation
import Testing

@testable import FetchSimulation

/// `oracle-budget:…,know=`: what the budgeted oracle knows of the future,
/// on one-day traces worked by hand.
@Suite("Budgeted oracle knowledge")
struct OracleKnowledgeTests {
  static let t0 = 1_700_000_000.0

  /// WiFi, no promotion, no latency, foreground refresh on: a fetch ends
  /// at its start plus 1000 B of transfer.
  static var world: WorldParameters {
    var w = TestTraces.instantWorld
    w.replay.foregroundRefresh = true
    w.fetch.failureProbability = 0
    w.content.ratePerHour = 1
    return w
  }

  /// App "a" opened at `opens` (s after t0) for 10 s each, one day.
  static func user(opens: [Double]) -> PreparedUser {
    var t = UserTrace(user: "u", timeZone: .utc, start: t0, end: t0 + 86_400)
    _ = t.appIndex("a")
    t.events = [TraceEvent(time: t0, kind: .network, value: Double(NetworkKind.wifi.rawValue))]
      + opens.map { TraceEvent(time: t0 + $0, kind: .open, app: 0, value: 10) }
    t._checkInvariants()
    return PreparedUser(trace: t, world: world)
  }

  static func oracle(_ budget: OracleBudgetLimit, _ know: OracleKnowledge, _ user: PreparedUser, updates: [Double]) -> OracleBudgetPolicy {
    var p = OracleBudgetParameters()
    p.knowledge = know
    let content = ContentTimeline(updates: updates.map { t0 + $0 }, world: world)
    return OracleBudgetPolicy(budget: budget, user: user, app: 0, content: content, params: p)
  }

  /// Opens 3600, 600, 7200, 60 and 10,800 s after the one before; the
  /// content changes at 4100 s (100 s before the second open) and 11,455 s
  /// (5 s before the fourth).
  static let opens: [Double] = [3600, 4200, 11_400, 11_460, 22_260]
  static let updates: [Double] = [4100, 11_455]

  @Test("with two fetches, knowing the updates picks the stale opens; content-blind, the longest gaps")
  func contentBlindPick() {
    let user = Self.user(opens: Self.opens)
    // Knowing the content: only the second (100 s old) and fourth (5 s)
    // opens would be stale.
    let full = Self.oracle(.fetchesPerDay(2), .opensAndContent, user, updates: Self.updates)
    #expect(full.plannedOpens == [Self.t0 + 4200, Self.t0 + 11_460])
    #expect(full.plannedTotalAgeS == 0)
    // Blind: the gain U(0) − U(g) grows with the gap g since the previous
    // open, so the two largest gaps win: 10,800 s (fifth) and 7200 s (third).
    let blind = Self.oracle(.fetchesPerDay(2), .opens, user, updates: Self.updates)
    #expect(blind.plannedOpens == [Self.t0 + 11_400, Self.t0 + 22_260])
    #expect(blind.plannedTotalAgeS == 105)
    // The same pick whatever the updates: it does not read them.
    let other = Self.oracle(.fetchesPerDay(2), .opens, user, updates: [100, 5000, 20_000])
    #expect(other.plannedOpens == blind.plannedOpens)
    // Replayed, the ages are the plan's: 100 s at the second open, 5 s at the fourth.
    var p = blind
    let r = replay(
      &p, user: user, app: 0, content: ContentTimeline(updates: Self.updates.map { Self.t0 + $0 }, world: Self.world),
      options: ReplayOptions(seed: 1))
    #expect(r.opens.map(\.ageS) == [0, 100, 0, 5, 0])
    #expect(r.summary.fetches == 2)
  }

  @Test("the content-blind gain is the planner's utility lost over the gap")
  func contentBlindGains() {
    let user = Self.user(opens: Self.opens)
    let content = ContentTimeline(updates: Self.updates.map { Self.t0 + $0 }, world: Self.world)
    let planner = OracleBudgetPlanner(user: user, app: 0, content: content, knowsContent: false)
    #expect(planner.candidates.count == 5)
    let lambda = 1.0 / 3600
    let gains = planner.contentBlindGains(rate: lambda)
    // g = 600 s: 1 − e^(−1/6) + (600 − 3600·(1 − e^(−1/6)))/3600.
    let g = 600.0
    let stale = 1 - exp(-lambda * g)
    #expect(abs(gains[1] - (stale + (g - stale / lambda) / 3600)) < 1e-12)
    #expect(gains[4] > gains[2] && gains[2] > gains[0] && gains[0] > gains[1] && gains[1] > gains[3])
  }

  @Test("knowing neither, one fetch a day: the best tick in hindsight, at 12 h")
  func fixedSchedule() {
    // Opens at 1 h, 10 h and 20 h; updates at 5 h and 11 h. One tick a
    // day: a tick at 6 or 9 h makes the 10 h open fresh (utility +1 + 5 h
    // of age avoided), one at 12, 15 or 18 h the 20 h open (+1 + 9 h). The
    // first of those in period order is period 12 h, phase 12 h.
    let user = Self.user(opens: [3600, 36_000, 72_000])
    let p = Self.oracle(.fetchesPerDay(1), .none, user, updates: [18_000, 39_600])
    #expect(p.fixedSchedule?.period == 43_200)
    #expect(p.fixedSchedule?.phase == 43_200)
    #expect(p.wakeTimes == [Self.t0 + 43_200])
    #expect(p.plannedTotalAgeS == 18_000)
    var q = p
    let content = ContentTimeline(updates: [Self.t0 + 18_000, Self.t0 + 39_600], world: Self.world)
    let r = replay(&q, user: user, app: 0, content: content, options: ReplayOptions(seed: 1))
    #expect(r.opens.map(\.ageS) == [0, 18_000, 0])
    #expect(r.summary.fetches == 1)
    // No budget: no tick.
    let none = Self.oracle(.joulesPerDay(0), .none, user, updates: [18_000, 39_600])
    #expect(none.wakeTimes.isEmpty)
  }

  @Test("know= parses, prints only when not the default, and refuses unknown values")
  func parsing() throws {
    for s in ["oracle-budget:10J", "oracle-budget:10J,know=opens", "oracle-budget:4,know=none", "oracle-budget:4,know=opens,exact_limit=0"] {
      #expect(try PolicySpec(parsing: s).description == s)
    }
    #expect(try PolicySpec(parsing: "oracle-budget:10J,know=opens+content").description == "oracle-budget:10J")
    #expect(throws: PolicySpecError.self) { try PolicySpec(parsing: "oracle-budget:10J,know=future") }
    #expect(throws: PolicySpecError.self) { try PolicySpec(parsing: "oracle-budget:10J,know=opens,know=none") }
  }
}
