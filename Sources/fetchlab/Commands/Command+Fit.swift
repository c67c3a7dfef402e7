import ArgumentParser
import FetchBenchmark
import FetchLinearAlgebra
import FetchModels
import FetchSupport
import FetchTraces
import Foundation

extension FetchLab {
  struct Fit: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Fit habit, battery and network models per (user, app); score them and three baselines on held-out data; write MODEL.json.",
      discussion: """
        Each user's window is split chronologically at start + fraction × (end − start). \
        Pass 1 fits the population habit model on the training windows of at most \
        --population-pairs (user, app) pairs (those with the smallest stable hash of \
        seed, user, app and window start). Pass 2 fits each selected pair's habit model \
        shrunk toward it and the calibrated hour-of-day, hour-of-week, last-seen-hour \
        and constant baselines (training frequencies of "≥ 1 open in the next hour"), \
        and scores them on the test window: every 15 min, the Poisson log-likelihood \
        of the next bin's opens (per hour), and for "≥ 1 open in the next hour" the \
        Brier score, AUC and log loss, on all test points and on those outside logging \
        gaps (≥ 24 h without a trace row of any kind). Pass 1 also fits population \
        device models (logistic GLMs of "plugged in within 1 h", "on WiFi in 30 min", \
        "offline in 30 min" and a linear model of the battery change in 1 h, on the \
        current state, time in it, level and time of day) on the training windows of \
        at most --population-pairs users; pass 2 shrinks each user's toward them and \
        scores them against persistence, P(target | current state), hour-of-day and \
        constant baselines. Overall figures pool all test points (the overall AUC from \
        a 1000-bin histogram, ±0.001); win counts compare per pair (habit) or user \
        (device). Apps are selected on the whole window, as in 'run'. Users with under \
        1 day of training or under 75 min of test window are skipped. See docs/models.md.
        --report DIR writes evaluation.csv, evaluation_overall.csv, calibration.csv, \
        device_evaluation.csv, device_evaluation_overall.csv, device_calibration.csv \
        and manifest.json.
        Example: fetchlab fit --trace datasets/ubiqlog/ubiqlog-opens.csv --out results/ubiqlog-model.json --report results/ubiqlog-fit
        """)

    @Option(name: .long, help: "Canonical trace file.")
    var trace: String

    @Option(name: .long, help: ArgumentHelp("Model file to write (JSON).", valueName: "model.json"))
    var out: String

    @Option(name: .long, help: ArgumentHelp("Directory for the evaluation CSVs.", valueName: "dir"))
    var report: String?

    @Option(name: .long, help: "Share of each user's window used for training, in (0, 1).")
    var trainFraction: Double = 0.75

    @Option(name: .long, help: "Which apps of each user to model: top:K, min-opens:N or names:A,B.")
    var apps: String = "top:3"

    @Option(name: .long, help: "Seed selecting the population sample.")
    var seed: UInt64 = 1

    @Option(name: .long, help: "Cap on (user, app) pairs in the population fit (bounds memory).")
    var populationPairs: Int = 128

    @Option(name: .long, help: "Worker threads (results do not depend on it).")
    var jobs: Int = ProcessInfo.processInfo.activeProcessorCount

    func validate() throws {
      guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
      guard trainFraction > 0, trainFraction < 1 else {
        throw ValidationError("--train-fraction must be in (0, 1), got \(trainFraction)")
      }
      guard populationPairs >= 1 else { throw ValidationError("--population-pairs must be at least 1") }
      guard !out.isEmpty else { throw ValidationError("--out must not be empty") }
      do { _ = try AppSelection(parsing: apps) } catch { throw ValidationError(String(describing: error)) }
    }

    func run() throws {
      let started = Date()
      LinearAlgebra.setSingleThreaded()
      let setup = FitSetup(
        selection: try AppSelection(parsing: apps), trainFraction: trainFraction, seed: seed,
        fitter: HabitFitter(maxPopulationPairs: populationPairs), evaluation: EvaluationOptions(),
        device: DeviceModelOptions())

      // Pass 1: the population sample and models.
      let p1 = ProgressLine(label: "fit: population sample")
      let (samples, devicePoints, tables) = try populationSample(setup) { users, f in
        p1.update(done: users, unit: "users", fraction: f)
      }
      p1.finish()
      guard !samples.isEmpty else {
        throw CommandError("\(trace): no user has a usable window: need at least 1 day of training and 75 min of test at --train-fraction \(trainFraction), and an opened app")
      }
      let population: HabitModel
      let devicePopulation: PopulationDevice
      do {
        population = try setup.fitter.fitPopulation(samples)
        devicePopulation = PopulationDevice(
          models: try DeviceModels.fitPopulation(devicePoints, options: setup.device),
          batteryPrior: BatteryModel.hourOfDayShares(charging: tables.charging, total: tables.total),
          networkPrior: NetworkModel.hourOfDayShares(tables.network))
      } catch {
        throw CommandError("\(trace): population fit failed: \(error)")
      }
      let populationTime = Date().timeIntervalSince(started)

      // Pass 2: per-user fits and scores, written in trace order.
      let header = ModelFile(
        options: .init(
          apps: setup.selection.description, seed: seed, populationPairs: populationPairs,
          binSeconds: setup.fitter.binSeconds, shapeRidge: setup.fitter.shapeRidge,
          interceptRidge: setup.fitter.interceptRidge, evaluation: setup.evaluation, device: setup.device),
        trainFraction: trainFraction, trace: .init(path: trace, bytes: fileSize(trace)), population: population,
        devicePopulation: devicePopulation.models)
      if let report { try FileManager.default.createDirectory(atPath: report, withIntermediateDirectories: true) }
      let modelWriter = try ModelFile.Writer(path: out, header: header)
      let perPair = try report.map { try AtomicTextFile(path: $0 + "/evaluation.csv") }
      try perPair?.write(CSV.line(EvaluationColumn.names))
      let perUserDevice = try report.map { try AtomicTextFile(path: $0 + "/device_evaluation.csv") }
      try perUserDevice?.write(CSV.line(DeviceColumn.names))
      var habit = HabitTotals()
      var device = DeviceTotals()
      var users = 0, pairs = 0, skipped: [String] = []
      let p2 = ProgressLine(label: "fit: users")
      try forEachUserFit(
        tracePath: trace, setup, population: population, devicePopulation: devicePopulation, jobs: jobs
      ) { fit, done, f in
        p2.update(done: done, unit: "users", fraction: f)
        guard let models = fit.models else {
          skipped.append(fit.user)
          return
        }
        users += 1
        try modelWriter.append(models)
        for pair in fit.pairs {
          pairs += 1
          habit.add(pair)
          for subset in FitSubset.allCases {
            for (i, score) in pair.scores[subset.index].enumerated() {
              try perPair?.write(
                EvaluationColumn.row(
                  user: fit.user, app: pair.app, predictor: FitPredictor.allCases[i].rawValue, subset: subset,
                  trainOpens: pair.trainingOpens, score: score))
            }
          }
        }
        if let d = fit.device {
          device.add(d)
          try perUserDevice?.write(DeviceColumn.rows(user: fit.user, d))
        }
      }
      p2.finish()
      guard users > 0 else {
        throw CommandError("\(trace): no user has a usable window (\(skipped.count) skipped: under 1 day of training or 75 min of test)")
      }

      if let report, let perPair, let perUserDevice {
        let o = try AtomicTextFile(path: report + "/evaluation_overall.csv")
        try o.write(CSV.line(OverallColumn.names))
        for subset in FitSubset.allCases {
          for (i, s) in habit.overall[subset.index].enumerated() {
            try o.write(
              OverallColumn.row(
                predictor: FitPredictor.allCases[i].rawValue, subset: subset, pairs: pairs, score: s,
                wins: habit.wins[subset.index][i]))
          }
        }
        let c = try AtomicTextFile(path: report + "/calibration.csv")
        try c.write(CSV.line(["predictor", "subset", "decile", "n", "mean_predicted", "observed"]))
        for subset in FitSubset.allCases {
          for (i, s) in habit.overall[subset.index].enumerated() {
            try c.write(calibrationRows([FitPredictor.allCases[i].rawValue, subset.rawValue], s))
          }
        }
        let dO = try AtomicTextFile(path: report + "/device_evaluation_overall.csv")
        try dO.write(CSV.line(DeviceOverallColumn.names))
        try dO.write(DeviceOverallColumn.rows(device))
        let dC = try AtomicTextFile(path: report + "/device_calibration.csv")
        try dC.write(CSV.line(["target", "predictor", "decile", "n", "mean_predicted", "observed"]))
        for target in DeviceTarget.allCases where target.isBinary {
          guard let scores = device.binary[target] else { continue }
          for (i, s) in scores.enumerated() {
            try dC.write(calibrationRows([target.rawValue, DevicePredictor.allCases[i].rawValue], s))
          }
        }
        let manifest: [String: Any] = [
          "fetchlab_version": fetchLabVersion,
          "command": CommandLine.arguments.joined(separator: " "),
          "trace": ["path": trace, "bytes": fileSize(trace)],
          "model": out,
          "seed": seed,
          "apps": setup.selection.description,
          "train_fraction": trainFraction,
          "counts": [
            "users": users, "pairs": pairs, "skipped_users": skipped.count, "population_pairs": samples.count,
            "device_users": device.users,
          ],
          "logging_gap_h": LoggingGaps.defaultMinimumSeconds / 3600,
          "jobs": jobs,
          "started_at": ISO8601DateFormatter().string(from: started),
          "elapsed_s": (Date().timeIntervalSince(started) * 1000).rounded() / 1000,
        ]
        let m = try AtomicTextFile(path: report + "/manifest.json")
        let json = try JSONSerialization.data(withJSONObject: manifest, options: [.prettyPrinted, .sortedKeys])
        try m.write(String(decoding: json, as: UTF8.self) + "\n")
        try modelWriter.commit()
        try perPair.commit()
        try perUserDevice.commit()
        try o.commit()
        try c.commit()
        try dO.commit()
        try dC.commit()
        try m.commit()
      } else {
        try modelWriter.commit()
      }

      print("\(users) users, \(pairs) (user, app) pairs; population model from \(samples.count) pairs, \(population.diagnostics.trainingOpens) opens -> \(out)")
      print(FitTable.render(habit, pairs: pairs), terminator: "")
      print(DeviceTable.render(device), terminator: "")
      if !skipped.isEmpty {
        log("fit: skipped \(skipped.count) users with under 1 day of training or 75 min of test: \(skipped.prefix(10).joined(separator: ", "))\(skipped.count > 10 ? ", ..." : "")")
      }
      let elapsed = Date().timeIntervalSince(started)
      log("fit: \(CSV.number(elapsed, decimals: 2)) s (population sample and fit \(CSV.number(populationTime, decimals: 2)) s)")
    }

    /// Pass 1: the training windows of the population sample, in trace
    /// order, and of at most `maxPopulationPairs` users (those with the
    /// smallest stable hash of seed, user and window start) the device
    /// training points, every 4th grid point (hourly), and the summed
    /// charging and network time tables (the priors of the hour-of-week
    /// models).
    func populationSample(
      _ setup: FitSetup, progress: (Int, Double?) -> Void
    ) throws -> ([HabitSample], [DeviceTarget: [DevicePoint]], DeviceTables) {
      let reader = try TraceReader(path: trace)
      let total = fileSize(trace)
      let cap = setup.fitter.maxPopulationPairs
      // The `cap` smallest keys so far, sorted by key.
      var kept: [(key: UInt64, order: Int, sample: HabitSample)] = []
      var keptDevice: [(key: UInt64, order: Int, points: [DeviceTarget: [DevicePoint]], tables: DeviceTables)] = []
      var order = 0, users = 0
      while let u = try reader.next() {
        users += 1
        progress(users, total > 0 ? Double(reader.bytesRead) / Double(total) : nil)
        guard let split = setup.split(u) else { continue }
        let userKey = StableHash.combine(StableHash.combine(setup.seed, StableHash.fnv1a(u.user)), u.start.bitPattern)
        order += 1
        if keptDevice.count < cap || (keptDevice.last!.key, keptDevice.last!.order) > (userKey, order) {
          let timeline = DeviceTimeline(u)
          var points: [DeviceTarget: [DevicePoint]] = [:]
          for target in DeviceTarget.allCases {
            let p = DeviceFeatures.points(
              target, trace: u, timeline: timeline, from: u.start, to: split, options: setup.device)
            points[target] = stride(from: 0, to: p.count, by: 4).map { p[$0] }
          }
          let (charging, total) = BatteryModel.chargingSeconds(u, from: u.start, to: split)
          let tables = DeviceTables(
            charging: charging, total: total, network: NetworkModel.classSeconds(u, from: u.start, to: split))
          let at = keptDevice.firstIndex { ($0.key, $0.order) > (userKey, order) } ?? keptDevice.count
          keptDevice.insert((userKey, order, points, tables), at: at)
          if keptDevice.count > cap { keptDevice.removeLast() }
        }
        let selected = setup.selection.select(in: u)
        guard !selected.isEmpty else { continue }
        // The training opens are all the habit fit reads.
        var train = UserTrace(user: u.user, timeZone: u.timeZone, start: u.start, end: split, apps: u.apps)
        train.events = u.events.filter { $0.kind == .open && $0.time < split }
        for app in selected {
          var h = StableHash.combine(setup.seed, StableHash.fnv1a(u.user))
          h = StableHash.combine(h, StableHash.fnv1a(u.apps[Int(app)]))
          h = StableHash.combine(h, u.start.bitPattern)
          order += 1
          if kept.count >= cap, let last = kept.last, (last.key, last.order) < (h, order) { continue }
          let s = HabitSample(trace: train, app: app, from: u.start, to: split)
          let at = kept.firstIndex { ($0.key, $0.order) > (h, order) } ?? kept.count
          kept.insert((h, order, s), at: at)
          if kept.count > cap { kept.removeLast() }
        }
      }
      var pooled: [DeviceTarget: [DevicePoint]] = [:]
      var tables = DeviceTables()
      for k in keptDevice.sorted(by: { $0.order < $1.order }) {
        for target in DeviceTarget.allCases { pooled[target, default: []] += k.points[target] ?? [] }
        tables.add(k.tables)
      }
      return (kept.sorted { $0.order < $1.order }.map(\.sample), pooled, tables)
    }
  }
}

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
  /// The device models' scores (nil when skipped).
  var device: DeviceEvaluation?
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
  let evaluation = DeviceEvaluation.evaluate(
    training: train, test: test, user: device, population: devicePopulation.models)

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
  let total = fileSize(tracePath)
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

