import ArgumentParser
import FetchBenchmark
import FetchReports
import FetchSupport
import FetchTraces
import Foundation

extension FetchLab {
  struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Draw a run's charts as SVG and write report.html and report.md.",
      discussion: """
        Reads RUN_DIR/policies.csv, pareto.csv and manifest.json, and opens.csv and fetches.csv when the run wrote \
        them. Writes RUN_DIR/plots/*.svg: staleness vs energy per dataset (mean age against J/day on log axes, 95% \
        CI whiskers, families joined, Pareto frontier), the CDF of the age at open per policy, and opens and fetches \
        by hour of day (each user's local time, from the time zones of the trace recorded in the manifest; UTC \
        when that trace cannot be found or with --no-timeline); then RUN_DIR/report.html (one self-contained file: summary table with CIs, the charts \
        inlined, the manifest) and RUN_DIR/report.md (table and links to the SVGs). Same run, same bytes.
        With calibration.csv in RUN_DIR or RUN_DIR/fit (from 'fetchlab fit --report'): the habit model's \
        reliability diagram against the baselines; a directory holding only a fit report gets that chart alone.
        Timeline: re-reads the trace recorded in the manifest (SHA-256 checked), replays one user with the run's \
        world parameters and seed (replication 0) and draws one local day: network, charging, other radio \
        activity, content updates, opens, and per policy its fetches, the radio tails they caused and the age at \
        each open (plots/timeline-USER-DAY.svg). Without --timeline-* options: the first user's busiest \
        test-window day and up to 4 policies (ios-minimum and oracle first), skipped with a note if the trace \
        is missing.
        With --notebook PATH.ipynb: also a Jupyter notebook (nbformat 4.5) with those tables and charts as \
        outputs, a written interpretation, and code cells that redo the analysis with pandas and matplotlib.
        With --policies: the charts show only the configurations named (the tables keep every one). Without it, \
        a run of more than 12 configurations gets the age CDF and hour-of-day charts of never, periodic:1h, oracle \
        and the headline's policies.
        Example: fetchlab report results/default
        Example (the charts of four configurations):
          fetchlab report results/default \\
            --policies never,periodic:1h,ios-minimum:price=0.1,oracle
        Example (a chosen day's timeline):
          fetchlab report results/default --timeline-dataset synthetic \\
            --timeline-user u00003 --timeline-day 2026-01-24 \\
            --timeline-policy ios-minimum --timeline-policy periodic:1h
        """)

    @Argument(help: "Run directory (written by 'fetchlab run').", completion: .directory)
    var runDir: String

    @Option(name: .customLong("timeline-user"), help: "Timeline: the user (default: the trace's first).")
    var timelineUser: String?

    @Option(name: .customLong("timeline-day"), help: ArgumentHelp("Timeline: the user's local day (default: the busiest test-window day).", valueName: "YYYY-MM-DD"))
    var timelineDay: String?

    @Option(name: .customLong("timeline-policy"), help: ArgumentHelp("Timeline: a policy of the run (repeat; default: up to 4).", valueName: "policy"), completion: .policy)
    var timelinePolicy: [String] = []

    @Option(name: .customLong("timeline-dataset"), help: "Timeline: the dataset of an experiment run (default: the first).")
    var timelineDataset: String?

    @Option(name: .customLong("timeline-app"), help: "Timeline: the app (default: the user's most-opened replayed app).")
    var timelineApp: String?

    @Flag(
      name: .customLong("no-timeline"),
      help: "Do not draw the timeline and read nothing but the run directory (hour-of-day charts in UTC).")
    var noTimeline = false

    @Option(
      name: .customLong("policies"),
      help: ArgumentHelp(
        "Comma-separated policy configurations the charts show, as named in policies.csv (default: all).",
        valueName: "a,b,c"))
    var policies: String?

    @Option(
      help: ArgumentHelp(
        "Also write a Jupyter notebook: the tables, charts and an interpretation as outputs, and code cells that "
          + "redo the analysis from the CSVs with pandas and matplotlib (RUN_DIR relative to the notebook).",
        valueName: "path.ipynb"), completion: .file(extensions: ["ipynb"]))
    var notebook: String?

    @OptionGroup var energyOption: EnergyOption

    func validate() throws {
      let asked = timelineUser != nil || timelineDay != nil || !timelinePolicy.isEmpty || timelineDataset != nil
        || timelineApp != nil
      if noTimeline && asked { throw ValidationError("--no-timeline cannot be combined with --timeline-* options") }
      if let notebook, !notebook.hasSuffix(".ipynb") { throw ValidationError("--notebook must name a .ipynb file") }
      if let policies, chartPolicies(policies).isEmpty { throw ValidationError("--policies names no policy") }
    }

    /// The `--policies` list: comma-separated, blanks trimmed, empty items
    /// dropped; an item `key=value` without `:` continues the configuration
    /// before it (`imp:a=1,b=2` is one configuration).
    func chartPolicies(_ list: String) -> [String] {
      var out: [String] = []
      for item in list.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !item.isEmpty {
        if item.contains("="), !item.contains(":"), let last = out.popLast() {
          out.append(last + "," + item)
        } else {
          out.append(item)
        }
      }
      return out
    }

    func run() throws {
      // The charts, report.html and report.md are staged and swapped in as
      // a whole under the run directory's lock (docs/reliability.md).
      let dir = try ResultDirectory(path: runDir, role: "run directory", mustExist: true)
      if let notebook { try OutputPath.checkFileParent(notebook, role: "--notebook \(notebook)") }
      try checkPoliciesAgainstManifest(runDir: runDir)
      let request = TimelineRequest(
        dataset: timelineDataset, user: timelineUser, day: timelineDay, app: timelineApp, policies: timelinePolicy)
      let options = RunReport.Options(
        timeline: noTimeline ? nil : request, policies: policies.map(chartPolicies), readsTrace: !noTimeline,
        basis: energyOption.energy ?? RunReport.recordedBasis(runDir: runDir) ?? .standard)
      let out: RunReport.Output
      do {
        out = try RunReport.write(runDir: runDir, options: options, into: dir.staging)
      } catch let error as RunReport.PolicySelectionError {
        throw ValidationError("--policies: " + error.description)
      }
      try dir.commit(replacingOnly: true)
      for n in out.notes { log("note: " + n) }
      for f in out.files { print(f) }
      if let notebook { print(try Notebook.write(runDir: runDir, to: notebook, options: options)) }
    }
  }
}
