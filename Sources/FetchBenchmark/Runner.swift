import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces
import FetchWorld
import Foundation

/// What to run: a trace, policies, a world, and how.
public struct RunConfiguration: Sendable {
  /// The canonical trace file.
  public var tracePath: String
  /// The policy configurations replayed, in output order.
  public var policies: [PolicySpec]
  /// Seed of the modelled content updates and fetch outcomes.
  public var seed: UInt64
  /// Radio, content and device parameters.
  public var world: WorldParameters
  /// Which of each user's apps are replayed.
  public var apps: AppSelection
  /// Keep per-open and per-fetch records for `opens.csv` / `fetches.csv`.
  public var recordEvents: Bool
  /// Worker threads; results do not depend on it.
  public var jobs: Int
  /// Users in flight at most (read and not yet handed to the sink, see
  /// ``replayWindow(_:)``; an experiment's block); bounds memory.
  public var batchUsers: Int
  /// Share of each user's window used for training (chronological split);
  /// every policy is then scored on the rest only. 0: no split.
  public var trainFraction: Double

  /// The scored window of `fetchlab run` and of experiment files unless
  /// they say otherwise: every policy, learning or not, is scored on the
  /// last 25 % of each user's window, so runs with different policies score
  /// the same opens and can be compared. (The split does not depend on
  /// whether a learning policy is in the run.)
  package static let defaultTrainFraction = 0.75
  /// Users whose training parts feed the population habit model (the
  /// `populationUsers` with the smallest stable hash of their id: a
  /// deterministic sample that does not depend on file order).
  public var populationUsers: Int
  /// Bytes of trace a worker parses at once when `jobs` ≥ 2
  /// (``ParallelTraceReader``; results do not depend on it): 2 MiB, or
  /// `FETCHLAB_READ_CHUNK_BYTES` (for tests of the command line).
  package var readChunkBytes = RunConfiguration.defaultReadChunkBytes
  /// The generator of the trace when it is synthetic and a policy plans
  /// with its truth (`planner:…,models=true`); nil otherwise.
  package var generator: SyntheticPopulation?
  package static let defaultReadChunkBytes: Int = {
    let text = ProcessInfo.processInfo.environment["FETCHLAB_READ_CHUNK_BYTES"] ?? ""
    return Int(text).map { min(max($0, 1), 1 << 30) } ?? ParallelTraceReader.defaultChunkBytes
  }()

  /// A configuration; see the properties for the meaning and defaults.
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
  /// The user's trace (the test part, with a train/test split).
  public var trace: UserTrace
  /// The replayed apps (indexes into `trace.apps`).
  public var apps: [Int32]
  /// `replays[a][p]`: app `apps[a]` under policy `p`.
  public var replays: [[AppReplay]]
  /// `devices[p]`: the device's totals under policy `p` (at app scope, the
  /// sums of the apps' separate replays).
  public var devices: [DeviceSummary] = []
  /// How much of the user's whole window the run scores (for the summary
  /// printed at the end of a run).
  package var coverage: UserCoverage? = nil
}

/// Receives each user's results in trace order.
///
/// ``prepare`` runs on the runner's worker threads, in parallel, right
/// after a user's replay (formatting CSV records, say); ``consume`` runs on
/// the calling thread, one user at a time, in trace order (appending them
/// to files, pooling).
package protocol RunSink {
  /// What a worker makes of one user's results for ``consume``.
  associatedtype Prepared: Sendable = UserResult
  /// Turns one user's results into ``Prepared`` on a worker thread; it
  /// sees only its arguments, never the sink's state.
  var prepare: @Sendable (_ result: UserResult, _ config: RunConfiguration) -> Prepared { get }
  mutating func consume(_ prepared: Prepared, config: RunConfiguration) throws
}

extension RunSink where Prepared == UserResult {
  /// The results as they are.
  package var prepare: @Sendable (_ result: UserResult, _ config: RunConfiguration) -> UserResult { { r, _ in r } }
}

