import Dispatch
import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation

/// One benchmark in progress: the stages of ``runBench(_:baseline:progress:)``,
/// each a method that times its work and appends its figures to
/// ``metrics`` in ``BenchReport/metricNames`` order.
struct BenchRun {
  let config: BenchConfiguration
  let progress: (BenchProgress) -> Void
  let start = DispatchTime.now()
  var metrics: [BenchMetric] = []
  /// Users in the trace (counted by ``ingest()``).
  var users = 0

  init(_ config: BenchConfiguration, progress: @escaping (BenchProgress) -> Void) {
    self.config = config
    self.progress = progress
  }

  var path: String { config.tracePath }
  var generating: Bool { config.trace == nil }
  let apps = AppSelection.top(3)

  /// The `run` configuration of the benchmark's trace with `policies`.
  func runConfig(_ policies: [PolicySpec], jobs: Int) -> RunConfiguration {
    RunConfiguration(
      tracePath: path, policies: policies, seed: 1, apps: apps, recordEvents: false, jobs: jobs,
      batchUsers: config.batchUsers, trainFraction: config.trainFraction)
  }

  mutating func add(_ name: String, _ value: Double, _ unit: String, goal: BenchMetric.Goal? = nil) {
    metrics.append(BenchMetric(name: name, value: value, unit: unit, goal: goal))
  }

  /// 1. Generation of the synthetic population (not with a given trace,
  /// which must be a regular file).
  mutating func generate() throws {
    guard generating else { return try requireRegularFile(path) }
    let t0 = DispatchTime.now()
    let pop = SyntheticPopulation(seed: BenchConfiguration.populationSeed, days: config.days)
    let (total, progress) = (config.users, progress)
    _ = try pop.write(to: path, users: total) { u, _ in
      progress(BenchProgress(stage: "generate", done: u, total: total))
    }
    let genS = seconds(since: t0)
    add("generate_users_per_s", Double(config.users) / genS, "users/s")
    add("generate_mb_per_s", Double(fileSize(path)) / 1e6 / genS, "MB/s")
  }

  /// 2. Ingestion: the whole file through `TraceReader`, one thread; then
  /// as a run reads it, hashed for the manifest (SHA-256 on a second
  /// thread), parsed on `config.jobs` threads (`ParallelTraceReader`);
  /// then the hash alone.
  mutating func ingest() throws {
    let mb = Double(fileSize(path)) / 1e6
    let expectedUsers = generating ? config.users : 0
    var t0 = DispatchTime.now()
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
    add("trace_size", mb, "MB")
    add("trace_events", Double(readEvents), "events")
    add("trace_users", Double(users), "users")
    add("ingest_mb_per_s", mb / ingestS, "MB/s")
    add("ingest_events_per_s", Double(readEvents) / ingestS, "events/s")
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
    add("ingest_hashed_mb_per_s", mb / seconds(since: t0), "MB/s")
    t0 = DispatchTime.now()
    _ = try SHA256.hashFile(atPath: path)
    add("sha256_mb_per_s", mb / seconds(since: t0), "MB/s")
  }

  /// 3. The population pass, then habit-model fitting: every selected
  /// (user, app) over the training window. Returns the population models.
  mutating func fit() throws -> PopulationModels {
    let fitConfig = runConfig([], jobs: config.jobs)
    let t0 = DispatchTime.now()
    let fitted = try fitPopulationHashed(fitConfig, limits: .current)
    let population = fitted.models
    add("fit_population_s", seconds(since: t0), "s")
    // The users the population pass parsed in full (the others it passed over).
    add("fit_population_users_parsed", Double(fitted.usersRead), "users")
    var models = 0
    var fitS = 0.0
    let (apps, jobs, total) = (apps, config.jobs, 3 * users)
    try forEachBatch(path: path, size: config.batchUsers) { batch, _ in
      let samples = batch.flatMap { u -> [HabitSample] in
        let train = splitForRun(u, fitConfig).train
        return apps.select(in: u).map { HabitSample(trace: train, app: $0, from: train.start, to: train.end) }
      }
      let t = DispatchTime.now()
      _ = parallelMap(samples.count, jobs: jobs) { HabitFitter().fit(samples[$0], prior: population.habit) }
      fitS += seconds(since: t)
      models += samples.count
      progress(BenchProgress(stage: "fit", done: models, total: total))
    }
    add("fit_models_per_s", Double(models) / fitS, "models/s")
    return population
  }

