import Dispatch
import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation

/// What `fetchlab bench` measures: a fixed synthetic population (or a given
/// trace), a window length and a training split, and how many threads to
/// use.
package struct BenchConfiguration: Sendable {
  /// The population's master seed; fixed so runs compare.
  package static let populationSeed: UInt64 = 20_260_601
  /// The policies whose replay speed is measured one by one.
  package static let replayPolicies = ["never", "periodic:1h", "oracle", "ios-minimum", "planner", "imp"]
  /// The policies of the `run` timed with 1 and 2 jobs.
  package static let runPolicies = ["never", "periodic:30m", "periodic:1h", "oracle"]
  /// The default-style experiment: population fit plus these 8 policies.
  package static let experimentPolicies = [
    "never", "periodic:15m", "periodic:1h", "periodic:4h", "oracle", "oracle-budget:4", "ios-minimum",
    "ios-custom:1h",
  ]

  package var users: Int
  package var days: Int
  /// Days at the start of each window used for training; the rest is replayed.
  package var trainDays: Int
  package var jobs: Int
  /// Where the trace is generated (and deleted afterwards unless `keepTrace`).
  package var directory: String
  package var keepTrace: Bool
  /// Users read and processed together.
  package var batchUsers: Int
  /// A trace to benchmark instead of the generated population (never
  /// deleted); `users` is then ignored (the training split is still
  /// `trainDays` / `days` of each user's window).
  package var trace: String?

  package init(
    users: Int = 10_000, days: Int = 28, trainDays: Int = 21,
    jobs: Int = ProcessInfo.processInfo.activeProcessorCount, directory: String, keepTrace: Bool = false,
    batchUsers: Int = 64, trace: String? = nil
  ) {
    precondition(users >= 1, "bench needs at least 1 user")
    precondition(days >= 2 && trainDays >= 1 && trainDays < days, "bench needs 1 ≤ trainDays < days")
    self.users = users
    self.days = days
    self.trainDays = trainDays
    self.jobs = max(1, jobs)
    self.directory = directory
    self.keepTrace = keepTrace
    self.batchUsers = max(1, batchUsers)
    self.trace = trace
  }

  /// The share of each window used for training.
  package var trainFraction: Double { Double(trainDays) / Double(days) }

  /// The trace measured: the given one, or the generated population's.
  package var tracePath: String { trace ?? directory + "/bench-trace.csv" }
}

/// One measured quantity with its target, if it has one.
package struct BenchMetric: Sendable, Equatable {
  package enum Goal: Sendable, Equatable {
    /// At least this much.
    case atLeast(Double)
    /// At most this much.
    case atMost(Double)
  }

  package var name: String
  package var value: Double
  package var unit: String
  package var goal: Goal?

  package init(name: String, value: Double, unit: String, goal: Goal? = nil) {
    self.name = name
    self.value = value
    self.unit = unit
    self.goal = goal
  }

  /// The target as written in `bench.csv` (`>=200`, `<=20`), empty when none.
  package var targetText: String {
    switch goal {
    case .atLeast(let v)?: ">=" + BenchMetric.format(v)
    case .atMost(let v)?: "<=" + BenchMetric.format(v)
    case nil: ""
    }
  }

  /// Whether the target is met; nil when there is none.
  package var met: Bool? {
    switch goal {
    case .atLeast(let v)?: value >= v
    case .atMost(let v)?: value <= v
    case nil: nil
    }
  }

  /// `value` rounded to 3 decimals, as `Double.description` (no locale).
  static func format(_ v: Double) -> String {
    guard v.isFinite else { return v.description }
    let r = (v * 1000).rounded() / 1000
    if r == r.rounded(), abs(r) < 1e15 { return String(Int64(r)) }
    return r.description
  }

  package var valueText: String { BenchMetric.format(value) }
}

/// The columns of `bench.csv`, in order.
package enum BenchColumn: String, CaseIterable, Sendable {
  case metric, value, unit, target, met
}

/// Progress of a benchmark, for display.
package struct BenchProgress: Sendable {
  package var stage: String
  package var done: Int
  package var total: Int
}

