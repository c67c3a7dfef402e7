import ArgumentParser
import FetchBenchmark
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
        Example (the bundled trace, with the evaluation files):
          fetchlab fit --trace datasets/ubiqlog/ubiqlog-opens.csv \\
            --out results/ubiqlog-model.json --report results/ubiqlog-fit
        """)

    @Option(name: .long, help: "Canonical trace file.", completion: .trace)
    var trace: String

    @Option(name: .long, help: ArgumentHelp("Model file to write (JSON).", valueName: "model.json"), completion: .json)
    var out: String

    @Option(name: .long, help: ArgumentHelp("Directory for the evaluation CSVs.", valueName: "dir"), completion: .directory)
    var report: String?

    @Option(name: .long, parsing: .unconditional, help: "Share of each user's window used for training, in (0, 1).")
    var trainFraction: Double = 0.75

    @Option(name: .long, help: "Which apps of each user to model: top:K, min-opens:N (apps with content; /offline adds offline categories) or names:A,B; /except:A,B leaves apps out.")
    var apps: String = "top:3"

    @Option(name: .long, parsing: .unconditional, help: "Seed selecting the population sample.")
    var seed: UInt64 = 1

    @Option(name: .long, parsing: .unconditional, help: "Cap on (user, app) pairs in the population fit (bounds memory).")
    var populationPairs: Int = 128

    @OptionGroup var parallel: JobsOption

    func validate() throws {
      guard trainFraction > 0, trainFraction < 1 else {
        throw ValidationError("--train-fraction must be in (0, 1), got \(trainFraction)")
      }
      guard populationPairs >= 1 else { throw ValidationError("--population-pairs must be at least 1") }
      guard !out.isEmpty else { throw ValidationError("--out must not be empty") }
      do { _ = try AppSelection(parsing: apps) } catch { throw ValidationError(String(describing: error)) }
    }

    func run() throws {
      let started = Date()
      // The report is staged and committed as a whole under its
      // directory's lock, after an interrupted commit there is finished.
      let reportDir = try report.map { try ResultDirectory(path: $0, role: "--report") }
      try reportDir?.refuseOverwriting(inputs: [("--trace", trace), ("--out", out)])
      try OutputPath.checkFileParent(out, role: "--out \(out)")
      let job = FitJob(
        trace: trace, out: out, report: reportDir?.staging, trainFraction: trainFraction, apps: try AppSelection(parsing: apps),
        seed: seed, populationPairs: populationPairs, jobs: parallel.jobs)
      let lines = [FitPass.populationSample: ProgressLine(label: "fit: population sample"), .users: ProgressLine(label: "fit: users")]
      let outcome = try job.run(
        command: CommandLine.arguments.joined(separator: " "), version: fetchLabVersion, started: started,
        progress: { pass, users, f in lines[pass]!.update(done: users, unit: "users", workDone: f) },
        passFinished: { lines[$0]!.finish() })
      // Both or neither: every byte of the model and the report is on disk
      // before the report's commit point, and the model's rename follows it.
      try reportDir?.commit(replacingOnly: true)
      try outcome.commitModel()
      print(outcome.summary, terminator: "")
      let skipped = outcome.skipped
      if !skipped.isEmpty {
        log("fit: skipped \(skipped.count) users with under 1 day of training or 75 min of test: \(skipped.prefix(10).joined(separator: ", "))\(skipped.count > 10 ? ", ..." : "")")
      }
      let elapsed = Date().timeIntervalSince(started)
      log("fit: \(CSV.number(elapsed, decimals: 2)) s (population sample and fit \(CSV.number(outcome.populationSeconds, decimals: 2)) s)")
    }
  }
}
