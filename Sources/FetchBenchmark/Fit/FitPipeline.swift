import FetchModels
import FetchSupport
import FetchTraces
import Foundation

/// The predictors `fit` scores, in output order: the habit model and the
/// calibrated baselines (``CalibratedBaseline``).
enum FitPredictor: String, CaseIterable {
  case habit
  case hourOfDay = "hour_of_day"
  case hourOfWeek = "hour_of_week"
  case lastSeenHour = "last_seen_hour"
  case constant
}

/// Which test points a score covers.
enum FitSubset: String, CaseIterable {
  /// Every test point.
  case all
  /// Points whose horizon does not overlap a logging gap (``LoggingGaps``).
  case outsideGaps = "outside_gaps"

  /// Position in ``UserFit/Pair/scores`` and ``HabitTotals``.
  var index: Int { self == .all ? 0 : 1 }
}

/// What both passes of `fit` share.
struct FitSetup: Sendable {
  var selection: AppSelection
  var trainFraction: Double
  var seed: UInt64
  var fitter: HabitFitter
  var evaluation: EvaluationOptions
  var device: DeviceModelOptions

  /// Shortest usable training window, s.
  static let minTrainSeconds = 86_400.0

  /// The split time of `u`, or nil when the training part is under a day or
  /// the test part too short for one horizon point.
  func split(_ u: UserTrace) -> Double? {
    let s = u.start + trainFraction * (u.end - u.start)
    guard s - u.start >= Self.minTrainSeconds,
      u.end - s >= evaluation.horizonSeconds + evaluation.binSeconds
    else { return nil }
    return s
  }
}

/// Summed charging and network time per local hour of week (s) over the
/// population's training windows.
struct DeviceTables: Sendable {
  var charging = [Double](repeating: 0, count: 168)
  var total = [Double](repeating: 0, count: 168)
  /// WiFi, cellular, offline.
  var network = [[Double]](repeating: [Double](repeating: 0, count: 168), count: 3)

  mutating func add(_ o: DeviceTables) {
    for i in 0..<168 {
      charging[i] += o.charging[i]
      total[i] += o.total[i]
      for k in 0..<3 { network[k][i] += o.network[k][i] }
    }
  }
}

/// What pass 1 learns about the population's devices, all from training
/// windows: the device GLMs and the hour-of-day priors of the hour-of-week
/// tables (nil: no population data, the tables' uninformed priors).
struct PopulationDevice: Sendable {
  var models: DeviceModels
  var batteryPrior: [Double]?
  var networkPrior: [[Double]]?
}

/// One user's fits and scores.
struct UserFit: Sendable {
  struct Pair: Sendable {
    var app: String
    var trainingOpens: Int
    /// [all, outside gaps], each one score per ``FitPredictor``, in order.
    var scores: [[PredictionScore]]
  }

  var user: String
  /// nil when the user was skipped.
  var models: ModelFile.UserModels?
  var pairs: [Pair]
  /// The device models' scores per ``FitSubset`` (by its index; nil when skipped).
  var device: [DeviceEvaluation]?
}

