import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation

/// Replays an experiment's unfinished units, dataset by dataset, block by
/// block, and writes their parts (see
/// ``runExperiment(_:directory:options:progress:)``).
///
/// The calling thread reads block k + 1 while the workers replay block k
/// and write block k - 1's parts (at most three blocks in memory). Work
/// comes back in submission order (``OrderedWork``), so units are counted
/// in order, and a unit past `stopAfterUnits` is never written.
final class UnitReplay {
  let e: Experiment
  let options: ExperimentOptions
  /// The configuration hash the parts are written for.
  let hash: String
  /// The `parts/` directory.
  let parts: String
  let usesHabitModel: Bool
  private let work: OrderedWork<UnitWork>
  /// Units written by this run.
  private(set) var computed = 0
  /// Units found finished (or imported) and not computed.
  private(set) var reused = 0
  /// Units of the experiment seen so far, every shard's.
  private(set) var total = 0
  private var unitsSubmitted = 0
  /// The units and their estimated work, for progress.
  private let plan: UnitPlan
  /// Per dataset: units finished (computed or reused) and computed.
  private var doneIn: [Int]
  private var computedIn: [Int]
  /// The dataset being replayed.
  private var current = 0

  /// Starts `options.jobs` worker threads.
  init(experiment: Experiment, options: ExperimentOptions, hash: String, parts: String) {
    e = experiment
    self.options = options
    self.hash = hash
    self.parts = parts
    usesHabitModel = experiment.policies.contains(where: \.usesHabitModel)
    work = OrderedWork<UnitWork>(jobs: options.jobs)
    plan = UnitPlan(experiment, shard: options.shard)
    doneIn = Array(repeating: 0, count: experiment.datasets.count)
    computedIn = doneIn
  }

  /// Progress now: units finished of the planned ones, and the shares of
  /// the estimated work finished and computed.
  private var progressNow: ExperimentProgress {
    let work = max(plan.totalWork, Double.leastNonzeroMagnitude)
    func share(_ n: [Int]) -> Double {
      var sum = 0.0
      for (k, w) in zip(n, plan.unitWork) { sum += Double(k) * w }
      return min(1, sum / work)
    }
    let done = doneIn.reduce(0, +)
    var p = ExperimentProgress(computed: computed, reused: reused, fraction: share(doneIn))
    p.done = done
    p.total = max(plan.total, done)
    p.computedFraction = share(computedIn)
    return p
  }

  /// Stops the worker threads.
  func finish() {
    work.finish()
    ExternalProcessPool.closeAll()
  }

  // MARK: - Datasets and blocks