  /// 4. Replay, as a run replays: each user is prepared once (split,
  /// network and radio timelines, app selection, content timelines), then
  /// replayed under each policy in turn while its data is still in the
  /// caches (reading not timed). Each stage is timed on the thread that
  /// runs it: CPU time (`CLOCK_THREAD_CPUTIME_ID`) for the per-core
  /// rates, elapsed time for the wall-time rates (summed over threads,
  /// divided by the jobs). Each policy's CPU per policy-user-day is also
  /// given as a multiple of `never`'s, measured in the same run.
  mutating func replay(_ population: PopulationModels) throws {
    let specs = try BenchConfiguration.replayPolicies.map { try PolicySpec(parsing: $0) }
    let fitConfig = runConfig([], jobs: config.jobs)
    let replayConfigs = specs.map { runConfig([$0], jobs: config.jobs) }
    var replayS = [Double](repeating: 0, count: specs.count)
    var replayCPU = [Double](repeating: 0, count: specs.count)
    var prepareS = 0.0, testDays = 0.0
    var testEvents = 0, replayed = 0
    let (jobs, total, progress) = (config.jobs, users, progress)
    try forEachBatch(path: path, size: config.batchUsers) { batch, _ in
      let timed = parallelMap(batch.count, jobs: jobs) { i in
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
      progress(BenchProgress(stage: "replay", done: replayed, total: total))
    }
    // Elapsed times summed over the threads: divided by the jobs, the wall
    // time the stage would take on its own.
    let threads = Double(max(1, config.jobs))
    add("prepare_user_days_per_s", testDays / (prepareS / threads), "user-days/s")
    let neverCPU = specs.firstIndex { $0.description == "never" }.map { replayCPU[$0] }
    for (k, spec) in specs.enumerated() {
      let name = BenchReport.metricName(spec.description)
      add("replay_\(name)_policy_user_days_per_s", testDays / (replayS[k] / threads), "policy-user-days/s")
      add("replay_\(name)_policy_user_days_per_core_s", testDays / max(replayCPU[k], 1e-9), "policy-user-days/CPU-s")
      add("replay_\(name)_events_per_s", Double(testEvents) / (replayS[k] / threads), "events/s")
      if let neverCPU, spec.description != "never" {
        add("replay_\(name)_cpu_vs_never", replayCPU[k] / max(neverCPU, 1e-9), "x")
      }
    }
  }

  /// 5. Two cores: the same `run` (read, hash, replay, hand to a sink)
  /// with 1 job and with 2, when `--jobs` ≥ 2; the speed-up is the ratio
  /// of the two wall times.
  mutating func jobs() throws {
    guard config.jobs >= 2 else { return }
    let runSpecs = try BenchConfiguration.runPolicies.map { try PolicySpec(parsing: $0) }
    var wall: [Double] = []
    let (total, progress) = (users, progress)
    for jobs in [1, 2] {
      var sink = CountingSink()
      let t = DispatchTime.now()
      try runReplay(runConfig(runSpecs, jobs: jobs), into: &sink) { p in
        progress(BenchProgress(stage: "run --jobs \(jobs)", done: p.users, total: total))
      }
      wall.append(seconds(since: t))
    }
    add("run_jobs_1_s", wall[0], "s")
    add("run_jobs_2_s", wall[1], "s")
    add("speedup_jobs_2", wall[0] / wall[1], "x", goal: .atLeast(BenchTarget.speedupJobs2))
  }

  /// 6. The default-style experiment: population fit + 8 policies, end to
  /// end, with the resident set's growth after the first user.
  mutating func experiment() throws {
    let expSpecs = try BenchConfiguration.experimentPolicies.map { try PolicySpec(parsing: $0) }
    var sink = CountingSink()
    var rssAfterFirst: Double?
    let (total, progress) = (users, progress)
    let t0 = DispatchTime.now()
    try runReplay(runConfig(expSpecs, jobs: config.jobs), into: &sink) { p in
      if rssAfterFirst == nil { rssAfterFirst = currentRSSMB() }
      progress(BenchProgress(stage: "experiment", done: p.users, total: total))
    }
    let expS = seconds(since: t0)
    add("experiment_wall_s", expS, "s")
    add("experiment_policy_user_days_per_s", sink.days * Double(expSpecs.count) / expS, "policy-user-days/s")
    if let first = rssAfterFirst, let last = currentRSSMB() {
      add("experiment_rss_growth", max(0, last - first), "MB")
    }
  }

  /// The process's peak memory and the benchmark's total time.
  mutating func finish() {
    add("peak_rss", peakRSSMB(), "MB")
    add("bench_total_s", seconds(since: start), "s")
  }
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