/// Progress of a run, for display.
package struct RunProgress: Sendable {
  package var users: Int
  package var bytesRead: Int
  package var totalBytes: Int
}

/// What a replay read, for the manifest and the user.
package struct RunStats: Sendable {
  /// SHA-256 (hex) and size of the bytes the replay parsed.
  package var sha256 = ""
  package var bytes = 0
  /// Users whose training window is shorter than one habit-model bin: their
  /// learning policies use the population model (or a constant rate).
  package var usersTooShortToFit = 0
}

/// Replays every user of the trace under every policy, streaming: the
/// calling thread reads users and hands their results to `sink` in trace
/// order while `config.jobs` worker threads replay them (reading, replay
/// and writing overlap; ``OrderedWork``), so results are identical for any
/// `jobs` and batch size, and memory is bounded by the users in flight
/// (``replayWindow(_:)``).
///
/// The trace is hashed while it is read (``RunStats/sha256``); a learning
/// run reads it twice and refuses a file that changed in between. Each user's
/// replay is estimated from its declared window before anything is
/// allocated for it (``checkReplayBudget(_:_:limits:file:line:)``).
///
/// - Throws: ``TraceFormatError`` from the reader or the estimate; whatever
///   `sink` throws.
@discardableResult
package func runReplay<S: RunSink>(
  _ config: RunConfiguration, into sink: inout S, limits: ResourceLimits = .current,
  progress: (RunProgress) -> Void = { _ in }
) throws -> RunStats {
  try requireRegularFile(config.tracePath)
  var stats = RunStats()
  var fitted: (models: PopulationModels, sha256: String, usersRead: Int)?
  if config.policies.contains(where: \.usesHabitModel) { fitted = try fitPopulationHashed(config, limits: limits) }
  let population = fitted?.models ?? PopulationModels()
  let reader = try ParallelTraceReader(
    path: config.tracePath, limits: limits, jobs: config.jobs, chunkBytes: config.readChunkBytes)
  let hasher = BackgroundSHA256(jobs: config.jobs)
  reader.hasher = hasher
  let total = (try? FileManager.default.attributesOfItem(atPath: config.tracePath)[.size] as? Int) ?? 0
  let learns = config.policies.contains(where: \.learns)
  // The calling thread reads and hands results to the sink; `jobs` workers
  // check each user's budget and replay it (with one job, the calling
  // thread does everything). A user over budget is never replayed: its
  // error comes back in its place, after the users before it.
  defer { ExternalProcessPool.closeAll() }
  let work = OrderedWork<Result<S.Prepared, any Error>>(jobs: config.jobs)
  defer { work.finish() }
  let window = replayWindow(config)
  let prepare = sink.prepare
  var users = 0
  func consume(_ r: Result<S.Prepared, any Error>) throws {
    try sink.consume(r.get(), config: config)
    users += 1
    if users % config.batchUsers == 0 {
      progress(RunProgress(users: users, bytesRead: reader.bytesRead, totalBytes: total))
    }
  }
  while let u = try reader.next() {
    if learns, isTooShortToFit(u, config) { stats.usersTooShortToFit += 1 }
    while work.pending >= window { try consume(work.next()) }
    let line = reader.line
    work.submit {
      Result {
        try checkReplayBudget(u, config, limits: limits, file: config.tracePath, line: line)
        return prepare(try PolicyFailure.checking { replayUser(u, config, models: population) }, config)
      }
    }
    while let r = work.nextIfReady() { try consume(r) }
  }
  while work.pending > 0 { try consume(work.next()) }
  if users % config.batchUsers != 0 {
    progress(RunProgress(users: users, bytesRead: reader.bytesRead, totalBytes: total))
  }
  stats.sha256 = hasher.hexDigest()
  stats.bytes = reader.bytesRead
  if let fitted, fitted.sha256 != stats.sha256 {
    throw TraceFormatError(
      file: config.tracePath, line: 0, field: "-",
      message: "the file changed while it was read (its two passes differ); run again on a file that is not being written")
  }
  return stats
}

