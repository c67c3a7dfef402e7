import FetchLinearAlgebra
import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation

/// How replay results become CSV text. The report layer supplies it (its
/// column enums), so that this module never formats report rows itself.
public struct ExperimentFormat: Sendable {
  /// Column names of `summary.csv`, `devices.csv`, `opens.csv`,
  /// `fetches.csv` and `pooled.csv`, without the leading
  /// `dataset,replication`.
  package var summaryColumns: [String]
  package var deviceColumns: [String]
  package var openColumns: [String]
  package var fetchColumns: [String]
  package var policyColumns: [String]
  /// The `summary.csv`, `devices.csv`, `opens.csv` and `fetches.csv` records of `results`,
  /// in order, without headers, each ending in LF (opens and fetches may be
  /// empty when `config.recordEvents` is off). `scratch` is an empty
  /// directory the closure may use; it is removed afterwards.
  package var rows: @Sendable (_ results: [UserResult], _ config: RunConfiguration, _ scratch: String) throws -> ExperimentRows
  /// One `pooled.csv` record, fields joined by commas, without LF.
  package var policyRow: @Sendable (_ aggregate: PolicyAggregate, _ capacityJ: Double) -> String
  /// Column names of `devices_pooled.csv` (without `dataset,replication`)
  /// and one record, fields joined by commas, without LF.
  package var devicePoolColumns: [String]
  package var devicePoolRow: @Sendable (_ aggregate: DeviceAggregate, _ capacityJ: Double) -> String

  package init(
    summaryColumns: [String], deviceColumns: [String], openColumns: [String], fetchColumns: [String],
    policyColumns: [String], rows: @escaping @Sendable (_ results: [UserResult], _ config: RunConfiguration, _ scratch: String) throws -> ExperimentRows,
    policyRow: @escaping @Sendable (_ aggregate: PolicyAggregate, _ capacityJ: Double) -> String,
    devicePoolColumns: [String],
    devicePoolRow: @escaping @Sendable (_ aggregate: DeviceAggregate, _ capacityJ: Double) -> String
  ) {
    self.summaryColumns = summaryColumns
    self.deviceColumns = deviceColumns
    self.openColumns = openColumns
    self.fetchColumns = fetchColumns
    self.policyColumns = policyColumns
    self.rows = rows
    self.policyRow = policyRow
    self.devicePoolColumns = devicePoolColumns
    self.devicePoolRow = devicePoolRow
  }
}

/// The CSV records of one work unit (see ``ExperimentFormat/rows``).
package struct ExperimentRows: Sendable {
  package var summary: String
  /// One record per (user, policy): the user's device.
  package var devices: String
  package var opens: String
  package var fetches: String

  package init(summary: String, devices: String, opens: String, fetches: String) {
    self.summary = summary
    self.devices = devices
    self.opens = opens
    self.fetches = fetches
  }
}

/// How to run an experiment; none of it changes the output bytes.
public struct ExperimentOptions: Sendable {
  /// Worker threads.
  public var jobs: Int
  /// Replace the parts of a different experiment found in the directory.
  public var force: Bool
  /// Recorded in the manifest and in the configuration hash (a new version
  /// does not reuse an older version's parts).
  package var version: String
  /// Test hook: throw ``ExperimentError`` after computing this many units,
  /// as if the process had been killed there.
  package var stopAfterUnits: Int?
  /// Run only this shard's units (see ``ExperimentShard``): the run writes
  /// their parts and assembles no final files (commit with
  /// ``ExperimentOutcome/commitShard(extra:)``). Not part of the
  /// configuration hash.
  package var shard: ExperimentShard?
  /// Assemble only: compute no unit. Every unit must be finished in
  /// `parts/` or in ``partSources``; a missing one is an error.
  package var assembleOnly: Bool
  /// Finished units to take, by unit id: the `parts/` directory holding
  /// `<unit>.state` and its files (a shard's). They are hard-linked (or
  /// copied) into `parts/` after the directory is claimed, record last.
  package var partSources: [String: String]
  /// Directories that may hold a generated synthetic dataset
  /// (`<name>.csv` with its `<name>.json`); one with the same settings and
  /// SHA-256 is copied instead of generating the dataset again.
  package var datasetSources: [String]
  /// Stop, before touching the directory, when the configuration hash is
  /// not this one (the experiment or its traces changed).
  package var expectedConfigurationHash: String?

