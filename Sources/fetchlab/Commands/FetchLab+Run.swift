import ArgumentParser
import FetchBenchmark
import FetchModels
import FetchReports
import FetchSimulation
import FetchSupport
import FetchTraces
import FetchWorld
import Foundation

extension FetchLab {
  struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Replay a trace (or an experiment file's datasets) against fetch policies; write summary.csv, opens.csv, fetches.csv, pooled.csv, the scores (policies.csv with 95 % CIs, pareto.csv, matched.csv, oracle_gap.csv, loss_split.csv) and manifest.json; print a comparison.",
      discussion: """
        Policies: \(PolicySpec.syntax). `fetchlab policies` lists each one's settings.
        Example (three policies on the bundled trace):
          fetchlab run --trace datasets/ubiqlog/ubiqlog-opens.csv \\
            --policy never --policy periodic:1h --policy oracle --out results/demo

        With an experiment file (datasets × policy grids × replications; see experiments/example.json):
          fetchlab run experiments/example.json --out results/example
        The run is split into units (dataset × replication × block of users) kept in OUT/parts/; running the \
        same command again after an interruption resumes with the unfinished units and writes the same bytes. \
        The output CSVs get two leading columns, dataset and replication. OUT holding a different experiment \
        is an error unless --force.
        """)

    @Argument(
      help: ArgumentHelp(
        "An experiment file (JSON): datasets, policy grids, replications. Replaces --trace, --policy, --seed, --config, --set, --apps, --train-fraction, --no-foreground-refresh and --no-event-files.",
        valueName: "experiment.json"), completion: .json)
    var experiment: String?

    @Option(name: .long, help: "Canonical trace file (when no experiment file is given).", completion: .trace)
    var trace: String?

    @Option(name: .long, help: ArgumentHelp("A policy to replay; repeat for several (default: never, periodic:15m, periodic:1h, periodic:4h, oracle).", valueName: "policy"), completion: .policy)
    var policy: [String] = []

    @Option(name: .long, help: "Output directory.", completion: .directory)
    var out: String

    @Option(
      name: .long, parsing: .unconditional, help: "Master seed for every random draw (default 1).",
      transform: { s in
        guard let x = UInt64(s) else {
          throw ValidationError("--seed '\(s)': expected a whole number from 0 to \(UInt64.max)")
        }
        return x
      })
    var seed: UInt64?

    @Option(name: .long, help: "JSON file overriding world-model parameters (see 'fetchlab params').", completion: .json)
    var config: String?

    @Option(name: .customLong("set"), help: ArgumentHelp("Override one parameter, name=value (repeatable; applied after --config).", valueName: "name=value"))
    var overrides: [String] = []

    @Option(name: .long, help: "Which apps of each user to replay: top:K, min-opens:N (among apps with content: offline categories such as the dialer or camera left out unless /offline follows) or names:A,B; /except:A,B leaves apps out (default top:3).")
    var apps: String?

    @Option(name: .long, parsing: .unconditional, help: "Share of each user's window to train on (chronological); every policy, learning or not, is scored on the rest, so runs with different policies score the same opens. 0 scores the whole window. (default: 0.75)", transform: { try decimalArgument($0, "--train-fraction") })
    var trainFraction: Double?

    @Flag(name: .long, help: "Opens do not refresh content in the foreground (replay.foreground_refresh=false).")
    var noForegroundRefresh = false

    @Flag(name: .long, help: "Skip opens.csv and fetches.csv (for large runs).")
    var noEventFiles = false

    @OptionGroup var parallel: JobsOption

    @OptionGroup var energyOption: EnergyOption

    @Flag(
      name: .long,
      help: "Replace what --out holds when this run did not write it: a different experiment's parts and results, or (with --trace) an experiment's directory or files fetchlab did not write.")
    var force = false