/// Whether `u`'s training window under `config` is shorter than one bin of
/// the habit model (a learning policy then falls back to the population model).
///
/// - Complexity: O(1): the training window's end as ``splitForRun(_:_:)``
///   and ``UserTrace/split(at:)`` compute it, without splitting the events
///   (this runs on the reading thread for every user).
func isTooShortToFit(_ u: UserTrace, _ config: RunConfiguration) -> Bool {
  guard config.trainFraction > 0 else { return true }
  let trainEnd = min(max(u.start + config.trainFraction * (u.end - u.start), u.start), u.end)
  return trainEnd - u.start < HabitFitter().binSeconds
}

/// Refuses a path that is not a regular file (a FIFO or a device would be
/// consumed by the first of the run's passes, or block).
package func requireRegularFile(_ path: String) throws {
  guard !path.utf8.contains(0) else {
    throw TraceFormatError(file: escaped(path), line: 0, field: "-", message: "the path contains a NUL byte: no file name can hold one")
  }
  var st = stat()
  guard stat(path, &st) == 0 else {
    throw TraceFormatError(file: path, line: 0, field: "-", message: "cannot open: \(String(cString: strerror(errno)))")
  }
  guard (st.st_mode & S_IFMT) == S_IFREG else {
    throw TraceFormatError(
      file: path, line: 0, field: "-",
      message: "not a regular file (a FIFO, device or directory): a run reads its trace more than once; copy it to a file first")
  }
}

/// Refuses a user whose replay would not fit, estimated from its declared
/// window and the world's rates before anything is allocated for it: a
/// window outside ``TimeText/plausibleTimes`` (which the reader
/// already enforces) or longer than
/// `limits.maxWindowDays`; more than `limits.maxEventsPerUser` content
/// updates of one app (rate × window) or fetches of one policy and app
/// (window ÷ its timer interval, 15 min for the OS schedulers, plus the
/// updates for push and oracle policies); more than
/// `limits.maxPolicySteps` decision steps that a policy's settings imply
/// on the whole device (``PolicySpec/settingWork``: every check and every
/// decision opportunity of every replayed app). A policy without a least
/// spacing between fetches (a spacing of 0) is estimated at one fetch a
/// decision. The message gives the estimate and the limit.
///
/// - Complexity: O(events + apps selected) per kind of decision
///   opportunities, O(apps selected) per policy.
package func checkReplayBudget(
  _ u: UserTrace, _ config: RunConfiguration, limits: ResourceLimits = .current, file: String, line: Int
) throws {
  func fail(_ m: String) -> TraceFormatError {
    TraceFormatError(file: file, line: line, field: "time", message: "user '\(u.user)': " + m)
  }
  guard TimeText.plausibleTimes.contains(u.start), TimeText.plausibleTimes.contains(u.end) else {
    throw fail(
      "window \(CSV.number(u.start))...\(CSV.number(u.end)) s is outside 1970-01-01...2100-01-01, the limit of "
        + "plausible dates for a replay (times are Unix seconds)")
  }
  let w = u.end - u.start
  let days = w / 86_400
  guard days <= limits.maxWindowDays else {
    throw fail(
      "window of \(CSV.number(days, decimals: 1)) days is longer than the limit of \(CSV.number(limits.maxWindowDays)) "
        + "days (FETCHLAB_MAX_WINDOW_DAYS raises it)")
  }
  let cap = Double(limits.maxEventsPerUser)
  let limitText = "the limit of \(ResourceLimits.countText(cap)) per user (FETCHLAB_MAX_EVENTS_PER_USER raises it)"
  var maxUpdates = 0.0
  let selected = config.apps.select(in: u)
  for app in selected {
    let name = u.apps[Int(app)]
    let updates = config.world.content.source == .trace ? 0 : config.world.content.updateRate(app: name) * w
    guard updates <= cap else {
      let rate = config.world.content.appRatePerHour[name] != nil ? "content.app_rate_per_hour.\(name)" : "content.rate_per_hour"
      throw fail(
        "about \(ResourceLimits.countText(updates)) content updates of app '\(name)' in its \(CSV.number(days, decimals: 1))-day "
          + "window (\(rate) = \(CSV.number(config.world.content.updateRate(app: name) * 3600))/h), over \(limitText)")
    }
    maxUpdates = max(maxUpdates, updates)
  }
  // Each replayed app's decision opportunities, once per kind of policy.
  var counted: [Set<EventKind>: [Double]] = [:]
  for p in config.policies {
    let work = p.settingWork
    // Decisions of each replayed app: its checks and its decision opportunities.
    let decisions: [Double] = work.map { wk -> [Double] in
      let o = counted[wk.decidesAt] ?? wk.opportunities(in: u, apps: selected)
      counted[wk.decidesAt] = o
      return o.map { wk.checksPerDay * days + $0 }
    } ?? []
    // A policy without a least spacing fetches at most once a decision,
    // or once a second (the engine's timer floor).
    let own: Double =
      switch p.fetchSpacingBound {
      case nil: 0
      case let s? where s > 0: w / s
      case _: decisions.max() ?? w
      }
    let fetches = own + maxUpdates
    guard fetches <= cap else {
      throw fail(
        "about \(ResourceLimits.countText(fetches)) fetches of policy \(p) per app in its "
          + "\(CSV.number(days, decimals: 1))-day window, over \(limitText)")
    }
    if let work {
      let opportunities = decisions.reduce(0, +) - work.checksPerDay * days * Double(decisions.count)
      let steps = decisions.reduce(0, +) * work.stepsPerDecision
      if let m = limits.checkDeviceWork(
        steps: steps, apps: selected.count, days: days, opportunities: opportunities, policy: p.description,
        settings: work.settings)
      {
        throw fail(m)
      }
    }
  }
}