/// Fits and scores one user (pass 2).
func fitUser(_ u: UserTrace, _ setup: FitSetup, population: HabitModel, devicePopulation: PopulationDevice) -> UserFit {
  guard let split = setup.split(u) else { return UserFit(user: u.user, models: nil, pairs: []) }
  let apps = setup.selection.select(in: u)
  var lastAny: Double?
  var lastBattery: BatteryReading?
  var lastApp = [Double?](repeating: nil, count: u.apps.count)
  var trainOpens = [Int](repeating: 0, count: u.apps.count)
  for e in u.events where e.time < split {
    switch e.kind {
    case .open:
      lastAny = e.time
      lastApp[Int(e.app)] = e.time
      if e.time >= u.start { trainOpens[Int(e.app)] += 1 }
    case .battery:
      lastBattery = BatteryReading(time: e.time, levelPct: e.value)
    default: break
    }
  }
  let gaps = LoggingGaps(u)
  var appModels: [ModelFile.AppModel] = []
  var pairs: [UserFit.Pair] = []
  for app in apps {
    let sample = HabitSample(trace: u, app: app, from: u.start, to: split)
    let habit = setup.fitter.fit(sample, prior: population)
    let name = u.apps[Int(app)]
    appModels.append(
      ModelFile.AppModel(app: name, habit: habit, lastOpen: lastApp[Int(app)], trainingOpens: trainOpens[Int(app)]))
    func score<P: OpenPredictor>(_ p: P) -> (all: PredictionScore, outsideGaps: PredictionScore) {
      PredictionEvaluation.evaluate(
        p, trace: u, app: app, from: split, to: u.end, options: setup.evaluation, gaps: gaps)
    }
    let h = setup.evaluation.horizonSeconds, g = setup.evaluation.binSeconds
    let scores = FitPredictor.allCases.map { kind -> (all: PredictionScore, outsideGaps: PredictionScore) in
      switch kind {
      case .habit: score(habit)
      case .hourOfDay: score(CalibratedBaseline(.hourOfDay, fitting: sample, horizonSeconds: h, gridSeconds: g))
      case .hourOfWeek: score(CalibratedBaseline(.hourOfWeek, fitting: sample, horizonSeconds: h, gridSeconds: g))
      case .lastSeenHour: score(CalibratedBaseline(.lastSeenHour, fitting: sample, horizonSeconds: h, gridSeconds: g))
      case .constant: score(CalibratedBaseline(.constant, fitting: sample, horizonSeconds: h, gridSeconds: g))
      }
    }
    pairs.append(
      UserFit.Pair(
        app: name, trainingOpens: trainOpens[Int(app)], scores: [scores.map(\.all), scores.map(\.outsideGaps)]))
  }

  // Device models: training points before the split, test points after.
  let timeline = DeviceTimeline(u)
  var train: [DeviceTarget: [DevicePoint]] = [:], test: [DeviceTarget: [DevicePoint]] = [:]
  for target in DeviceTarget.allCases {
    train[target] = DeviceFeatures.points(target, trace: u, timeline: timeline, from: u.start, to: split, options: setup.device)
    test[target] = DeviceFeatures.points(target, trace: u, timeline: timeline, from: split, to: u.end, options: setup.device)
  }
  // A user whose rows make the solver fail keeps the population models.
  let device =
    (try? DeviceModels.fitUser(train, population: devicePopulation.models, options: setup.device)) ?? DeviceModels()
  // Test points whose horizon overlaps a logging gap hold the last state
  // through hours nobody recorded: scored apart, as the habit scores are.
  var covered = test
  for target in DeviceTarget.allCases {
    let h = setup.device.horizon(target)
    covered[target] = test[target]?.filter { !gaps.overlaps($0.time, $0.time + h) }
  }
  let evaluation = [test, covered].map {
    DeviceEvaluation.evaluate(training: train, test: $0, user: device, population: devicePopulation.models)
  }

  let models = ModelFile.UserModels(
    user: u.user, timeZone: u.timeZone, splitTime: split, windowEnd: u.end, lastOpenAny: lastAny,
    lastBattery: lastBattery, apps: appModels,
    battery: BatteryModel(fitting: u, from: u.start, to: split, prior: devicePopulation.batteryPrior),
    network: NetworkModel(fitting: u, from: u.start, to: split, prior: devicePopulation.networkPrior), device: device)
  return UserFit(user: u.user, models: models, pairs: pairs, device: evaluation)
}

/// Pass 2: reads users in batches of `batchUsers`, fits them on `jobs`
/// threads, and hands the results to `body` (with users done and the share
/// of bytes read) in trace order, so output does not depend on `jobs` and
/// memory not on the number of users.
func forEachUserFit(
  tracePath: String, _ setup: FitSetup, population: HabitModel, devicePopulation: PopulationDevice, jobs: Int,
  batchUsers: Int = 64, _ body: (UserFit, Int, Double?) throws -> Void
) throws {
  let reader = try TraceReader(path: tracePath)
  let total = traceBytes(tracePath)
  var batch: [UserTrace] = []
  var done = 0
  var finished = false
  while !finished {
    batch.removeAll(keepingCapacity: true)
    while batch.count < batchUsers, let u = try reader.next() { batch.append(u) }
    finished = batch.count < batchUsers
    guard !batch.isEmpty else { break }
    let users = batch
    let results = parallelMap(users.count, jobs: jobs) {
      fitUser(users[$0], setup, population: population, devicePopulation: devicePopulation)
    }
    let fraction = total > 0 ? Double(reader.bytesRead) / Double(total) : nil
    for r in results {
      done += 1
      try body(r, done, fraction)
    }
  }
}

