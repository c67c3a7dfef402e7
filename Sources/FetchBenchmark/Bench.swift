import Dispatch
import FetchLinearAlgebra
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
  package static let replayPolicies = ["never", "periodic:1h", "oracle", "ios-minimum", "planner"]
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
/// and 2 jobs, default-style experiment. Users are streamed in batches
/// throughout; the population is never held in memory.
///
/// Replays are timed as a run replays: each user prepared, then replayed
/// under each policy in turn while its data is in the caches. Per-core
/// rates divide the work by the CPU time of the threads that did it
/// (``StageClock``), so they mean the same with `--jobs 1` and `--jobs 2`
/// and do not count time lost to other processes on a busy machine; the
/// other rates are per second of wall time, all threads together.
///
/// Metric names are stable (see ``BenchReport/metricNames``); the targets
/// are the speed targets (``BenchTarget``).
package func runBench(
  _ config: BenchConfiguration, progress: @escaping (BenchProgress) -> Void = { _ in }
) throws -> BenchReport {
  LinearAlgebra.setSingleThreaded()
  try FileManager.default.createDirectory(atPath: config.directory, withIntermediateDirectories: true)
  let benchStart = DispatchTime.now()
  var metrics: [BenchMetric] = []
  let path = config.tracePath
  let generating = config.trace == nil
  defer { if generating, !config.keepTrace { try? FileManager.default.removeItem(atPath: path) } }

  // 1. Generation (not with a given trace).
  var t0 = DispatchTime.now()
  if generating {
    let pop = SyntheticPopulation(seed: BenchConfiguration.populationSeed, days: config.days)
    _ = try pop.write(to: path, users: config.users) { u, _ in
      progress(BenchProgress(stage: "generate", done: u, total: config.users))
    }
    let genS = seconds(since: t0)
    metrics.append(.init(name: "generate_users_per_s", value: Double(config.users) / genS, unit: "users/s"))
    metrics.append(.init(name: "generate_mb_per_s", value: Double(fileSize(path)) / 1e6 / genS, unit: "MB/s"))
  } else {
    try requireRegularFile(path)
  }
  let bytes = Double(fileSize(path))
  let mb = bytes / 1e6

  // 2. Ingestion: the whole file through TraceReader, one thread; then as
  // a run reads it, hashed for the manifest (SHA-256 on a second thread),
  // parsed on `config.jobs` threads (ParallelTraceReader).
  let expectedUsers = generating ? config.users : 0
  t0 = DispatchTime.now()
  var users = 0
  var readEvents = 0
  do {
    let reader = try TraceReader(path: path)
    while let u = try reader.next() {
      users += 1
      readEvents += u.events.count
      if users % 256 == 0 { progress(BenchProgress(stage: "ingest", done: users, total: expectedUsers)) }
    }
  }
  let ingestS = seconds(since: t0)
  metrics.append(.init(name: "trace_size", value: mb, unit: "MB"))
  metrics.append(.init(name: "trace_events", value: Double(readEvents), unit: "events"))
  metrics.append(.init(name: "trace_users", value: Double(users), unit: "users"))
  metrics.append(.init(name: "ingest_mb_per_s", value: mb / ingestS, unit: "MB/s"))
  metrics.append(.init(name: "ingest_events_per_s", value: Double(readEvents) / ingestS, unit: "events/s"))
  t0 = DispatchTime.now()
  do {
    let reader = try ParallelTraceReader(path: path, jobs: config.jobs)
    let hasher = BackgroundSHA256(jobs: config.jobs)
    reader.hasher = hasher
    var n = 0
    while try reader.next() != nil {
      n += 1
      if n % 256 == 0 { progress(BenchProgress(stage: "ingest+hash", done: n, total: users)) }
    }
    _ = hasher.hexDigest()
  }
  metrics.append(
    .init(
      name: "ingest_hashed_mb_per_s", value: mb / seconds(since: t0), unit: "MB/s",
      goal: .atLeast(BenchTarget.ingestHashedMBPerS)))
  t0 = DispatchTime.now()
  _ = try SHA256.hashFile(atPath: path)
  metrics.append(.init(name: "sha256_mb_per_s", value: mb / seconds(since: t0), unit: "MB/s"))

  // 3. Habit-model fitting: every selected (user, app) over the training window.
  let apps = AppSelection.top(3)
  let runConfig = { (policies: [PolicySpec], jobs: Int) in
    RunConfiguration(
      tracePath: path, policies: policies, seed: 1, apps: apps, recordEvents: false, jobs: jobs,
      batchUsers: config.batchUsers, trainFraction: config.trainFraction)
  }
  let fitConfig = runConfig([], config.jobs)
  t0 = DispatchTime.now()
  let fitted = try fitPopulationHashed(fitConfig, limits: .current)
  let population = fitted.models
  let popFitS = seconds(since: t0)
  metrics.append(.init(name: "fit_population_s", value: popFitS, unit: "s"))
  // The users the population pass parsed in full (the others it passed over).
  metrics.append(.init(name: "fit_population_users_parsed", value: Double(fitted.usersRead), unit: "users"))
  var models = 0
  var fitS = 0.0
  try forEachBatch(path: path, size: config.batchUsers) { batch, _ in
    let samples = batch.flatMap { u -> [HabitSample] in
      let train = splitForRun(u, fitConfig).train
      return apps.select(in: u).map { HabitSample(trace: train, app: $0, from: train.start, to: train.end) }
    }
    let t = DispatchTime.now()
    _ = parallelMap(samples.count, jobs: config.jobs) { HabitFitter().fit(samples[$0], prior: population.habit) }
    fitS += seconds(since: t)
    models += samples.count
    progress(BenchProgress(stage: "fit", done: models, total: 3 * users))
  }
  metrics.append(.init(name: "fit_models_per_s", value: Double(models) / fitS, unit: "models/s"))

  // 4. Replay, as a run replays: each user is prepared once (split,
  // network and radio timelines, app selection, content timelines), then
  // replayed under each policy in turn while its data is still in the
  // caches (reading not timed). Each stage is timed on the thread that
  // runs it: CPU time (CLOCK_THREAD_CPUTIME_ID) for the per-core rates,
  // elapsed time for the wall-time rates (summed over threads, divided by
  // the jobs).
  let specs = try BenchConfiguration.replayPolicies.map { try PolicySpec(parsing: $0) }
  let replayConfigs = specs.map { runConfig([$0], config.jobs) }
  var replayS = [Double](repeating: 0, count: specs.count)
  var replayCPU = [Double](repeating: 0, count: specs.count)
  var prepareS = 0.0
  var testDays = 0.0
  var testEvents = 0
  var replayed = 0
  try forEachBatch(path: path, size: config.batchUsers) { batch, _ in
    let timed = parallelMap(batch.count, jobs: config.jobs) { i in
      var clock = StageClock()
      let p = PreparedReplay(batch[i], fitConfig, population)
      let prepare = clock.lap()
      let replays = (0..<specs.count).map { k in
        _ = p.replay([specs[k]], replayConfigs[k])
        return clock.lap()
      }
      return (days: p.user.trace.days, events: p.user.trace.events.count, prepare: prepare, replays: replays)
    }
    for u in timed {
      testDays += u.days
      testEvents += u.events
      prepareS += u.prepare.wallS
      for k in specs.indices {
        replayS[k] += u.replays[k].wallS
        replayCPU[k] += u.replays[k].cpuS
      }
    }
    replayed += batch.count
    progress(BenchProgress(stage: "replay", done: replayed, total: users))
  }
  // Elapsed times summed over the threads: divided by the jobs, the wall
  // time the stage would take on its own.
  let threads = Double(max(1, config.jobs))
  prepareS /= threads
  for k in specs.indices { replayS[k] /= threads }
  metrics.append(.init(name: "prepare_user_days_per_s", value: testDays / prepareS, unit: "user-days/s"))
  for (k, spec) in specs.enumerated() {
    let name = BenchReport.metricName(spec.description)
    let target = spec.usesHabitModel ? BenchTarget.learningPerCore : BenchTarget.replayPerCore
    metrics.append(
      .init(name: "replay_\(name)_policy_user_days_per_s", value: testDays / replayS[k], unit: "policy-user-days/s"))
    metrics.append(
      .init(
        name: "replay_\(name)_policy_user_days_per_core_s", value: testDays / max(replayCPU[k], 1e-9),
        unit: "policy-user-days/CPU-s", goal: .atLeast(target)))
    metrics.append(.init(name: "replay_\(name)_events_per_s", value: Double(testEvents) / replayS[k], unit: "events/s"))
  }

  // 5. Two cores: the same `run` (read, hash, replay, hand to a sink) with
  // 1 job and with 2, when --jobs ≥ 2.
  if config.jobs >= 2 {
    let runSpecs = try BenchConfiguration.runPolicies.map { try PolicySpec(parsing: $0) }
    var wall: [Double] = []
    for jobs in [1, 2] {
      var sink = CountingSink()
      let t = DispatchTime.now()
      try runReplay(runConfig(runSpecs, jobs), into: &sink) { p in
        progress(BenchProgress(stage: "run --jobs \(jobs)", done: p.users, total: users))
      }
      wall.append(seconds(since: t))
    }
    metrics.append(.init(name: "run_jobs_1_s", value: wall[0], unit: "s"))
    metrics.append(.init(name: "run_jobs_2_s", value: wall[1], unit: "s"))
    metrics.append(
      .init(name: "speedup_jobs_2", value: wall[0] / wall[1], unit: "x", goal: .atLeast(BenchTarget.speedupJobs2)))
  }

  // 6. The default-style experiment: population fit + 8 policies, end to end.
  let expSpecs = try BenchConfiguration.experimentPolicies.map { try PolicySpec(parsing: $0) }
  var sink = CountingSink()
  var rssAfterFirst: Double?
  t0 = DispatchTime.now()
  try runReplay(runConfig(expSpecs, config.jobs), into: &sink) { p in
    if rssAfterFirst == nil { rssAfterFirst = currentRSSMB() }
    progress(BenchProgress(stage: "experiment", done: p.users, total: users))
  }
  let expS = seconds(since: t0)
  let scaled = BenchTarget.experimentSeconds * Double(users) / 10_000
  metrics.append(.init(name: "experiment_wall_s", value: expS, unit: "s", goal: .atMost(scaled)))
  metrics.append(
    .init(name: "experiment_policy_user_days_per_s", value: sink.days * Double(expSpecs.count) / expS, unit: "policy-user-days/s"))
  if let first = rssAfterFirst, let last = currentRSSMB() {
    metrics.append(
      .init(
        name: "experiment_rss_growth", value: max(0, last - first), unit: "MB",
        goal: .atMost(BenchTarget.rssGrowthMB)))
  }
  metrics += try externalPipeMetrics(config, progress: progress)
  metrics.append(.init(name: "peak_rss", value: peakRSSMB(), unit: "MB"))
  metrics.append(.init(name: "bench_total_s", value: seconds(since: benchStart), unit: "s"))
  return BenchReport(metrics: metrics)
}

