import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation
import Testing

@testable import FetchBenchmark

/// `planner:…,models=true`, the model oracle: the planner fed the synthetic
/// generator's open intensities and update rates.
@Suite("Model oracle")
struct ModelOracleTests {
  /// Per user, the fresh share pooled over the top 3 apps' opens under each
  /// of `specs` (synthetic seed 1, 28 days, the last 25 % scored).
  static func freshShares(_ specs: [String], users: Int) throws -> [[Double]] {
    let pop = SyntheticPopulation(seed: 1, days: 28)
    let policies = try specs.map(PolicySpec.init(parsing:))
    var config = RunConfiguration(
      tracePath: "", policies: policies, seed: 1, recordEvents: false, jobs: 1, trainFraction: 0.75)
    config.generator = pop
    return (0..<users).map { i in
      let r = PreparedReplay(pop.user(i), config).replay(policies, config)
      return policies.indices.map { p in
        let opens = r.replays.reduce(0) { $0 + $1[p].summary.opens }
        let fresh = r.replays.reduce(0.0) { $0 + $1[p].summary.freshRatio * Double($1[p].summary.opens) }
        return opens > 0 ? fresh / Double(opens) : 0
      }
    }
  }

  @Test("at equal budget it is at least as fresh as the learned planner on synthetic users (within the paired CI)")
  func notWorseThanLearned() throws {
    let shares = try Self.freshShares(["planner:budget=10", "planner:budget=10,models=true", "never"], users: 24)
    let d = shares.map { $0[1] - $0[0] }
    let n = Double(d.count)
    let mean = d.reduce(0, +) / n
    let sd = (d.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / (n - 1)).squareRoot()
    let ci = 1.96 * sd / n.squareRoot()
    #expect(mean + ci >= 0, "model oracle − planner: \(mean) ± \(ci)")
    // Both gain over never: the truth is not a broken model.
    #expect(shares.map { $0[1] - $0[2] }.reduce(0, +) > 0)
  }

  @Test("an experiment with a trace dataset refuses it, naming the policy and the dataset")
  func refusedOnTraces() throws {
    #expect {
      _ = try parseExperiment(#"{"datasets": [{"name": "t", "trace": "t.csv"}], "policies": ["never", "planner:models=true"]}"#)
    } throws: { e in
      let s = "\(e)"
      return s.contains("planner:models=true") && s.contains("dataset 't'") && s.contains("no generator")
    }
    let e = try parseExperiment(#"{"datasets": [{"name": "s", "synthetic": {"users": 2, "days": 2}}], "policies": ["planner:budget=5,models=true"]}"#)
    #expect(e.configurations.map(\.name) == ["planner:budget=5,models=true"])
    #expect(throws: PolicySpecError.self) { try PolicySpec(parsing: "per-app:a=planner:models=true") }
    #expect(throws: PolicySpecError.self) { try PolicySpec(parsing: "planner:models=maybe") }
  }
}
