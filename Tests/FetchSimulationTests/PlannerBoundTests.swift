import FetchModels
import FetchTraces
import FetchWorld
import Foundation
import Testing

@testable import FetchSimulation

@Suite("planner value bound")
struct PlannerBoundTests {
  /// The second week of synthetic user `u` replayed under the planner for
  /// its most opened app, with `configure` applied to the policy first.
  private static func replayed(
    user u: Int, _ params: PlannerParameters = PlannerParameters(), configure: (inout PlannerPolicy) -> Void
  ) -> (fetches: [FetchRecord], policy: PlannerPolicy) {
    let trace = SyntheticPopulation(seed: 20260601, days: 14).user(u)
    let (train, test) = trace.split(at: trace.start + 7 * 86_400)
    var counts: [Int32: Int] = [:]
    for e in trace.events where e.kind == .open { counts[e.app, default: 0] += 1 }
    let app = counts.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }?.key ?? 0
    let world = WorldParameters()
    var p = PlannerPolicy(
      params: params, world: world, training: train, app: app, population: nil,
      deviceModels: PlannerPolicy.fitDeviceModels(train))
    configure(&p)
    let r = replay(
      &p, user: PreparedUser(trace: test, world: world), app: app,
      content: ContentTimeline(trace: test, app: app, world: world, seed: 5), options: ReplayOptions(seed: 5))
    return (r.fetches, p)
  }

  /// Planner settings whose bound differs: the defaults, a small and a
  /// large budget, a fixed price, no session credit and no app-transition
  /// model, other weights.
  private static let settings: [String] = [
    "planner", "planner:budget=2", "planner:budget=2500", "planner:fixed_price=0.003",
    "planner:session_credit=0,pair_window=0s",
    "planner:fresh_weight=3,age_weight=0.2", "planner:horizon=4h,step=10m",
  ]

  private static func parameters(_ spec: String) throws -> PlannerParameters {
    try #require(try PolicySpec(parsing: spec).configuration as? PlannerParameters)
  }

  @Test("the bound of a decision's value is at least the value the look-ahead computes", arguments: settings)
  func boundHolds(_ spec: String) throws {
    let params = try Self.parameters(spec)
    var checked = 0, tight = 0
    for u in 0..<3 {
      let (_, p) = Self.replayed(user: u, params) { $0.logDecisions = true }
      for d in p.decisions {
        guard let b = d.valueBound else { continue }
        #expect(b >= d.valueNow, "user \(u) at \(d.time): bound \(b) below the value \(d.valueNow)")
        checked += 1
        if b <= d.price * d.costNowJ { tight += 1 }
      }
    }
    #expect(checked > 1000)
    // The bound decides some of the decisions alone.
    #expect(tight > 0)
  }

  @Test("decisions that stop on the bound of their value launch exactly as decisions that compute it", arguments: settings)
  func boundChangesNothing(_ spec: String) throws {
    let params = try Self.parameters(spec)
    var stops = 0
    for u in 0..<3 {
      let (bounded, p) = Self.replayed(user: u, params) { $0.boundsValue = true }
      let (full, q) = Self.replayed(user: u, params) { $0.boundsValue = false }
      #expect(bounded == full, "user \(u): \(bounded.count) and \(full.count) fetches")
      #expect(q.boundStops == 0)
      stops += p.boundStops
    }
    #expect(stops > 0)
  }
}
