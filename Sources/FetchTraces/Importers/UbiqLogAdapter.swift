import FetchSupport
import Foundation

/// Derives foreground app opens from the UbiqLog "Application" records
/// (UCI dataset 369, CC BY 4.0; see `datasets/ubiqlog/README.md`).
///
/// The input is the parsed TSV `ubiqlog_application_parsed.tsv(.xz)` with the
/// columns `user_dir`, `process_name`, `start_local`, `end_local` and
/// `duration_s`. Each row says that an Android *process was running* from
/// `start_local` to `end_local` (phone-local wall time, no zone, 1 s
/// resolution); long runs are cut into chunks of about 300 s. These are not
/// foreground launches, so the adapter approximates opens in four steps:
///
/// 1. **Clock errors.** Drop rows whose start or end year is before
///    ``Options/minimumYear`` (2013; the phones reset to 1980-01-06 or
///    2011-01-01), and rows whose end is before their start or more than
///    ``Options/maximumRecordDuration`` (1 day) after it: the clock jumped
///    inside the record.
/// 2. **Background and system processes**, by name (see
///    ``Options/dropReason(process:)``): secondary processes (`name:suffix`),
///    names containing a background marker (`launcher`, `widget`, `provider`,
///    `service`, `push`, `sync`, ...), and platform or vendor packages
///    (`com.android.`, `com.sec.`, `com.htc.`, `com.google.android.gms`, ...)
///    unless the last name component is a user-facing app (`mms`, `dialer`,
///    `contacts`, `settings`, `camera`, ...).
/// 3. **Merge chunks.** Records of one app that start less than
///    ``Options/mergeGap`` (60 s) after that app's previous record ended are
///    merged into it (overlapping records always merge).
/// 4. **Opens.** Each merged record is one `open` event at its start, with
///    session length `min(end − start, maximumSession)`. The cap (1,800 s)
///    exists because a running process is not a foreground app: a messenger
///    or music player stays alive for hours in the background, so the raw span
///    overstates the time the user looked at it.
///
/// Each participant becomes one ``UserTrace``: user id = the `user_dir`
/// (e.g. `19_F`), users in order of first appearance in the file. Time zone
/// `UTC`: **wall-clock times are encoded as if they were UTC**, because the
/// data records no zone; hour-of-day and day boundaries computed with
/// ``LocalClock`` are therefore the phone's local ones, but the Unix times are
/// not real instants. `start` is the local midnight of the first day with a
/// valid record (step 1, before the name filter) and `end` the midnight
/// following the last valid record's end. The data has no wake, battery,
/// charging or network information, so the traces hold only `open` events.
/// Participants left without opens are omitted (listed in
/// ``Output/usersWithoutOpens``).
///
///     let out = try UbiqLogAdapter().read(path: "ubiqlog_application_parsed.tsv.xz")
///     print(UbiqLogAdapter.Statistics(users: out.users).opens)
///
/// Compared with the published UbiqLog statistics (same method, slightly different name lists)
/// the defaults give 24 participants, about 1,084 active user-days and
/// 94,600 opens; see ``Statistics/markdownComparison()``.
///
/// - Complexity: O(r log r) time for r rows; memory O(kept records).
package struct UbiqLogAdapter: Sendable {
  /// The filter and merge settings; all public so users can change them.
  package var options: Options

  /// - Precondition: the options are valid (see ``Options``).
  package init(options: Options = Options()) {
    options._checkValid()
    self.options = options
  }

  // MARK: - Output

  /// The derived traces and what happened to the input rows.
  package struct Output: Sendable, Equatable {
    /// One trace per participant with at least one open, in file order.
    package var users: [UserTrace]
    /// Data rows read (header and blank lines excluded).
    package var rows = 0
    /// Rows dropped because the start or end year is before ``Options/minimumYear``.
    package var droppedBeforeMinimumYear = 0
    /// Rows dropped because end < start or end − start > ``Options/maximumRecordDuration``.
    package var droppedInconsistentTimes = 0
    /// Rows dropped by the name filter.
    package var droppedByName = 0
    /// Rows kept (before merging).
    package var keptRecords = 0
    /// `open` events written (merged records).
    package var opens = 0
    /// Participants with valid rows but no kept record (omitted from ``users``).
    package var usersWithoutOpens: [String] = []
    /// Distinct process names dropped by the name filter, with their row counts.
    package var droppedNames: [String: Int] = [:]
    /// Rows dropped by ``Options/behaviouralFilter`` (after the name rules).
    package var droppedByBehaviour = 0
    /// The processes the behavioural filter dropped, in participant order.
    package var behaviourDrops: [BehaviourDrop] = []

    /// A process of one participant dropped by the behavioural filter.
    package struct BehaviourDrop: Sendable, Equatable, CustomStringConvertible {
      package var participant: String
      package var process: String
      /// Merged records (the opens it would have given before the window cut).
      package var records: Int
      package var reason: String
      /// `participant: process: reason`.
      package var description: String { "\(participant): \(process): \(reason)" }
    }

    package init(users: [UserTrace] = []) { self.users = users }

    /// A one-line summary for logs.
    package var summary: String {
      "\(users.count) users, \(opens) opens from \(keptRecords) kept of \(rows) rows"
        + " (dropped: \(droppedBeforeMinimumYear) before the minimum year, \(droppedInconsistentTimes) with"
        + " inconsistent times, \(droppedByName) by name"
        + (droppedByBehaviour > 0 ? ", \(droppedByBehaviour) by behaviour)" : ")")
    }
  }

  /// The attribution the CC BY 4.0 licence asks for (from the dataset's SOURCE.md).
  package static let attribution =
    "UbiqLog (smartphone lifelogging) dataset, R. Rawassizadeh et al., UCI Machine Learning Repository,"
    + " https://archive.ics.uci.edu/dataset/369, licensed CC BY 4.0. Cite: R. Rawassizadeh, M. Tomitsch,"
    + " K. Wac, A. M. Tjoa. \"UbiqLog: a generic mobile phone-based life-log framework.\" Personal and"
    + " Ubiquitous Computing 17(4):621–637, 2013. doi:10.1007/s00779-012-0511-8."

  /// `#` comment lines for a derived trace: source, licence, attribution,
  /// modifications, the options and the row counts. `input` should be a file
  /// name, not a local path.
  package func commentLines(input: String, output: Output) -> [String] {
    [
      "FetchLab trace: foreground app opens approximated from UbiqLog Application (running-process) records.",
      "Source: " + UbiqLogAdapter.attribution,
      "Licence: CC BY 4.0, https://creativecommons.org/licenses/by/4.0/ . UCI use condition: no analysis that"
        + " could harm the participants' privacy or re-identify them.",
      "Modified: only the Application sensor records of 24 participants were extracted (some daily files"
        + " absent) and parsed to TSV; then FetchLab dropped clock-reset and background/system process rows,"
        + " merged each app's chunked records and wrote each merged record as one open event.",
      "Times: phone-local wall time encoded as if UTC (no time zone recorded); value = session length in s,"
        + " capped. No wake, battery, charging or network rows (not in this data).",
      "Input: \(input); \(output.summary).",
    ] + options.commentLines
  }

  // MARK: - Reading

  /// One kept row, times in wall-clock seconds since 1970-01-01 00:00.
  struct Record {
    var start: Int64
    var end: Int64
    var app: Int32
    var seq: Int32
  }

  /// Rows of one participant, accumulated while streaming.
  struct Participant {
    var id: String
    var apps = AppNames()
    var records: [Record] = []
    var firstStart = Int64.max
    var lastEnd = Int64.min
    var hasValidRow = false
    /// Per app: dropped by name (records kept only for the behavioural cues).
    var nameDropped: [Bool] = []
  }

  static let requiredColumns = ["user_dir", "process_name", "start_local", "end_local"]

  /// Reads a UbiqLog parsed TSV and derives the open traces.
  ///
  /// A path ending in `.xz` is decompressed by running `xz -dc` (found on
  /// `PATH`) and streaming its output; any other path is read directly. Lines
  /// end in LF or CRLF; fields are separated by tabs, without quoting. The
  /// header must name at least `user_dir`, `process_name`, `start_local` and
  /// `end_local`, in any order; other columns (`duration_s`) are ignored,
  /// because the duration is recomputed from the times. Every row must have
  /// as many fields as the header.
  ///
  /// - Throws: ``TraceFormatError`` naming file, line and field for a
  ///   malformed row, a missing column, an unreadable file or a failing `xz`.
  package func read(path: String) throws -> Output {
    let input = try UbiqLogInput(path: path)
    let columns = try Self.readHeader(input, path: path)
    var rows = RowReader(options: options, path: path, input: input, columns: columns)
    defer { rows.deallocate() }
    while let row = try input.nextLine() {
      if row.isEmpty { continue }
      guard let base = row.baseAddress else { continue }
      try rows.add(row, base: base)
    }
    try input.finish()
    return finish(rows.participants, counts: rows.out)
  }

  /// The header's column names and the indices of the required columns.
  struct Columns {
    var names: [String]
    var user, name, start, end: Int
  }

  /// Reads the header row (a UTF-8 byte-order mark is skipped) and finds the required columns.
  static func readHeader(_ input: UbiqLogInput, path: String) throws -> Columns {
    func fail(_ field: String, _ message: String) -> TraceFormatError {
      TraceFormatError(file: path, line: input.line, field: field, message: message)
    }
    guard var header = try input.nextLine() else {
      throw TraceFormatError(file: path, line: 0, field: "-", message: "empty file: no header row")
    }
    if header.count >= 3, header[0] == 0xEF, header[1] == 0xBB, header[2] == 0xBF {
      header = UnsafeBufferPointer(rebasing: header[3...])
    }
    if header.contains(13) { throw fail("-", TraceFormatError.crLineEnds) }
    let names = String(decoding: header, as: UTF8.self).split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
    var col: [Int] = []
    for c in UbiqLogAdapter.requiredColumns {
      guard let i = names.firstIndex(of: c) else {
        throw fail(c, "missing column '\(c)' in the header (found: \(names.joined(separator: ", ")))")
      }
      col.append(i)
    }
    return Columns(names: names, user: col[0], name: col[1], start: col[2], end: col[3])
  }

  /// The participants and counts of a read in progress, and where the
  /// fields of the current row are (steps 1 and 2 happen here, row by row).
  struct RowReader {
    let options: Options
    let path: String
    let input: UbiqLogInput
    let columns: Columns
    var out = Output()
    var participants: [Participant] = []
    var participantIndex: [String: Int] = [:]
    /// The participant of the last row, and its id's bytes.
    var current = -1
    var currentID: [UInt8] = []
    /// Whether the name filter keeps a process, by name.
    var keepCache: [String: Bool] = [:]
    /// File order of the kept records (ties of the merge sort).
    var seq: Int32 = 0
    /// Byte ranges of the current row's fields.
    let fieldStart: UnsafeMutablePointer<Int>
    let fieldEnd: UnsafeMutablePointer<Int>

    init(options: Options, path: String, input: UbiqLogInput, columns: Columns) {
      self.options = options
      self.path = path
      self.input = input
      self.columns = columns
      fieldStart = .allocate(capacity: columns.names.count)
      fieldEnd = .allocate(capacity: columns.names.count)
    }

    func deallocate() {
      fieldStart.deallocate()
      fieldEnd.deallocate()
    }

    func fail(_ field: String, _ message: String) -> TraceFormatError {
      TraceFormatError(file: path, line: input.line, field: field, message: message)
    }

    /// Finds the row's tab-separated fields; exactly as many as the header's.
    func split(_ row: UnsafeBufferPointer<UInt8>, base: UnsafePointer<UInt8>) throws {
      let fieldCount = columns.names.count
      var n = 0
      var pos = 0
      while true {
        guard n < fieldCount else {
          throw fail("-", "more than \(fieldCount) tab-separated fields (the header has \(fieldCount))")
        }
        fieldStart[n] = pos
        if let t = memchr(base + pos, 9, row.count - pos) {
          let end = UnsafeRawPointer(base).distance(to: UnsafeRawPointer(t))
          fieldEnd[n] = end
          n += 1
          pos = end + 1
        } else {
          fieldEnd[n] = row.count
          n += 1
          break
        }
      }
      guard n == fieldCount else {
        let names = columns.names
        throw fail(names[n], "missing field '\(names[n])': \(n) of \(fieldCount) tab-separated fields")
      }
    }

    /// Field `i` of the row at `base` last split.
    func field(_ base: UnsafePointer<UInt8>, _ i: Int) -> UnsafeBufferPointer<UInt8> {
      UnsafeBufferPointer(start: base + fieldStart[i], count: fieldEnd[i] - fieldStart[i])
    }

    /// Reads one non-empty row: its participant, times and process name,
    /// dropping it for a clock error (step 1).
    mutating func add(_ row: UnsafeBufferPointer<UInt8>, base: UnsafePointer<UInt8>) throws {
      try split(row, base: base)
      out.rows += 1
      try selectParticipant(field(base, columns.user))

      // Times.
      guard let start = UbiqLogAdapter.parseLocalTime(field(base, columns.start)) else {
        throw fail("start_local", "expected YYYY-MM-DD HH:MM:SS, found '\(String(decoding: field(base, columns.start).prefix(40), as: UTF8.self))'")
      }
      guard let end = UbiqLogAdapter.parseLocalTime(field(base, columns.end)) else {
        throw fail("end_local", "expected YYYY-MM-DD HH:MM:SS, found '\(String(decoding: field(base, columns.end).prefix(40), as: UTF8.self))'")
      }
      let nameBytes = field(base, columns.name)
      guard !nameBytes.isEmpty else { throw fail("process_name", "empty process name") }
      guard let name = String(validating: nameBytes, as: UTF8.self) else {
        throw fail("process_name", "not valid UTF-8")
      }

      if start.year < options.minimumYear || end.year < options.minimumYear {
        out.droppedBeforeMinimumYear += 1
        return
      }
      if let bad = UbiqLogAdapter.outsideTraceDates(start.seconds, end.seconds) {
        let text = String(decoding: field(base, bad == 0 ? columns.start : columns.end), as: UTF8.self)
        throw fail(bad == 0 ? "start_local" : "end_local", "\(text) is outside 1970-01-01...2099-12-31, the dates a trace may hold")
      }
      let span = end.seconds - start.seconds
      if span < 0 || Double(span) > options.maximumRecordDuration {
        out.droppedInconsistentTimes += 1
        return
      }
      try record(name, bytes: nameBytes.count, start: start.seconds, end: end.seconds)
    }

    /// Makes the participant whose id is `userBytes` the current one
    /// (rows of one participant usually come together: compared by bytes first).
    mutating func selectParticipant(_ userBytes: UnsafeBufferPointer<UInt8>) throws {
      guard !userBytes.isEmpty else { throw fail("user_dir", "empty participant id") }
      guard current < 0 || !userBytes.elementsEqual(currentID) else { return }
      guard let id = String(validating: userBytes, as: UTF8.self) else {
        throw fail("user_dir", "not valid UTF-8")
      }
      if let i = participantIndex[id] {
        current = i
      } else {
        current = participants.count
        participantIndex[id] = current
        participants.append(Participant(id: id))
      }
      if let problem = TraceReader.nameProblem(id, bytes: userBytes.count, what: "participant id") {
        throw fail("user_dir", problem)
      }
      currentID = Array(userBytes)
    }

    /// Records a row with valid times for the current participant; a
    /// process the name filter drops (step 2) is kept only for the
    /// behavioural cues.
    mutating func record(_ name: String, bytes: Int, start: Int64, end: Int64) throws {
      participants[current].hasValidRow = true
      participants[current].firstStart = min(participants[current].firstStart, start)
      participants[current].lastEnd = max(participants[current].lastEnd, end)

      if participants[current].apps.index(of: name) == nil,
        let problem = TraceReader.nameProblem(name, bytes: bytes, what: "process name")
      {
        throw fail("process_name", problem)
      }
      let keep: Bool
      if let k = keepCache[name] {
        keep = k
      } else {
        keep = options.keeps(process: name)
        keepCache[name] = keep
      }
      if !keep {
        out.droppedByName += 1
        out.droppedNames[name, default: 0] += 1
        // The behavioural cues need every process's timing; otherwise the row is done.
        guard options.behaviouralFilter != nil else { return }
      } else {
        out.keptRecords += 1
      }
      let app: Int32
      if let a = participants[current].apps.index(of: name) {
        app = a
      } else {
        app = participants[current].apps.add(name)
        participants[current].nameDropped.append(!keep)
      }
      participants[current].records.append(Record(start: start, end: end, app: app, seq: seq))
      seq &+= 1
    }
  }

  /// The traces of the participants read (steps 3 and 4, after the
  /// behavioural filter when set), added to `out`.
  func finish(_ participants: [Participant], counts: Output) -> Output {
    var out = counts
    for var p in participants {
      if let filter = options.behaviouralFilter { applyBehaviour(filter, to: &p, counts: &out) }
      if let trace = trace(for: p) {
        out.opens += trace.events.count
        out.users.append(trace)
      } else if p.hasValidRow {
        out.usersWithoutOpens.append(p.id)
      }
    }
    return out
  }

  /// Drops the records of processes dropped by name or flagged by `filter`'s cues.
  func applyBehaviour(_ filter: UbiqLogBehaviouralFilter, to p: inout Participant, counts out: inout Output) {
    let cues = filter.cues(
      records: p.records.map { ($0.start, $0.end, $0.app) }, appCount: p.apps.count, mergeGap: options.mergeGap)
    var drop = p.nameDropped
    for a in 0..<p.apps.count where !p.nameDropped[a] {
      if let reason = cues[a].reason {
        drop[a] = true
        out.behaviourDrops.append(
          Output.BehaviourDrop(participant: p.id, process: p.apps.names[a], records: cues[a].records, reason: reason))
      }
    }
    let flagged = p.records.reduce(0) { $0 + (drop[Int($1.app)] && !p.nameDropped[Int($1.app)] ? 1 : 0) }
    p.records.removeAll { drop[Int($0.app)] }
    out.droppedByBehaviour += flagged
    out.keptRecords -= flagged
  }

  /// Merges one participant's records into opens (steps 3 and 4).
  func trace(for p: Participant) -> UserTrace? {
    guard !p.records.isEmpty else { return nil }
    let records = p.records.sorted { ($0.start, $0.seq) < ($1.start, $1.seq) }
    let appCount = p.apps.count
    var active = [Bool](repeating: false, count: appCount)
    var open = [Record](repeating: Record(start: 0, end: 0, app: 0, seq: 0), count: appCount)
    var merged: [Record] = []
    merged.reserveCapacity(records.count)
    for r in records {
      let a = Int(r.app)
      if active[a] && Double(r.start - open[a].end) < options.mergeGap {
        open[a].end = max(open[a].end, r.end)
        continue
      }
      if active[a] { merged.append(open[a]) }
      active[a] = true
      open[a] = r
    }
    for a in 0..<appCount where active[a] { merged.append(open[a]) }
    merged.sort { ($0.start, $0.seq) < ($1.start, $1.seq) }
    let day: Int64 = 86_400
    var firstDay = UbiqLogAdapter.floorDiv(p.firstStart, day)
    var lastDay = UbiqLogAdapter.floorDiv(p.lastEnd, day)
    if options.maximumIdleDays > 0, !merged.isEmpty {
      // Blocks of opens separated by more than maximumIdleDays idle days; keep the largest.
      var best = (from: 0, to: 0), from = 0
      for i in 1...merged.count {
        let gap = i < merged.count
          ? UbiqLogAdapter.floorDiv(merged[i].start, day) - UbiqLogAdapter.floorDiv(merged[i - 1].start, day) : Int64.max
        if gap > Int64(options.maximumIdleDays) {
          if i - from > best.to - best.from { best = (from, i) }
          from = i
        }
      }
      if best.to - best.from < merged.count {
        firstDay = UbiqLogAdapter.floorDiv(merged[best.from].start, day)
        lastDay = UbiqLogAdapter.floorDiv(merged[best.to - 1].end, day)
        merged = Array(merged[best.from..<best.to])
      }
    }

    var order = FirstOpenOrder(names: p.apps.names)
    var events: [TraceEvent] = []
    events.reserveCapacity(merged.count)
    for m in merged {
      let app = order(Int(m.app))
      let session = min(Double(m.end - m.start), options.maximumSession)
      events.append(TraceEvent(time: Double(m.start), kind: .open, app: app, value: session))
    }
    let begin = firstDay * day
    let end = (lastDay + 1) * day
    let trace = UserTrace(
      user: p.id, timeZone: .utc, start: Double(begin), end: Double(end), apps: order.apps, events: events)
    #if DEBUG
      trace._checkInvariants()
    #endif
    return trace
  }

  /// Which of a record's wall-clock `start` and `end` (s since 1970) a
  /// trace cannot hold, 0 or 1, or nil: the trace ends at the midnight
  /// after its last record, at the latest 2100-01-01
  /// (``TimeText/plausibleTimes``).
  static func outsideTraceDates(_ start: Int64, _ end: Int64) -> Int? {
    let dates = 0..<Int64(TimeText.plausibleTimes.upperBound)
    return !dates.contains(start) ? 0 : !dates.contains(end) ? 1 : nil
  }

  static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
    let q = a / b
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
  }

  /// Parses `YYYY-MM-DD HH:MM:SS` as wall-clock seconds since 1970-01-01
  /// 00:00:00 (proleptic Gregorian, no zone); `nil` unless exactly that form
  /// with a valid date and time.
  static func parseLocalTime(_ b: UnsafeBufferPointer<UInt8>) -> (year: Int, seconds: Int64)? {
    guard b.count == 19, b[4] == 45, b[7] == 45, b[10] == 32, b[13] == 58, b[16] == 58 else { return nil }
    func num(_ from: Int, _ count: Int) -> Int? {
      var v = 0
      for i in from..<(from + count) {
        let c = b[i]
        guard c >= 48 && c <= 57 else { return nil }
        v = v * 10 + Int(c - 48)
      }
      return v
    }
    guard let y = num(0, 4), let mo = num(5, 2), let d = num(8, 2),
      let h = num(11, 2), let mi = num(14, 2), let s = num(17, 2)
    else { return nil }
    guard CivilDate.isValid(year: y, month: mo, day: d), h < 24, mi < 60, s < 60 else { return nil }
    let days = CivilDate.days(year: y, month: mo, day: d)
    return (y, Int64(days) * 86_400 + Int64(h * 3600 + mi * 60 + s))
  }
}
