import ArgumentParser
import FetchBenchmark
import FetchReports
import FetchTraces

extension FetchLab {
  struct Compare: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Compare every policy of a run with a baseline, paired by user; print a table and write paired.csv.",
      discussion: """
        Reads RUN_DIR/summary.csv. For each policy and metric: the per-user difference policy - baseline over the \
        users who have both (a user's apps and replications averaged first; datasets kept apart), its mean with a \
        95% percentile bootstrap CI (users resampled, seeded by the names), wins/losses/ties by user and the \
        two-sided exact sign test. Writes RUN_DIR/paired.csv.
        Example (two metrics against the hourly timer):
          fetchlab compare results/ubiqlog --baseline periodic:1h \\
            --metric mean_age_s --metric energy_j_per_day
        """)

    @Argument(help: "Run directory (written by 'fetchlab run').", completion: .directory)
    var runDir: String

    @Option(name: .long, help: "The policy to compare against, as in summary.csv (e.g. never, periodic:1h).", completion: .policy)
    var baseline: String

    @Option(
      name: .long,
      help: ArgumentHelp(
        "A metric to compare; repeat for several (default: \(PairedComparison.defaultMetrics.map(\.rawValue).joined(separator: ", "))). One of: \(ScoreMetric.allCases.map(\.rawValue).joined(separator: ", ")).",
        valueName: "metric"), completion: .metric)
    var metric: [String] = []

    @Option(name: .long, parsing: .unconditional, help: "Bootstrap resamples.")
    var resamples: Int = Bootstrap.defaultResamples

    func validate() throws {
      guard resamples >= 1 else { throw ValidationError("--resamples must be at least 1") }
      for m in metric where ScoreMetric(rawValue: m) == nil {
        throw ValidationError(
          "unknown metric '\(m)'; known: \(ScoreMetric.allCases.map(\.rawValue).joined(separator: ", "))")
      }
    }

    func run() throws {
      var metrics: [ScoreMetric] = []
      for m in metric.compactMap(ScoreMetric.init(rawValue:)) where !metrics.contains(m) { metrics.append(m) }
      if metrics.isEmpty { metrics = PairedComparison.defaultMetrics }
      // Under the run directory's lock, after an interrupted commit is
      // finished: paired.csv is staged and committed beside the summary it
      // was computed from (docs/reliability.md).
      let dir = try ResultDirectory(path: runDir, role: "run directory", mustExist: true)
      let table = try SummaryTable(path: runDir + "/summary.csv")
      let rows: [PairedDifference]
      do {
        rows = try PairedComparison.compare(table, baseline: baseline, metrics: metrics, resamples: resamples)
      } catch let e as ScoringError {
        throw CommandError(e.description)
      }
      for d in table.datasets where table.values(dataset: d, policy: baseline) == nil {
        log("warning: dataset '\(d)' has no rows for baseline '\(baseline)'; skipped")
      }
      try PairedComparison.write(rows, to: dir.staging + "/paired.csv", runDir: runDir)
      try dir.commit(replacingOnly: true)
      if let w = PairedComparison.smallSampleWarning(rows) { log(w) }
      print(PairedComparison.render(rows, resamples: resamples), terminator: "")
    }
  }
}