    @Option(
      name: .long,
      help: ArgumentHelp(
        "With an experiment file: compute only shard K of N of its units (1 ≤ K ≤ N) into --out and write shard.json instead of the final files; combine the N shard directories with 'fetchlab merge' (see docs/slurm.md).",
        valueName: "K/N"))
    var shard: String?

    func validate() throws {
      switch (experiment, trace) {
      case (_?, _?): throw ValidationError("give an experiment file or --trace, not both")
      case (nil, nil): throw ValidationError("give an experiment file (fetchlab run EXPERIMENT.json --out DIR) or --trace TRACE")
      case (_?, nil):
        let clashes: [(Bool, String)] = [
          (!policy.isEmpty, "--policy"), (seed != nil, "--seed"), (config != nil, "--config"),
          (!overrides.isEmpty, "--set"), (apps != nil, "--apps"), (trainFraction != nil, "--train-fraction"),
          (noForegroundRefresh, "--no-foreground-refresh"), (noEventFiles, "--no-event-files"),
        ]
        if let c = clashes.first(where: \.0) {
          throw ValidationError("\(c.1) cannot be combined with an experiment file: set it in the file (see experiments/example.json)")
        }
      case (nil, _?):
        if shard != nil { throw ValidationError("--shard applies to experiment files only") }
      }
      _ = try parseShard()
      if let f = trainFraction, !(f >= 0 && f < 1) { throw ValidationError("--train-fraction must be in [0, 1)") }
      if let m = RunConfiguration.refusal(policyStrings: policy) { throw ValidationError(m) }
      for p in policy { _ = try parsePolicy(p) }
      do { _ = try AppSelection(parsing: apps ?? "top:3") } catch { throw ValidationError(String(describing: error)) }
    }

    /// The `--shard` value, or `nil` without one.
    func parseShard() throws -> ExperimentShard? {
      guard let shard else { return nil }
      do { return try ExperimentShard(parsing: shard) } catch { throw ValidationError("--shard \(error)") }
    }

    func parsePolicy(_ s: String) throws -> PolicySpec {
      do { return try PolicySpec(parsing: s) } catch { throw ValidationError(String(describing: error)) }
    }