  /// Options for a run: `jobs` worker threads (at least 1); `force` replaces results of another configuration; the rest is for the CLI's sharded runs.
  public init(
    jobs: Int = ProcessInfo.processInfo.activeProcessorCount, force: Bool = false, version: String = "",
    stopAfterUnits: Int? = nil, shard: ExperimentShard? = nil, assembleOnly: Bool = false,
    partSources: [String: String] = [:], datasetSources: [String] = [], expectedConfigurationHash: String? = nil
  ) {
    self.jobs = max(1, jobs)
    self.force = force
    self.version = version
    self.stopAfterUnits = stopAfterUnits
    self.shard = shard
    self.assembleOnly = assembleOnly
    self.partSources = partSources
    self.datasetSources = datasetSources
    self.expectedConfigurationHash = expectedConfigurationHash
  }
}

/// Shard `index` of `count` (1-based) of an experiment's units, for job
/// arrays (`fetchlab run EXPERIMENT.json --shard K/N`).
///
/// Units are numbered in the order they are computed: dataset by dataset,
/// block by block, and within a block replication by replication (the
/// global index `g` runs over all datasets). Shard K takes the units with
/// `g mod N == K - 1`: a deterministic share of at most ⌈units / N⌉ that
/// does not depend on the machine. Replications of a block share no work
/// (each replay fits its own models), so they may go to different shards;
/// every shard reads the traces and fits the population habit model of a
/// dataset it has units in.
public struct ExperimentShard: Sendable, Equatable, CustomStringConvertible {
  /// 1-based shard number, in 1...count.
  public let index: Int
  /// Number of shards, ≥ 1.
  public let count: Int

  /// `nil` unless 1 ≤ index ≤ count.
  public init?(index: Int, count: Int) {
    guard count >= 1, index >= 1, index <= count else { return nil }
    self.index = index
    self.count = count
  }

  /// Parses `K/N` with 1 ≤ K ≤ N (decimal integers).
  ///
  /// - Throws: ``ExperimentError`` saying what is wrong.
  package init(parsing s: String) throws {
    let parts = s.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 2, let k = Int(parts[0]), let n = Int(parts[1]) else {
      throw ExperimentError(.badShard, "'\(s)': expected K/N, such as 2/8")
    }
    guard n >= 1 else { throw ExperimentError(.badShard, "'\(s)': the number of shards N must be at least 1") }
    guard let shard = ExperimentShard(index: k, count: n) else {
      throw ExperimentError(.badShard, "'\(s)': the shard K must be in 1...\(n)")
    }
    self = shard
  }

  /// Whether the unit with global index `g` (0-based) belongs to this shard.
  package func owns(unit g: Int) -> Bool { g % count == index - 1 }

  /// `K/N`.
  public var description: String { "\(index)/\(count)" }
}

/// Progress of an experiment, for display.
public struct ExperimentProgress: Sendable {
  /// Units computed by this process.
  public var computed: Int
  /// Units found finished in `parts/` and reused.
  public var reused: Int
  /// Position of the run: datasets done plus the current one's share read.
  public var fraction: Double
}

/// Counts of one dataset (users and pairs once, not per replication).
package struct ExperimentCounts: Sendable, Equatable {
  package var users = 0
  /// (user, app) pairs replayed.
  package var pairs = 0
  /// Opens of the replayed apps in the scored windows.
  package var opens = 0
  /// Background fetches, over every policy and replication.
  package var fetches = 0

  var json: [String: Any] { ["users": users, "pairs": pairs, "opens": opens, "fetches": fetches] }
}

