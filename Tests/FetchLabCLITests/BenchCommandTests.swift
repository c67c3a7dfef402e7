import FetchBenchmark
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
      "generate_users_per_s", "generate_mb_per_s", "trace_size", "trace_events", "trace_users", "ingest_mb_per_s",
      "ingest_events_per_s", "ingest_hashed_mb_per_s", "sha256_mb_per_s", "fit_population_s",
      "fit_population_users_parsed", "fit_models_per_s", "replay_never_policy_user_days_per_s", "replay_never_policy_user_days_per_core_s", "replay_never_events_per_s",
      "replay_periodic_1h_policy_user_days_per_s", "replay_periodic_1h_policy_user_days_per_core_s",
      "replay_periodic_1h_events_per_s",
      "replay_oracle_policy_user_days_per_s", "replay_oracle_policy_user_days_per_core_s", "replay_oracle_events_per_s",
      "replay_ios_minimum_policy_user_days_per_s", "replay_ios_minimum_policy_user_days_per_core_s",
      "replay_ios_minimum_events_per_s",
      "run_jobs_1_s", "run_jobs_2_s", "speedup_jobs_2",
      "experiment_wall_s", "experiment_policy_user_days_per_s", "peak_rss", "bench_total_s",
    ]
    for n in expected { #expect(names.contains(n), "missing \(n)") }
    // In the declared order, nothing undeclared.
    #expect(names == BenchReport.metricNames.filter { names.contains($0) }, "\(names)")
    for row in rows {
      #expect(Double(row[1]).map { $0.isFinite && $0 >= 0 } ?? false, "bad value in \(row)")
      if !row[3].isEmpty {
        #expect(row[3].hasPrefix(">=") || row[3].hasPrefix("<="), "bad target in \(row)")
        #expect(row[4] == "true" || row[4] == "false", "bad met in \(row)")
      } else {
        #expect(row[4].isEmpty)
      }
    }
    // The speed targets.
    let targets = Dictionary(rows.map { ($0[0], $0[3]) }) { a, _ in a }
    #expect(targets["ingest_mb_per_s"] == "")
    #expect(targets["ingest_hashed_mb_per_s"] == ">=400")
    #expect(targets["replay_never_policy_user_days_per_core_s"] == ">=500000")
    #expect(targets["replay_oracle_policy_user_days_per_core_s"] == ">=500000")
    #expect(targets["replay_ios_minimum_policy_user_days_per_core_s"] == ">=25000")
    #expect(targets["speedup_jobs_2"] == ">=1.8")
    #expect(targets["experiment_wall_s"] == "<=0.06", "30 s at 10,000 users, scaled to 20")
    #expect(targets["replay_never_policy_user_days_per_s"] == "")
    #expect(!FileManager.default.fileExists(atPath: dir + "/bench-trace.csv"), "the trace is deleted")
  }

  @Test("bench --trace FILE: the same stages on the given trace, without generating; the file is kept")
  func givenTrace() throws {
    let dir = scratch()
    let trace = dir + "/mine.csv"
    let synth = try CLI.run(["synth", "--users", "6", "--days", "4", "--seed", "3", "--out", trace])
    #expect(synth.status == 0, "\(synth.stderr)")
    let r = try CLI.run(["bench", "--trace", trace, "--days", "4", "--jobs", "1", "--out", dir + "/bench"])
    #expect(r.status == 0, "\(r.stderr)")
    let csv = try String(contentsOfFile: dir + "/bench/bench.csv", encoding: .utf8)
    let rows = csv.split(separator: "\n").dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
    let names = rows.map { $0[0] }
    #expect(!names.contains("generate_users_per_s") && !names.contains("generate_mb_per_s"))
    #expect(!names.contains("speedup_jobs_2"), "one job: no speed-up measured")
    #expect(rows.first { $0[0] == "trace_users" }?[1] == "6")
    #expect(rows.first { $0[0] == "experiment_wall_s" }?[3] == "<=0.018", "30 s at 10,000 users, scaled to 6")
    for n in ["ingest_hashed_mb_per_s", "replay_oracle_policy_user_days_per_core_s", "experiment_wall_s"] {
      #expect(names.contains(n), "missing \(n)")
    }
    #expect(FileManager.default.fileExists(atPath: trace), "the given trace is kept")
    #expect(try CLI.run(["bench", "--trace", trace, "--users", "5", "--out", dir + "/b2"]).status == 64)
    let missing = try CLI.run(["bench", "--trace", dir + "/nope.csv", "--out", dir + "/b3"])
    #expect(missing.status == 1 && missing.stderr.contains("nope.csv"), "\(missing.stderr)")
  }
}
