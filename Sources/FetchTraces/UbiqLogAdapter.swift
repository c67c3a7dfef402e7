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
/// Compared with domain.md §5.1 (same method, slightly different name lists)
/// the defaults give 24 participants, about 1,084 active user-days and
/// 94,600 opens; see ``Statistics/markdownComparison()``.
///
/// - Complexity: O(r log r) time for r rows; memory O(kept records).
public struct UbiqLogAdapter: Sendable {
  /// The filter and merge settings; all public so users can change them.
  public var options: Options

  /// - Precondition: the options are valid (see ``Options``).
  public init(options: Options = Options()) {
    options._checkValid()
    self.options = options
  }

  // MARK: - Options

  /// Which rows count as user-facing app activity, and how chunks merge.
  ///
  /// The name rules, applied to the lowercased process name in this order
  /// (first match wins):
  ///
  /// 1. contains `:` and ``dropSecondaryProcesses`` → drop (a secondary
  ///    process such as `com.tencent.mm:push` or `…:sandboxed_process0`);
  /// 2. contains any of ``dropSubstrings`` → drop;
  /// 3. last dot-separated component is in ``keepAppNames`` → keep
  ///    (`com.android.mms`, `com.sec.android.app.camera`, `com.htc.album`);
  /// 4. starts with any of ``dropPrefixes`` → drop;
  /// 5. otherwise keep (third-party apps).
  ///
  /// Clock and alarm apps are dropped (`clock` is a drop substring): their
  /// process stays alive to ring scheduled alarms, and an alarm is not an open
  /// that wants fresh content.
  public struct Options: Sendable, Equatable {
    /// Rows whose start or end year is earlier are clock resets; dropped.
    public var minimumYear: Int
    /// Rows whose end − start is negative or exceeds this (s) are dropped.
    public var maximumRecordDuration: Double
    /// A record of an app starting less than this many seconds after that
    /// app's previous record ended is merged into it. ≥ 0.
    public var mergeGap: Double
    /// Cap on an open's session length, in s; in (0, 86,400].
    public var maximumSession: Double
    /// A user's window is cut to the block of days with the most opens in
    /// which no two consecutive active days are more than this many days
    /// apart (0 keeps everything). Logging gaps of weeks or months (2_F has
    /// 18 active days in 381) would otherwise count as days of phone use.
    public var maximumIdleDays: Int
    /// Drop names with a `:` (secondary processes).
    public var dropSecondaryProcesses: Bool
    /// Background markers: a name containing one is dropped (rule 2).
    public var dropSubstrings: [String]
    /// User-facing system apps: kept when the last name component is one of
    /// these, even under a platform prefix (rule 3).
    public var keepAppNames: [String]
    /// Platform and vendor packages: dropped unless kept by rule 3 (rule 4).
    public var dropPrefixes: [String]
    /// Behavioural cues applied after the name rules (``UbiqLogBehaviouralFilter``);
    /// `nil` (the default, which built the bundled trace) applies none.
    public var behaviouralFilter: UbiqLogBehaviouralFilter? = nil

    public init(
      minimumYear: Int = 2013,
      maximumRecordDuration: Double = 86_400,
      mergeGap: Double = 60,
      maximumSession: Double = 1_800,
      maximumIdleDays: Int = 21,
      dropSecondaryProcesses: Bool = true,
      dropSubstrings: [String] = Options.defaultDropSubstrings,
      keepAppNames: [String] = Options.defaultKeepAppNames,
      dropPrefixes: [String] = Options.defaultDropPrefixes
    ) {
      self.minimumYear = minimumYear
      self.maximumRecordDuration = maximumRecordDuration
      self.mergeGap = mergeGap
      self.maximumSession = maximumSession
      self.maximumIdleDays = maximumIdleDays
      self.dropSecondaryProcesses = dropSecondaryProcesses
      self.dropSubstrings = dropSubstrings
      self.keepAppNames = keepAppNames
      self.dropPrefixes = dropPrefixes
    }

    /// Substrings that mark background, system or helper processes.
    public static let defaultDropSubstrings: [String] = [
      // the markers named in domain.md §5.1
      "launcher", "widget", "provider", "service", "keyguard", "lockscreen", "push", "sync",
      // home screens, input methods, wallpapers
      "home", "wallpaper", "inputmethod", "keyboard", "theme",
      // daemons and device management
      "daemon", "agent", "process", "system", "fota", "update", "setupwizard", "backup", "uploader",
      // radios and sensors
      "bluetooth", "nfc", "location",
      // always-on monitors: battery, security scanners
      "battery", "antivirus", "security", "mobilecare",
      // alarm clocks and the in-call screen (the dialer is counted instead)
      "clock", "incallui",
    ]