/// The result of ``runExperiment(_:directory:options:format:progress:)``:
/// the assembled files, not yet in place, and what the manifest needs.
public final class ExperimentOutcome {
  package let experiment: Experiment
  /// The result directory.
  public let directory: String
  /// SHA-256 of the canonical configuration (``configuration``).
  package let configurationHash: String
  /// Everything that determines the output, as JSON objects.
  package let configuration: [String: Any]
  /// Per dataset: `[replication][policy]` aggregates.
  package let aggregates: [[[PolicyAggregate]]]
  /// Per dataset: `[policy]` aggregates pooled over replications.
  package let pooled: [[PolicyAggregate]]
  package let counts: [ExperimentCounts]
  /// Per dataset: the trace replayed, its size and SHA-256.
  package let inputs: [(path: String, bytes: Int, sha256: String)]
  /// Work units computed by this run.
  public let unitsComputed: Int
  /// Work units found finished in `parts/` and reused.
  public let unitsReused: Int
  /// Units of the whole experiment (every shard's).
  public let unitsTotal: Int
  /// The shard this run computed, or `nil` for a whole run.
  package let shard: ExperimentShard?
  /// This run's units in output order (all, or the shard's), with their
  /// records' sizes and SHA-256.
  package let units: [ShardRecord.Unit]
  let files: [AtomicTextFile]
  /// The locked output directory (released with the outcome); the final
  /// files are staged in it.
  let result: ResultDirectory

  init(
    experiment: Experiment, directory: String, configurationHash: String, configuration: [String: Any],
    aggregates: [[[PolicyAggregate]]], pooled: [[PolicyAggregate]], counts: [ExperimentCounts],
    inputs: [(path: String, bytes: Int, sha256: String)], unitsComputed: Int, unitsReused: Int, unitsTotal: Int,
    shard: ExperimentShard?, units: [ShardRecord.Unit], files: [AtomicTextFile], result: ResultDirectory
  ) {
    self.result = result
    self.unitsTotal = unitsTotal
    self.shard = shard
    self.units = units
    self.experiment = experiment
    self.directory = directory
    self.configurationHash = configurationHash
    self.configuration = configuration
    self.aggregates = aggregates
    self.pooled = pooled
    self.counts = counts
    self.inputs = inputs
    self.unitsComputed = unitsComputed
    self.unitsReused = unitsReused
    self.files = files
  }

  /// Totals over datasets.
  package var total: ExperimentCounts {
    counts.reduce(into: ExperimentCounts()) {
      $0.users += $1.users
      $0.pairs += $1.pairs
      $0.opens += $1.opens
      $0.fetches += $1.fetches
    }
  }

  /// The manifest's content, without timestamps; the caller adds the
  /// command line, threads and times.
  package var manifest: [String: Any] {
    let e = experiment
    return [
      "experiment": [
        "name": e.name, "path": e.path, "sha256": SHA256.hex(Array(e.text.utf8)), "text": e.text,
      ],
      "config_hash": configurationHash,
      "configuration": configuration,
      "configurations": e.configurations.map { ["name": $0.name, "expanded": $0.expanded, "pattern": $0.pattern] },
      "policies": e.configurations.map(\.name),
      "replications": (0..<e.replications).map { ["replication": $0, "seed": e.replicationSeed($0)] },
      "seed": e.seed,
      "apps": e.apps.description,
      "train_fraction": e.trainFraction,
      "world_overrides": e.world.overrides(),
      "event_files": e.eventFiles,
      "inputs": zip(e.datasets, inputs).map { d, i in
        [
          "dataset": d.name, "kind": d.kind, "path": i.path, "path_from_run_dir": RunPaths.relative(i.path, from: directory),
          "bytes": i.bytes, "sha256": i.sha256,
        ].merging(d.world.map { ["world_overrides": $0.overrides()] } ?? [:]) { a, _ in a } as [String: Any]
      },
      "counts": total.json,
      "datasets": zip(e.datasets, counts).map { d, c in c.json.merging(["name": d.name]) { a, _ in a } },
      "units": [
        "unit_users": e.unitUsers, "total": unitsComputed + unitsReused, "computed": unitsComputed,
        "reused": unitsReused,
      ],
    ]
  }

