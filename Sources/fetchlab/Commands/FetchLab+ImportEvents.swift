import ArgumentParser
import FetchSupport
import FetchTraces
import Foundation

extension FetchLab {
  /// `fetchlab import-events`: convert an app-usage event log into a
  /// canonical trace (see `EventLogImporter` and docs/own-data.md).
  struct ImportEvents: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "import-events",
      abstract: "Convert an app-usage event log (user, timestamp, app, event) into a canonical trace of opens.",
      discussion: """
        The log is CSV or TSV with a header (tab-separated if the header has a tab). Name its columns with \
        --user-column, --time-column, --app-column and --event-column, and say which event names open an app \
        (--open-event), close it (--close-event) or carry no session (--ignore-event); every option can be \
        repeated. Sessions come from open/close pairs of the same app, or, with --duration-column, from a \
        duration on each open row. Times are Unix seconds, Unix milliseconds or ISO 8601 (--time-unit; auto \
        decides from the first row). Each user's zone comes from --zone-column, else from the offsets of its ISO \
        times (a fixed offset, or --time-zone's IANA zone when it agrees with them), else from --time-zone. The output starts with '#' lines recording the options. See \
        docs/own-data.md for the rules and a worked example.
        Example (an LSApp-style log, tab-separated):
          fetchlab import-events docs/examples/lsapp-sample.tsv --out lsapp-opens.csv \\
            --user-column user_id --time-column timestamp \\
            --app-column app_name --event-column event_type \\
            --open-event Opened --close-event Closed \\
            --ignore-event 'User Interaction' --ignore-event Broken
        Example (CSV with millisecond times and a duration per open):
          fetchlab import-events log.csv --out trace.csv --time-unit ms \\
            --duration-column duration_s
        """)

    @Argument(help: "The event log (CSV or TSV with a header row).")
    var input: String

    @Option(help: "Output trace (canonical FetchLab CSV).")
    var out: String

    @Option(name: .customLong("user-column"), help: "Column holding the user id.")
    var userColumn = "user"

    @Option(name: .customLong("time-column"), help: "Column holding the event time.")
    var timeColumn = "timestamp"

    @Option(name: .customLong("app-column"), help: "Column holding the app name.")
    var appColumn = "app"

    @Option(name: .customLong("event-column"), help: "Column holding the event name.")
    var eventColumn = "event"

    @Option(
      name: .customLong("duration-column"),
      help: "Column holding each open's session length (then close events are not needed).")
    var durationColumn: String?

    @Option(name: .customLong("duration-unit"), help: ArgumentHelp("Unit of the duration column.", valueName: "s|ms"))
    var durationUnit = "s"

    @Option(
      name: .customLong("time-unit"),
      help: ArgumentHelp("How times are written: Unix seconds, Unix milliseconds, ISO 8601, or auto (from the first row).", valueName: "auto|s|ms|iso"))
    var timeUnit = "auto"

    @Option(name: .customLong("open-event"), help: ArgumentHelp("An event name that opens the app (repeat; default: open).", valueName: "name"))
    var openEvents: [String] = []

    @Option(name: .customLong("close-event"), help: ArgumentHelp("An event name that closes the app (repeat; default: close).", valueName: "name"))
    var closeEvents: [String] = []

    @Option(name: .customLong("ignore-event"), help: ArgumentHelp("An event name to skip (repeat).", valueName: "name"))
    var ignoreEvents: [String] = []

    @Flag(name: .customLong("ignore-unknown-events"), help: "Skip event names not listed instead of failing.")
    var ignoreUnknownEvents = false

    @Option(
      name: .customLong("time-zone"),
      parsing: .unconditional, help: ArgumentHelp(
        "The users' time zone (UTC, +01:00 or an IANA name): the zone of ISO times without one, and of users without --zone-column or ISO offsets (an IANA zone that agrees with a user's offsets is kept).",
        valueName: "zone"))
    var timeZone = "UTC"

    @Option(
      name: .customLong("zone-column"),
      help: ArgumentHelp("Column holding each row's time zone (UTC, +HH:MM or an IANA name); a user's zone is its first row's.", valueName: "name"))
    var zoneColumn: String?

    @Option(name: .customLong("max-session"), parsing: .unconditional, help: ArgumentHelp("Cap on a session length.", valueName: "seconds"))
    var maxSession: Double = 1_800

    @Option(name: .customLong("unclosed-session"), parsing: .unconditional, help: ArgumentHelp("Length of a session that is never closed.", valueName: "seconds"))
    var unclosedSession: Double = 0

    @Option(
      name: .customLong("merge-gap"),
      parsing: .unconditional, help: ArgumentHelp("An open less than this long after the same app's session ended continues it (0: never).", valueName: "seconds"))
    var mergeGap: Double = 0

    /// The importer options, or a usage error.
    func options() throws -> EventLogImporter.Options {
      var o = EventLogImporter.Options()
      o.userColumn = userColumn
      o.timeColumn = timeColumn
      o.appColumn = appColumn
      o.eventColumn = eventColumn
      o.durationColumn = durationColumn
      guard let tu = EventLogImporter.TimeUnit(rawValue: timeUnit) else {
        throw ValidationError("--time-unit must be auto, s, ms or iso (found '\(timeUnit)')")
      }
      o.timeUnit = tu
      guard let du = EventLogImporter.TimeUnit(rawValue: durationUnit), du == .seconds || du == .milliseconds else {
        throw ValidationError("--duration-unit must be s or ms (found '\(durationUnit)')")
      }
      o.durationUnit = du
      if !openEvents.isEmpty { o.openEvents = openEvents }
      if !closeEvents.isEmpty { o.closeEvents = closeEvents }
      if durationColumn != nil && closeEvents.isEmpty { o.closeEvents = [] }
      o.ignoredEvents = ignoreEvents
      o.ignoreUnknownEvents = ignoreUnknownEvents
      guard let tz = TraceTimeZone(parsing: timeZone) else {
        throw ValidationError("--time-zone: unknown time zone '\(timeZone)' (use UTC, +HH:MM or an IANA name)")
      }
      o.timeZone = tz
      o.zoneColumn = zoneColumn
      o.maximumSession = maxSession
      o.unclosedSession = unclosedSession
      o.mergeGap = mergeGap
      if let p = o.problem { throw ValidationError(p) }
      return o
    }

    func validate() throws { _ = try options() }

    func run() throws {
      let importer = EventLogImporter(options: try options())
      let result = try exitOnFormatError { try importer.read(path: input) }
      guard !result.users.isEmpty else {
        log("error: \(input): no opens found in \(result.rows) rows (check --open-event and the column options)")
        throw ExitCode.failure
      }
      for w in result.warnings { log("warning: \(w)") }
      if !result.usersWithoutOpens.isEmpty {
        log("warning: no opens for \(result.usersWithoutOpens.joined(separator: ", ")); omitted")
      }
      let comments = ["converted from \((input as NSString).lastPathComponent) by fetchlab import-events"]
        + importer.options.commentLines
      try writeImportedTrace(result.users, to: out, comments: comments)
      let days = result.users.reduce(0.0) { $0 + $1.days }
      print(
        "\(out): \(result.users.count) users, \(CSV.number(days, decimals: 1)) user-days, \(result.opens) opens from"
          + " \(result.rows) rows (times in \(result.timeUnit)); \(result.ignoredRows) ignored rows,"
          + " \(result.mergedOpens) merged opens, \(result.unmatchedCloses) closes without an open,"
          + " \(result.unclosedSessions) sessions never closed, \(result.cappedSessions) capped at"
          + " \(CSV.number(maxSession)) s")
    }
  }
}
