import ArgumentParser
import FetchBenchmark
import FetchLinearAlgebra
import FetchModels
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
        shrunk toward it, the user's battery and network models, and the hour-of-day, \
        last-seen-hour and constant baselines, and scores all four predictors on the \
        test window: every 15 min, the Poisson log-likelihood of the next bin's opens \
        (per hour), and for "≥ 1 open in the next hour" the Brier score, AUC and log \
        loss. Overall figures pool all test points (the overall AUC from a 1000-bin \
        histogram, ±0.001). Apps are selected on the whole window, as in 'run'. Users \
        with under 1 day of training or under 75 min of test window are skipped.
        --report DIR writes evaluation.csv, evaluation_overall.csv, calibration.csv \
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
        fitter: HabitFitter(maxPopulationPairs: populationPairs), evaluation: EvaluationOptions())

      // Pass 1: the population sample and model.
      let p1 = ProgressLine(label: "fit: population sample")
      let samples = try populationSample(setup) { users, f in p1.update(done: users, unit: "users", fraction: f) }
      p1.finish()
      guard !samples.isEmpty else {
        throw FitCommandError("\(trace): no user has a usable window: need at least 1 day of training and 75 min of test at --train-fraction \(trainFraction), and an opened app")
      }
      let population: HabitModel
      do {
        population = try setup.fitter.fitPopulation(samples)
      } catch {
        throw FitCommandError("\(trace): population fit failed: \(error)")
      }
      let populationTime = Date().timeIntervalSince(started)

      // Pass 2: per-user fits and scores, written in trace order.
      let header = ModelFile(
        options: .init(
          apps: setup.selection.description, seed: seed, populationPairs: populationPairs,
          binSeconds: setup.fitter.binSeconds, shapeRidge: setup.fitter.shapeRidge,
          interceptRidge: setup.fitter.interceptRidge, evaluation: setup.evaluation),
        trainFraction: trainFraction, trace: .init(path: trace, bytes: fileSize(trace)), population: population)
      if let report { try FileManager.default.createDirectory(atPath: report, withIntermediateDirectories: true) }
      let modelWriter = try ModelFile.Writer(path: out, header: header)
      let perPair = try report.map { try AtomicTextFile(path: $0 + "/evaluation.csv") }
      try perPair?.write(CSV.line(EvaluationColumn.names))
      var overall = [PredictionScore](repeating: PredictionScore(), count: FitPredictor.allCases.count)
      var users = 0, pairs = 0, skipped: [String] = []
      let p2 = ProgressLine(label: "fit: users")
      try forEachUserFit(tracePath: trace, setup, population: population, jobs: jobs) { fit, done, f in
        p2.update(done: done, unit: "users", fraction: f)
        guard let models = fit.models else {
          skipped.append(fit.user)
          return
        }
        users += 1
        try modelWriter.append(models)
        for pair in fit.pairs {
          pairs += 1
          for (i, score) in pair.scores.enumerated() {
            overall[i].merge(score)
            try perPair?.write(
              EvaluationColumn.row(
                user: fit.user, app: pair.app, predictor: FitPredictor.allCases[i].rawValue,
                trainOpens: pair.trainingOpens, score: score))
          }
        }
      }
      p2.finish()
      guard users > 0 else {
        throw FitCommandError("\(trace): no user has a usable window (\(skipped.count) skipped: under 1 day of training or 75 min of test)")
      }

      if let report, let perPair {
        let o = try AtomicTextFile(path: report + "/evaluation_overall.csv")
        try o.write(CSV.line(OverallColumn.names))
        for (i, s) in overall.enumerated() {
          try o.write(OverallColumn.row(predictor: FitPredictor.allCases[i].rawValue, pairs: pairs, score: s))
        }
        let c = try AtomicTextFile(path: report + "/calibration.csv")
        try c.write(CSV.line(["predictor", "decile", "n", "mean_predicted", "observed"]))
        for (i, s) in overall.enumerated() {
          for r in s.calibration {
            try c.write(
              CSV.line([
                FitPredictor.allCases[i].rawValue, String(r.decile), String(r.count),
                r.count > 0 ? CSV.number(r.meanPredicted, decimals: 6) : "",
                r.count > 0 ? CSV.number(r.observed, decimals: 6) : "",
              ]))
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
          "counts": ["users": users, "pairs": pairs, "skipped_users": skipped.count, "population_pairs": samples.count],
          "jobs": jobs,
          "started_at": ISO8601DateFormatter().string(from: started),
          "elapsed_s": (Date().timeIntervalSince(started) * 1000).rounded() / 1000,
        ]
        let m = try AtomicTextFile(path: report + "/manifest.json")
        let json = try JSONSerialization.data(withJSONObject: manifest, options: [.prettyPrinted, .sortedKeys])
        try m.write(String(decoding: json, as: UTF8.self) + "\n")
        try modelWriter.commit()
        try perPair.commit()
        try o.commit()
        try c.commit()
        try m.commit()
      } else {
        try modelWriter.commit()
      }

      print("\(users) users, \(pairs) (user, app) pairs; population model from \(samples.count) pairs, \(population.diagnostics.trainingOpens) opens -> \(out)")
      print(FitTable.render(overall, pairs: pairs), terminator: "")
      if !skipped.isEmpty {
        log("fit: skipped \(skipped.count) users with under 1 day of training or 75 min of test: \(skipped.prefix(10).joined(separator: ", "))\(skipped.count > 10 ? ", ..." : "")")
      }
      let elapsed = Date().timeIntervalSince(started)
      log("fit: \(CSV.number(elapsed, decimals: 2)) s (population sample and fit \(CSV.number(populationTime, decimals: 2)) s)")
    }

    /// Pass 1: the training windows of the population sample, in trace order.
    func populationSample(_ setup: FitSetup, progress: (Int, Double?) -> Void) throws -> [HabitSample] {
      let reader = try TraceReader(path: trace)
      let total = fileSize(trace)
      let cap = setup.fitter.maxPopulationPairs
      // The `cap` smallest keys so far, sorted by key.
      var kept: [(key: UInt64, order: Int, sample: HabitSample)] = []
      var order = 0, users = 0
      while let u = try reader.next() {
        users += 1
        progress(users, total > 0 ? Double(reader.bytesRead) / Double(total) : nil)
        guard let split = setup.split(u) else { continue }
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
      return kept.sorted { $0.order < $1.order }.map(\.sample)
    }
  }
}