  /// Finishes the staged files and writes `manifest.json` (with
  /// `config_hash` added: a rerun recognises the directory by it), lets
  /// `finishing` add files to the staging directory (the scores), then
  /// swaps the whole result into place (``ResultDirectory/commit(removing:)``).
  ///
  /// - Precondition: a whole run (not a shard: use ``commitShard(extra:)``).
  package func commit(manifest: [String: Any], finishing: (_ staging: String) throws -> Void = { _ in }) throws {
    precondition(shard == nil, "a shard has no final files: call commitShard(extra:)")
    for f in files { try f.commit() }
    var manifest = manifest
    manifest["config_hash"] = configurationHash
    let m = try AtomicTextFile(path: result.staging + "/manifest.json")
    try m.write(JSONText.pretty(manifest))
    try m.commit()
    try finishing(result.staging)
    try result.commit()
  }
}

extension ExperimentOutcome {
  /// Writes `shard.json` (temp + rename) for a shard run: format, the
  /// configuration hash, K and N, the experiment file's path, text and
  /// SHA-256, the working directory (relative trace paths are resolved from
  /// it), the inputs, and each unit's id with its
  /// record's size and SHA-256 (see ``ShardRecord``). `extra` (command
  /// line, times) is added as is.
  ///
  /// - Precondition: a shard run (`options.shard`).
  package func commitShard(extra: [String: Any]) throws {
    guard let shard else { preconditionFailure("commitShard(extra:) is for a run with options.shard") }
    var o = extra
    let e = experiment
    o["format"] = ShardRecord.format
    o["config_hash"] = configurationHash
    o["shard"] = ["index": shard.index, "count": shard.count]
    o["experiment"] = ["name": e.name, "path": e.path, "sha256": SHA256.hex(Array(e.text.utf8)), "text": e.text]
    o["working_directory"] = FileManager.default.currentDirectoryPath
    o["inputs"] = zip(e.datasets, inputs).map { d, i in
      ["dataset": d.name, "path": i.path, "bytes": i.bytes, "sha256": i.sha256] as [String: Any]
    }
    o["units"] = units.map { ["id": $0.id, "state_bytes": $0.stateBytes, "state_sha256": $0.stateSHA256] }
    o["units_total"] = unitsTotal
    o["units_computed"] = unitsComputed
    o["units_reused"] = unitsReused
    try JSONText.write(o, to: directory + "/shard.json")
  }
}

extension Experiment.Dataset.Synthetic {
  /// What the generated trace depends on: the generator version, users,
  /// days, seed and the SHA-256 of the parameters' canonical JSON.
  var spec: [String: Any] {
    [
      "generator_version": SyntheticPopulation.generatorVersion, "users": users, "days": days, "seed": seed,
      "parameters_sha256": SHA256.hex(Array(parametersJSON.utf8)),
    ]
  }
}

extension Experiment.Dataset {
  var kind: String {
    switch source {
    case .trace: "trace"
    case .synthetic: "synthetic"
    }
  }
}

