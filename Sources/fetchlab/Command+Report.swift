import ArgumentParser
import FetchReports
import FetchTraces

extension FetchLab {
  struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Draw a run's charts as SVG and write report.html and report.md.",
      discussion: """
        Reads RUN_DIR/policies.csv, pareto.csv and manifest.json, and opens.csv and fetches.csv when the run wrote \
        them. Writes RUN_DIR/plots/*.svg: staleness vs energy per dataset (mean age against J/day on log axes, 95% \
        CI whiskers, families joined, Pareto frontier), the CDF of the age at open per policy, and opens and fetches \
        by hour of day (UTC); then RUN_DIR/report.html (one self-contained file: summary table with CIs, the charts \
        inlined, the manifest) and RUN_DIR/report.md (table and links to the SVGs). Same run, same bytes.
        Example: fetchlab report results/default
        """)

    @Argument(help: "Run directory (written by 'fetchlab run').")
    var runDir: String

    func run() throws {
      let out = try RunReport.write(runDir: runDir)
      for n in out.notes { log("note: " + n) }
      for f in out.files { print(f) }
    }
  }
}
