import Foundation
import Testing

@testable import FetchBenchmark

/// The units an experiment has before it runs: "k of N units" needs N.
@Suite("unit plan")
struct UnitPlanTests {
  /// Three users (one with a CRLF line end, one after a comment) over 1, 2 and 0.5 days.
  static let trace = """
    # a comment line,with,begin
    user,time,event,app,value
    a,1000,begin,,UTC
    a,2000,open,begin,10
    a,87400,end,,
    b,0,begin,,+01:00\r
    b,172800,end,,\r
    # c,0,begin,,UTC
    c,100,begin,,UTC
    c,43300,end

    """

  @Test("a trace's users and days from its begin and end rows; blocks and shards from them")
  func plan() throws {
    let d = tempDir()
    let path = d + "/t.csv"
    try Self.trace.write(toFile: path, atomically: true, encoding: .utf8)
    let extent = UnitPlan.traceExtent(path)
    #expect(extent.users == 3)
    #expect(abs(extent.days - 3.5) < 1e-12)
    let text = """
      {"name": "p", "datasets": [{"name": "t", "trace": "t.csv"},
        {"name": "s", "synthetic": {"users": 5, "days": 4, "seed": 1}}],
       "policies": ["never", "periodic:1h"], "replications": 3, "unit_users": 2}
      """
    let e = try Experiment(text: text, file: d + "/e.json", baseDirectory: d, currentDirectory: d)
    // t: 2 blocks × 3 replications; s: 3 blocks × 3.
    let all = UnitPlan(e, shard: nil)
    #expect(all.units == [6, 9] && all.mine == [6, 9] && all.total == 15)
    // Work per unit: the block's share of user-days × 2 configurations.
    #expect(abs(all.unitWork[0] - 3.5 / 2 * 2) < 1e-12)
    #expect(abs(all.unitWork[1] - 20.0 / 3 * 2) < 1e-12)
    // Shard 2 of 4 owns the units 1, 5, 9, 13 of 0…14.
    let shard = UnitPlan(e, shard: ExperimentShard(index: 2, count: 4))
    #expect(shard.mine == [2, 2] && shard.total == 4)
  }
}