    /// Last name components of user-facing system apps.
    public static let defaultKeepAppNames: [String] = [
      // messaging, phone, contacts
      "mms", "conversations", "dialer", "htcdialer", "dialertab", "contacts", "htccontacts",
      "socialphonebook",
      // settings, web, app store
      "settings", "browser", "sbrowser", "chrome", "vending", "samsungapps",
      // camera, photos, media
      "camera", "gallery", "gallery3d", "album", "music", "video", "videoplayer", "fmradio",
      // mail, calendar, tools
      "email", "mail", "calendar", "calculator", "calculator2", "popupcalculator", "memo", "notes",
      "myfiles", "filemanager", "soundrecorder", "voicerecorder",
    ]

    /// Platform and vendor package prefixes.
    public static let defaultDropPrefixes: [String] = [
      "com.android.", "android.", "com.google.android.gms", "com.google.android.gsf",
      "com.google.android.tts", "com.google.android.partnersetup", "com.google.process.",
      "com.sec.", "com.samsung.", "com.lge.", "com.sonyericsson.", "com.sonymobile.", "com.htc.",
      "com.motorola.", "com.mediatek.", "com.huawei.", "com.qualcomm.", "com.qct.", "com.broadcom.",
      "com.redbend.", "com.lmi.", "com.osp.", "com.vlingo.", "com.wssyncmldm", "com.wssnps",
      "com.fmm.dm", "oem.",
    ]

    /// Why `name` is dropped, or `nil` when it is kept as a user-facing app.
    ///
    ///     Options().dropReason(process: "com.sec.android.app.launcher")
    ///     // "contains 'launcher'"
    public func dropReason(process name: String) -> String? {
      let n = name.lowercased()
      if dropSecondaryProcesses && n.contains(":") { return "secondary process (':')" }
      if let s = dropSubstrings.first(where: { n.contains($0.lowercased()) }) { return "contains '\(s)'" }
      let last = n.split(separator: ".").last.map(String.init) ?? n
      if keepAppNames.contains(where: { $0.lowercased() == last }) { return nil }
      if let p = dropPrefixes.first(where: { n.hasPrefix($0.lowercased()) }) { return "platform prefix '\(p)'" }
      return nil
    }

    /// Whether `name` is kept as a user-facing app.
    public func keeps(process name: String) -> Bool { dropReason(process: name) == nil }

    /// The options as `#` comment lines for a derived trace.
    public var commentLines: [String] {
      [
        "adapter options: minimumYear=\(minimumYear) maximumRecordDuration=\(CSV.number(maximumRecordDuration))s"
          + " mergeGap=\(CSV.number(mergeGap))s maximumSession=\(CSV.number(maximumSession))s maximumIdleDays=\(maximumIdleDays)"
          + " dropSecondaryProcesses=\(dropSecondaryProcesses)",
        "dropSubstrings: " + dropSubstrings.joined(separator: " "),
        "keepAppNames (last name component): " + keepAppNames.joined(separator: " "),
        "dropPrefixes: " + dropPrefixes.joined(separator: " "),
      ] + behaviourCommentLines
    }

    /// The behavioural filter's settings as a comment line (none without it).
    var behaviourCommentLines: [String] {
      guard let f = behaviouralFilter else { return [] }
      let coverage = "behavioural filter: always running at ≥ " + CSV.number(f.alwaysRunningCoverage)
        + " of logged \(f.binSeconds) s bins"
      let lockstep = "; lockstep share ≥ " + CSV.number(f.lockstepShare) + " within ±\(f.lockstepToleranceSeconds) s"
      return [coverage + lockstep + "; at least \(f.minimumRecords) merged records"]
    }

    func _checkValid() {
      precondition(mergeGap.isFinite && mergeGap >= 0, "UbiqLogAdapter.Options.mergeGap must be finite and ≥ 0")
      precondition(maximumSession > 0 && maximumSession <= 86_400, "UbiqLogAdapter.Options.maximumSession must be in (0, 86400] s")
      precondition(maximumRecordDuration >= 0, "UbiqLogAdapter.Options.maximumRecordDuration must be ≥ 0")
      if let p = behaviouralFilter?.problem { preconditionFailure("UbiqLogAdapter.Options.behaviouralFilter: " + p) }
    }
  }

