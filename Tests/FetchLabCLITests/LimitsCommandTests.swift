import Foundation
import Testing

@Suite("Size limits on the command line", .serialized)
struct LimitsCommandTests {
  @Test("synth refuses an absurd population up front, before writing anything")
  func synth() throws {
    let dir = scratch()
    let r = try CLI.run(["synth", "--users", "10000000", "--days", "3650", "--seed", "1", "--out", dir + "/s.csv"])
    #expect(r.status == 1, "\(r.stderr)")
    #expect(r.stderr.contains("synth: 10000000 users × 3650 days would write about 481.8 TB of trace, over the limit of 1 TB"), "\(r.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir + "/s.csv"))
    #expect((try FileManager.default.contentsOfDirectory(atPath: dir)).isEmpty)
    // The limits are configurable: 1 MiB of output refuses 100 users × 7 days.
    let small = try runFetchlab(
      ["synth", "--users", "100", "--days", "7", "--seed", "1", "--out", dir + "/s.csv"], env: ["FETCHLAB_MAX_OUTPUT_MB": "1"])
    #expect(small.status == 1 && small.stderr.contains("over the limit of 1 MB"), "\(small.stderr)")
    let mem = try runFetchlab(
      ["synth", "--users", "10", "--days", "3650", "--seed", "1", "--out", dir + "/s.csv"], env: ["FETCHLAB_MAX_MEMORY_MB": "100"])
    #expect(mem.status == 1 && mem.stderr.contains("of memory to generate, over the limit of 104.9 MB"), "\(mem.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir + "/s.csv"))
  }

  @Test("bench refuses an absurd population up front")
  func bench() throws {
    let dir = scratch()
    let r = try CLI.run(["bench", "--users", "10000000", "--days", "3650", "--out", dir + "/b"])
    #expect(r.status == 1, "\(r.stderr)")
    #expect(r.stderr.contains("bench: 10000000 users × 3650 days would write about 481.8 TB of trace"), "\(r.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir + "/b/bench.csv"))
  }

  @Test("run refuses an absurd experiment with file:line: key and the estimate, and creates no output")
  func experiment() throws {
    let (dir, file) = try experimentDir(
      """
      {"datasets": [{"name": "five", "trace": "t.csv"}],
       "policies": ["never", "periodic:{15m,1h}"],
       "replications": 1000000}
      """)
    let r = try CLI.run(["run", file, "--out", dir + "/out"])
    #expect(r.status == 1, "\(r.stderr)")
    #expect(r.stderr.contains("\(file):3: replications: 1 datasets × (1000000 replications + 1) × 3 policies"), "\(r.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir + "/out"))
  }

  @Test("validate refuses a user with more events than FETCHLAB_MAX_EVENTS_PER_USER, naming file, line and user")
  func gigantUser() throws {
    let dir = scratch()
    try smallTrace.write(toFile: dir + "/t.csv", atomically: true, encoding: .utf8)
    let r = try runFetchlab(["validate", dir + "/t.csv"], env: ["FETCHLAB_MAX_EVENTS_PER_USER": "3"])
    #expect(r.status == 1, "\(r.stderr)")
    #expect(r.stderr.contains("\(dir)/t.csv:6: user: user 'u1' (begun on line 2) has more than 3 events"), "\(r.stderr)")
    #expect(try CLI.run(["validate", dir + "/t.csv"]).status == 0)
  }
}