  /// Replays dataset `di` (`d`, read from `input`) and returns its unit ids
  /// in output order (replication, block); checks that the trace's SHA-256
  /// is still `input.sha256` after reading it.
  func replayDataset(
    _ di: Int, _ d: Experiment.Dataset, input: (path: String, bytes: Int, sha256: String),
    progress: (ExperimentProgress) -> Void
  ) throws -> [String] {
    let path = input.path
    current = di
    let generator = e.generator(of: d)
    let configs = (0..<e.replications).map { r in
      var c = RunConfiguration(
        tracePath: path, policies: e.policies, seed: e.replicationSeed(r), world: e.world(of: d), apps: e.apps,
        recordEvents: e.eventFiles, jobs: options.jobs, batchUsers: e.unitUsers, trainFraction: e.trainFraction)
      c.generator = generator
      return c
    }
    var population: PopulationModels?
    var ids = [[String]](repeating: [], count: e.replications)
    let reader = try ParallelTraceReader(path: path, jobs: options.jobs, chunkBytes: configs[0].readChunkBytes)
    let hasher = BackgroundSHA256(jobs: options.jobs)
    reader.hasher = hasher
    var block = 0
    var submitted: SubmittedBlock?
    while true {
      let users = try readBlock(reader, config: configs[0], path: path)
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
        try importParts(needed, ids: blockIDs, users: users, block: block, dataset: d.name)
        needed = []
      }
      if !needed.isEmpty {
        if usesHabitModel, population == nil { population = try fitPopulation(configs[0]) }
        submitReplays(needed, users: users, configs: configs, models: population ?? PopulationModels())
      }
      // The previous block's parts, while the workers replay this one.
      if let previous = submitted { try writeParts(previous, progress: progress) }
      submitted = needed.isEmpty ? nil : SubmittedBlock(dataset: d.name, ids: blockIDs, needed: needed, users: users, configs: configs)
      reused += mine.count - needed.count
      doneIn[di] += mine.count - needed.count
      for r in mine { ids[r].append(blockIDs[r]) }
      block += 1
      progress(progressNow)
      if users.count < e.unitUsers { break }
    }
    if let last = submitted { try writeParts(last, progress: progress) }
    // Every unit of the dataset written (a write error surfaces here).
    while work.pending > 0 { _ = try takeNext(progress: progress) }
    if hasher.hexDigest() != input.sha256 {
      throw ExperimentError(
        .inputChanged,
        "\(path) changed during the run (its SHA-256 is no longer the one the configuration was computed for); "
          + "run again on a file that is not being written")
    }
    return ids.flatMap { $0 }
  }

  /// The next block: up to `unitUsers` users from `reader`, each within the
  /// replay budget of `config`; empty at the end of the trace.
  private func readBlock(_ reader: ParallelTraceReader, config: RunConfiguration, path: String) throws -> [UserTrace] {
    var users: [UserTrace] = []
    users.reserveCapacity(e.unitUsers)
    while users.count < e.unitUsers, let u = try reader.next() {
      try checkReplayBudget(u, config, file: path, line: reader.line)
      users.append(u)
    }
    return users
  }

  /// Assembly only: takes the `needed` units of a block from
  /// `options.partSources`; a unit found in none, or damaged there, is an
  /// error (nothing is computed).
  private func importParts(_ needed: [Int], ids blockIDs: [String], users: [UserTrace], block: Int, dataset: String) throws {
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
          "\(source)/\(id).state is missing, damaged, or not for these users (users of block \(block) of \(dataset)); "
            + "rerun that shard")
      }
      try importPart(id, record: rec, from: source, to: parts)
    }
  }

  /// Submits the replay of every user of a block for each replication in
  /// `needed`, replication by replication.
  private func submitReplays(_ needed: [Int], users: [UserTrace], configs: [RunConfiguration], models: PopulationModels) {
    for r in needed {
      let config = configs[r]
      for u in users {
        work.submit {
          do { return .replayed(try PolicyFailure.checking { replayUser(u, config, models: models) }) } catch {
            return .failed(error)
          }
        }
      }
    }
  }

  // MARK: - Workers

  /// The next finished item: a user's replay, or a unit written (counted
  /// here; the run stops after `stopAfterUnits`).
  private func takeNext(progress: (ExperimentProgress) -> Void) throws -> UserResult? {
    switch work.next() {
    case .replayed(let r):
      return r
    case .failed(let error):
      throw error
    case .wrote(let error):
      if let error { throw error }
      computed += 1
      doneIn[current] += 1
      computedIn[current] += 1
      progress(progressNow)
      if let stop = options.stopAfterUnits, computed >= stop {
        throw ExperimentError("stopped after \(computed) units (test hook FETCHLAB_TEST_STOP_AFTER_UNITS)")
      }
      return nil
    }
  }

  /// Takes a submitted block's replays (`[replication][user]`) and submits
  /// the writing of its parts.
  private func writeParts(_ b: SubmittedBlock, progress: (ExperimentProgress) -> Void) throws {
    var flat: [UserResult] = []
    let n = b.needed.count * b.users.count
    flat.reserveCapacity(n)
    while flat.count < n { if let r = try takeNext(progress: progress) { flat.append(r) } }
    let (hash, parts) = (hash, parts)
    for (k, r) in b.needed.enumerated() {
      unitsSubmitted += 1
      if let stop = options.stopAfterUnits, unitsSubmitted > stop { return }
      let results = Array(flat[(k * b.users.count)..<((k + 1) * b.users.count)])
      let (id, dataset, users, config) = (b.ids[r], b.dataset, b.users, b.configs[r])
      work.submit {
        do {
          try writePart(
            id: id, dataset: dataset, replication: r, users: users, results: results, config: config, hash: hash,
            parts: parts)
          return .wrote(nil)
        } catch {
          return .wrote(error)
        }
      }
    }
  }
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
  /// A replay stopped by its policy's failure (an `external` process).
  case failed(any Error)
  case wrote((any Error)?)
}
