import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation

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
  /// Share of this run's estimated work done (reused units included), in [0, 1].
  public var fraction: Double
  /// Units of this run (its shard's) finished so far: computed or reused.
  package var done = 0
  /// Units of this run (its shard's), from the datasets' users before the
  /// run starts (a trace's `begin` rows).
  package var total = 0
  /// Share of this run's estimated work computed by this process (not
  /// reused), in [0, 1]: with the elapsed time, the rate for an ETA.
  package var computedFraction = 0.0
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
