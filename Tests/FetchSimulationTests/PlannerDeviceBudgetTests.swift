import FetchModels
import FetchTraces
import FetchWorld
import Testing

@testable import FetchSimulation

/// The planner's device budget: one budget and one price of a joule for
/// all its apps of a device (``PlannerBudget``).
@Suite("planner device budget")
struct PlannerDeviceBudgetTests {
  /// IMP's test user (LTE; app a opened 20 times a day, app b 40 times) on
  /// its second week, with a's content new every 30 min and b's never: a
  /// fetch for a is worth far more than one for b. Returns each app's
  /// replay under `spec` at device scope.
  static func replay(_ spec: String) throws -> [AppReplay] {
    let world = IMPPolicyTests.world
    let t = IMPPolicyTests.user()
    let (train, test) = t.split(at: t.start + 7 * 86_400)
    let user = PreparedUser(trace: test, world: world)
    let often = ContentTimeline(updates: Array(stride(from: test.start + 1, to: test.end, by: 1800)), world: world)
    let never = ContentTimeline(updates: [], world: world)
    return try PolicySpec(parsing: spec).replay(
      user: user, apps: [0, 1], contents: [often, never], scope: .device, seed: 7, recordEvents: true,
      learning: LearningContext(training: train, population: nil)
    ).apps
  }

  @Test("two apps compete for one budget: the one with the higher expected gain gets the fetches")
  func higherGainWins() throws {
    let shared = try Self.replay("planner:budget=5,day_start=0")
    let own = try Self.replay("planner:budget=5,day_start=0,device_budget=0")
    let (a, b) = (shared[0].fetches.count, shared[1].fetches.count)
    // One budget: the joules go to the app whose content changes (55 and 18
    // fetches over the week); each app with a budget of its own spends it
    // (35 and 33), the other's on content that never changes.
    #expect(a >= 2 * b, "shared budget: \(a) fetches for the changing content, \(b) for the unchanging")
    #expect(a > own[0].fetches.count && 3 * b < 2 * own[1].fetches.count, "own budgets: \(own.map(\.fetches.count))")
    #expect(shared[1].summary.newData == 0)
  }

  @Test("no device-day spends more than the device budget plus one fetch", arguments: [2.0, 5, 20])
  func deviceDayBound(_ perApp: Double) throws {
    let apps = try Self.replay("planner:budget=\(perApp),day_start=0")
    var days: [Int: (sum: Double, largest: Double)] = [:]
    for f in apps.flatMap(\.fetches) {
      let d = Int((f.start / 86_400).rounded(.down))
      let x = days[d] ?? (0, 0)
      days[d] = (x.sum + f.energyJ, max(x.largest, f.energyJ))
    }
    #expect(!days.isEmpty)
    for (d, x) in days {
      #expect(x.sum <= 2 * perApp + x.largest, "day \(d): \(x.sum) J against a device budget of \(2 * perApp) J")
    }
  }
}