/// Runs the benchmark: generate → file (or take `config.trace`), ingest
/// without and with the input hash, fit, replay per policy, a `run` with 1
/// and 2 jobs, default-style experiment (``BenchRun``, one method a
/// stage). Users are streamed in batches throughout; the population is
/// never held in memory. With a `baseline` (an earlier run's
/// `bench.csv`), every speed figure is also given as a speed-up over it.
///
/// Replays are timed as a run replays: each user prepared, then replayed
/// under each policy in turn while its data is in the caches. Per-core
/// rates divide the work by the CPU time of the threads that did it, so
/// they mean the same with `--jobs 1` and `--jobs 2` and do not count time
/// lost to other processes on a busy machine; the other rates are per
/// second of wall time, all threads together.
///
/// Metric names are stable (see ``BenchReport/metricNames``). Every
/// target is a ratio: 2 jobs against 1 in the same run
/// (``BenchTarget/speedupJobs2``), or a rate against the baseline's
/// (``BenchTarget/replayOverBaseline``).
package func runBench(
  _ config: BenchConfiguration, baseline: BenchBaseline? = nil,
  progress: @escaping (BenchProgress) -> Void = { _ in }
) throws -> BenchReport {
  try FileManager.default.createDirectory(atPath: config.directory, withIntermediateDirectories: true)
  var run = BenchRun(config, progress: progress)
  defer { if run.generating, !config.keepTrace { try? FileManager.default.removeItem(atPath: run.path) } }
  try run.generate()
  try run.ingest()
  let population = try run.fit()
  try run.replay(population)
  try run.jobs()
  try run.experiment()
  run.metrics += try externalPipeMetrics(config, progress: progress)
  run.finish()
  var report = BenchReport(metrics: run.metrics)
  if let baseline { try report.compare(with: baseline) }
  return report
}

/// The targets of `fetchlab bench`: ratios, never absolute figures.
package enum BenchTarget {
  /// Wall time of `run` with 1 job over its time with 2 jobs.
  package static let speedupJobs2 = 1.8
}

/// The metrics of one benchmark run.
package struct BenchReport: Sendable {
  package var metrics: [BenchMetric]

  /// The metric names a run reports, in order (`generate_*` only for the
  /// generated population, not with a given trace; `run_jobs_*` and
  /// `speedup_jobs_2` only with 2 or more jobs; `experiment_rss_growth`
  /// only where the resident set size can be read).
  package static let metricNames: [String] = {
    var n = [
      "generate_users_per_s", "generate_mb_per_s", "trace_size", "trace_events", "trace_users", "ingest_mb_per_s",
      "ingest_events_per_s", "ingest_hashed_mb_per_s", "sha256_mb_per_s", "fit_population_s",
      "fit_population_users_parsed", "fit_models_per_s", "prepare_user_days_per_s",
    ]
    for p in BenchConfiguration.replayPolicies {
      let name = metricName(p)
      n += [
        "replay_\(name)_policy_user_days_per_s", "replay_\(name)_policy_user_days_per_core_s",
        "replay_\(name)_events_per_s",
      ]
      if p != "never" { n.append("replay_\(name)_cpu_vs_never") }
    }
    n += [
      "run_jobs_1_s", "run_jobs_2_s", "speedup_jobs_2", "experiment_wall_s", "experiment_policy_user_days_per_s",
      "experiment_rss_growth",
    ] + externalPipeMetricNames + ["peak_rss", "bench_total_s"]
    return n + n.filter { direction(of: $0) != nil }.map(comparisonName)
  }()

  /// A policy's name in metric names (`periodic:1h` → `periodic_1h`).
  static func metricName(_ policy: String) -> String {
    policy.replacingOccurrences(of: ":", with: "_").replacingOccurrences(of: "-", with: "_")
  }

  /// `bench.csv`: a header and one row a metric (RFC 4180 quoting).
  package var csv: String {
    var s = BenchColumn.allCases.map(\.rawValue).joined(separator: ",") + "\n"
    for m in metrics {
      let met = m.met.map { $0 ? "true" : "false" } ?? ""
      s += [m.name, m.valueText, m.unit, m.targetText, met].map(csvField).joined(separator: ",") + "\n"
    }
    return s
  }

  /// An aligned text table for the terminal.
  package var table: String {
    let rows =
      [["metric", "value", "unit", "target", "met"]]
      + metrics.map { m in
        [m.name, m.valueText, m.unit, m.targetText, m.met.map { $0 ? "yes" : "NO" } ?? ""]
      }
    var widths = [Int](repeating: 0, count: 5)
    for r in rows { for (i, c) in r.enumerated() { widths[i] = max(widths[i], c.count) } }
    return rows.map { r in
      r.enumerated().map { i, c in
        let pad = String(repeating: " ", count: widths[i] - c.count)
        return i == 1 ? pad + c : c + pad  // numbers right-aligned
      }.joined(separator: "  ").trimmingSuffixSpaces()
    }.joined(separator: "\n") + "\n"
  }
}

extension String {
  fileprivate func trimmingSuffixSpaces() -> String {
    var s = self
    while s.last == " " { s.removeLast() }
    return s
  }
}

private func csvField(_ s: String) -> String {
  let needsQuotes = s.contains { $0 == "," || $0 == "\"" || $0.isNewline }
  return needsQuotes ? "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : s
}
