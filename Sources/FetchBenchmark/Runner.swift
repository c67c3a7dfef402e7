import Dispatch
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

  public init(
    tracePath: String, policies: [PolicySpec], seed: UInt64 = 1, world: WorldParameters = WorldParameters(),
    apps: AppSelection = .top(3), recordEvents: Bool = true,
    jobs: Int = ProcessInfo.processInfo.activeProcessorCount, batchUsers: Int = 64
  ) {
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
/// configuration's policy order.
public struct UserResult: Sendable {
  public var trace: UserTrace
  public var apps: [Int32]
  /// `replays[a][p]`: app `apps[a]` under policy `p`.
  public var replays: [[AppReplay]]
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
    let results = replayBatch(batch, config)
    for r in results { try sink.consume(r, config: config) }
    users += batch.count
    progress(RunProgress(users: users, bytesRead: reader.bytesRead, totalBytes: total))
  }
}

/// Replays one user under every policy and selected app.
public func replayUser(_ trace: UserTrace, _ config: RunConfiguration) -> UserResult {
  let prepared = PreparedUser(trace: trace, world: config.world)
  let apps = config.apps.select(in: trace)
  let replays = apps.map { app in
    let content = ContentTimeline(trace: trace, app: app, world: config.world, seed: config.seed)
    return config.policies.map {
      $0.replay(user: prepared, app: app, content: content, seed: config.seed, recordEvents: config.recordEvents)
    }
  }
  return UserResult(trace: trace, apps: apps, replays: replays)
}

private struct Slots: @unchecked Sendable {
  let base: UnsafeMutablePointer<UserResult?>
}

private func replayBatch(_ batch: [UserTrace], _ config: RunConfiguration) -> [UserResult] {
  if config.jobs == 1 || batch.count == 1 { return batch.map { replayUser($0, config) } }
  let n = batch.count
  let slots = Slots(base: .allocate(capacity: n))
  slots.base.initialize(repeating: nil, count: n)
  defer {
    slots.base.deinitialize(count: n)
    slots.base.deallocate()
  }
  let workers = min(config.jobs, n)
  // Static striping: worker w takes users w, w + workers, ...
  DispatchQueue.concurrentPerform(iterations: workers) { w in
    var i = w
    while i < n {
      slots.base[i] = replayUser(batch[i], config)
      i += workers
    }
  }
  return (0..<n).map { slots.base[$0]! }
}