/// Pooled device scores and per-user win counts of ``DevicePredictor/model``.
struct DeviceTotals {
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

/// Ten calibration rows of `s`, each prefixed by `key`.
func calibrationRows(_ key: [String], _ s: PredictionScore) -> String {
  s.calibration.map { r in
    CSV.line(
      key + [
        String(r.decile), String(r.count),
        r.count > 0 ? CSV.number(r.meanPredicted, decimals: 6) : "",
        r.count > 0 ? CSV.number(r.observed, decimals: 6) : "",
      ])
  }.joined()
}

/// The score columns shared by `evaluation.csv` and `evaluation_overall.csv`.
enum ScoreColumn: String, CaseIterable {
  case testOpens = "test_opens"
  case testHours = "test_h"
  case logLikPerHour = "loglik_nats_per_h"
  case points
  case positives
  case brier
  case auc
  case logLoss = "log_loss_nats"
  case meanPredicted = "mean_predicted"
  case observedRate = "observed_rate"

  func value(_ s: PredictionScore) -> String {
    switch self {
    case .testOpens: String(s.opens)
    case .testHours: CSV.number(s.hours, decimals: 4)
    case .logLikPerHour: CSV.number(s.logLikelihoodPerHour, decimals: 6)
    case .points: String(s.points)
    case .positives: String(s.positives)
    case .brier: CSV.number(s.brier, decimals: 6)
    case .auc: CSV.number(s.auc, decimals: 6)
    case .logLoss: CSV.number(s.logLoss, decimals: 6)
    case .meanPredicted: CSV.number(s.meanPredicted, decimals: 6)
    case .observedRate: CSV.number(s.observedRate, decimals: 6)
    }
  }