    func run() throws {
      if let experiment { return try runExperimentFile(experiment) }
      guard let trace else { throw ValidationError("missing --trace") }
      let seed = self.seed ?? 1
      let started = Date()
      let names = policy.isEmpty ? ["never", "periodic:15m", "periodic:1h", "periodic:4h", "oracle"] : policy
      let specs = try names.map(parsePolicy)
      if let s = specs.first(where: \.needsGeneratorTruth) {
        throw CommandError("'\(s)' plans with the synthetic generator's models, but \(trace) is a trace with no generator; run it in an experiment file whose datasets are synthetic")
      }
      var world = WorldParameters()
      if let config { try world.apply(configPath: config) }
      try applyOverrides(overrides, to: &world)
      if noForegroundRefresh { world.replay.foregroundRefresh = false }
      let split = trainFraction ?? RunConfiguration.defaultTrainFraction
      log(
        split > 0
          ? "scored window: the last \(CSV.number((1 - split) * 100, decimals: 0)) % of each user's window, for every policy "
            + "(the first \(CSV.number(split * 100, decimals: 0)) % trains the learning policies; --train-fraction 0 scores all of it)"
          : "scored window: each user's whole window (--train-fraction 0: learning policies have no training data)")
      let cfg = RunConfiguration(
        tracePath: trace, policies: specs, seed: seed, world: world, apps: try AppSelection(parsing: apps ?? "top:3"),
        recordEvents: !noEventFiles, jobs: parallel.jobs, trainFraction: split)
      let traceBytes = (try? FileManager.default.attributesOfItem(atPath: trace)[.size] as? Int) ?? 0
      if let m = cfg.checkOutput(traceBytes: Double(traceBytes)) { throw CommandError(m) }
      let dir = try ResultDirectory(path: out)
      try dir.refuseOverwriting(inputs: [("--trace", trace)] + (config.map { [("--config", $0)] } ?? []))
      if let foreign = dir.foreignContent(), !force {
        throw CommandError("\(out) holds \(foreign): choose another --out, or pass --force to replace it")
      }
      let settings: KeyValuePairs<String, Any> = [
        "policies": specs.map(\.description), "seed": seed, "apps": cfg.apps.description, "train_fraction": split,
        "world_overrides": world.overrides(),
      ]
      if !force, let differs = dir.differingSetting(settings) { throw differentRun(differs) }
      var sink = try CSVReportSink(directory: dir.staging, config: cfg)
      let progress = ProgressLine(label: "replay")
      let interrupt = InterruptHandler(out: out, experiment: false, progress: progress)
      defer { interrupt.cancel() }
      let stats = try runReplay(cfg, into: &sink) { p in
        progress.update(
          done: p.users, unit: "users", workDone: p.totalBytes > 0 ? Double(p.bytesRead) / Double(p.totalBytes) : nil)
        InterruptHandler.testInterrupt(after: p.users, "FETCHLAB_TEST_SIGINT_AFTER_USERS")
      }
      progress.finish()
      if !force, let differs = dir.differingSetting(["trace.sha256": stats.sha256]) { throw differentRun(differs) }
      if stats.usersTooShortToFit > 0 {
        log(
          "note: \(stats.usersTooShortToFit) users have a training window shorter than one habit-model bin (15 min): "
            + "their learning policies use the population model (a constant rate when there is none)")
      }
      let jobs: Int = parallel.jobs
      var manifest: [String: Any] = [
        "fetchlab_version": fetchLabVersion,
        "command": CommandLine.arguments.joined(separator: " "),
        "trace": [
          "path": trace, "path_from_run_dir": RunPaths.relative(trace, from: out),
          "absolute_path": RunPaths.canonical(trace), "bytes": stats.bytes,
          "sha256": stats.sha256,
        ],
        "seed": seed,
        "policies": specs.map(\.description),
        "apps": cfg.apps.description,
        "train_fraction": split,
        "world_overrides": world.overrides(),
        "counts": [
          "users": sink.users, "pairs": sink.aggregates.first?.pairs ?? 0,
          "opens": sink.aggregates.first?.opens ?? 0,
          "fetches": sink.aggregates.map(\.fetches).reduce(0, +),
        ],
        "event_files": !noEventFiles,
        "jobs": jobs,
        "started_at": ISO8601DateFormatter().string(from: started),
        "elapsed_s": (Date().timeIntervalSince(started) * 1000).rounded() / 1000,
      ]
      let basis = energyOption.energy ?? .standard
      manifest["energy_basis"] = basis.rawValue
      try sink.commit(manifest: manifest)
      try writeScores(runDir: dir.staging, jobs: jobs, energy: basis)
      try dir.commit(removing: force ? ["parts", "datasets"] : [])
      print("\(sink.users) users, \(sink.aggregates.first?.pairs ?? 0) (user, app) pairs, \(specs.count) policies -> \(out)/")
      print(ComparisonTable.render(sink.aggregates, capacityJ: world.device.batteryCapacityJ), terminator: "")
      if sink.pairsWithoutOpens > 0 {
        log(
          "warning: \(sink.pairsWithoutOpens) (user, app, policy) pairs have no scored opens; their staleness is empty "
            + "(undefined) in summary.csv" + (sink.aggregates.contains { $0.opens == 0 } ? ", and so is pooled.csv's for policies without opens" : ""))
      }
      log(sink.coverage.render(trainFraction: split, apps: cfg.apps), terminator: "")
    }
  }
}

extension FetchLab.Run {
  /// The refusal to replace a different run's result in --out without --force.
  func differentRun(_ setting: String) -> CommandError {
    CommandError(
      "\(out) holds the result of a different run (its \(setting) differs from this run's): choose another --out, "
        + "or pass --force to replace it")
  }