  // MARK: - Output

  /// The derived traces and what happened to the input rows.
  public struct Output: Sendable, Equatable {
    /// One trace per participant with at least one open, in file order.
    public var users: [UserTrace]
    /// Data rows read (header and blank lines excluded).
    public var rows = 0
    /// Rows dropped because the start or end year is before ``Options/minimumYear``.
    public var droppedBeforeMinimumYear = 0
    /// Rows dropped because end < start or end − start > ``Options/maximumRecordDuration``.
    public var droppedInconsistentTimes = 0
    /// Rows dropped by the name filter.
    public var droppedByName = 0
    /// Rows kept (before merging).
    public var keptRecords = 0
    /// `open` events written (merged records).
    public var opens = 0
    /// Participants with valid rows but no kept record (omitted from ``users``).
    public var usersWithoutOpens: [String] = []
    /// Distinct process names dropped by the name filter, with their row counts.
    public var droppedNames: [String: Int] = [:]
    /// Rows dropped by ``Options/behaviouralFilter`` (after the name rules).
    public var droppedByBehaviour = 0
    /// The processes the behavioural filter dropped, in participant order.
    public var behaviourDrops: [BehaviourDrop] = []

    /// A process of one participant dropped by the behavioural filter.
    public struct BehaviourDrop: Sendable, Equatable, CustomStringConvertible {
      public var participant: String
      public var process: String
      /// Merged records (the opens it would have given before the window cut).
      public var records: Int
      public var reason: String
      /// `participant: process: reason`.
      public var description: String { "\(participant): \(process): \(reason)" }
    }

    public init(users: [UserTrace] = []) { self.users = users }

    /// A one-line summary for logs.
    public var summary: String {
      "\(users.count) users, \(opens) opens from \(keptRecords) kept of \(rows) rows"
        + " (dropped: \(droppedBeforeMinimumYear) before the minimum year, \(droppedInconsistentTimes) with"
        + " inconsistent times, \(droppedByName) by name"
        + (droppedByBehaviour > 0 ? ", \(droppedByBehaviour) by behaviour)" : ")")
    }
  }

  /// The attribution the CC BY 4.0 licence asks for (from the dataset's SOURCE.md).
  public static let attribution =
    "UbiqLog (smartphone lifelogging) dataset, R. Rawassizadeh et al., UCI Machine Learning Repository,"
    + " https://archive.ics.uci.edu/dataset/369, licensed CC BY 4.0. Cite: R. Rawassizadeh, M. Tomitsch,"
    + " K. Wac, A. M. Tjoa. \"UbiqLog: a generic mobile phone-based life-log framework.\" Personal and"
    + " Ubiquitous Computing 17(4):621–637, 2013. doi:10.1007/s00779-012-0511-8."

