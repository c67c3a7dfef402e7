import FetchLinearAlgebra
import FetchModels
import FetchSimulation
import FetchTraces
import Foundation

/// What to run: a trace, policies, a world, and how.
public struct RunConfiguration: Sendable {
  public var tracePath: String
  public var policies: [PolicySpec]
  public var seed: UInt64
  public var world: WorldParameters
  public var apps: AppSelection
  /// Keep per-open and per-fetch records for `opens.csv` / `fetches.csv`.
  public var recordEvents: Bool
  /// Worker threads; results do not depend on it.
  public var jobs: Int
  /// Users read and replayed together; bounds memory.
  public var batchUsers: Int
  /// Share of each user's window used for training (chronological split);
  /// every policy is then scored on the rest only. 0: no split.
  public var trainFraction: Double
  /// Users whose training parts feed the population habit model (the
  /// `populationUsers` with the smallest stable hash of their id: a
  /// deterministic sample that does not depend on file order).
  public var populationUsers: Int

  public init(
    tracePath: String, policies: [PolicySpec], seed: UInt64 = 1, world: WorldParameters = WorldParameters(),
    apps: AppSelection = .top(3), recordEvents: Bool = true,
    jobs: Int = ProcessInfo.processInfo.activeProcessorCount, batchUsers: Int = 64,
    trainFraction: Double = 0, populationUsers: Int = 256
  ) {
    self.trainFraction = trainFraction
    self.populationUsers = max(1, populationUsers)
    self.tracePath = tracePath
    self.policies = policies
    self.seed = seed
    self.world = world
    self.apps = apps
    self.recordEvents = recordEvents
    self.jobs = max(1, jobs)
    self.batchUsers = max(1, batchUsers)
  }
}

/// The replays of one user: for each selected app, one per policy, in the
/// configuration's policy order. With a train/test split, `trace` is the
/// test part.
public struct UserResult: Sendable {
  public var trace: UserTrace
  public var apps: [Int32]
  /// `replays[a][p]`: app `apps[a]` under policy `p`.
  public var replays: [[AppReplay]]
  /// `devices[p]`: the device's totals under policy `p` (at app scope, the
  /// sums of the apps' separate replays).
  public var devices: [DeviceSummary] = []
}

/// Receives each user's results in trace order.
public protocol RunSink {
  mutating func consume(_ result: UserResult, config: RunConfiguration) throws
}

/// Progress of a run, for display.
public struct RunProgress: Sendable {
  public var users: Int
  public var bytesRead: Int
  public var totalBytes: Int
}

/// Replays every user of the trace under every policy, streaming: users are
/// read in batches, replayed in parallel, and handed to `sink` in trace order,
/// so results are identical for any `jobs` and memory is bounded by the batch.
///
/// - Throws: ``TraceFormatError`` from the reader; whatever `sink` throws.
public func runReplay<S: RunSink>(
  _ config: RunConfiguration, into sink: inout S, progress: (RunProgress) -> Void = { _ in }
) throws {
  // The runner parallelises over users; OpenBLAS's own threads would only
  // contend with it (measured: 12.4 s → 7.1 s, system time 6.9 s → 0.1 s).
  LinearAlgebra.setSingleThreaded()
  let population = try config.policies.contains(where: \.usesHabitModel) ? fitPopulation(config) : nil
  let reader = try TraceReader(path: config.tracePath)
  let total = (try? FileManager.default.attributesOfItem(atPath: config.tracePath)[.size] as? Int) ?? 0
  var users = 0
  var batch: [UserTrace] = []
  batch.reserveCapacity(config.batchUsers)
  var done = false
  while !done {
    batch.removeAll(keepingCapacity: true)
    while batch.count < config.batchUsers, let u = try reader.next() { batch.append(u) }
    done = batch.count < config.batchUsers
    guard !batch.isEmpty else { break }
    let results = replayBatch(batch, config, population)
    for r in results { try sink.consume(r, config: config) }
    users += batch.count
    progress(RunProgress(users: users, bytesRead: reader.bytesRead, totalBytes: total))
  }
}

/// The training window of `trace` under `config` (the whole trace before
/// the split), and the part to replay.
public func splitForRun(_ trace: UserTrace, _ config: RunConfiguration) -> (train: UserTrace, test: UserTrace) {
  guard config.trainFraction > 0 else {
    return (UserTrace(user: trace.user, timeZone: trace.timeZone, start: trace.start, end: trace.start, apps: trace.apps), trace)
  }
  return trace.split(at: trace.start + config.trainFraction * (trace.end - trace.start))
}

/// Fits the population habit model on the training parts of a deterministic
/// sample of users (a first pass over the trace).
public func fitPopulation(_ config: RunConfiguration) throws -> HabitModel? {
  let reader = try TraceReader(path: config.tracePath)
  var kept: [(hash: UInt64, samples: [HabitSample])] = []
  while let u = try reader.next() {
    let h = StableHash.fnv1a(u.user)
    if kept.count >= config.populationUsers, let worst = kept.last, worst.hash <= h { continue }
    let train = splitForRun(u, config).train
    guard train.end > train.start else { continue }
    let samples = config.apps.select(in: u).map { HabitSample(trace: train, app: $0, from: train.start, to: train.end) }
    kept.append((h, samples))
    kept.sort { $0.hash < $1.hash }
    if kept.count > config.populationUsers { kept.removeLast() }
  }
  let samples = kept.flatMap(\.samples)
  guard !samples.isEmpty else { return nil }
  return try HabitFitter().fitPopulation(samples)
}

/// One user made ready for replay: the scored part of the trace with its
/// network and radio timelines, the selected apps with their content
/// timelines, and what learning policies train on. Built once per user and
/// shared by every policy.
public struct PreparedReplay: Sendable {
  public let user: PreparedUser
  public let apps: [Int32]
  /// `contents[a]`: the update times of `apps[a]`.
  public let contents: [ContentTimeline]
  public let learning: LearningContext

  public init(_ trace: UserTrace, _ config: RunConfiguration, _ population: HabitModel? = nil) {
    let (train, test) = splitForRun(trace, config)
    apps = config.apps.select(in: trace)
    user = PreparedUser(trace: test, world: config.world, apps: config.world.replayScope == .device ? apps : [])
    contents = apps.map { ContentTimeline(trace: test, app: $0, world: config.world, seed: config.seed) }
    learning = LearningContext(training: train, population: population, fits: HabitFitCache(trace: trace))
  }

  /// The replays of every selected app under `policies`, at the world's
  /// ``WorldParameters/replayScope``.
  public func replay(_ policies: [PolicySpec], _ config: RunConfiguration) -> UserResult {
    guard !apps.isEmpty else { return UserResult(trace: user.trace, apps: apps, replays: []) }
    let devices = policies.map {
      $0.replay(
        user: user, apps: apps, contents: contents, scope: config.world.replayScope, seed: config.seed,
        recordEvents: config.recordEvents, learning: $0.learns ? learning : nil)
    }
    let replays = apps.indices.map { a in devices.map { $0.apps[a] } }
    return UserResult(trace: user.trace, apps: apps, replays: replays, devices: devices.map(\.summary))
  }
}

/// Replays one user under every policy and selected app.
public func replayUser(_ trace: UserTrace, _ config: RunConfiguration, _ population: HabitModel? = nil) -> UserResult {
  PreparedReplay(trace, config, population).replay(config.policies, config)
}

private func replayBatch(_ batch: [UserTrace], _ config: RunConfiguration, _ population: HabitModel?) -> [UserResult] {
  parallelMap(batch.count, jobs: config.jobs) { replayUser(batch[$0], config, population) }
}