  /// `fetchlab run EXPERIMENT.json --out DIR [--shard K/N]`: resumable; see
  /// ``runExperiment(_:directory:options:progress:)``.
  ///
  /// `FETCHLAB_TEST_STOP_AFTER_UNITS=k` (a test hook) makes the run fail
  /// after computing k units, as if it had been killed there;
  /// `FETCHLAB_TEST_SIGINT_AFTER_UNITS=k` sends it SIGINT there (and
  /// `FETCHLAB_TEST_SIGINT_AFTER_USERS` a `run --trace` after k users).
  func runExperimentFile(_ path: String) throws {
    let started = Date()
    let exp = try Experiment(contentsOf: path)
    let stop = ProcessInfo.processInfo.environment["FETCHLAB_TEST_STOP_AFTER_UNITS"].flatMap { Int($0) }
    let shard = try parseShard()
    let options = ExperimentOptions(
      jobs: parallel.jobs, force: force, version: fetchLabVersion, stopAfterUnits: stop, shard: shard)
    let progress = ProgressLine(label: shard.map { "shard \($0)" } ?? "experiment")
    let interrupt = InterruptHandler(out: out, experiment: true, progress: progress)
    defer { interrupt.cancel() }
    let outcome = try runExperiment(exp, directory: out, options: options) { p in
      progress.update(done: p.done, total: p.total, unit: "units", workDone: p.fraction, workComputed: p.computedFraction)
      InterruptHandler.testInterrupt(after: p.computed, "FETCHLAB_TEST_SIGINT_AFTER_UNITS")
    }
    progress.finish()
    guard let shard else {
      try finishExperiment(outcome, started: started, jobs: parallel.jobs, energy: energyOption.energy)
      return logCoverage(exp, outcome)
    }
    try outcome.commitShard(extra: [
      "fetchlab_version": fetchLabVersion,
      "command": CommandLine.arguments.joined(separator: " "),
      "jobs": parallel.jobs,
      "started_at": ISO8601DateFormatter().string(from: started),
      "elapsed_s": (Date().timeIntervalSince(started) * 1000).rounded() / 1000,
    ])
    print(
      "\(exp.name): shard \(shard): \(outcome.units.count) of \(outcome.unitsTotal) units "
        + "(\(outcome.unitsComputed) computed, \(outcome.unitsReused) reused) -> \(out)/shard.json")
    print("combine all \(shard.count) shard directories with: fetchlab merge --out DIR SHARD_DIR...")
  }
}

extension FetchLab.Run {
  /// The summary of what each dataset's run scored (``RunCoverage``), on
  /// stderr: a second, cheap pass over the traces (reused parts hold none).
  /// The results are in place by then: a trace that cannot be read again
  /// costs the summary, with a note, not the run.
  func logCoverage(_ exp: Experiment, _ outcome: ExperimentOutcome) {
    for (i, d) in exp.datasets.enumerated() {
      let config = RunConfiguration(
        tracePath: outcome.inputs[i].path, policies: [], world: exp.world(of: d), apps: exp.apps,
        trainFraction: exp.trainFraction)
      var coverage = RunCoverage()
      do {
        try coverage.add(tracePath: config.tracePath, config: config)
      } catch {
        log("note: dataset \(d.name): no summary of the opens scored: \(readable(error))")
        continue
      }
      log("dataset \(d.name): " + coverage.render(
        trainFraction: exp.trainFraction, apps: exp.apps, trainFractionFlag: "train_fraction", appsFlag: "apps"),
        terminator: "")
    }
  }
}