  /// `#` comment lines for a derived trace: source, licence, attribution,
  /// modifications, the options and the row counts. `input` should be a file
  /// name, not a local path.
  public func commentLines(input: String, output: Output) -> [String] {
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
    var apps: [String] = []
    var appIndex: [String: Int32] = [:]
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
  public func read(path: String) throws -> Output {
    let input = try UbiqLogInput(path: path)
    func fail(_ field: String, _ message: String) -> TraceFormatError {
      TraceFormatError(file: path, line: input.line, field: field, message: message)
    }

    // Header.
    guard var header = try input.nextLine() else {
      throw TraceFormatError(file: path, line: 0, field: "-", message: "empty file: no header row")
    }
    if header.count >= 3, header[0] == 0xEF, header[1] == 0xBB, header[2] == 0xBF {
      header = UnsafeBufferPointer(rebasing: header[3...])
    }
    let names = String(decoding: header, as: UTF8.self).split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
    var col: [Int] = []
    for c in UbiqLogAdapter.requiredColumns {
      guard let i = names.firstIndex(of: c) else {
        throw fail(c, "missing column '\(c)' in the header (found: \(names.joined(separator: ", ")))")
      }
      col.append(i)
    }
    let (userCol, nameCol, startCol, endCol) = (col[0], col[1], col[2], col[3])
    let fieldCount = names.count

    var out = Output()
    var participants: [Participant] = []
    var participantIndex: [String: Int] = [:]
    var current = -1
    var currentID: [UInt8] = []
    var keepCache: [String: Bool] = [:]
    let maxDuration = options.maximumRecordDuration
    var seq: Int32 = 0

    let fieldStart = UnsafeMutablePointer<Int>.allocate(capacity: fieldCount)
    let fieldEnd = UnsafeMutablePointer<Int>.allocate(capacity: fieldCount)
    defer {
      fieldStart.deallocate()
      fieldEnd.deallocate()
    }

    while let row = try input.nextLine() {
      if row.isEmpty { continue }
      guard let base = row.baseAddress else { continue }
      // Split on tabs.
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
        throw fail(names[n], "missing field '\(names[n])': \(n) of \(fieldCount) tab-separated fields")
      }
      func field(_ i: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: base + fieldStart[i], count: fieldEnd[i] - fieldStart[i])
      }
      out.rows += 1

      // Participant.
      let userBytes = field(userCol)
      guard !userBytes.isEmpty else { throw fail("user_dir", "empty participant id") }
      if current < 0 || !userBytes.elementsEqual(currentID) {
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
        currentID = Array(userBytes)
      }

      // Times.
      guard let start = UbiqLogAdapter.parseLocalTime(field(startCol)) else {
        throw fail("start_local", "expected YYYY-MM-DD HH:MM:SS, found '\(String(decoding: field(startCol).prefix(40), as: UTF8.self))'")
      }
      guard let end = UbiqLogAdapter.parseLocalTime(field(endCol)) else {
        throw fail("end_local", "expected YYYY-MM-DD HH:MM:SS, found '\(String(decoding: field(endCol).prefix(40), as: UTF8.self))'")
      }
      let nameBytes = field(nameCol)
      guard !nameBytes.isEmpty else { throw fail("process_name", "empty process name") }
      guard let name = String(validating: nameBytes, as: UTF8.self) else {
        throw fail("process_name", "not valid UTF-8")
      }

      if start.year < options.minimumYear || end.year < options.minimumYear {
        out.droppedBeforeMinimumYear += 1
        continue
      }
      let span = end.seconds - start.seconds
      if span < 0 || Double(span) > maxDuration {
        out.droppedInconsistentTimes += 1
        continue
      }
      participants[current].hasValidRow = true
      participants[current].firstStart = min(participants[current].firstStart, start.seconds)
      participants[current].lastEnd = max(participants[current].lastEnd, end.seconds)

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
        guard options.behaviouralFilter != nil else { continue }
      } else {
        out.keptRecords += 1
      }
      let app: Int32
      if let a = participants[current].appIndex[name] {
        app = a
      } else {
        app = Int32(participants[current].apps.count)
        participants[current].apps.append(name)
        participants[current].appIndex[name] = app
        participants[current].nameDropped.append(!keep)
      }
      participants[current].records.append(Record(start: start.seconds, end: end.seconds, app: app, seq: seq))
      seq &+= 1
    }
    try input.finish()

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
          Output.BehaviourDrop(participant: p.id, process: p.apps[a], records: cues[a].records, reason: reason))
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

    // App indices in order of first open, as a reader of the written file sees them.
    var remap = [Int32](repeating: -1, count: appCount)
    var apps: [String] = []
    var events: [TraceEvent] = []
    events.reserveCapacity(merged.count)
    for m in merged {
      let a = Int(m.app)
      if remap[a] < 0 {
        remap[a] = Int32(apps.count)
        apps.append(p.apps[a])
      }
      let session = min(Double(m.end - m.start), options.maximumSession)
      events.append(TraceEvent(time: Double(m.start), kind: .open, app: remap[a], value: session))
    }
    let begin = firstDay * day
    let end = (lastDay + 1) * day
    let trace = UserTrace(
      user: p.id, timeZone: .utc, start: Double(begin), end: Double(end), apps: apps, events: events)
    #if DEBUG
      trace._checkInvariants()
    #endif
    return trace
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

// MARK: - Statistics

