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
      "replay_ios_minimum_events_per_s", "replay_ios_minimum_cpu_vs_never",
      "replay_planner_policy_user_days_per_core_s", "replay_planner_cpu_vs_never",
      "replay_imp_policy_user_days_per_core_s", "replay_imp_cpu_vs_never",
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
    // Without a baseline, the only targets are ratios measured in the run:
    // 2 jobs against 1, and the pipe against the same rule in Swift.
    let targets = Dictionary(rows.map { ($0[0], $0[3]) }) { a, _ in a }
    #expect(Set(targets.filter { !$0.value.isEmpty }.keys) == ["speedup_jobs_2", "external_pipe_slowdown"], "\(targets)")
    #expect(targets["speedup_jobs_2"] == ">=1.8")
    #expect(targets["external_pipe_slowdown"] == "<=5")
    #expect(!names.contains { $0.hasSuffix("_vs_baseline") })
    // A policy against never, in the same run: CPU per policy-user-day over never's.
    let values = Dictionary(rows.map { ($0[0], Double($0[1]) ?? .nan) }) { a, _ in a }
    let ratio = values["replay_planner_cpu_vs_never"] ?? .nan
    let never = values["replay_never_policy_user_days_per_core_s"] ?? .nan
    let planner = values["replay_planner_policy_user_days_per_core_s"] ?? .nan
    #expect(abs(ratio - never / planner) <= 0.01 * never / planner, "\(ratio) vs \(never / planner)")
    #expect(!FileManager.default.fileExists(atPath: dir + "/bench-trace.csv"), "the trace is deleted")

    // Against a baseline: this run's own file gives speed-ups near 1 with targets on the per-core replay rates.
    let again = try CLI.run([
      "bench", "--users", "20", "--days", "7", "--jobs", "1", "--out", dir + "/again", "--compare", dir + "/bench.csv",
    ])
    #expect(again.status == 0, "\(again.stderr)")
    let compared = try String(contentsOfFile: dir + "/again/bench.csv", encoding: .utf8)
      .split(separator: "\n").dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
    let vs = compared.filter { $0[0].hasSuffix("_vs_baseline") }
    #expect(vs.contains { $0[0] == "replay_planner_policy_user_days_per_core_s_vs_baseline" && $0[3] == ">=1" })
    #expect(vs.contains { $0[0] == "experiment_wall_s_vs_baseline" && $0[3] == "" })
    #expect(!vs.contains { $0[0] == "trace_users_vs_baseline" }, "sizes are not speeds")
    #expect(compared.map { $0[0] } == BenchReport.metricNames.filter { n in compared.contains { $0[0] == n } })
  }

  @Test("bench --compare: a baseline of other work, or a malformed one, is an error naming the file")
  func compareErrors() throws {
    let dir = scratch()
    let other = dir + "/other.csv"
    try "metric,value,unit,target,met\ntrace_users,300,users,,\ntrace_events,1,events,,\n".write(
      toFile: other, atomically: true, encoding: .utf8)
    let r = try CLI.run(["bench", "--users", "5", "--days", "4", "--jobs", "1", "--out", dir + "/b", "--compare", other])
    #expect(r.status == 1 && r.stderr.contains("other.csv") && r.stderr.contains("trace_users"), "\(r.stderr)")
    let bad = dir + "/bad.csv"
    try "metric,value,unit,target,met\ntrace_users,many,users,,\n".write(toFile: bad, atomically: true, encoding: .utf8)
    let b = try CLI.run(["bench", "--users", "5", "--days", "4", "--jobs", "1", "--out", dir + "/c", "--compare", bad])
    #expect(b.status == 1 && b.stderr.contains("bad.csv:2: value"), "\(b.stderr)")
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
    #expect(rows.allSatisfy { $0[3].isEmpty || $0[0] == "external_pipe_slowdown" }, "one job and no baseline: only the pipe's ratio has a target")
    for n in ["ingest_hashed_mb_per_s", "replay_oracle_policy_user_days_per_core_s", "experiment_wall_s"] {
      #expect(names.contains(n), "missing \(n)")
    }
    #expect(FileManager.default.fileExists(atPath: trace), "the given trace is kept")
    #expect(try CLI.run(["bench", "--trace", trace, "--users", "5", "--out", dir + "/b2"]).status == 64)
    let missing = try CLI.run(["bench", "--trace", dir + "/nope.csv", "--out", dir + "/b3"])
    #expect(missing.status == 1 && missing.stderr.contains("nope.csv"), "\(missing.stderr)")
  }
}
