import ArgumentParser
import FetchSupport
import FetchTraces
import Foundation

extension FetchLab {
  /// `fetchlab import-ubiqlog`: derive an open trace from the UbiqLog
  /// Application records (see `UbiqLogAdapter` and `datasets/ubiqlog/README.md`).
  struct ImportUbiqLog: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "import-ubiqlog",
      abstract: "Derive foreground app opens from the UbiqLog Application records and write a canonical trace.",
      discussion: """
        Reads the parsed UbiqLog TSV (.tsv, or .tsv.xz through 'xz -dc'), drops clock-reset rows and \
        background/system processes by name (and, with --behavioural-filter, by their timing), merges each app's chunked records and writes one 'open' \
        per merged record. Times are phone-local wall time encoded as UTC. The output starts with '#' \
        lines carrying the CC BY 4.0 attribution and the options used. The input is not in this repository: \
        datasets/ubiqlog/README.md says where it comes from. For other app-usage logs, use 'fetchlab import-events'.
        Example (the bundled trace):
          fetchlab import-ubiqlog --input ubiqlog_application_parsed.tsv.xz \\
            --out datasets/ubiqlog/ubiqlog-opens.csv
        Example (with the behavioural filter):
          fetchlab import-ubiqlog --input ubiqlog_application_parsed.tsv.xz \\
            --out ubiqlog-cues.csv --behavioural-filter
        """)

    @Option(help: "Parsed UbiqLog TSV (.tsv or .tsv.xz): the 'ubiqlog_application_parsed.tsv.xz' described in datasets/ubiqlog/README.md.", completion: .file(extensions: ["tsv", "xz"]))
    var input: String

    @Option(help: "Output trace (canonical FetchLab CSV).", completion: .trace)
    var out = "datasets/ubiqlog/ubiqlog-opens.csv"

    @OptionGroup(title: "Sessions")
    var sessions: SessionOptions

    @Option(name: .customLong("max-idle-days"), parsing: .unconditional, help: ArgumentHelp("Cut each user's window to the largest block of activity without a gap of more than this many days (0 keeps all).", valueName: "days"))
    var maxIdleDays: Int = 21

    @Flag(
      name: .customLong("behavioural-filter"),
      help: "Also drop processes whose timing marks them as background whatever their name: always running, or started in lockstep with always-running processes (listed on standard error).")
    var behaviouralFilter = false

    @Flag(help: "Also print the statistics next to the published figures (datasets/ubiqlog/README.md), as Markdown.")
    var statistics = false

    func validate() throws {
      guard maxIdleDays >= 0 else { throw ValidationError("--max-idle-days must be at least 0") }
    }

    func run() throws {
      var options = UbiqLogAdapter.Options(
        mergeGap: sessions.mergeGap(default: 60), maximumSession: sessions.maximumSession, maximumIdleDays: maxIdleDays)
      if behaviouralFilter { options.behaviouralFilter = UbiqLogBehaviouralFilter() }
      let adapter = UbiqLogAdapter(options: options)
      let result = try exitOnFormatError { try adapter.read(path: input) }
      for d in result.behaviourDrops { log("dropped by behaviour: \(d)") }
      if !result.usersWithoutOpens.isEmpty {
        log("warning: no opens left for \(result.usersWithoutOpens.joined(separator: ", ")); omitted")
      }
      let inputName = (input as NSString).lastPathComponent
      try writeImportedTrace(result.users, to: out, comments: adapter.commentLines(input: inputName, output: result))
      let stats = UbiqLogAdapter.Statistics(users: result.users)
      print(
        "\(out): \(stats.participants) users, \(stats.activeUserDays) active user-days, \(stats.opens) opens"
          + " (median \(CSV.number(stats.opensPerActiveDay.median, decimals: 1)) per active day) from"
          + " \(result.keptRecords) kept of \(result.rows) rows; dropped \(result.droppedBeforeMinimumYear) before"
          + " \(options.minimumYear), \(result.droppedInconsistentTimes) with inconsistent times,"
          + " \(result.droppedByName) by name" + (behaviouralFilter ? ", \(result.droppedByBehaviour) by behaviour" : ""))
      if statistics { print("\n" + stats.markdownComparison(), terminator: "") }
    }
  }
}
