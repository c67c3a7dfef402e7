import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation

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
  _ experiment: Experiment, directory: String, options: ExperimentOptions,
  progress: (ExperimentProgress) -> Void = { _ in }
) throws -> ExperimentOutcome {
  let e = experiment
  let fm = FileManager.default
  let parts = directory + "/parts"
  if options.shard != nil, options.assembleOnly {
    throw ExperimentError("a run is either one shard or an assembly of all units, not both")
  }
  let (traceHashes, configuration, hash) = try hashInputs(e, options: options)

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
  try claimShard(directory, hash: hash, options: options)
  let inputs = try datasetInputs(e, traceHashes: traceHashes, directory: directory, options: options)

  let replay = UnitReplay(experiment: e, options: options, hash: hash, parts: parts)
  defer { replay.finish() }
  var units: [[String]] = []  // per dataset, in output order (replication, block)
  for (di, d) in e.datasets.enumerated() {
    units.append(try replay.replayDataset(di, d, input: inputs[di], progress: progress))
  }

  let assembled = try assembleParts(
    e, units: units, hash: hash, parts: parts, staging: result.staging, assemble: options.shard == nil)
  finished = true
  let t = assembled.totals
  return ExperimentOutcome(
    experiment: e, directory: directory, configurationHash: hash, configuration: configuration,
    aggregates: t.aggregates, pooled: t.pooled, counts: t.counts, inputs: inputs, unitsComputed: replay.computed,
    unitsReused: replay.reused, unitsTotal: replay.total, shard: options.shard, units: t.states,
    files: assembled.files, result: result)
}

// MARK: - Steps

/// What the output depends on and its hash: the SHA-256 and size of every
/// trace dataset (by dataset index), the configuration
/// (``experimentConfiguration(_:traceHashes:version:)``) and the SHA-256 of
/// its canonical JSON, checked against `options.expectedConfigurationHash`
/// before the directory is touched.
func hashInputs(
  _ e: Experiment, options: ExperimentOptions
) throws -> (traceHashes: [Int: (bytes: Int, sha256: String)], configuration: [String: Any], hash: String) {
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
  return (traceHashes, configuration, hash)
}

/// Refuses a shard run in a directory holding another shard of the same
/// experiment, and removes the directory's `shard.json`, which is written
/// last: present only after a finished shard run.
func claimShard(_ directory: String, hash: String, options: ExperimentOptions) throws {
  if let shard = options.shard, let held = ShardRecord.recordedShard(directory: directory, hash: hash),
    held != shard
  {
    throw ExperimentError(
      .directoryConflict,
      "\(directory) holds shard \(held) of this experiment (shard.json), not \(shard): "
        + "give each shard its own --out")
  }
  if options.shard != nil { try? FileManager.default.removeItem(atPath: directory + "/shard.json") }
}

/// Per dataset, the trace replayed with its size in bytes and SHA-256: a
/// trace file's from `traceHashes`, a synthetic dataset's once generated
/// (or copied) into `directory/datasets`.
func datasetInputs(
  _ e: Experiment, traceHashes: [Int: (bytes: Int, sha256: String)], directory: String, options: ExperimentOptions
) throws -> [(path: String, bytes: Int, sha256: String)] {
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
  return inputs
}