  static func values(_ s: PredictionScore) -> [String] { allCases.map { $0.value(s) } }
}

/// Columns of `evaluation.csv`: one row per (user, app, predictor, subset).
enum EvaluationColumn {
  static let names = ["user", "app", "predictor", "subset", "train_opens"] + ScoreColumn.allCases.map(\.rawValue)

  static func row(
    user: String, app: String, predictor: String, subset: FitSubset, trainOpens: Int, score s: PredictionScore
  ) -> String {
    ([CSV.field(user), CSV.field(app), predictor, subset.rawValue, String(trainOpens)] + ScoreColumn.values(s))
      .joined(separator: ",") + "\n"
  }
}

/// Columns of `evaluation_overall.csv`: one row per (predictor, subset), all
/// test points pooled (AUC from the histogram, ±0.001), and the pairs where
/// the habit model beats the predictor on Brier and on AUC.
enum OverallColumn {
  static let names =
    ["predictor", "subset", "pairs"] + ScoreColumn.allCases.map(\.rawValue)
    + ["habit_wins_brier", "pairs_brier", "habit_wins_auc", "pairs_auc"]

  static func row(predictor: String, subset: FitSubset, pairs: Int, score s: PredictionScore, wins w: Wins) -> String {
    ([predictor, subset.rawValue, String(pairs)] + ScoreColumn.values(s)
      + [String(w.brierWins), String(w.brierCompared), String(w.aucWins), String(w.aucCompared)])
      .joined(separator: ",") + "\n"
  }
}

/// Columns of `device_evaluation.csv` (one row per user, target and
/// predictor; binary targets fill the probability scores, the level target
/// the error columns).
enum DeviceColumn {
  static let scoreNames = [
    "points", "positives", "brier", "auc", "log_loss_nats", "mean_predicted", "observed_rate", "mae", "rmse", "bias",
  ]
  static let names = ["user", "target", "predictor"] + scoreNames