/// The training window of `trace` under `config` (the whole trace before
/// the split), and the part to replay.
package func splitForRun(_ trace: UserTrace, _ config: RunConfiguration) -> (train: UserTrace, test: UserTrace) {
  guard config.trainFraction > 0 else {
    return (UserTrace(user: trace.user, timeZone: trace.timeZone, start: trace.start, end: trace.start, apps: trace.apps), trace)
  }
  return trace.split(at: trace.start + config.trainFraction * (trace.end - trace.start))
}

/// The population models the learning policies shrink each user's toward,
/// fitted on the training parts of a sample of the run's users (never on
/// the scored parts).
package struct PopulationModels: Sendable {
  /// The population habit model; nil when no sampled user has a training
  /// window of one bin or more.
  package var habit: HabitModel?
  /// The population device models (WiFi, offline, plugged); nil when no
  /// sampled user has network or charging rows in training.
  package var device: DeviceModels?

  package init(habit: HabitModel? = nil, device: DeviceModels? = nil) {
    self.habit = habit
    self.device = device
  }

  /// Spacing of the device models' training points in the population
  /// sample, s: hourly (the users' own fits use 15 min), which bounds the
  /// sample's memory at about 24 points a day per target and user.
  static let deviceGridSeconds = 3600.0
}

/// Fits the population models on the training parts of a deterministic
/// sample of users (a first pass over the trace).
package func fitPopulation(_ config: RunConfiguration, limits: ResourceLimits = .current) throws -> PopulationModels {
  try fitPopulationHashed(config, limits: limits).models
}