extension UbiqLogAdapter {
  /// Summary statistics of open traces, defined as in domain.md §5.1, so a
  /// derived trace can be compared with the reference figures.
  ///
  /// Definitions (all local time from each user's ``UserTrace/timeZone``):
  /// - an *active user-day* is a (user, local date) with at least one open;
  /// - *same-app gap*: start-to-start time between successive opens of the
  ///   same app by the same user, in minutes; *any-app gap*: between
  ///   successive opens of one user;
  /// - distributions pool all user-days, gaps or opens of all users;
  /// - quantiles interpolate linearly between order statistics (Hyndman & Fan
  ///   type 7, the NumPy and R default); NaN when empty.
  ///
  /// - Complexity: O(n log n) in the number of opens.
  public struct Statistics: Sendable, Equatable {
    /// Quantiles and mean of a pooled sample.
    public struct Summary: Sendable, Equatable {
      public var count: Int
      public var p10: Double
      public var p25: Double
      public var median: Double
      public var p75: Double
      public var p90: Double
      public var mean: Double

      /// Summarises `values` (any order).
      public init(_ values: [Double]) {
        let s = values.sorted()
        count = s.count
        p10 = Quantile.type7(sorted: s, 0.10)
        p25 = Quantile.type7(sorted: s, 0.25)
        median = Quantile.type7(sorted: s, 0.50)
        p75 = Quantile.type7(sorted: s, 0.75)
        p90 = Quantile.type7(sorted: s, 0.90)
        mean = s.isEmpty ? .nan : s.reduce(0, +) / Double(s.count)
      }
    }

    /// An app's share of all opens.
    public struct AppShare: Sendable, Equatable {
      public var app: String
      public var opens: Int
      /// Fraction of all opens, 0...1.
      public var share: Double
    }

    /// Users with at least one open.
    public var participants: Int
    /// (user, local date) pairs with at least one open.
    public var activeUserDays: Int
    /// All open events.
    public var opens: Int
    /// Active days per participant.
    public var activeDaysPerParticipant: Summary
    /// Opens per active user-day.
    public var opensPerActiveDay: Summary
    /// Opens per active user-day, ignoring `com.android.settings`.
    public var opensPerActiveDayWithoutSettings: Summary
    /// Same-app gaps, in minutes.
    public var sameAppGapMinutes: Summary
    /// Any-app gaps, in minutes.
    public var anyAppGapMinutes: Summary
    /// Session lengths (the `value` of opens), in seconds.
    public var sessionSeconds: Summary
    /// The ten most opened apps (ties by name), pooled over users.
    public var topApps: [AppShare]
    /// Share of opens of the ten most opened apps, 0...1.
    public var topTenShare: Double
    /// Per participant, the most-used app's share of that participant's opens.
    public var participantTopAppShare: Summary
    /// Share of opens by local hour 0...23; sums to 1 when there are opens.
    public var hourShare: [Double]

    /// Computes the statistics of the `open` events of `users`.
    public init(users: [UserTrace]) {
      var perDay: [Double] = [], perDayNoSettings: [Double] = [], activeDays: [Double] = []
      var same: [Double] = [], any: [Double] = [], sessions: [Double] = [], topShare: [Double] = []
      var appOpens: [String: Int] = [:]
      var hours = [Int](repeating: 0, count: 24)
      var participants = 0, opens = 0
      for u in users {
        var clock = LocalClock(u.timeZone)
        var days: [Int: Int] = [:], daysNoSettings: [Int: Int] = [:]
        var lastByApp = [Double?](repeating: nil, count: u.apps.count)
        var counts = [Int](repeating: 0, count: u.apps.count)
        var last: Double?
        var n = 0
        for e in u.events where e.kind == .open {
          n += 1
          let local = clock.local(e.time)
          let day = Int((local / 86_400).rounded(.down))
          days[day, default: 0] += 1
          let name = e.app >= 0 ? u.apps[Int(e.app)] : ""
          if name != "com.android.settings" { daysNoSettings[day, default: 0] += 1 }
          hours[min(23, max(0, Int(clock.hourOfDay(e.time))))] += 1
          if let l = last { any.append((e.time - l) / 60) }
          last = e.time
          if e.app >= 0 {
            let a = Int(e.app)
            if let l = lastByApp[a] { same.append((e.time - l) / 60) }
            lastByApp[a] = e.time
            counts[a] += 1
            appOpens[name, default: 0] += 1
          }
          sessions.append(e.value)
        }
        guard n > 0 else { continue }
        participants += 1
        opens += n
        activeDays.append(Double(days.count))
        perDay += days.values.map(Double.init)
        perDayNoSettings += daysNoSettings.values.map(Double.init)
        topShare.append(Double(counts.max() ?? 0) / Double(n))
      }
      self.participants = participants
      self.opens = opens
      self.activeUserDays = perDay.count
      self.activeDaysPerParticipant = Summary(activeDays)
      self.opensPerActiveDay = Summary(perDay)
      self.opensPerActiveDayWithoutSettings = Summary(perDayNoSettings)
      self.sameAppGapMinutes = Summary(same)
      self.anyAppGapMinutes = Summary(any)
      self.sessionSeconds = Summary(sessions)
      self.participantTopAppShare = Summary(topShare)
      let total = Double(max(opens, 1))
      let ranked = appOpens.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
      self.topApps = ranked.prefix(10).map { AppShare(app: $0.key, opens: $0.value, share: Double($0.value) / total) }
      self.topTenShare = opens == 0 ? .nan : Double(topApps.reduce(0) { $0 + $1.opens }) / total
      self.hourShare = hours.map { opens == 0 ? .nan : Double($0) / total }
    }