/// A problem that ends `fit` with exit code 1.
struct FitCommandError: Error, CustomStringConvertible {
  let description: String
  init(_ s: String) { description = s }
}

/// The predictors `fit` scores, in output order.
enum FitPredictor: String, CaseIterable {
  case habit
  case hourOfDay = "hour_of_day"
  case lastSeenHour = "last_seen_hour"
  case constant
}

/// What both passes of `fit` share.
struct FitSetup: Sendable {
  var selection: AppSelection
  var trainFraction: Double
  var seed: UInt64
  var fitter: HabitFitter
  var evaluation: EvaluationOptions

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

/// One user's fits and scores.
struct UserFit: Sendable {
  struct Pair: Sendable {
    var app: String
    var trainingOpens: Int
    /// One per ``FitPredictor``, in order.
    var scores: [PredictionScore]
  }

  var user: String
  /// nil when the user was skipped.
  var models: ModelFile.UserModels?
  var pairs: [Pair]
}

/// Fits and scores one user (pass 2).
func fitUser(_ u: UserTrace, _ setup: FitSetup, population: HabitModel) -> UserFit {
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
  var appModels: [ModelFile.AppModel] = []
  var pairs: [UserFit.Pair] = []
  for app in apps {
    let sample = HabitSample(trace: u, app: app, from: u.start, to: split)
    let habit = setup.fitter.fit(sample, prior: population)
    let name = u.apps[Int(app)]
    appModels.append(
      ModelFile.AppModel(app: name, habit: habit, lastOpen: lastApp[Int(app)], trainingOpens: trainOpens[Int(app)]))
    func score<P: OpenPredictor>(_ p: P) -> PredictionScore {
      PredictionEvaluation.evaluate(p, trace: u, app: app, from: split, to: u.end, options: setup.evaluation)
    }
    let scores = FitPredictor.allCases.map { kind -> PredictionScore in
      switch kind {
      case .habit: score(habit)
      case .hourOfDay: score(HourOfDayBaseline(fitting: sample))
      case .lastSeenHour: score(LastSeenHourBaseline(fitting: sample))
      case .constant: score(ConstantBaseline(fitting: sample))
      }
    }
    pairs.append(UserFit.Pair(app: name, trainingOpens: trainOpens[Int(app)], scores: scores))
  }
  let models = ModelFile.UserModels(
    user: u.user, timeZone: u.timeZone, splitTime: split, windowEnd: u.end, lastOpenAny: lastAny,
    lastBattery: lastBattery, apps: appModels,
    battery: BatteryModel(fitting: u, from: u.start, to: split),
    network: NetworkModel(fitting: u, from: u.start, to: split))
  return UserFit(user: u.user, models: models, pairs: pairs)
}

/// Pass 2: reads users in batches of `batchUsers`, fits them on `jobs`
/// threads, and hands the results to `body` (with users done and the share
/// of bytes read) in trace order, so output does not depend on `jobs` and
/// memory not on the number of users.
func forEachUserFit(
  tracePath: String, _ setup: FitSetup, population: HabitModel, jobs: Int, batchUsers: Int = 64,
  _ body: (UserFit, Int, Double?) throws -> Void
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
    let results = parallelMap(users.count, jobs: jobs) { fitUser(users[$0], setup, population: population) }
    let fraction = total > 0 ? Double(reader.bytesRead) / Double(total) : nil
    for r in results {
      done += 1
      try body(r, done, fraction)
    }
  }
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

/// Columns of `evaluation.csv`: one row per (user, app, predictor).
enum EvaluationColumn {
  static let names = ["user", "app", "predictor", "train_opens"] + ScoreColumn.allCases.map(\.rawValue)