/// The speed targets, as `fetchlab bench` checks them.
package enum BenchTarget {
  /// Replay of `never`, `periodic`, `oracle`: policy-user-days per CPU second.
  package static let replayPerCore = 500_000.0
  /// Replay of the learning policies (`ios-minimum`): policy-user-days per CPU second.
  package static let learningPerCore = 25_000.0
  /// Ingestion of canonical CSV including the SHA-256 for the manifest, MB/s.
  package static let ingestHashedMBPerS = 400.0
  /// Wall time of `run` with 1 job over its time with 2 jobs.
  package static let speedupJobs2 = 1.8
  /// The experiment at 10,000 users, seconds (scaled linearly with users).
  package static let experimentSeconds = 30.0
  /// Resident set growth during the experiment, MB ("memory flat"; the
  /// metric is 0 when the set shrank).
  package static let rssGrowthMB = 64.0
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
    }
    n += [
      "run_jobs_1_s", "run_jobs_2_s", "speedup_jobs_2", "experiment_wall_s", "experiment_policy_user_days_per_s",
      "experiment_rss_growth",
    ] + externalPipeMetricNames + ["peak_rss", "bench_total_s"]
    return n
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

/// Counts replayed user-days and drops the results.
private struct CountingSink: RunSink {
  var users = 0
  var days = 0.0
  mutating func consume(_ result: UserResult, config: RunConfiguration) throws {
    users += 1
    days += (result.trace.end - result.trace.start) / 86_400
  }
}