/// ``fitPopulation(_:limits:)``, the SHA-256 of the bytes it read, and the
/// users it read in full. The device models' sample is the same users'
/// training parts, on an hourly grid (``PopulationModels/deviceGridSeconds``).
///
/// The sample is the `populationUsers` users with a training window whose
/// ids have the smallest ``StableHash/fnv1a(_:)``. Once that many are
/// kept, the reader passes over every user whose hash is not below the
/// largest kept (``ParallelTraceReader/skip``): such a user can never
/// enter the sample. Their rows and budgets are not checked here; the
/// replay pass reads every user and reports their errors. When this pass
/// fails, a full read finds the file's first error, so the error reported
/// is the same however far ahead the workers had read.
///
/// - Complexity: O(bytes); about `populationUsers × (1 + ln(users /
///   populationUsers))` users parsed in full in a file of users in random
///   hash order (256 × 4.7 of 10,000), the others only scanned for their
///   `end` row.
func fitPopulationHashed(
  _ config: RunConfiguration, limits: ResourceLimits
) throws -> (models: PopulationModels, sha256: String, usersRead: Int) {
  let reader = try ParallelTraceReader(
    path: config.tracePath, limits: limits, jobs: config.jobs, chunkBytes: config.readChunkBytes)
  let hasher = BackgroundSHA256(jobs: config.jobs)
  reader.hasher = hasher
  let bound = SampleBound()
  reader.skip = { bound.excludes($0) }
  var kept: [(hash: UInt64, samples: [HabitSample], device: [DeviceTarget: [DevicePoint]])] = []
  var usersRead = 0
  do {
    while let u = try reader.next() {
      usersRead += 1
      try checkReplayBudget(u, config, limits: limits, file: config.tracePath, line: reader.line)
      let h = StableHash.fnv1a(u.user)
      if kept.count >= config.populationUsers, let worst = kept.last, worst.hash <= h { continue }
      let train = splitForRun(u, config).train
      guard train.end > train.start else { continue }
      let samples = config.apps.select(in: u).map { HabitSample(trace: train, app: $0, from: train.start, to: train.end) }
      let device = DeviceFeatures.planningPoints(train, options: DeviceModelOptions(gridSeconds: PopulationModels.deviceGridSeconds))
      kept.append((h, samples, device ?? [:]))
      kept.sort { $0.hash < $1.hash }
      if kept.count > config.populationUsers { kept.removeLast() }
      if kept.count == config.populationUsers { bound.lower(to: kept[kept.count - 1].hash) }
    }
  } catch {
    // A skipped user may hold an earlier error: report the first, as a
    // reader of every row does (the one caught if that read finds none).
    try checkEveryUser(config, limits: limits)
    throw error
  }
  var models = PopulationModels(device: populationDeviceModels(kept.map(\.device)))
  let samples = kept.flatMap(\.samples)
  guard !samples.isEmpty else { return (models, hasher.hexDigest(), usersRead) }
  do {
    models.habit = try HabitFitter().fitPopulation(samples)
  } catch let e as HabitFitError where e.isEmptyData {
    // Every sampled training window is shorter than one bin, or has no opens.
  }
  return (models, hasher.hexDigest(), usersRead)
}

/// The population device models of the sampled users' points, in their
/// sample order; nil when no user has any, or a fit fails.
private func populationDeviceModels(_ users: [[DeviceTarget: [DevicePoint]]]) -> DeviceModels? {
  var points: [DeviceTarget: [DevicePoint]] = [:]
  for u in users { for (target, p) in u { points[target, default: []] += p } }
  guard points.values.contains(where: { !$0.isEmpty }) else { return nil }
  return try? DeviceModels.fitPopulation(points, options: DeviceModelOptions())
}

/// Reads every user of `config`'s trace and checks its replay budget, as
/// the population pass does without skipping: throws the file's first error.
private func checkEveryUser(_ config: RunConfiguration, limits: ResourceLimits) throws {
  let reader = try TraceReader(path: config.tracePath, limits: limits)
  while let u = try reader.next() {
    try checkReplayBudget(u, config, limits: limits, file: config.tracePath, line: reader.line)
  }
}