/// Runs an experiment into `directory`, resuming a previous run of the same
/// experiment there, and assembles the final files (not yet committed: call
/// ``ExperimentOutcome/commit(manifest:)``).
///
/// **Units.** The work is split into units, dataset × replication × block
/// of `unit_users` users in trace order, with ids
/// `<dataset>.r<replication>.b<block, 6 digits>`. Each finished unit writes
/// its rows, already carrying the `dataset,replication` columns, to
/// `parts/<unit>.csv` (and `.opens.csv`, `.fetches.csv`), then its
/// ``PartRecord`` to `parts/<unit>.state`, each by temp + rename; the record
/// is the unit's commit point.
///
/// **Resume.** `parts/experiment.json` records the configuration hash (the
/// SHA-256 of ``ExperimentOutcome/configuration``: input hashes, synthetic
/// settings, policies, world, seeds, …; not the thread count). A run whose
/// hash differs from the directory's (`parts/experiment.json` or
/// `manifest.json`) stops with an error unless `options.force`, which
/// deletes the old parts and results. The directory stays locked (a
/// ``ResultDirectory``) until the outcome is released; the final files are
/// staged and swapped in by ``ExperimentOutcome/commit(manifest:finishing:)``. A unit is skipped when
/// its record is complete, has this hash, the same users, and its files have
/// the recorded sizes. The final files are the concatenation of the parts in unit order
/// (dataset, replication, block) and `pooled.csv` is computed from the
/// records alone, so an interrupted and resumed run writes the same bytes as
/// an uninterrupted one; part contents are checked against their SHA-256
/// while assembling.
///
/// **Parallelism.** The users of a block are replayed for every unfinished
/// replication on `options.jobs` worker threads (``OrderedWork``), which
/// then write the block's parts, while the calling thread reads the next
/// block: at most three blocks in memory (read, replayed, written);
/// results do not depend on the thread count.
///
/// **Shards.** With `options.shard` (K/N), only the units of that shard
/// (``ExperimentShard``) are computed or reused, their parts are checked
/// against their SHA-256, and no final file is assembled: the outcome lists
/// the shard's units for ``ExperimentOutcome/commitShard(extra:)``. With
/// `options.assembleOnly` nothing is computed: units missing from `parts/`
/// are taken from `options.partSources` (``mergeShards`` provides them) and
/// a unit found in neither is an error; the assembled files are those of a
/// run that computed everything, byte for byte.
///
/// - Throws: ``TraceFormatError`` from the traces; ``ExperimentError``.
public func runExperiment(
  _ experiment: Experiment, directory: String, options: ExperimentOptions, format: ExperimentFormat,
  progress: (ExperimentProgress) -> Void = { _ in }
) throws -> ExperimentOutcome {
  LinearAlgebra.setSingleThreaded()
  let e = experiment
  let fm = FileManager.default
  let parts = directory + "/parts"
  if options.shard != nil, options.assembleOnly {
    throw ExperimentError("a run is either one shard or an assembly of all units, not both")
  }

  // What the output depends on, and its hash.
  var traceHashes: [Int: (bytes: Int, sha256: String)] = [:]
  for (i, d) in e.datasets.enumerated() {
    if case .trace(let p) = d.source {
      try requireRegularFile(p)
      let h = try SHA256.hashFile(atPath: p)
      traceHashes[i] = (h.bytes, h.hex)
    }
  }
  let configuration = experimentConfiguration(e, traceHashes: traceHashes, version: options.version)
  let hash = SHA256.hex([UInt8](try JSONText.canonical(configuration).utf8))
  if let want = options.expectedConfigurationHash, want != hash {
    throw ExperimentError(
      .configurationChanged,
      "the experiment's configuration is now \(String(hash.prefix(12))), but the parts were computed for "
        + "\(String(want.prefix(12))): the experiment file, a trace or the fetchlab version changed since")
  }

  let result = try ResultDirectory(path: directory)
  try result.refuseOverwriting(inputs: experimentInputs(e))
  try claimDirectory(directory, hash: hash, force: options.force, experiment: e)
  var finished = false
  defer {
    // A run that fails before finishing any unit leaves no claim on the
    // directory (a corrected experiment needs no --force) and, in a
    // directory it created, nothing at all.
    if !finished, PartRecord.unitCount(parts) == 0 {
      try? fm.removeItem(atPath: parts)
      if result.isNew { try? fm.removeItem(atPath: directory + "/datasets") }
    }
  }
  if let shard = options.shard, let held = ShardRecord.recordedShard(directory: directory, hash: hash),
    held != shard
  {
    throw ExperimentError(
      .directoryConflict,
      "\(directory) holds shard \(held) of this experiment (shard.json), not \(shard): "
        + "give each shard its own --out")
  }
  // A shard's shard.json is written last: present only after a finished run.
  if options.shard != nil { try? fm.removeItem(atPath: directory + "/shard.json") }

  // Synthetic datasets, generated once.
  var inputs: [(path: String, bytes: Int, sha256: String)] = []
  for (i, d) in e.datasets.enumerated() {
    switch d.source {
    case .trace(let p):
      inputs.append((p, traceHashes[i]!.bytes, traceHashes[i]!.sha256))
    case .synthetic(let s):
      let h = try ensureSynthetic(s, directory: directory + "/datasets", name: d.name, sources: options.datasetSources)
      inputs.append(h)
    }
  }

  // Replay the units not finished yet, dataset by dataset, block by block.
  // The calling thread reads block k + 1 while the workers replay block k
  // and write block k - 1's parts (at most three blocks in memory). Work
  // comes back in submission order (``OrderedWork``), so units are counted
  // in order, and a unit past `stopAfterUnits` is never written.
  let usesHabitModel = e.policies.contains(where: \.usesHabitModel)
  var units: [[String]] = []  // per dataset, in output order (replication, block)
  var computed = 0, reused = 0, total = 0
  var unitsSubmitted = 0
  let work = OrderedWork<UnitWork>(jobs: options.jobs)
  defer { work.finish() }
  /// The next finished item: a user's replay, or a unit written (counted
  /// here; the run stops after `stopAfterUnits`).
  func takeNext() throws -> UserResult? {
    switch work.next() {
    case .replayed(let r):
      return r
    case .wrote(let error):
      if let error { throw error }
      computed += 1
      if let stop = options.stopAfterUnits, computed >= stop {
        throw ExperimentError("stopped after \(computed) units (test hook FETCHLAB_TEST_STOP_AFTER_UNITS)")
      }
      return nil
    }
  }
  /// Takes a submitted block's replays (`[replication][user]`) and submits
  /// the writing of its parts.
  func writeParts(_ b: SubmittedBlock) throws {
    var flat: [UserResult] = []
    let n = b.needed.count * b.users.count
    flat.reserveCapacity(n)
    while flat.count < n { if let r = try takeNext() { flat.append(r) } }
    for (k, r) in b.needed.enumerated() {
      unitsSubmitted += 1
      if let stop = options.stopAfterUnits, unitsSubmitted > stop { return }
      let results = Array(flat[(k * b.users.count)..<((k + 1) * b.users.count)])
      let (id, dataset, users, config) = (b.ids[r], b.dataset, b.users, b.configs[r])
      work.submit {
        do {
          try writePart(
            id: id, dataset: dataset, replication: r, users: users, results: results, config: config, hash: hash,
            parts: parts, format: format)
          return .wrote(nil)
        } catch {
          return .wrote(error)
        }
      }
    }
  }
  for (di, d) in e.datasets.enumerated() {
    let path = inputs[di].path
    let configs = (0..<e.replications).map { r in
      RunConfiguration(
        tracePath: path, policies: e.policies, seed: e.replicationSeed(r), world: e.world(of: d), apps: e.apps,
        recordEvents: e.eventFiles, jobs: options.jobs, batchUsers: e.unitUsers, trainFraction: e.trainFraction)
    }
    var population: HabitModel??
    var ids = [[String]](repeating: [], count: e.replications)
    let reader = try ParallelTraceReader(path: path, jobs: options.jobs, chunkBytes: configs[0].readChunkBytes)
    let hasher = BackgroundSHA256(jobs: options.jobs)
    reader.hasher = hasher
    let totalBytes = max(1, inputs[di].bytes)
    var block = 0
    var submitted: SubmittedBlock?
    while true {
      var users: [UserTrace] = []
      users.reserveCapacity(e.unitUsers)
      while users.count < e.unitUsers, let u = try reader.next() {
        try checkReplayBudget(u, configs[0], file: path, line: reader.line)
        users.append(u)
      }
      if users.isEmpty { break }
      let blockIDs = (0..<e.replications).map { unitID(d.name, replication: $0, block: block) }
      // This run's replications of the block: all, or the shard's.
      let mine = (0..<e.replications).filter { r in options.shard?.owns(unit: total + r) ?? true }
      total += e.replications
      var needed = mine.filter { r in
        guard let rec = PartRecord.load(parts + "/" + blockIDs[r] + ".state") else { return true }
        return !partUsable(rec, hash: hash, unit: blockIDs[r], users: users, parts: parts)
      }
      if options.assembleOnly {
        for r in needed {
          let id = blockIDs[r]
          guard let source = options.partSources[id] else {
            throw ExperimentError(
              "unit \(id) is not finished in \(parts)"
                + (options.partSources.isEmpty ? "" : " and no shard directory holds it") + "; nothing is computed here")
          }
          guard let rec = PartRecord.load(source + "/" + id + ".state"),
            partUsable(rec, hash: hash, unit: id, users: users, parts: source)
          else {
            throw ExperimentError(
              .damagedParts,
              "\(source)/\(id).state is missing, damaged, or not for these users (users of block \(block) of \(d.name)); "
                + "rerun that shard")
          }
          try importPart(id, record: rec, from: source, to: parts)
        }
        needed = []
      }
      if !needed.isEmpty {
        if usesHabitModel, population == nil { population = .some(try fitPopulation(configs[0])) }
        let model = population ?? nil
        for r in needed {
          let config = configs[r]
          for u in users { work.submit { .replayed(replayUser(u, config, model)) } }
        }
      }
      // The previous block's parts, while the workers replay this one.
      if let previous = submitted { try writeParts(previous) }
      submitted = needed.isEmpty ? nil : SubmittedBlock(dataset: d.name, ids: blockIDs, needed: needed, users: users, configs: configs)
      reused += mine.count - needed.count
      for r in mine { ids[r].append(blockIDs[r]) }
      block += 1
      let f = (Double(di) + min(1, Double(reader.bytesRead) / Double(totalBytes))) / Double(e.datasets.count)
      progress(ExperimentProgress(computed: computed, reused: reused, fraction: f))
      if users.count < e.unitUsers { break }
    }
    if let last = submitted { try writeParts(last) }
    // Every unit of the dataset written (a write error surfaces here).
    while work.pending > 0 { _ = try takeNext() }
    if hasher.hexDigest() != inputs[di].sha256 {
      throw ExperimentError(
        .inputChanged,
        "\(path) changed during the run (its SHA-256 is no longer the one the configuration was computed for); "
          + "run again on a file that is not being written")
    }
    units.append(ids.flatMap { $0 })
  }

  // Assemble the final files from the parts, in unit order (a shard only
  // checks its parts and sums its counts).
  let assemble = options.shard == nil
  let header = "dataset,replication,"
  var summary: AtomicTextFile?, devices: AtomicTextFile?, opens: AtomicTextFile?, fetches: AtomicTextFile?
  if assemble {
    summary = try AtomicTextFile(path: result.staging + "/summary.csv")
    try summary!.write(header + format.summaryColumns.joined(separator: ",") + "\n")
    devices = try AtomicTextFile(path: result.staging + "/devices.csv")
    try devices!.write(header + format.deviceColumns.joined(separator: ",") + "\n")
    if e.eventFiles {
      opens = try AtomicTextFile(path: result.staging + "/opens.csv")
      try opens!.write(header + format.openColumns.joined(separator: ",") + "\n")
      fetches = try AtomicTextFile(path: result.staging + "/fetches.csv")
      try fetches!.write(header + format.fetchColumns.joined(separator: ",") + "\n")
    }
  }
  let P = e.policies.count
  let empty = e.policies.map { PolicyAggregate(policy: $0.description) }
  var aggregates = [[[PolicyAggregate]]](
    repeating: [[PolicyAggregate]](repeating: empty, count: e.replications), count: e.datasets.count)
  var pooled = [[PolicyAggregate]](repeating: empty, count: e.datasets.count)
  let noDevices = e.policies.map { DeviceAggregate(policy: $0.description) }
  var deviceAggregates = [[[DeviceAggregate]]](
    repeating: [[DeviceAggregate]](repeating: noDevices, count: e.replications), count: e.datasets.count)
  var counts = [ExperimentCounts](repeating: ExperimentCounts(), count: e.datasets.count)
  var states: [ShardRecord.Unit] = []
  for (di, ids) in units.enumerated() {
    for id in ids {
      let statePath = parts + "/" + id + ".state"
      guard let stateData = fm.contents(atPath: statePath),
        let rec = String(validating: stateData, as: UTF8.self).flatMap(PartRecord.decode), rec.config == hash,
        rec.unit == id, rec.ages.count == P, rec.pairs.allSatisfy({ (0..<P).contains($0.policy) }),
        rec.waits.count == P, rec.devices.allSatisfy({ (0..<P).contains($0.policy) })
      else {
        throw ExperimentError(.damagedParts, "\(statePath) is missing or damaged; delete it and run again")
      }
      states.append(ShardRecord.Unit(id: id, stateBytes: stateData.count, stateSHA256: SHA256.hex([UInt8](stateData))))
      let r = replicationOf(id)
      for f in rec.files {
        let target: AtomicTextFile? =
          switch f.kind {
          case "summary": summary
          case "devices": devices
          case "opens": opens
          case "fetches": fetches
          default: nil
          }
        let body = try verifiedPart(parts + "/" + id + partSuffix(f.kind), record: f)
        if let target { try target.write(body) }
      }
      for p in rec.pairs {
        aggregates[di][r][p.policy].add(p)
        pooled[di][p.policy].add(p)
        counts[di].fetches += p.fetches
        if r == 0, p.policy == 0 {
          counts[di].pairs += 1
          counts[di].opens += p.opens
        }
      }
      for (p, h) in rec.ages.enumerated() {
        aggregates[di][r][p].ages.merge(h)
        pooled[di][p].ages.merge(h)
      }
      for d in rec.devices { deviceAggregates[di][r][d.policy].add(d.sample) }
      for (p, h) in rec.waits.enumerated() { deviceAggregates[di][r][p].waitHistogram.merge(h) }
      if r == 0 { counts[di].users += rec.users }
    }
  }
  var files = [summary, devices, opens, fetches].compactMap { $0 }
  if assemble {
    let policies = try AtomicTextFile(path: result.staging + "/pooled.csv")
    try policies.write(header + format.policyColumns.joined(separator: ",") + "\n")
    for (di, d) in e.datasets.enumerated() {
      let capacityJ = e.world(of: d).batteryCapacityJ
      for r in 0..<e.replications {
        for a in aggregates[di][r] {
          try policies.write(CSV.field(d.name) + ",\(r)," + format.policyRow(a, capacityJ) + "\n")
        }
      }
    }
    files.append(policies)
    let devicePool = try AtomicTextFile(path: result.staging + "/devices_pooled.csv")
    try devicePool.write(header + format.devicePoolColumns.joined(separator: ",") + "\n")
    for (di, d) in e.datasets.enumerated() {
      let capacityJ = e.world(of: d).batteryCapacityJ
      for r in 0..<e.replications {
        for a in deviceAggregates[di][r] {
          try devicePool.write(CSV.field(d.name) + ",\(r)," + format.devicePoolRow(a, capacityJ) + "\n")
        }
      }
    }
    files.append(devicePool)
  }
  finished = true
  return ExperimentOutcome(
    experiment: e, directory: directory, configurationHash: hash, configuration: configuration,
    aggregates: aggregates, pooled: pooled, counts: counts, inputs: inputs, unitsComputed: computed,
    unitsReused: reused, unitsTotal: total, shard: options.shard, units: states, files: files, result: result)
}

/// A block whose replays are submitted and whose parts are not written yet.
private struct SubmittedBlock {
  var dataset: String
  var ids: [String]
  /// The replications computed, in order.
  var needed: [Int]
  var users: [UserTrace]
  var configs: [RunConfiguration]
}

/// What an experiment's worker did: replayed a user, or wrote a unit's
/// parts (with the error, if that failed).
private enum UnitWork: Sendable {
  case replayed(UserResult)
  case wrote((any Error)?)
}