/// Calls `body` with consecutive batches of at most `size` users.
private func forEachBatch(path: String, size: Int, _ body: ([UserTrace], Int) throws -> Void) throws {
  let reader = try TraceReader(path: path)
  var batch: [UserTrace] = []
  batch.reserveCapacity(size)
  var first = 0
  while true {
    batch.removeAll(keepingCapacity: true)
    while batch.count < size, let u = try reader.next() { batch.append(u) }
    if batch.isEmpty { return }
    try body(batch, first)
    first += batch.count
    if batch.count < size { return }
  }
}

/// Times successive stages of work on one thread: each ``lap()`` returns
/// the thread's CPU time and the elapsed time since the previous lap (or
/// since the clock was made).
private struct StageClock {
  private var cpu = StageClock.threadCPUSeconds()
  private var wall = DispatchTime.now()

  mutating func lap() -> (cpuS: Double, wallS: Double) {
    let c = StageClock.threadCPUSeconds()
    let w = DispatchTime.now()
    defer { (cpu, wall) = (c, w) }
    return (c - cpu, Double(w.uptimeNanoseconds - wall.uptimeNanoseconds) / 1e9)
  }

  /// CPU time of the calling thread, s (nanosecond resolution on Linux).
  static func threadCPUSeconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
  }
}

private func seconds(since t: DispatchTime) -> Double {
  Double(DispatchTime.now().uptimeNanoseconds - t.uptimeNanoseconds) / 1e9
}

private func fileSize(_ path: String) -> Int {
  ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int) ?? 0
}

/// Peak resident set size of this process, MB (`ru_maxrss` is in KiB on Linux).
package func peakRSSMB() -> Double {
  var u = rusage()
  #if os(Linux)
    getrusage(RUSAGE_SELF.rawValue, &u)
    return Double(u.ru_maxrss) * 1024 / 1e6
  #else
    getrusage(RUSAGE_SELF, &u)
    return Double(u.ru_maxrss) / 1e6  // bytes on Darwin
  #endif
}

/// Current resident set size, MB, from `/proc/self/statm`; nil elsewhere.
func currentRSSMB() -> Double? {
  guard let s = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
  let f = s.split(separator: " ")
  guard f.count > 1, let pages = Double(f[1]) else { return nil }
  return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1e6
}
