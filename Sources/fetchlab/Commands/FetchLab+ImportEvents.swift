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
        Presets read two collectors' exports as foreground streams (one app in front at a time; a row ends the \
        session before it; launchers, System UI and keyboards excluded, the list printed): AWARE's \
        applications_foreground table (--preset aware; --zone-table timezone.csv gives each device's zone) and \
        Android UsageStatsManager events, one file per device named after it (--preset usagestats). \
        --participants maps devices to participants.
          fetchlab import-events applications_foreground.csv --preset aware \\
            --zone-table timezone.csv --participants devices.csv --out aware.csv
          fetchlab import-events phone-a.csv phone-b.csv --preset usagestats \\
            --out usage.csv
        """)

    @Argument(help: "The event logs (CSV or TSV with a header row; a user's rows may be spread over several).")
    var inputs: [String]

    @Option(help: ArgumentHelp("Read a collector's export: aware (applications_foreground) or usagestats (Android UsageStatsManager events, one file per device).", valueName: "aware|usagestats"))
    var preset: String?

    @Flag(name: .customLong("foreground-stream"), help: "One app is in the foreground at a time: each open ends the session of the app before it (and rows of excluded apps end it without a session).")
    var foregroundStream = false

    @Option(name: .customLong("exclude-app"), help: ArgumentHelp("An app that is not an app a user opens (repeat; replaces the default list of launchers, System UI and keyboards used by presets and --foreground-stream; 'none': exclude nothing).", valueName: "name"))
    var excludeApps: [String] = []

    @Option(help: ArgumentHelp("A CSV file mapping devices to participants (first column the device id, second the participant).", valueName: "file"))
    var participants: String?

    @Option(name: .customLong("zone-table"), help: ArgumentHelp("AWARE's timezone table (timestamp in ms, device_id, timezone): each device's zone.", valueName: "file"))
    var zoneTable: String?

    @Option(help: "Output trace (canonical FetchLab CSV).")
    var out: String

    @Option(name: .customLong("user-column"), help: "Column holding the user id (default user; a preset's otherwise).")
    var userColumn: String?

    @Option(name: .customLong("time-column"), help: "Column holding the event time (default timestamp).")
    var timeColumn: String?

    @Option(name: .customLong("app-column"), help: "Column holding the app name (default app; a preset's otherwise).")
    var appColumn: String?

    @Option(name: .customLong("event-column"), help: "Column holding the event name (default event; a preset's otherwise).")
    var eventColumn: String?

    @Option(
      name: .customLong("duration-column"),
      help: "Column holding each open's session length (then close events are not needed).")
    var durationColumn: String?

    @Option(name: .customLong("duration-unit"), help: ArgumentHelp("Unit of the duration column.", valueName: "s|ms"))
    var durationUnit = "s"

    @Option(
      name: .customLong("time-unit"),
      help: ArgumentHelp("How times are written: Unix seconds, Unix milliseconds, ISO 8601, or auto (from the first row).", valueName: "auto|s|ms|iso"))
    var timeUnit: String?

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

    @Option(
      name: .customLong("unclosed-session"), parsing: .unconditional,
      help: ArgumentHelp("Length of a session that is never closed (default 0).", valueName: "duration"),
      transform: { try durationArgument($0, "--unclosed-session") })
    var unclosedSession: Double = 0

    @OptionGroup(title: "Sessions")
    var sessions: SessionOptions

    /// The importer options, or a usage error.
    func options() throws -> EventLogImporter.Options {
      var o = EventLogImporter.Options()
      if let preset {
        guard let p = EventLogImporter.Preset(rawValue: preset) else {
          throw ValidationError("--preset must be aware or usagestats (found '\(preset)')")
        }
        p.apply(to: &o)
      }
      if let eventColumn, eventColumn == "is_system_app" {
        throw ValidationError(
          "--event-column is_system_app: that column says whether an app came with the phone, not what happened: reading it as "
            + "events drops every system app (Gmail, Chrome, Maps) and ends a session only at the same app's next open; "
            + "AWARE's applications_foreground rows are a foreground stream: use --preset aware")
      }
      if let userColumn { o.userColumn = userColumn }
      if let timeColumn { o.timeColumn = timeColumn }
      if let appColumn { o.appColumn = appColumn }
      if let eventColumn { o.eventColumn = eventColumn }
      if durationColumn != nil { o.durationColumn = durationColumn }
      if let timeUnit {
        guard let tu = EventLogImporter.TimeUnit(rawValue: timeUnit) else {
          throw ValidationError("--time-unit must be auto, s, ms or iso (found '\(timeUnit)')")
        }
        o.timeUnit = tu
      }
      if foregroundStream {
        o.foregroundStream = true
        if preset == nil { o.excludedApps = EventLogImporter.defaultExcludedApps }
      }
      if !excludeApps.isEmpty { o.excludedApps = excludeApps == ["none"] ? [] : excludeApps }
      guard let du = EventLogImporter.TimeUnit(rawValue: durationUnit), du == .seconds || du == .milliseconds else {
        throw ValidationError("--duration-unit must be s or ms (found '\(durationUnit)')")
      }
      o.durationUnit = du
      if !openEvents.isEmpty { o.openEvents = openEvents }
      if !closeEvents.isEmpty { o.closeEvents = closeEvents }
      if durationColumn != nil && closeEvents.isEmpty { o.closeEvents = [] }
      if !ignoreEvents.isEmpty { o.ignoredEvents = ignoreEvents }
      if ignoreUnknownEvents { o.ignoreUnknownEvents = true }
      guard let tz = TraceTimeZone(parsing: timeZone) else {
        throw ValidationError("--time-zone: unknown time zone '\(timeZone)' (\(TraceTimeZone.unknownHint(timeZone)))")
      }
      o.timeZone = tz
      o.zoneColumn = zoneColumn
      o.maximumSession = sessions.maximumSession
      o.unclosedSession = unclosedSession
      o.mergeGap = sessions.mergeGap(default: 0)
      if let participants { o.participants = try exitOnFormatError { try EventLogImporter.readParticipants(path: participants) } }
      if let zoneTable { o.deviceZones = try exitOnFormatError { try EventLogImporter.readAwareZones(path: zoneTable) } }
      if let p = o.problem { throw ValidationError(p) }
      return o
    }

    func validate() throws {
      if participants == nil && zoneTable == nil { _ = try options() }
    }

    func run() throws {
      let importer = EventLogImporter(options: try options())
      let excluded = importer.options.excludedApps
      if !excluded.isEmpty {
        log("excluding \(excluded.count) apps (not apps a user opens; --exclude-app replaces the list): \(excluded.joined(separator: " "))")
      }
      let result = try exitOnFormatError { try importer.read(paths: inputs) }
      let input = inputs.joined(separator: ", ")
      guard !result.users.isEmpty else {
        log("error: \(input): no opens found in \(result.rows) rows (check --open-event and the column options)")
        throw ExitCode.failure
      }
      for w in result.warnings { log("warning: \(w)") }
      if !result.usersWithoutOpens.isEmpty {
        log("warning: no opens for \(result.usersWithoutOpens.joined(separator: ", ")); omitted")
      }
      let comments = ["converted from \(inputs.map { ($0 as NSString).lastPathComponent }.joined(separator: ", ")) by fetchlab import-events"]
        + importer.options.commentLines
      try writeImportedTrace(result.users, to: out, comments: comments)
      let days = result.users.reduce(0.0) { $0 + $1.days }
      print(
        "\(out): \(result.users.count) users, \(CSV.number(days, decimals: 1)) user-days, \(result.opens) opens from"
          + " \(result.rows) rows (times in \(result.timeUnit)); \(result.ignoredRows) ignored rows,"
          + " \(result.mergedOpens) merged opens, \(result.unmatchedCloses) closes without an open,"
          + " \(result.unclosedSessions) sessions never closed, \(result.cappedSessions) capped at"
          + " \(CSV.number(sessions.maximumSession)) s" + (importer.options.foregroundStream ? ", \(result.endedByNextApp) ended by the next app" : "")
          + (excluded.isEmpty ? "" : ", \(result.excludedRows) rows of excluded apps")
          + (result.ambiguousTimes > 0 ? ", \(result.ambiguousTimes) ambiguous local times" : ""))
      print(sessionSummary(result.users, cap: sessions.maximumSession))
    }
  }
}

/// The session lengths of imported traces in words: their count, median,
/// 90th percentile and share at the cap, so that a reading's effect is seen.
func sessionSummary(_ users: [UserTrace], cap: Double) -> String {
  let lengths = users.flatMap { u in u.events.filter { $0.kind == .open }.map(\.value) }.sorted()
  guard !lengths.isEmpty else { return "sessions: none" }
  let atCap = lengths.filter { $0 >= cap }.count
  return "sessions: \(lengths.count), median \(CSV.number(Quantile.type7(sorted: lengths, 0.5), decimals: 1)) s, p90 "
    + "\(CSV.number(Quantile.type7(sorted: lengths, 0.9), decimals: 1)) s, \(atCap) (\(CSV.number(100 * Double(atCap) / Double(lengths.count), decimals: 1)) %) at the cap"
}