  static func values(_ s: PredictionScore) -> [String] {
    [
      String(s.points), String(s.positives), CSV.number(s.brier, decimals: 6), CSV.number(s.auc, decimals: 6),
      CSV.number(s.logLoss, decimals: 6), CSV.number(s.meanPredicted, decimals: 6),
      CSV.number(s.observedRate, decimals: 6), "", "", "",
    ]
  }

  static func values(_ e: ErrorScore) -> [String] {
    [
      String(e.count), "", "", "", "", "", "", CSV.number(e.mae, decimals: 6), CSV.number(e.rmse, decimals: 6),
      CSV.number(e.bias, decimals: 6),
    ]
  }

  static func rows(user: String, _ d: DeviceEvaluation) -> String {
    var out = ""
    for target in DeviceTarget.allCases {
      if let scores = d.binary[target] {
        for (i, s) in scores.enumerated() {
          out += CSV.line([CSV.field(user), target.rawValue, DevicePredictor.allCases[i].rawValue] + values(s))
        }
      } else if target == .level, let l = d.level {
        for (i, e) in l.enumerated() {
          out += CSV.line([CSV.field(user), target.rawValue, DevicePredictor.allCases[i].rawValue] + values(e))
        }
      }
    }
    return out
  }
}

/// Columns of `device_evaluation_overall.csv`: pooled scores per (target,
/// predictor) and the users where the user model beats the predictor
/// (Brier and AUC; level target: mean absolute error in the Brier columns).
enum DeviceOverallColumn {
  static let names =
    ["target", "predictor", "users"] + DeviceColumn.scoreNames
    + ["model_wins_brier_or_mae", "users_brier_or_mae", "model_wins_auc", "users_auc"]