    /// A Markdown table of these statistics next to the reference values of
    /// domain.md §5.1, then the top-10 apps and the hourly shares.
    public func markdownComparison() -> String {
      func f(_ x: Double, _ d: Int = 0) -> String { CSV.number(x, decimals: d) }
      func pct(_ x: Double) -> String { CSV.number(x * 100, decimals: 1) + " %" }
      let rows: [(String, String, String)] = [
        ("Participants", "24", "\(participants)"),
        ("Active user-days", "1,086", "\(activeUserDays)"),
        ("Opens", "96,140", "\(opens)"),
        ("Active days per participant: median (p10, p90)", "52 (11, 68)",
         "\(f(activeDaysPerParticipant.median, 1)) (\(f(activeDaysPerParticipant.p10, 1)), \(f(activeDaysPerParticipant.p90, 1)))"),
        ("Opens per active user-day: median (p10, p90); mean", "74 (20, 180); 88.5",
         "\(f(opensPerActiveDay.median, 1)) (\(f(opensPerActiveDay.p10, 1)), \(f(opensPerActiveDay.p90, 1))); \(f(opensPerActiveDay.mean, 1))"),
        ("Same, without com.android.settings: median (p10, p90)", "66 (17, 172)",
         "\(f(opensPerActiveDayWithoutSettings.median, 1)) (\(f(opensPerActiveDayWithoutSettings.p10, 1)), \(f(opensPerActiveDayWithoutSettings.p90, 1)))"),
        ("Same-app gap, min: median (p25, p75)", "25 (6.5, 163)",
         "\(f(sameAppGapMinutes.median, 1)) (\(f(sameAppGapMinutes.p25, 1)), \(f(sameAppGapMinutes.p75, 1)))"),
        ("Any-app gap, min: p50, p75, p90", "1.8, 7.8, 29",
         "\(f(anyAppGapMinutes.median, 1)), \(f(anyAppGapMinutes.p75, 1)), \(f(anyAppGapMinutes.p90, 1))"),
        ("Top-10 apps' share of opens", "57 %", pct(topTenShare)),
        ("A participant's most-used app share: median (p10, p90)", "34 % (15 %, 52 %)",
         "\(pct(participantTopAppShare.median)) (\(pct(participantTopAppShare.p10)), \(pct(participantTopAppShare.p90)))"),
        ("Session length, s: median (p90) (capped)", "n/a",
         "\(f(sessionSeconds.median)) (\(f(sessionSeconds.p90)))"),
      ]
      var s = "| Statistic | Reference (domain.md §5.1) | This adapter |\n|---|---|---|\n"
      for r in rows { s += "| \(r.0) | \(r.1) | \(r.2) |\n" }
      s += "\nTop-10 apps (share of opens): "
      s += topApps.map { "\($0.app) \(f($0.share, 3))" }.joined(separator: ", ") + "\n"
      s += "\nReference: mms .102, viber .092, whatsapp .081, settings .066, htcdialer .054, line .045,"
      s += " google search .037, wechat .035, gosms .033, contacts .026\n"
      s += "\nShare of opens by local hour, 00→23:\n\n```\n"
      s += "this:      " + hourShare.map { f($0, 3) }.joined(separator: " ") + "\n"
      s += "reference: .046 .020 .012 .009 .004 .005 .017 .025 .030 .041 .051 .051"
      s += " .057 .052 .050 .046 .046 .056 .058 .062 .064 .061 .069 .068\n```\n"
      return s
    }
  }
}