/// Pooled habit scores and per-pair win counts.
struct HabitTotals {
  /// [all, outside gaps] × ``FitPredictor``.
  var overall = [[PredictionScore]](
    repeating: [PredictionScore](repeating: PredictionScore(), count: FitPredictor.allCases.count), count: 2)
  /// [all, outside gaps] × ``FitPredictor``: pairs where the habit model
  /// has a lower Brier score / higher AUC than the predictor, and pairs
  /// where both are defined.
  var wins = [[Wins]](repeating: [Wins](repeating: Wins(), count: FitPredictor.allCases.count), count: 2)

  mutating func add(_ pair: UserFit.Pair) {
    for s in 0..<2 {
      let habit = pair.scores[s][0]
      for (i, score) in pair.scores[s].enumerated() {
        overall[s][i].merge(score)
        wins[s][i].add(model: habit, other: score)
      }
    }
  }
}

/// Head-to-head counts of a model against one predictor.
struct Wins {
  /// Units (pairs or users) with both Brier scores defined, and those where the model's is lower.
  var brierCompared = 0, brierWins = 0
  /// Units with both AUCs defined, and those where the model's is higher.
  var aucCompared = 0, aucWins = 0

  mutating func add(model m: PredictionScore, other o: PredictionScore) {
    if m.brier.isFinite && o.brier.isFinite {
      brierCompared += 1
      if m.brier < o.brier { brierWins += 1 }
    }
    if m.auc.isFinite && o.auc.isFinite {
      aucCompared += 1
      if m.auc > o.auc { aucWins += 1 }
    }
  }

  mutating func add(model m: ErrorScore, other o: ErrorScore) {
    guard m.count > 0, o.count > 0 else { return }
    brierCompared += 1
    if m.mae < o.mae { brierWins += 1 }
  }
}

/// Pooled device scores of every ``FitSubset``.
struct DeviceTotals {
  /// Users with a scored device target.
  var users = 0
  /// By ``FitSubset/index``.
  var subsets = [DeviceSubsetTotals](repeating: DeviceSubsetTotals(), count: FitSubset.allCases.count)

  /// Adds one user's scores, one evaluation per subset.
  mutating func add(_ e: [DeviceEvaluation]) {
    if !e[0].binary.isEmpty || e[0].level != nil { users += 1 }
    for (k, x) in e.enumerated() { subsets[k].add(x) }
  }
}

/// Pooled device scores of one subset and per-user win counts of
/// ``DevicePredictor/model``.
struct DeviceSubsetTotals {
  var users = 0
  var binary: [DeviceTarget: [PredictionScore]] = [:]
  var binaryWins: [DeviceTarget: [Wins]] = [:]
  var binaryUsers: [DeviceTarget: Int] = [:]
  var level: [ErrorScore]?
  var levelWins = [Wins](repeating: Wins(), count: DevicePredictor.allCases.count)
  var levelUsers = 0

  mutating func add(_ e: DeviceEvaluation) {
    if !e.binary.isEmpty || e.level != nil { users += 1 }
    for (target, scores) in e.binary {
      binaryUsers[target, default: 0] += 1
      var pooled = binary[target] ?? [PredictionScore](repeating: PredictionScore(), count: scores.count)
      var wins = binaryWins[target] ?? [Wins](repeating: Wins(), count: scores.count)
      for (i, s) in scores.enumerated() {
        pooled[i].merge(s)
        wins[i].add(model: scores[0], other: s)
      }
      binary[target] = pooled
      binaryWins[target] = wins
    }
    if let l = e.level {
      levelUsers += 1
      var pooled = level ?? [ErrorScore](repeating: ErrorScore(), count: l.count)
      for (i, s) in l.enumerated() {
        pooled[i].merge(s)
        levelWins[i].add(model: l[0], other: s)
      }
      level = pooled
    }
  }
}

/// Bytes of the file at `path` (0 when it cannot be read), for progress.
func traceBytes(_ path: String) -> Int {
  ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int) ?? 0
}
