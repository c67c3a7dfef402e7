import FetchLinearAlgebra
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
  package struct Outcome: Sendable {
    /// The summary and score tables `fit` prints on stdout.
    package var summary: String
    /// Users skipped for too short a training or test window.
    package var skipped: [String]
    /// Seconds of pass 1 (population sample and fit).
    package var populationSeconds: Double
  }

  /// Runs both passes and writes the files (each atomically).
  ///
  /// `command` and `version` go into `manifest.json`; `progress` gets
  /// (pass, users done, share of bytes read), `passFinished` the end of
  /// each pass. Throws ``TraceFormatError`` for an unreadable trace or one
  /// without a usable window.
  package func run(
    command: String, version: String, started: Date = Date(), progress: (FitPass, Int, Double?) -> Void,
    passFinished: (FitPass) -> Void
  ) throws -> Outcome {
    LinearAlgebra.setSingleThreaded()
    let setup = FitSetup(
      selection: apps, trainFraction: trainFraction, seed: seed,
      fitter: HabitFitter(maxPopulationPairs: populationPairs), evaluation: EvaluationOptions(),
      device: DeviceModelOptions())

    // Pass 1: the population sample and models.
    let (samples, devicePoints, tables) = try populationSample(setup) { users, f in
      progress(.populationSample, users, f)
    }
    passFinished(.populationSample)
    guard !samples.isEmpty else {
      throw TraceFormatError(
        file: trace, line: 0, field: "-",
        message: "no user has a usable window: need at least 1 day of training and 75 min of test at --train-fraction \(trainFraction), and an opened app")
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
      throw TraceFormatError(file: trace, line: 0, field: "-", message: "population fit failed: \(error)")
    }
    let populationTime = Date().timeIntervalSince(started)

    // Pass 2: per-user fits and scores, written in trace order.
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
    try perUserDevice?.write(CSV.line(DeviceColumn.names))
    var habit = HabitTotals()
    var device = DeviceTotals()
    var users = 0, pairs = 0, skipped: [String] = []
    try forEachUserFit(
      tracePath: trace, setup, population: population, devicePopulation: devicePopulation, jobs: jobs
    ) { fit, done, f in
      progress(.users, done, f)
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
    passFinished(.users)
    guard users > 0 else {
      throw TraceFormatError(
        file: trace, line: 0, field: "-",
        message: "no user has a usable window (\(skipped.count) skipped: under 1 day of training or 75 min of test)")
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
      try dC.write(CSV.line(["subset", "target", "predictor", "decile", "n", "mean_predicted", "observed"]))
      try dC.write(DeviceOverallColumn.calibration(device))
      let manifest: [String: Any] = [
        "fetchlab_version": version,
        "command": command,
        "trace": ["path": trace, "bytes": traceBytes(trace)],
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
      try m.write(JSONText.pretty(manifest))
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

    return Outcome(
      summary: "\(users) users, \(pairs) (user, app) pairs; population model from \(samples.count) pairs, "
        + "\(population.diagnostics.trainingOpens) opens -> \(out)\n" + FitTable.render(habit, pairs: pairs)
        + DeviceTable.render(device),
      skipped: skipped, populationSeconds: populationTime)
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