// MARK: - Input

/// Line-by-line bytes of a plain file, or of `xz -dc <file>` for `.xz` paths.
///
/// A line is returned without its LF or CRLF and stays valid until the next
/// call. Lines longer than 1 MiB are an error.
private final class UbiqLogInput {
  let path: String
  /// Lines returned so far (1-based number of the last one).
  private(set) var line = 0
  private let fd: Int32
  private let process: Process?
  private let outputPipe: Pipe?
  private let errorPipe: Pipe?
  private let capacity = 1 << 20
  private let buf: UnsafeMutablePointer<UInt8>
  private var start = 0
  private var end = 0
  private var eof = false
  private var finished = false

  init(path: String) throws {
    self.path = path
    guard access(path, R_OK) == 0 else {
      throw TraceFormatError(file: path, line: 0, field: "-", message: "cannot open: \(String(cString: strerror(errno)))")
    }
    if path.hasSuffix(".xz") {
      let p = Process()
      p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
      p.arguments = ["xz", "-dc", "--", path]
      let out = Pipe(), err = Pipe()
      p.standardInput = FileHandle.nullDevice
      p.standardOutput = out
      p.standardError = err
      do {
        try p.run()
      } catch {
        throw TraceFormatError(file: path, line: 0, field: "-", message: "cannot run 'xz -dc': \(error)")
      }
      process = p
      outputPipe = out
      errorPipe = err
      fd = out.fileHandleForReading.fileDescriptor
    } else {
      let f = open(path, O_RDONLY)
      guard f >= 0 else {
        throw TraceFormatError(file: path, line: 0, field: "-", message: "cannot open: \(String(cString: strerror(errno)))")
      }
      fd = f
      process = nil
      outputPipe = nil
      errorPipe = nil
    }
    buf = .allocate(capacity: capacity)
  }

  deinit {
    if let p = process {
      // Closing our end makes a still-writing xz exit on SIGPIPE.
      try? outputPipe?.fileHandleForReading.close()
      if p.isRunning { p.terminate() }
      p.waitUntilExit()
    } else {
      close(fd)
    }
    buf.deallocate()
  }

  /// The next line without its line ending, or `nil` at the end.
  func nextLine() throws -> UnsafeBufferPointer<UInt8>? {
    while true {
      if start < end, let nl = memchr(buf + start, 10, end - start) {
        let at = UnsafeRawPointer(buf).distance(to: UnsafeRawPointer(nl))
        var stop = at
        if stop > start && buf[stop - 1] == 13 { stop -= 1 }
        let s = UnsafeBufferPointer(start: buf + start, count: stop - start)
        start = at + 1
        line += 1
        return s
      }
      if eof {
        guard start < end else { return nil }
        var stop = end
        if buf[stop - 1] == 13 { stop -= 1 }
        let s = UnsafeBufferPointer(start: buf + start, count: stop - start)
        start = end
        line += 1
        return s
      }
      if start > 0 {
        if end > start { memmove(buf, buf + start, end - start) }
        end -= start
        start = 0
      }
      if end == capacity {
        throw TraceFormatError(file: path, line: line + 1, field: "-", message: "line longer than \(capacity) bytes")
      }
      let n = read(fd, buf + end, capacity - end)
      if n < 0 {
        if errno == EINTR { continue }
        throw TraceFormatError(file: path, line: line, field: "-", message: "read error: \(String(cString: strerror(errno)))")
      }
      if n == 0 {
        eof = true
        try finish()  // report a failing xz before its partial output is parsed
      } else {
        end += n
      }
    }
  }

  /// Waits for `xz` and reports its failure; a no-op for plain files.
  func finish() throws {
    guard let p = process, !finished else { return }
    finished = true
    p.waitUntilExit()
    guard p.terminationReason == .exit, p.terminationStatus == 0 else {
      let data = (try? errorPipe?.fileHandleForReading.readToEnd()) ?? nil
      let message = String(decoding: data ?? Data(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
      let hint = p.terminationStatus == 127 ? " (is xz installed and on PATH?)" : ""
      throw TraceFormatError(
        file: path, line: line, field: "-",
        message: "'xz -dc' failed with status \(p.terminationStatus)\(hint): \(message)")
    }
  }
}
