import FetchSupport
import Foundation

/// Converts an app-usage event log (one row per event: user, timestamp, app,
/// event) into canonical traces of `open` events.
///
/// The input is comma- or tab-separated text with a header row (the
/// delimiter is the header's: a tab if it has one, else a comma; RFC 4180
/// quotes allowed within a line; a UTF-8 byte-order mark is skipped).
/// ``Options`` name the columns and say which event names open an app, close
/// it, or carry no session information. Sessions come either from
/// **pairs** (an open event, then the same app's close event) or from a
/// **duration column** on each open row.
///
/// Rules, per user and app, after sorting each user's rows by time (ties
/// keep file order):
/// - an open starts a session; the app's next close ends it (session length
///   = close − open, capped at ``Options/maximumSession``);
/// - an open that arrives while the app's session is still open (no close
///   in between) ends that session at the new open and starts another;
///   with ``Options/mergeGap`` > 0, an open less than that many seconds
///   after the app's previous session ended continues that session instead
///   (logs that write "Opened" again on every return to an app);
/// - a session never closed lasts ``Options/unclosedSession`` seconds;
/// - a close without an open session is counted (``Output/unmatchedCloses``)
///   and otherwise ignored;
/// - ignored events (``Options/ignoredEvents``) are skipped; any other event
///   name is an error naming file, line and field, unless
///   ``Options/ignoreUnknownEvents``.
///
/// Times: Unix seconds, Unix milliseconds, or ISO 8601 (``TimeUnit``); one
/// unit for the whole log (a row in milliseconds that reads as a date
/// before 1973-03-03 looks like seconds and is refused, as is a row in
/// seconds past 2100 that looks like milliseconds). An ISO time without a
/// zone is wall-clock time in its row's ``Options/zoneColumn`` zone, else
/// in ``Options/timeZone``: a wall time that does not exist there (the
/// hour skipped when daylight saving time starts) is refused, and one that
/// occurs twice (the hour repeated when it ends) is read as the first and
/// warned about, with the line. Each
/// user's window runs from the local midnight before the first row to the
/// local midnight after the last row or session end, so day boundaries and
/// hour-of-day statistics are the user's.
///
///     var o = EventLogImporter.Options()
///     o.userColumn = "user_id"; o.appColumn = "app_name"; o.eventColumn = "event_type"
///     o.openEvents = ["Opened"]; o.closeEvents = ["Closed"]; o.ignoredEvents = ["User Interaction", "Broken"]
///     let out = try EventLogImporter(options: o).read(path: "lsapp.tsv")
///
/// - Complexity: O(r log r) time and O(r) memory for r rows (every user's
///   rows are held until the end, because a log need not group them).
package struct EventLogImporter: Sendable {
  /// How the time column is written.
  package enum TimeUnit: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Seconds since 1970-01-01 UTC (decimals allowed).
    case seconds = "s"
    /// Milliseconds since 1970-01-01 UTC.
    case milliseconds = "ms"
    /// ISO 8601 date-time (`2018-01-16 06:01:05`, `2026-01-05T08:00:00Z`, `...+01:00`).
    case iso8601 = "iso"
    /// Decided from the first data row: ISO 8601 if it parses as one, else
    /// milliseconds when the number is at least 10¹¹ (no Unix time in
    /// seconds before the year 5138 is), else seconds.
    case auto
    package var description: String { rawValue }
  }

  /// Column names, event names and session rules.
  package struct Options: Sendable, Equatable {
    /// The user column; `nil`: each file is one user, named by the file's
    /// name without its extension (a collector that writes a file per
    /// device), mapped through ``participants`` when that is set.
    package var userColumn: String? = "user"
    package var timeColumn = "timestamp"
    package var appColumn = "app"
    /// The event column; `nil`: every row is an open (a foreground stream
    /// such as AWARE's, ``foregroundStream``).
    package var eventColumn: String? = "event"
    /// One app is in the foreground at a time: an open ends the session of
    /// the app in front before it (counted in ``Output/endedByNextApp``), a
    /// repeated open of the app in front continues its session, and a row
    /// of an ``excludedApps`` app ends the session in front and opens none.
    package var foregroundStream = false
    /// Apps that are not apps a user opens (launchers, System UI,
    /// keyboards): their rows make no session (``Output/excludedRows``).
    package var excludedApps: [String] = []
    /// Device id (the user column, or the file's name) → participant id;
    /// empty: ids are kept. A device missing from a non-empty map is an error.
    package var participants: [String: String] = [:]
    /// Each device's zone from a collector's zone table (AWARE's
    /// `timezone`), by device id, sorted by time: the zone of a user is the
    /// one in effect at its first row (``EventLogImporter`` explains).
    package var deviceZones: [String: [ZoneChange]] = [:]
    /// When set, each open row carries its session length in this column
    /// (in ``durationUnit``) and close events are not needed.
    package var durationColumn: String? = nil
    package var durationUnit: TimeUnit = .seconds
    package var timeUnit: TimeUnit = .auto
    /// Event names that mean the user opened the app (compared exactly,
    /// after trimming spaces).
    package var openEvents: [String] = ["open"]
    /// Event names that end the app's session.
    package var closeEvents: [String] = ["close"]
    /// Event names skipped without effect.
    package var ignoredEvents: [String] = []
    /// Skip every event name not listed above instead of failing.
    package var ignoreUnknownEvents = false
    /// Time zone of the users: used for ISO times without a zone and the
    /// window's midnights, and written to the `begin` rows, unless a user's
    /// zone comes from ``zoneColumn`` or the offsets of its ISO times
    /// (``EventLogImporter`` explains the choice).
    package var timeZone: TraceTimeZone = .utc
    /// When set, the column naming each row's time zone (an IANA name,
    /// `UTC` or `±HH:MM`): each row's ISO times without an offset are read
    /// in its own zone, and the trace's zone of a user (its days and hours)
    /// is its first row's, with a warning when a later row names another.
    package var zoneColumn: String? = nil
    /// Cap on a session, s; in (0, 86,400].
    package var maximumSession = 1_800.0
    /// Length of a session that is never closed, s; in [0, maximumSession].
    package var unclosedSession = 0.0
    /// An open less than this many seconds after the app's previous session
    /// ended continues that session; ≥ 0 (0: never).
    package var mergeGap = 0.0

    package init() {}

    /// The options as `#` comment lines for a converted trace.
    package var commentLines: [String] {
      let duration = (durationColumn.map { " duration=\($0) (\(durationUnit))" } ?? "")
        + (zoneColumn.map { " zone=\($0)" } ?? "")
      let columns = "event-log import: columns user=\(userColumn ?? "(file name)") time=\(timeColumn) app=\(appColumn)"
        + " event=\(eventColumn ?? "(every row opens)")" + duration + " time-unit=\(timeUnit)"
        + (foregroundStream ? " foreground-stream" : "")
      let close = closeEvents.isEmpty ? "-" : closeEvents.joined(separator: " | ")
      let ignored = (ignoredEvents.isEmpty ? "-" : ignoredEvents.joined(separator: " | "))
        + (ignoreUnknownEvents ? " and every other name" : "")
      let events =
        eventColumn == nil
        ? "events: every row is an open (no event column)"
        : "open events: " + openEvents.joined(separator: " | ") + "; close events: " + close + "; ignored: " + ignored
      let sessions = "time zone \(timeZone); max session \(CSV.number(maximumSession)) s; unclosed session "
        + CSV.number(unclosedSession) + " s; merge gap " + CSV.number(mergeGap) + " s"
      let excluded = excludedApps.isEmpty ? [] : ["excluded apps: " + excludedApps.joined(separator: " ")]
      return [columns, events, sessions] + excluded
    }

    /// Why these options cannot be used, or `nil`.
    package var problem: String? {
      if openEvents.isEmpty && eventColumn != nil { return "at least one open event name is needed" }
      let all = openEvents + closeEvents + ignoredEvents
      if Set(all).count != all.count { return "an event name is listed twice (open, close and ignored events must differ)" }
      if !(maximumSession > 0 && maximumSession <= 86_400) { return "the maximum session must be in (0, 86400] s" }
      if !(unclosedSession >= 0 && unclosedSession <= maximumSession) {
        return "the unclosed-session length must be in [0, maximum session]"
      }
      if !(mergeGap.isFinite && mergeGap >= 0) { return "the merge gap must be a number ≥ 0" }
      if durationUnit == .iso8601 || durationUnit == .auto { return "durations are in s or ms" }
      return nil
    }
  }

  package var options: Options

  package init(options: Options = Options()) { self.options = options }

  enum Kind { case open, close, ignored, excluded }

  struct Row {
    var time: Double
    var app: Int32
    var kind: Kind
    var duration: Double
    var line: Int
    /// The offset of an ISO time with one, s east of UTC (else ``noOffset``).
    var offset: Int32
  }

  /// ``Row/offset`` of a time without a written offset.
  static let noOffset = Int32.min

  struct User {
    var id: String
    var apps = AppNames()
    var rows: [Row] = []
    var first = Double.infinity
    var last = -Double.infinity
    /// The zone named by ``Options/zoneColumn`` on the user's first row,
    /// and whether a later row named another (warned once).
    var zone: TraceTimeZone? = nil
    var zoneChanged = false
    /// Whether an ambiguous local time of the user was warned about.
    var ambiguityWarned = false
    /// The device of the user's first row (``Options/deviceZones``).
    var device = ""

    /// Adds a row, widening the span of the user's times.
    mutating func add(_ row: Row) {
      rows.append(row)
      first = min(first, row.time)
      last = max(last, row.time)
    }
  }

  /// Reads the log at `path` and builds the traces.
  ///
  /// - Throws: ``TraceFormatError`` naming file, line and field: a missing
  ///   column, a malformed or implausible time, an unknown event name, a
  ///   line over ``ResourceLimits/maxLineBytes``, a user with more rows than
  ///   ``ResourceLimits/maxEventsPerUser``, invalid options (line 0).
  package func read(path: String, limits: ResourceLimits = ResourceLimits()) throws -> Output {
    try read(paths: [path], limits: limits)
  }

  /// Reads the logs at `paths` (each with its header; a user's rows may
  /// be spread over several) and builds the traces.
  package func read(paths: [String], limits: ResourceLimits = ResourceLimits()) throws -> Output {
    let first = paths.first ?? "-"
    if let p = options.problem { throw TraceFormatError(file: first, line: 0, field: "-", message: p) }
    var rows = LogRows(unit: options.timeUnit, clock: LocalClock(options.timeZone), kinds: eventKinds)
    rows.excluded = Set(options.excludedApps)
    for path in paths {
      let fd = open(path, O_RDONLY)
      guard fd >= 0 else {
        throw TraceFormatError(file: path, line: 0, field: "-", message: "cannot open: \(String(cString: strerror(errno)))")
      }
      defer { close(fd) }
      // Records, not lines: a quoted field may hold a line break.
      let input = LogInput(path: path, reader: LineReader(fd: fd, maxLineBytes: limits.maxLineBytes, quotedLineBreaks: true))
      let columns = try readHeader(input)
      rows.fileUser = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
      while let line = try input.nextLine() {
        if line.allSatisfy({ $0 == 32 || $0 == 9 }) { continue }
        try addRow(line, columns, input, limits: limits, into: &rows)
      }
    }
    rows.out.timeUnit = rows.unit == .auto ? options.timeUnit : rows.unit
    return finish(rows, path: first)
  }

  /// The log's records with the line number of the last one, for errors.
  private final class LogInput {
    let path: String
    let reader: LineReader
    var lineNumber = 0

    init(path: String, reader: LineReader) {
      self.path = path
      self.reader = reader
    }

    func fail(_ field: String, _ message: String) -> TraceFormatError {
      TraceFormatError(file: path, line: lineNumber, field: field, message: message)
    }

    /// The next record without its line end, or `nil` at the end of the file.
    func nextLine() throws -> [UInt8]? {
      do {
        guard let r = try reader.next() else { return nil }
        lineNumber = reader.line
        return Array(r)
      } catch let f as LineReader.Failure {
        throw TraceFormatError(file: path, f, hint: ResourceLimits.lineLimitHint)
      }
    }
  }

  /// The header's names, its delimiter and the columns the options name.
  private struct LogColumns {
    var names: [String]
    var delimiter: UInt8
    var time, app: Int
    var user, event, duration, zone: Int?
  }

  /// Reads the header (the first non-empty record; a UTF-8 byte-order mark
  /// is skipped): its delimiter, a tab if it has one, else a comma, and the
  /// columns the options name.
  private func readHeader(_ input: LogInput) throws -> LogColumns {
    var header: [UInt8]? = nil
    while let l = try input.nextLine() {
      if !l.isEmpty { header = l; break }
    }
    guard var headerBytes = header else { throw input.fail("-", "empty file: no header row") }
    if headerBytes.starts(with: [0xEF, 0xBB, 0xBF]) { headerBytes.removeFirst(3) }
    if headerBytes.contains(13) { throw input.fail("-", TraceFormatError.crLineEnds) }
    let delimiter: UInt8 = headerBytes.contains(9) ? 9 : 44
    guard let headerFields = CSV.split(headerBytes, delimiter: delimiter) else {
      throw input.fail("-", "unterminated quoted field in the header")
    }
    let names = try headerFields.map { f -> String in
      guard let s = String(validating: f, as: UTF8.self) else { throw input.fail("-", "header is not valid UTF-8") }
      return s.trimmingCharacters(in: .whitespaces)
    }
    func column(_ name: String, _ role: String) throws -> Int {
      guard let i = names.firstIndex(of: name) else {
        var found = names.joined(separator: ", ")
        if found.count > 200 { found = found.prefix(200) + "..." }
        throw input.fail(name, "no \(role) column '\(name)' in the header (found: \(escapedName(found))); name it with --\(role)-column")
      }
      return i
    }
    let userCol = try options.userColumn.map { try column($0, "user") }
    let timeCol = try column(options.timeColumn, "time")
    let appCol = try column(options.appColumn, "app")
    let eventCol = try options.eventColumn.map { try column($0, "event") }
    let durationCol = try options.durationColumn.map { try column($0, "duration") }
    let zoneCol = try options.zoneColumn.map { try column($0, "zone") }
    return LogColumns(
      names: names, delimiter: delimiter, time: timeCol, app: appCol, user: userCol, event: eventCol,
      duration: durationCol, zone: zoneCol)
  }

  /// The kind of each event name the options list.
  private var eventKinds: [String: Kind] {
    var kinds: [String: Kind] = [:]
    for e in options.openEvents { kinds[e] = .open }
    for e in options.closeEvents { kinds[e] = .close }
    for e in options.ignoredEvents { kinds[e] = .ignored }
    return kinds
  }

  /// The users and counts of a read in progress.
  struct LogRows {
    var out = Output()
    var users: [User] = []
    var userIndex: [String: Int] = [:]
    /// The time unit (decided at the first row under ``TimeUnit/auto``).
    var unit: TimeUnit
    /// The line of the first time, which decided ``unit`` under ``TimeUnit/auto``.
    var unitLine = 0
    /// The clock of ``Options/timeZone``.
    var clock: LocalClock
    /// The zones of ``Options/zoneColumn`` by their text (an index into
    /// `zoneList` and `clocks`), parsed once.
    var zones: [String: Int] = [:]
    var zoneList: [TraceTimeZone] = []
    var clocks: [LocalClock] = []
    /// ``Options/excludedApps``.
    var excluded: Set<String> = []
    /// The user of the file being read when there is no user column: its name without extension.
    var fileUser = ""
    let kinds: [String: Kind]

    init(unit: TimeUnit, clock: LocalClock, kinds: [String: Kind]) {
      self.unit = unit
      self.clock = clock
      self.kinds = kinds
    }

    /// The index of the user `id`, added at its first row.
    mutating func user(_ id: String) -> Int {
      if let i = userIndex[id] { return i }
      let u = users.count
      userIndex[id] = u
      users.append(User(id: id))
      return u
    }
  }

  /// Reads one data record into `s`: its event kind, user and app names,
  /// duration, zone and time.
  private func addRow(
    _ line: [UInt8], _ c: LogColumns, _ input: LogInput, limits: ResourceLimits, into s: inout LogRows
  ) throws {
    let names = c.names
    guard let fields = CSV.split(line, delimiter: c.delimiter) else {
      throw input.fail("-", "unterminated quoted field")
    }
    guard fields.count == names.count else {
      throw input.fail("-", "\(fields.count) fields, but the header has \(names.count)")
    }
    s.out.rows += 1
    func text(_ i: Int) throws -> String {
      guard let s = String(validating: fields[i], as: UTF8.self) else { throw input.fail(names[i], "not valid UTF-8") }
      return s.trimmingCharacters(in: .whitespaces)
    }
    var kind = try c.event.map { e in try eventKind(text(e), kinds: s.kinds) { input.fail(names[e], $0) } } ?? .open
    if kind == .ignored {
      s.out.ignoredRows += 1
      return
    }
    let userField = c.user.map { names[$0] } ?? "-"
    let device = try c.user.map { try text($0) } ?? s.fileUser
    guard !device.isEmpty else { throw input.fail(userField, "empty user id") }
    var userID = device
    if !options.participants.isEmpty {
      guard let p = options.participants[device] else {
        throw input.fail(
          userField, "device '\(escapedName(String(device.prefix(80))))' is not in the participant map; add it, or leave the map out to keep device ids")
      }
      userID = p
    }
    let appName = try text(c.app)
    guard !appName.isEmpty else { throw input.fail(names[c.app], "empty app name") }
    for (name, field, what) in [(userID, userField, "user id"), (appName, names[c.app], "app name")] {
      if let p = TraceReader.nameProblem(name, bytes: name.utf8.count, what: what) { throw input.fail(field, p) }
    }
    if s.excluded.contains(appName) {
      s.out.excludedRows += 1
      guard options.foregroundStream else { return }
      kind = .excluded
    }
    var duration = 0.0
    if let durationCol = c.duration, kind == .open {
      let d = try text(durationCol)
      guard let x = DecimalText.finite(d), x >= 0 else {
        throw input.fail(names[durationCol], "expected a duration ≥ 0 in \(options.durationUnit == .milliseconds ? "ms" : "s"), found '\(d.prefix(40))'")
      }
      duration = options.durationUnit == .milliseconds ? x / 1000 : x
    }

    let u = s.user(userID)
    if s.users[u].rows.isEmpty { s.users[u].device = device }
    let zone = try c.zone.map { zoneCol in
      try EventLogImporter.zoneIndex(try text(zoneCol), in: &s) { input.fail(names[zoneCol], $0) }
    }
    let timeText = try text(c.time)
    if s.unit == .auto {
      s.unit = EventLogImporter.guessUnit(timeText)
      s.unitLine = input.lineNumber
    }
    var offset: Int? = nil
    var ambiguous = false
    let decided = options.timeUnit == .auto ? " (the unit of the log's first time, line \(s.unitLine))" : ""
    let fail = { (m: String) in input.fail(names[c.time], m) }
    let time =
      if let zone {
        try EventLogImporter.time(
          timeText, unit: s.unit, decided: decided, zone: s.zoneList[zone], clock: &s.clocks[zone], offset: &offset,
          ambiguous: &ambiguous, fail: fail)
      } else {
        try EventLogImporter.time(
          timeText, unit: s.unit, decided: decided, zone: options.timeZone, clock: &s.clock, offset: &offset,
          ambiguous: &ambiguous, fail: fail)
      }
    if let zone {
      EventLogImporter.noteZone(s.zoneList[zone], at: time, of: &s.users[u], warnings: &s.out.warnings) {
        input.fail(names[c.zone ?? 0], $0)
      }
    }
    if ambiguous {
      s.out.ambiguousTimes += 1
      if !s.users[u].ambiguityWarned {
        s.users[u].ambiguityWarned = true
        let z = zone.map { s.zoneList[$0] } ?? options.timeZone
        s.out.warnings.append(
          input.fail(
            names[c.time],
            "user '\(escapedName(userID))': local time '\(escapedName(String(timeText.prefix(40))))' occurs twice in \(z) "
              + "(the hour repeated when daylight saving time ends); read as the first, \(TimeText.isoUTC(time)) "
              + "(the import's summary counts every such row; add offsets to the times to say which)"
          ).description)
      }
    }
    guard s.users[u].rows.count < limits.maxEventsPerUser else {
      throw input.fail(userField, "user '\(userID)' has more than \(limits.maxEventsPerUser) rows (FETCHLAB_MAX_EVENTS_PER_USER)")
    }
    let app = s.users[u].apps.add(appName)
    s.users[u].add(
      Row(time: time, app: app, kind: kind, duration: duration, line: input.lineNumber, offset: offset.map(Int32.init) ?? EventLogImporter.noOffset))
  }

  /// The kind of event `name`; `fail` builds the error for an unknown one.
  private func eventKind(_ name: String, kinds: [String: Kind], fail: (String) -> TraceFormatError) throws -> Kind {
    if let k = kinds[name] { return k }
    if options.ignoreUnknownEvents { return .ignored }
    throw fail(
      "unknown event '\(name)' (open: \(options.openEvents.joined(separator: ", ")); close: "
        + "\(options.closeEvents.isEmpty ? "none" : options.closeEvents.joined(separator: ", "))); map it with "
        + "--open-event, --close-event or --ignore-event, or pass --ignore-unknown-events")
  }

  /// The traces of the users read, in order of first appearance, added to the counts.
  private func finish(_ rows: LogRows, path: String) -> Output {
    var out = rows.out
    for user in rows.users {
      let zone = self.zone(of: user, path: path, warnings: &out.warnings)
      if let trace = trace(for: user, zone: zone, counts: &out) {
        out.opens += trace.events.count
        out.users.append(trace)
      } else {
        out.usersWithoutOpens.append(user.id)
      }
    }
    return out
  }

  /// One user's sessions as a trace (`nil` without opens).
  private func trace(for user: User, zone: TraceTimeZone, counts out: inout Output) -> UserTrace? {
    var clock = LocalClock(zone)
    let rows = user.rows.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
    let appCount = user.apps.count
    // The app's current session: index into `sessions`, and whether it is still open.
    var current = [Int](repeating: -1, count: appCount)
    var isOpen = [Bool](repeating: false, count: appCount)
    var sessions: [(time: Double, app: Int32, end: Double)] = []
    var last = user.last
    func close(_ a: Int, at t: Double) {
      sessions[current[a]].end = t
      isOpen[a] = false
    }
    // The app in front (``Options/foregroundStream``), -1 for none.
    var front = -1
    for r in rows {
      let a = Int(r.app)
      if options.foregroundStream, r.kind == .open || r.kind == .excluded, front >= 0, front != a || r.kind == .excluded {
        if isOpen[front] {
          close(front, at: r.time)
          out.endedByNextApp += 1
        }
        front = -1
      }
      switch r.kind {
      case .ignored, .excluded:
        break
      case .close:
        if current[a] >= 0 && isOpen[a] { close(a, at: r.time) } else { out.unmatchedCloses += 1 }
        if front == a { front = -1 }
      case .open:
        if options.foregroundStream { front = a }
        if current[a] >= 0 && isOpen[a] && options.foregroundStream {  // the app in front again: one session
          out.mergedOpens += 1
          continue
        }
        if current[a] >= 0 && isOpen[a] {
          if options.mergeGap > 0 {  // a repeated open inside the session continues it
            out.mergedOpens += 1
            continue
          }
          close(a, at: r.time)
        } else if current[a] >= 0, options.mergeGap > 0, r.time - sessions[current[a]].end < options.mergeGap {
          out.mergedOpens += 1
          isOpen[a] = options.durationColumn == nil
          if options.durationColumn != nil { sessions[current[a]].end = max(sessions[current[a]].end, r.time + r.duration) }
          continue
        }
        current[a] = sessions.count
        if options.durationColumn != nil {
          sessions.append((r.time, r.app, r.time + r.duration))
        } else {
          sessions.append((r.time, r.app, r.time))
          isOpen[a] = true
        }
      }
    }
    for a in 0..<appCount where current[a] >= 0 && isOpen[a] {
      out.unclosedSessions += 1
      sessions[current[a]].end = sessions[current[a]].time + options.unclosedSession
    }
    guard !sessions.isEmpty else { return nil }
    sessions.sort { $0.time < $1.time }  // stable: ties keep opening order
    var order = FirstOpenOrder(names: user.apps.names)
    var events: [TraceEvent] = []
    events.reserveCapacity(sessions.count)
    for s in sessions {
      let app = order(Int(s.app))
      // To the millisecond: a difference of two times in ms read as
      // seconds carries binary noise (294.84999990463257).
      var length = ((s.end - s.time) * 1000).rounded() / 1000
      if length > options.maximumSession {
        length = options.maximumSession
        out.cappedSessions += 1
      }
      last = max(last, s.time + length)
      events.append(TraceEvent(time: s.time, kind: .open, app: app, value: length))
    }
    let start = EventLogImporter.localMidnight(atOrBefore: user.first, clock: &clock)
    var end = EventLogImporter.localMidnight(atOrBefore: last, clock: &clock) + 86_400
    // A daylight-saving day is 23 or 25 h: make sure the window covers the last time.
    if end <= last { end += 86_400 }
    let trace = UserTrace(user: user.id, timeZone: zone, start: start, end: end, apps: order.apps, events: events)
    #if DEBUG
      trace._checkInvariants()
    #endif
    return trace
  }
}
