import Foundation
import Testing

/// The only `bench` test in the default run: a tiny population, checking the
/// shape of `bench.csv`, not the speed (debug builds are far slower).
@Suite("fetchlab bench", .serialized)
struct BenchCommandTests {
  @Test("bench --quick --users 20 --days 7: prints the table and writes every metric row")
  func quickBench() throws {
    let dir = scratch()
    let r = try CLI.run(["bench", "--quick", "--users", "20", "--days", "7", "--jobs", "2", "--out", dir])
    #expect(r.status == 0, "\(r.stderr)")
    #expect(r.stdout.contains("metric"))
    #expect(r.stdout.contains("ingest_mb_per_s"))
    let csv = try String(contentsOfFile: dir + "/bench.csv", encoding: .utf8)
    let lines = csv.split(separator: "\n").map(String.init)
    #expect(lines.first == "metric,value,unit,target,met")
    let rows = lines.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
    #expect(rows.allSatisfy { $0.count == 5 })
    let names = rows.map { $0[0] }
    let expected = [
      "generate_users_per_s", "generate_mb_per_s", "trace_size", "trace_events", "ingest_mb_per_s",
      "ingest_events_per_s", "fit_population_s", "fit_models_per_s",
      "replay_never_policy_user_days_per_s", "replay_never_events_per_s",
      "replay_periodic_1h_policy_user_days_per_s", "replay_periodic_1h_events_per_s",
      "replay_oracle_policy_user_days_per_s", "replay_oracle_events_per_s",
      "replay_ios_minimum_policy_user_days_per_s", "replay_ios_minimum_events_per_s",
      "experiment_wall_s", "experiment_policy_user_days_per_s", "peak_rss", "bench_total_s",
    ]
    for n in expected { #expect(names.contains(n), "missing \(n)") }
    for row in rows {
      #expect(Double(row[1]).map { $0.isFinite && $0 >= 0 } ?? false, "bad value in \(row)")
      if !row[3].isEmpty {
        #expect(row[3].hasPrefix(">=") || row[3].hasPrefix("<="), "bad target in \(row)")
        #expect(row[4] == "true" || row[4] == "false", "bad met in \(row)")
      } else {
        #expect(row[4].isEmpty)
      }
    }
    let target = rows.first { $0[0] == "ingest_mb_per_s" }
    #expect(target?[3] == ">=200")
    #expect(!FileManager.default.fileExists(atPath: dir + "/bench-trace.csv"), "the trace is deleted")
  }
}
