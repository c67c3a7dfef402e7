import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation

/// The result of ``runExperiment(_:directory:options:progress:)``:
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
        ].merging(d.world.map { ["world_overrides": $0.overrides()] } ?? [:]) { a, _ in a }
          // A trace's absolute path, so that a copied run directory still finds it
          // (a synthetic dataset lives in the run directory: path_from_run_dir).
          .merging(d.kind == "trace" ? ["absolute_path": RunPaths.canonical(i.path)] : [:]) { a, _ in a } as [String: Any]
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