/// The largest id hash the population sample can take, once it is full
/// (before that, any): it only decreases, so a worker that reads it late
/// passes over fewer users, never one the sample would take.
private final class SampleBound: @unchecked Sendable {
  private let lock = NSLock()
  private var bound: UInt64?

  /// Whether a user whose id hashes to `h` cannot enter the sample.
  func excludes(_ h: UInt64) -> Bool {
    lock.lock()
    defer { lock.unlock() }
    return bound.map { h >= $0 } ?? false
  }

  /// The sample is full and its largest hash is `h`.
  func lower(to h: UInt64) {
    lock.lock()
    bound = h
    lock.unlock()
  }
}

/// One user made ready for replay: the scored part of the trace with its
/// network and radio timelines, the selected apps with their content
/// timelines, and what learning policies train on. Built once per user and
/// shared by every policy.
package struct PreparedReplay: Sendable {
  package let user: PreparedUser
  package let apps: [Int32]
  /// `contents[a]`: the update times of `apps[a]`.
  package let contents: [ContentTimeline]
  package let learning: LearningContext
  /// Opens in the whole window and scored, apps replayed and left out.
  package let coverage: UserCoverage

  package init(_ trace: UserTrace, _ config: RunConfiguration, _ population: PopulationModels = PopulationModels()) {
    let (train, test) = splitForRun(trace, config)
    apps = config.apps.select(in: trace)
    coverage = UserCoverage(trace: trace, scored: test, selected: apps)
    user = PreparedUser(
      trace: test, world: config.world, apps: config.world.replay.scope == .device ? apps : [], modelled: apps,
      seed: config.seed)
    contents = apps.map { ContentTimeline(trace: test, app: $0, world: config.world, seed: config.seed) }
    let fits = HabitFitCache(trace: trace, sharesOpenProbabilities: PolicySpec.sharesOpenProbabilities(config.policies))
    var learning = LearningContext(training: train, population: population.habit, fits: fits, populationDevice: population.device)
    learning.truth = config.generator?.truth(user: trace.user)
    self.learning = learning
  }

  /// The replays of every selected app under `policies`, at the world's
  /// ``ReplaySwitches/scope``.
  package func replay(_ policies: [PolicySpec], _ config: RunConfiguration) -> UserResult {
    guard !apps.isEmpty else { return UserResult(trace: user.trace, apps: apps, replays: [], coverage: coverage) }
    let devices = policies.map {
      $0.replay(
        user: user, apps: apps, contents: contents, scope: config.world.replay.scope, seed: config.seed,
        recordEvents: config.recordEvents, learning: $0.learns ? learning : nil)
    }
    let replays = apps.indices.map { a in devices.map { $0.apps[a] } }
    return UserResult(
      trace: user.trace, apps: apps, replays: replays, devices: devices.map(\.summary), coverage: coverage)
  }
}

/// Replays one user under every policy and selected app.
public func replayUser(_ trace: UserTrace, _ config: RunConfiguration, _ population: HabitModel? = nil) -> UserResult {
  replayUser(trace, config, models: PopulationModels(habit: population))
}

/// Replays one user under every policy and selected app, the learning
/// policies shrinking toward the population `models`.
package func replayUser(_ trace: UserTrace, _ config: RunConfiguration, models: PopulationModels) -> UserResult {
  PreparedReplay(trace, config, models).replay(config.policies, config)
}

/// Users read and not yet handed to the sink at most, in a streaming
/// replay: a batch (`config.batchUsers`), and at least two per worker so
/// that no worker waits for the reader; 1 with one job (read one, replay
/// it, write it).
package func replayWindow(_ config: RunConfiguration) -> Int {
  config.jobs <= 1 ? 1 : max(config.batchUsers, 2 * config.jobs)
}