  static func row(user: String, app: String, predictor: String, trainOpens: Int, score s: PredictionScore) -> String {
    ([CSV.field(user), CSV.field(app), predictor, String(trainOpens)] + ScoreColumn.values(s)).joined(separator: ",") + "\n"
  }
}

/// Columns of `evaluation_overall.csv`: one row per predictor, all test
/// points pooled (AUC from the histogram, ±0.001).
enum OverallColumn {
  static let names = ["predictor", "pairs"] + ScoreColumn.allCases.map(\.rawValue)

  static func row(predictor: String, pairs: Int, score s: PredictionScore) -> String {
    ([predictor, String(pairs)] + ScoreColumn.values(s)).joined(separator: ",") + "\n"
  }
}

/// The overall comparison printed by `fit`.
enum FitTable {
  static func render(_ scores: [PredictionScore], pairs: Int) -> String {
    let header = ["predictor", "pairs", "test h", "opens", "loglik/h", "Brier", "AUC", "log loss"]
    var rows: [[String]] = []
    for (i, s) in scores.enumerated() {
      rows.append([
        FitPredictor.allCases[i].rawValue, String(pairs), fixed(s.hours, 0), String(s.opens),
        fixed(s.logLikelihoodPerHour, 4), fixed(s.brier, 4), fixed(s.auc, 4), fixed(s.logLoss, 4),
      ])
    }
    let widths = header.indices.map { c in ([header[c]] + rows.map { $0[c] }).map(\.count).max() ?? 0 }
    func line(_ cells: [String]) -> String {
      cells.enumerated().map { c, s in
        let pad = String(repeating: " ", count: widths[c] - s.count)
        return c == 0 ? s + pad : pad + s
      }.joined(separator: "  ") + "\n"
    }
    var out = line(header) + rows.map(line).joined()
    let habit = scores[FitPredictor.allCases.firstIndex(of: .habit)!]
    let hod = scores[FitPredictor.allCases.firstIndex(of: .hourOfDay)!]
    let dLL = habit.logLikelihoodPerHour - hod.logLikelihoodPerHour
    func pct(_ x: Double) -> String { (x >= 0 ? "+" : "") + fixed(100 * x, 1) + " %" }
    out += "habit vs hour_of_day: log-lik \(dLL >= 0 ? "+" : "")\(fixed(dLL, 4)) nats/h (\(pct(dLL / abs(hod.logLikelihoodPerHour))))"
    out += ", Brier \(pct(habit.brier / hod.brier - 1)), log loss \(pct(habit.logLoss / hod.logLoss - 1))"
    out += ", AUC \(habit.auc - hod.auc >= 0 ? "+" : "")\(fixed(habit.auc - hod.auc, 4))\n"
    return out
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