/// Commits an assembled experiment (`run EXPERIMENT.json` or `merge`):
/// `manifest.json` with the command line, threads and times, the scores,
/// and the printed comparison per dataset.
func finishExperiment(_ outcome: ExperimentOutcome, started: Date, jobs: Int, energy: EnergyBasis?) throws {
  let exp = outcome.experiment, out = outcome.directory
  let basis = energy ?? exp.energy
  var manifest = outcome.manifest
  manifest["energy_basis"] = basis.rawValue
  manifest["fetchlab_version"] = fetchLabVersion
  manifest["command"] = CommandLine.arguments.joined(separator: " ")
  manifest["jobs"] = jobs
  manifest["started_at"] = ISO8601DateFormatter().string(from: started)
  manifest["elapsed_s"] = (Date().timeIntervalSince(started) * 1000).rounded() / 1000
  try outcome.commit(manifest: manifest) { staging in
    let scores = try writeScores(runDir: staging, jobs: jobs, energy: basis)
    try Robustness.write(runDir: staging, scores: scores, points: exp.worldPoints, basis: basis)
  }
  let t = outcome.total
  print(
    "\(exp.name): \(exp.datasets.count) datasets, \(t.users) users, \(t.pairs) (user, app) pairs, "
      + "\(exp.configurations.count) policies × \(exp.replications) replications; "
      + "\(outcome.unitsComputed) units computed, \(outcome.unitsReused) reused -> \(out)/")
  // A large grid prints the tables of its first datasets, as its report
  // draws the charts of its first ones; policies.csv has every dataset.
  let shown = exp.datasets.prefix(RunReport.maxChartedDatasets)
  for (i, d) in shown.enumerated() {
    let c = outcome.counts[i]
    let over = exp.replications > 1 ? ", pooled over \(exp.replications) replications" : ""
    print("\ndataset \(d.name): \(c.users) users, \(c.pairs) pairs\(over)")
    print(ComparisonTable.render(outcome.pooled[i], capacityJ: exp.world(of: d).device.batteryCapacityJ), terminator: "")
    if c.opens == 0 {
      log(
        "warning: dataset \(d.name) has no scored opens (its users' opens all fall in the training part, "
          + "train_fraction \(CSV.number(exp.trainFraction))): its staleness is empty (undefined), not zero")
    }
  }
  if exp.datasets.count > shown.count {
    let rest = exp.datasets.count - shown.count
    let empty = outcome.counts.dropFirst(shown.count).filter { $0.opens == 0 }.count
    print(
      "\n... and \(rest) more datasets (a run prints the first \(shown.count)): every dataset's rows are in "
        + "\(out)/policies.csv")
    if empty > 0 { log("warning: \(empty) of those \(rest) datasets have no scored opens: their staleness is empty (undefined)") }
  }
}

extension FetchLab {
  struct Params: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "List every world-model parameter: name, default, unit and source (Markdown table).",
      discussion: """
        Any parameter can be overridden in a run with --set name=value or --config FILE.json, and in an \
        experiment file's "world" object. docs/parameters.md is this table.
        Example: fetchlab params > docs/parameters.md
        Example (a shorter LTE tail):
          fetchlab run --trace datasets/ubiqlog/ubiqlog-opens.csv \\
            --policy periodic:1h --set radio.lte.tail_s=5 --out results/short-tail
        """)

    func run() {
      let w = WorldParameters()
      print("| parameter | default | unit | source |")
      print("|---|---|---|---|")
      for p in WorldParameters.registry {
        print("| `\(p.name)` | \(p.value(in: w)) | \(p.unit) | \(p.source) |")
      }
      print("| `\(WorldParameters.appRatePrefix)<app>` | (content.rate_per_hour) | 1/h | per-app override |")
    }
  }
}

/// Applies `name=value` overrides; numbers, true/false, or words.
func applyOverrides(_ items: [String], to world: inout WorldParameters) throws {
  for item in items {
    guard let eq = item.firstIndex(of: "=") else {
      throw ValidationError("--set '\(item)': expected name=value")
    }
    let name = String(item[..<eq])
    if let msg = world.set(name, to: ParameterValue(parsing: String(item[item.index(after: eq)...]))) {
      throw ValidationError("--set \(name): \(msg)")
    }
  }
}

func fileSize(_ path: String) -> Int {
  ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int) ?? 0
}