  static func rows(_ t: DeviceTotals) -> String {
    var out = ""
    for target in DeviceTarget.allCases {
      if let scores = t.binary[target], let wins = t.binaryWins[target] {
        for (i, s) in scores.enumerated() {
          out += CSV.line(
            [target.rawValue, DevicePredictor.allCases[i].rawValue, String(t.binaryUsers[target] ?? 0)]
              + DeviceColumn.values(s) + winValues(wins[i]))
        }
      } else if target == .level, let l = t.level {
        for (i, e) in l.enumerated() {
          out += CSV.line(
            [target.rawValue, DevicePredictor.allCases[i].rawValue, String(t.levelUsers)] + DeviceColumn.values(e)
              + winValues(t.levelWins[i]))
        }
      }
    }
    return out
  }

  static func winValues(_ w: Wins) -> [String] {
    [String(w.brierWins), String(w.brierCompared), String(w.aucWins), String(w.aucCompared)]
  }
}

/// The overall comparison printed by `fit`.
enum FitTable {
  static func render(_ totals: HabitTotals, pairs: Int) -> String {
    let header = [
      "predictor", "subset", "pairs", "test h", "opens", "loglik/h", "Brier", "AUC", "log loss", "habit wins Brier",
      "habit wins AUC",
    ]
    var rows: [[String]] = []
    for subset in FitSubset.allCases {
      let k = subset.index
      for (i, s) in totals.overall[k].enumerated() {
        let w = totals.wins[k][i]
        let isHabit = FitPredictor.allCases[i] == .habit
        rows.append([
          FitPredictor.allCases[i].rawValue, subset.rawValue, String(pairs), fixed(s.hours, 0), String(s.opens),
          fixed(s.logLikelihoodPerHour, 4), fixed(s.brier, 4), fixed(s.auc, 4), fixed(s.logLoss, 4),
          isHabit ? "" : "\(w.brierWins)/\(w.brierCompared)", isHabit ? "" : "\(w.aucWins)/\(w.aucCompared)",
        ])
      }
    }
    var out = table(header, rows)
    let habit = totals.overall[0][FitPredictor.allCases.firstIndex(of: .habit)!]
    let hod = totals.overall[0][FitPredictor.allCases.firstIndex(of: .hourOfDay)!]
    let dLL = habit.logLikelihoodPerHour - hod.logLikelihoodPerHour
    func pct(_ x: Double) -> String { (x >= 0 ? "+" : "") + fixed(100 * x, 1) + " %" }
    out += "habit vs hour_of_day: log-lik \(dLL >= 0 ? "+" : "")\(fixed(dLL, 4)) nats/h (\(pct(dLL / abs(hod.logLikelihoodPerHour))))"
    out += ", Brier \(pct(habit.brier / hod.brier - 1)), log loss \(pct(habit.logLoss / hod.logLoss - 1))"
    out += ", AUC \(habit.auc - hod.auc >= 0 ? "+" : "")\(fixed(habit.auc - hod.auc, 4))\n"
    let outside = totals.overall[1][0]
    if habit.points > 0 {
      out += "outside logging gaps (≥ 24 h without any row): \(outside.points) of \(habit.points) test points\n"
    }
    return out
  }

