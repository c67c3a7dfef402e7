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
/// Times: Unix seconds, Unix milliseconds, or ISO 8601 (``TimeUnit``). An
/// ISO time without a zone is wall-clock time in ``Options/timeZone``. Each
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
    package var userColumn = "user"
    package var timeColumn = "timestamp"
    package var appColumn = "app"
    package var eventColumn = "event"
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
    /// `UTC` or `±HH:MM`); a user's zone is its first row's.
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
      let columns = "event-log import: columns user=\(userColumn) time=\(timeColumn) app=\(appColumn)"
        + " event=\(eventColumn)" + duration + " time-unit=\(timeUnit)"
      let close = closeEvents.isEmpty ? "-" : closeEvents.joined(separator: " | ")
      let ignored = (ignoredEvents.isEmpty ? "-" : ignoredEvents.joined(separator: " | "))
        + (ignoreUnknownEvents ? " and every other name" : "")
      let events = "open events: " + openEvents.joined(separator: " | ") + "; close events: " + close
        + "; ignored: " + ignored
      let sessions = "time zone \(timeZone); max session \(CSV.number(maximumSession)) s; unclosed session "
        + CSV.number(unclosedSession) + " s; merge gap " + CSV.number(mergeGap) + " s"
      return [columns, events, sessions]
    }

    /// Why these options cannot be used, or `nil`.
    package var problem: String? {
      if openEvents.isEmpty { return "at least one open event name is needed" }
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

  /// The traces and what happened to the rows.
  package struct Output: Sendable, Equatable {
    /// One trace per user with at least one open, in order of first appearance.
    package var users: [UserTrace] = []
    /// Data rows read (blank lines excluded).
    package var rows = 0
    /// Opens written (after merging).
    package var opens = 0
    /// Rows with an ignored event name.
    package var ignoredRows = 0
    /// Close events with no open session of that app.
    package var unmatchedCloses = 0
    /// Sessions never closed (given ``Options/unclosedSession``).
    package var unclosedSessions = 0
    /// Sessions cut to ``Options/maximumSession``.
    package var cappedSessions = 0
    /// Opens merged into the previous session by ``Options/mergeGap``.
    package var mergedOpens = 0
    /// The time unit used (the one decided for ``TimeUnit/auto``).
    package var timeUnit: TimeUnit = .auto
    /// Users whose rows held no open.
    package var usersWithoutOpens: [String] = []
    /// Problems that do not stop the import, as `file:line: field: message`
    /// (a user whose zone or offsets change).
    package var warnings: [String] = []
  }

  package var options: Options

  package init(options: Options = Options()) { self.options = options }

  enum Kind { case open, close, ignored }

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
    /// The zone named by ``Options/zoneColumn`` on the user's first row, its
    /// clock, and whether a later row named another (warned once).
    var zone: TraceTimeZone? = nil
    var clock: LocalClock? = nil
    var zoneChanged = false

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
    if let p = options.problem { throw TraceFormatError(file: path, line: 0, field: "-", message: p) }
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else {
      throw TraceFormatError(file: path, line: 0, field: "-", message: "cannot open: \(String(cString: strerror(errno)))")
    }
    defer { close(fd) }
    // Records, not lines: a quoted field may hold a line break.
    let input = LogInput(path: path, reader: LineReader(fd: fd, maxLineBytes: limits.maxLineBytes, quotedLineBreaks: true))
    let columns = try readHeader(input)
    var rows = LogRows(unit: options.timeUnit, clock: LocalClock(options.timeZone), kinds: eventKinds)
    while let line = try input.nextLine() {
      if line.allSatisfy({ $0 == 32 || $0 == 9 }) { continue }
      try addRow(line, columns, input, limits: limits, into: &rows)
    }
    rows.out.timeUnit = rows.unit == .auto ? options.timeUnit : rows.unit
    return finish(rows, path: path)
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
    var user, time, app, event: Int
    var duration, zone: Int?
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
    let userCol = try column(options.userColumn, "user")
    let timeCol = try column(options.timeColumn, "time")
    let appCol = try column(options.appColumn, "app")
    let eventCol = try column(options.eventColumn, "event")
    let durationCol = try options.durationColumn.map { try column($0, "duration") }
    let zoneCol = try options.zoneColumn.map { try column($0, "zone") }
    return LogColumns(
      names: names, delimiter: delimiter, user: userCol, time: timeCol, app: appCol, event: eventCol,
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
  private struct LogRows {
    var out = Output()
    var users: [User] = []
    var userIndex: [String: Int] = [:]
    /// The time unit (decided at the first row under ``TimeUnit/auto``).
    var unit: TimeUnit
    /// The clock of ``Options/timeZone``.
    var clock: LocalClock
    /// Zones by name, parsed once.
    var zones: [String: TraceTimeZone] = [:]
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
    let kind = try eventKind(text(c.event), kinds: s.kinds) { input.fail(names[c.event], $0) }
    if kind == .ignored {
      s.out.ignoredRows += 1
      return
    }
    let userID = try text(c.user)
    guard !userID.isEmpty else { throw input.fail(names[c.user], "empty user id") }
    let appName = try text(c.app)
    guard !appName.isEmpty else { throw input.fail(names[c.app], "empty app name") }
    for (name, column, what) in [(userID, c.user, "user id"), (appName, c.app, "app name")] {
      if let p = TraceReader.nameProblem(name, bytes: name.utf8.count, what: what) { throw input.fail(names[column], p) }
    }
    var duration = 0.0
    if let durationCol = c.duration, kind == .open {
      let d = try text(durationCol)
      guard let x = Double(d), x.isFinite, x >= 0 else {
        throw input.fail(names[durationCol], "expected a duration ≥ 0 in \(options.durationUnit == .milliseconds ? "ms" : "s"), found '\(d.prefix(40))'")
      }
      duration = options.durationUnit == .milliseconds ? x / 1000 : x
    }

    let u = s.user(userID)
    if let zoneCol = c.zone {
      try EventLogImporter.noteZone(try text(zoneCol), of: &s.users[u], cache: &s.zones, warnings: &s.out.warnings) {
        input.fail(names[zoneCol], $0)
      }
    }
    let timeText = try text(c.time)
    if s.unit == .auto { s.unit = EventLogImporter.guessUnit(timeText) }
    var offset: Int? = nil
    let time = try EventLogImporter.time(timeText, unit: s.unit, clock: &s.clock, userClock: &s.users[u].clock, offset: &offset) {
      input.fail(names[c.time], $0)
    }
    guard s.users[u].rows.count < limits.maxEventsPerUser else {
      throw input.fail(names[c.user], "user '\(userID)' has more than \(limits.maxEventsPerUser) rows (FETCHLAB_MAX_EVENTS_PER_USER)")
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
    for r in rows {
      let a = Int(r.app)
      switch r.kind {
      case .ignored:
        break
      case .close:
        if current[a] >= 0 && isOpen[a] { close(a, at: r.time) } else { out.unmatchedCloses += 1 }
      case .open:
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

  /// The Unix time of the local midnight at or before `t`.
  static func localMidnight(atOrBefore t: Double, clock: inout LocalClock) -> Double {
    let off = clock.offset(at: t)
    let local = t + off
    return (local / 86_400).rounded(.down) * 86_400 - off
  }

  /// The Unix time of wall-clock time `wall` in `clock`'s zone: the offset
  /// at the instant it names.
  private static func wallClock(_ wall: Double, _ clock: inout LocalClock) -> Double {
    let guess = wall - clock.offset(at: wall)
    return wall - clock.offset(at: guess)
  }

  /// The unit of the first time of a file under ``TimeUnit/auto``.
  static func guessUnit(_ s: String) -> TimeUnit {
    if TimeText.parseISO8601(s) != nil { return .iso8601 }
    if let x = Double(s), abs(x) >= TimeText.maximumUnixSeconds { return .milliseconds }
    return .seconds
  }

  /// `s` in `unit` as Unix seconds; `fail` builds the error. An ISO time
  /// without a zone is read in `userClock`'s zone, or `clock`'s without
  /// one; `offset` is set to the offset an ISO time is written with.
  static func time(
    _ s: String, unit: TimeUnit, clock: inout LocalClock, userClock: inout LocalClock?, offset: inout Int?,
    fail: (String) -> TraceFormatError
  ) throws -> Double {
    let t: Double
    switch unit {
    case .iso8601:
      guard let iso = TimeText.parseISO8601(s) else {
        throw fail("expected an ISO 8601 time such as 2018-01-16 06:01:05 or 2026-01-05T08:00:00Z, found '\(s.prefix(40))'")
      }
      offset = iso.offset
      if let u = iso.unixSeconds {
        t = u
      } else if userClock != nil {
        t = wallClock(iso.wallSeconds, &userClock!)
      } else {
        t = wallClock(iso.wallSeconds, &clock)
      }
    case .seconds, .milliseconds, .auto:
      guard let x = Double(s), x.isFinite else {
        let hint = TimeText.parseISO8601(s) != nil ? " (an ISO 8601 time: use --time-unit iso)" : ""
        throw fail("expected a number of \(unit == .milliseconds ? "milliseconds" : "seconds"), found '\(s.prefix(40))'\(hint)")
      }
      t = unit == .milliseconds ? x / 1000 : x
    }
    guard TimeText.plausibleTimes.contains(t) else {
      guard unit == .milliseconds else { throw fail(TimeText.outOfRangeMessage(t)) }
      throw fail("time '\(escapedName(String(s.prefix(40))))' ms is outside 1970-01-01...2100-01-01, the dates a trace may hold")
    }
    return t
  }
}
