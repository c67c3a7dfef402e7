import FetchModels
import FetchSupport
import FetchTraces
import Foundation

/// The passes of a fit, for progress reports.
package enum FitPass: Sendable {
  /// Pass 1: reading the population sample.
  case populationSample
  /// Pass 2: fitting and scoring each user.
  case users
}

/// `fetchlab fit` as a library call: fits habit, battery and network models
/// per (user, app) of a trace, scores them and the calibrated baselines on
/// held-out data, and writes the model file and (with ``report``) the
/// evaluation CSVs and `manifest.json`. See docs/models.md and the command's
/// help for the method; the command is a shell around ``run(command:version:started:progress:passFinished:)``.
package struct FitJob: Sendable {
  /// The canonical trace file.
  package var trace: String
  /// The model file to write (JSON).
  package var out: String
  /// The directory for the evaluation CSVs, or nil.
  package var report: String?
  /// Share of each user's window used for training, in (0, 1).
  package var trainFraction: Double
  /// Which apps of each user to model.
  package var apps: AppSelection
  /// Seed selecting the population sample.
  package var seed: UInt64
  /// Cap on (user, app) pairs in the population fit.
  package var populationPairs: Int
  /// Worker threads (results do not depend on it).
  package var jobs: Int

  package init(
    trace: String, out: String, report: String?, trainFraction: Double, apps: AppSelection, seed: UInt64,
    populationPairs: Int, jobs: Int
  ) {
    self.trace = trace
    self.out = out
    self.report = report
    self.trainFraction = trainFraction
    self.apps = apps
    self.seed = seed
    self.populationPairs = populationPairs
    self.jobs = jobs
  }

  /// What a finished fit reports.
  package struct Outcome {
    /// The summary and score tables `fit` prints on stdout.
    package var summary: String
    /// Users skipped for too short a training or test window.
    package var skipped: [String]
    /// Seconds of pass 1 (population sample and fit).
    package var populationSeconds: Double
    /// The model file, written in full under its temporary name.
    let model: ModelFile.Writer

    /// Moves the model file into place (one `rename(2)`): the caller does
    /// it after committing the report, so a fit that fails while writing
    /// either leaves both the old model and the old report.
    package func commitModel() throws { try model.commit() }
  }

  /// Runs both passes and writes the files: the report's into ``report``
  /// (committed there), the model under a temporary name, which
  /// ``Outcome/commitModel()`` moves into place.
  ///
  /// `command` and `version` go into `manifest.json`; `progress` gets
  /// (pass, users done, share of bytes read), `passFinished` the end of
  /// each pass. Throws ``TraceFormatError`` for an unreadable trace or one
  /// without a usable window.
  package func run(
    command: String, version: String, started: Date = Date(), progress: (FitPass, Int, Double?) -> Void,
    passFinished: (FitPass) -> Void
  ) throws -> Outcome {
    let setup = FitSetup(
      selection: apps, trainFraction: trainFraction, seed: seed,
      fitter: HabitFitter(maxPopulationPairs: populationPairs), evaluation: EvaluationOptions(),
      device: DeviceModelOptions())

    // Pass 1: the population sample and models.
    let (samples, devicePoints, tables) = try populationSample(setup) { users, f in
      progress(.populationSample, users, f)
    }
    passFinished(.populationSample)
    let (population, devicePopulation) = try fitPopulationModels(
      setup, samples: samples, devicePoints: devicePoints, tables: tables)
    let populationTime = Date().timeIntervalSince(started)

    // Pass 2: per-user fits and scores, written in trace order.
    let files = try openPassTwoFiles(setup, population: population, devicePopulation: devicePopulation)
    var totals = PassTwoTotals()
    try forEachUserFit(
      tracePath: trace, setup, population: population, devicePopulation: devicePopulation, jobs: jobs
    ) { fit, done, f in
      progress(.users, done, f)
      try totals.add(fit, files)
    }
    passFinished(.users)
    guard totals.users > 0 else {
      throw TraceFormatError(
        file: trace, line: 0, field: "-",
        message: "no user has a usable window (\(totals.skipped.count) skipped: under 1 day of training or 75 min of test)")
    }

    if let report, let perPair = files.perPair, let perUserDevice = files.perUserDevice {
      let overall = try writeOverall(report, totals)
      // Everything is written before anything is committed: the model
      // under its temporary name (its hash goes into the report's
      // manifest), the report's files into its staging directory; the
      // outcome's commitModel() moves the model into place after the
      // report's commit.
      try files.model.prepare()
      var manifest = manifestFields(
        command: command, version: version, started: started, setup: setup, totals: totals,
        populationSample: samples.count)
      manifest["model_sha256"] = files.model.sha256
      let m = try AtomicTextFile(path: report + "/manifest.json")
      try m.write(JSONText.pretty(manifest))
      try perPair.commit()
      try perUserDevice.commit()
      for f in overall { try f.commit() }
      try m.commit()
    } else {
      try files.model.prepare()
    }

    return Outcome(
      summary: "\(totals.users) users, \(totals.pairs) (user, app) pairs; population model from \(samples.count) pairs, "
        + "\(population.diagnostics.trainingOpens) opens -> \(out)\n" + FitTable.render(totals.habit, pairs: totals.pairs)
        + DeviceTable.render(totals.device),
      skipped: totals.skipped, populationSeconds: populationTime, model: files.model)
  }

  /// The fields of the report's `manifest.json`; `elapsed_s` is the time
  /// since `started` now.
  private func manifestFields(
    command: String, version: String, started: Date, setup: FitSetup, totals: PassTwoTotals, populationSample: Int
  ) -> [String: Any] {
    [
      "fetchlab_version": version,
      "command": command,
      "trace": ["path": trace, "bytes": traceBytes(trace)],
      "model": out,
      "seed": seed,
      "apps": setup.selection.description,
      "train_fraction": trainFraction,
      "counts": [
        "users": totals.users, "pairs": totals.pairs, "skipped_users": totals.skipped.count,
        "population_pairs": populationSample, "device_users": totals.device.users,
      ],
      "logging_gap_h": LoggingGaps.defaultMinimumSeconds / 3600,
      "jobs": jobs,
      "started_at": ISO8601DateFormatter().string(from: started),
      "elapsed_s": (Date().timeIntervalSince(started) * 1000).rounded() / 1000,
    ]
  }

  /// Fits the population habit model and the population device models
  /// with their hour-of-day priors; an empty sample or a failed fit is an
  /// error naming the trace.
  private func fitPopulationModels(
    _ setup: FitSetup, samples: [HabitSample], devicePoints: [DeviceTarget: [DevicePoint]], tables: DeviceTables
  ) throws -> (HabitModel, PopulationDevice) {
    guard !samples.isEmpty else {
      throw TraceFormatError(
        file: trace, line: 0, field: "-",
        message: "no user has a usable window: need at least 1 day of training and 75 min of test at --train-fraction \(trainFraction), and an opened app")
    }
    do {
      let population = try setup.fitter.fitPopulation(samples)
      let devicePopulation = PopulationDevice(
        models: try DeviceModels.fitPopulation(devicePoints, options: setup.device),
        batteryPrior: BatteryModel.hourOfDayShares(charging: tables.charging, total: tables.total),
        networkPrior: NetworkModel.hourOfDayShares(tables.network))
      return (population, devicePopulation)
    } catch {
      throw TraceFormatError(file: trace, line: 0, field: "-", message: "population fit failed: \(error)")
    }
  }

  /// The files pass 2 writes as it goes: the model file, and with
  /// ``report`` the per-pair and per-user evaluation CSVs.
  private struct PassTwoFiles {
    var model: ModelFile.Writer
    var perPair: AtomicTextFile?
    var perUserDevice: AtomicTextFile?
  }

  /// Opens the model file (its header holds the options and the
  /// population models) and, with ``report``, creates the report folder
  /// and starts the evaluation CSVs with their header rows.
  private func openPassTwoFiles(
    _ setup: FitSetup, population: HabitModel, devicePopulation: PopulationDevice
  ) throws -> PassTwoFiles {
    let header = ModelFile(
      options: .init(
        apps: setup.selection.description, seed: seed, populationPairs: populationPairs,
        binSeconds: setup.fitter.binSeconds, shapeRidge: setup.fitter.shapeRidge,
        interceptRidge: setup.fitter.interceptRidge, evaluation: setup.evaluation, device: setup.device),
      trainFraction: trainFraction, trace: .init(path: trace, bytes: traceBytes(trace)), population: population,
      devicePopulation: devicePopulation.models)
    if let report { try FileManager.default.createDirectory(atPath: report, withIntermediateDirectories: true) }
    let modelWriter = try ModelFile.Writer(path: out, header: header)
    let perPair = try report.map { try AtomicTextFile(path: $0 + "/evaluation.csv") }
    try perPair?.write(CSV.line(EvaluationColumn.names))
    let perUserDevice = try report.map { try AtomicTextFile(path: $0 + "/device_evaluation.csv") }
    try perUserDevice?.write(CSV.line(DeviceEvaluationColumn.names))
    return PassTwoFiles(model: modelWriter, perPair: perPair, perUserDevice: perUserDevice)
  }

  /// Pass 2's running totals.
  private struct PassTwoTotals {
    var habit = HabitTotals()
    var device = DeviceTotals()
    var users = 0
    var pairs = 0
    /// Users without a usable window.
    var skipped: [String] = []

    /// Adds one user's fit and writes its models and evaluation rows.
    mutating func add(_ fit: UserFit, _ files: PassTwoFiles) throws {
      guard let models = fit.models else {
        skipped.append(fit.user)
        return
      }
      users += 1
      try files.model.append(models)
      for pair in fit.pairs {
        pairs += 1
        habit.add(pair)
        for subset in FitSubset.allCases {
          for (i, score) in pair.scores[subset.index].enumerated() {
            try files.perPair?.write(
              EvaluationColumn.row(
                user: fit.user, app: pair.app, predictor: FitPredictor.allCases[i].rawValue, subset: subset,
                trainOpens: pair.trainingOpens, score: score))
          }
        }
      }
      if let d = fit.device {
        device.add(d)
        try files.perUserDevice?.write(DeviceEvaluationColumn.rows(user: fit.user, d))
      }
    }
  }

  /// Writes (uncommitted) the overall scores and calibration tables of the
  /// habit predictors and the device models into `report`, in commit order.
  private func writeOverall(_ report: String, _ totals: PassTwoTotals) throws -> [AtomicTextFile] {
    let habit = totals.habit, device = totals.device
    let o = try AtomicTextFile(path: report + "/evaluation_overall.csv")
    try o.write(CSV.line(OverallColumn.names))
    for subset in FitSubset.allCases {
      for (i, s) in habit.overall[subset.index].enumerated() {
        try o.write(
          OverallColumn.row(
            predictor: FitPredictor.allCases[i].rawValue, subset: subset, pairs: totals.pairs, score: s,
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
    try dC.write(CSV.line(["subset", "target", "predictor", "decile", "n", "mean_predicted", "observed"]))
    try dC.write(DeviceOverallColumn.calibration(device))
    return [o, c, dO, dC]
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
    let total = traceBytes(trace)
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