  /// Right-aligned columns (the first left-aligned).
  static func table(_ header: [String], _ rows: [[String]]) -> String {
    let widths = header.indices.map { c in ([header[c]] + rows.map { $0[c] }).map(\.count).max() ?? 0 }
    func line(_ cells: [String]) -> String {
      cells.enumerated().map { c, s in
        let pad = String(repeating: " ", count: widths[c] - s.count)
        return c == 0 ? s + pad : pad + s
      }.joined(separator: "  ") + "\n"
    }
    return line(header) + rows.map(line).joined()
  }

  /// `x` with exactly `d` decimals (d ≤ 4), locale-independent.
  static func fixed(_ x: Double, _ d: Int) -> String {
    guard x.isFinite else { return CSV.number(x) }
    var p = 1.0
    for _ in 0..<d { p *= 10 }
    let scaled = (abs(x) * p).rounded()
    let negative = x < 0 && scaled > 0
    var digits = String(Int64(scaled))
    if d > 0 {
      if digits.count <= d { digits = String(repeating: "0", count: d - digits.count + 1) + digits }
      digits.insert(".", at: digits.index(digits.endIndex, offsetBy: -d))
    }
    return (negative ? "-" : "") + digits
  }
}

/// The device-model comparison printed by `fit`.
enum DeviceTable {
  static func render(_ t: DeviceTotals) -> String {
    guard t.users > 0 else {
      return "device models: no user has charging, network or battery rows in both windows\n"
    }
    let header = ["target", "predictor", "users", "points", "Brier|MAE", "AUC", "log loss", "model wins Brier|MAE", "model wins AUC"]
    var rows: [[String]] = []
    for target in DeviceTarget.allCases {
      if let scores = t.binary[target], let wins = t.binaryWins[target] {
        for (i, s) in scores.enumerated() {
          let isModel = i == 0
          rows.append([
            target.rawValue, DevicePredictor.allCases[i].rawValue, String(t.binaryUsers[target] ?? 0), String(s.points),
            FitTable.fixed(s.brier, 4), FitTable.fixed(s.auc, 4), FitTable.fixed(s.logLoss, 4),
            isModel ? "" : "\(wins[i].brierWins)/\(wins[i].brierCompared)",
            isModel ? "" : "\(wins[i].aucWins)/\(wins[i].aucCompared)",
          ])
        }
      } else if target == .level, let l = t.level {
        for (i, e) in l.enumerated() {
          let w = t.levelWins[i]
          rows.append([
            target.rawValue, DevicePredictor.allCases[i].rawValue, String(t.levelUsers), String(e.count),
            FitTable.fixed(e.mae, 4), "", "", i == 0 ? "" : "\(w.brierWins)/\(w.brierCompared)", "",
          ])
        }
      }
    }
    return "device models (level_change: mean absolute error, percentage points):\n" + FitTable.table(header, rows)
  }
}
