import FetchSupport
import Foundation

/// The header row every canonical trace starts with (after optional `#`
/// comment lines; comments may only come before it, so a user id may start
/// with `#`).
package let traceHeader = "user,time,event,app,value"

/// Reads a canonical trace one user at a time, validating as it goes.
///
/// Memory is one user's events plus a read buffer of the longest line (and
/// as much scratch for unquoting), and 8 bytes per user read so far (to
/// detect a user whose rows are split). Errors are ``TraceFormatError``s
/// naming file, line and field. A line longer than `limits.maxLineBytes` or
/// a user with more than `limits.maxEventsPerUser` events is refused (see
/// ``ResourceLimits``), so a hostile file cannot exhaust memory.
///
///     let reader = try TraceReader(path: "trace.csv")
///     while let user = try reader.next() { ... }
///
/// - Complexity: O(bytes); each row is parsed once, in place, without
///   allocation except for new user ids and app names (an app name is looked
///   up by a key of its length and first and last bytes, then compared byte
///   for byte).
public final class TraceReader {
  /// The path given to `init`, used in error messages.
  public let path: String
  /// The line the last record read starts on.
  @exclusivity(unchecked) public private(set) var line = 0
  /// Bytes consumed so far.
  package var bytesRead: Int { reader.bytesRead }

  /// Longest accepted line by default, in bytes; longer lines are an error.
  package static let maxLineBytes = ResourceLimits().maxLineBytes
  /// The size limits this reader enforces.
  package let limits: ResourceLimits
  /// Called with every block of bytes as it is read from the file, in
  /// order (to hash exactly the bytes parsed, without a second pass).
  package var onRead: ((UnsafeRawBufferPointer) -> Void)? {
    get { reader.onRead }
    set { reader.onRead = newValue }
  }

  typealias Bytes = UnsafeBufferPointer<UInt8>

  private let fd: Int32
  /// The records of the file; a quoted field may hold a line break.
  let reader: LineReader
  /// Unquoted copies of quoted fields (never longer than the line).
  let unquoted: UnsafeMutablePointer<UInt8>
  @exclusivity(unchecked) var sawHeader = false
  /// 64-bit hashes of finished user ids (8 bytes a user), to catch a user
  /// whose rows are split.
  @exclusivity(unchecked) var finishedUsers = Set<UInt64>()
  /// Users to pass over, by the ``StableHash/fnv1a(_:)`` hash of their id
  /// (nil: none). A user it returns true for at its `begin` row is read
  /// only as far as its `end` row and not returned: of its other rows only
  /// the user id and whether the row is an `end` row are read, so their
  /// errors (a bad time, event, app or value, unsorted rows, too many
  /// events) are not reported. A row of another user before the `end` row
  /// is still an error, as is a file ending inside the user. The
  /// population fit uses it for the users it would not sample.
  package var skip: ((UInt64) -> Bool)?

  /// The user being read, kept in `next()`'s locals while it runs.
  struct UserState {
    var inUser = false
    /// The user is one ``skip`` passes over.
    var skipping = false
    /// ``StableHash/fnv1a(_:)`` of `user`.
    var userHash: UInt64 = 0
    var firstLine = 0
    var user = ""
    var userBytes: [UInt8] = []
    var timeZone = TraceTimeZone.utc
    var start = 0.0
    var lastTime = -Double.infinity
    var apps: [String] = []
    var events: [TraceEvent] = []
    /// The bytes of `apps`' names, by index.
    var appTable = NameTable()
    /// Region ids named by `location` rows (``UserTrace/regions``).
    var regions: [String] = []
    /// `regions` by id, compared as strings (canonically equivalent
    /// spellings, NFC and NFD, are one region).
    var regionIndex: [String: Int32] = [:]
    /// Every byte spelling of a region id read so far, and its region
    /// (`regionOfSpelling`, by spelling index).
    var regionTable = NameTable()
    var regionOfSpelling: [Int32] = []
  }
  @exclusivity(unchecked) private var state = UserState()
  /// The ``NameTable`` probes of the last user returned (its app names and
  /// region ids), a measure of the interning work for tests.
  @exclusivity(unchecked) package private(set) var lastNameProbes = 0
  /// Events of the previous user, to reserve as much for the next.
  @exclusivity(unchecked) private var lastEventCount = 0

  /// Opens a canonical trace (`-` for standard input).
  ///
  /// - Throws: ``TraceFormatError`` when the file cannot be read or its header is wrong.
  public init(path: String, limits: ResourceLimits = .current) throws {
    self.path = path
    self.limits = limits
    let f = open(path, O_RDONLY)
    guard f >= 0 else {
      throw TraceFormatError(file: path, line: 0, field: "-", message: "cannot open: \(String(cString: strerror(errno)))")
    }
    fd = f
    reader = LineReader(fd: f, maxLineBytes: limits.maxLineBytes, quotedLineBreaks: true)
    unquoted = .allocate(capacity: limits.maxLineBytes + 2)
  }

  /// A reader of one chunk of a trace held in memory (`count` bytes at
  /// `bytes`, kept valid by the caller while the reader lives), for
  /// ``ParallelTraceReader``'s workers: lines are numbered from 1 within
  /// the chunk, and a chunk after the first starts past the header
  /// (`sawHeader`).
  init(path: String, limits: ResourceLimits, borrowing bytes: UnsafeMutablePointer<UInt8>, count: Int, sawHeader: Bool) {
    self.path = path
    self.limits = limits
    fd = -1
    reader = LineReader(borrowing: bytes, count: count, maxLineBytes: limits.maxLineBytes, quotedLineBreaks: true)
    unquoted = .allocate(capacity: limits.maxLineBytes + 2)
    self.sawHeader = sawHeader
  }

  /// Continues reading at byte `offset`, a record start between two users
  /// on line `line`, as a reader that has read everything before it would:
  /// past the header when `sawHeader`, with the hashes of the users
  /// finished so far (``ParallelTraceReader`` handing over to this reader).
  ///
  /// - Precondition: nothing read yet.
  func resume(atByte offset: Int, line: Int, sawHeader: Bool, finishedUsers: Set<UInt64>) throws {
    do {
      try reader.resume(atByte: offset, line: line)
    } catch {
      throw TraceFormatError(file: path, error, hint: ResourceLimits.lineLimitHint)
    }
    self.line = line - 1
    self.sawHeader = sawHeader
    self.finishedUsers = finishedUsers
  }

  deinit {
    if fd >= 0 { close(fd) }
    unquoted.deallocate()
  }

  func fail(_ field: String, _ message: String) -> TraceFormatError {
    TraceFormatError(file: path, line: line, field: field, message: message)
  }

  /// Returns the next record's bytes (without the line ending) or `nil` at
  /// EOF. The bytes stay valid until the next call.
  ///
  /// A short record without quotes comes with a bit per comma
  /// (``LineReader/nextShort()``, one pass for the line break and the
  /// commas); `commas` is 0 for the others.
  private func nextLine() throws -> (record: Bytes, commas: UInt64)? {
    do {
      if let short = try reader.nextShort() {
        line = reader.line
        return short
      }
      guard let s = try reader.next() else { return nil }
      line = reader.line
      return (s, 0)
    } catch let f as LineReader.Failure {
      throw TraceFormatError(file: path, f, hint: ResourceLimits.lineLimitHint)
    }
  }

  static let columns = ["user", "time", "event", "app", "value"]

  func text(_ b: Bytes, _ field: String) throws -> String {
    guard let s = String(validating: b, as: UTF8.self) else { throw fail(field, "not valid UTF-8") }
    return s
  }

  private func number(_ b: Bytes, _ field: String) throws -> Double {
    if let x = TraceReader.fastDecimal(b) { return x }
    guard DecimalText.isDecimal(b), let s = String(validating: b, as: UTF8.self), let x = Double(s) else {
      throw fail(field, "expected a decimal number (such as 35 or 1.5e3), found '\(escapedName(String(decoding: b.prefix(40), as: UTF8.self)))'")
    }
    guard x.isFinite else { throw fail(field, "number '\(String(decoding: b.prefix(40), as: UTF8.self))' is beyond ±1.8e308") }
    return x
  }

  /// The `time` column: Unix seconds, or ISO 8601 with `Z` or an offset
  /// (``TimeText/parseISO8601(_:)-(UnsafeBufferPointer<UInt8>)``); a number
  /// outside ``TimeText/plausibleTimes`` is refused with the unit it looks
  /// like or the range (``TimeText/outOfRangeMessage(_:)``).
  private func timeField(_ b: Bytes) throws -> Double {
    let time: Double
    if let x = TraceReader.fastDecimal(b) {
      time = x
    } else if b.count >= 16, b[4] == 45, let iso = TimeText.parseISO8601(b) {
      guard let t = iso.unixSeconds else {
        throw fail("time", "ISO 8601 time '\(String(decoding: b, as: UTF8.self))' has no zone: add Z (UTC) or an offset such as +01:00")
      }
      time = t
    } else if TimeText.looksLikeDate(b) {
      throw fail("time", TimeText.notATimeMessage(escapedName(String(decoding: b.prefix(40), as: UTF8.self))))
    } else {
      time = try number(b, "time")
    }
    guard TimeText.plausibleTimes.contains(time) else { throw fail("time", TimeText.outOfRangeMessage(time)) }
    return time
  }

  /// The `event` column: an event kind, or `begin`/`end` (as `nil` kinds).
  private enum RowKind { case begin, end, event(EventKind) }

  /// Names of the network kinds, as bytes, in ``NetworkKind`` order.
  private static let networkNames: [[UInt8]] = NetworkKind.allCases.map { Array($0.description.utf8) }

  static func equal(_ b: Bytes, _ name: [UInt8]) -> Bool {
    name.withUnsafeBufferPointer { equal(b, $0.baseAddress, $0.count) }
  }

  static func equal(_ b: Bytes, _ name: StaticString) -> Bool {
    equal(b, name.utf8Start, name.utf8CodeUnitCount)
  }

  /// Whether `b` holds exactly the `count` bytes at `p`: up to 16 bytes
  /// by two overlapping loads of each (inline, no call), more by `memcmp`.
  @inline(__always) static func equal(_ b: Bytes, _ p: UnsafePointer<UInt8>?, _ count: Int) -> Bool {
    guard b.count == count else { return false }
    guard count > 0, let p else { return true }
    let x = UnsafeRawPointer(b.baseAddress!)
    let y = UnsafeRawPointer(p)
    switch count {
    case 8...16:
      return x.loadUnaligned(as: UInt64.self) == y.loadUnaligned(as: UInt64.self)
        && x.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
          == y.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
    case 4..<8:
      return x.loadUnaligned(as: UInt32.self) == y.loadUnaligned(as: UInt32.self)
        && x.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
          == y.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
    case 1..<4:
      // First, middle and last byte cover 1 to 3 bytes.
      return x.load(as: UInt8.self) == y.load(as: UInt8.self)
        && x.load(fromByteOffset: count >> 1, as: UInt8.self) == y.load(fromByteOffset: count >> 1, as: UInt8.self)
        && x.load(fromByteOffset: count - 1, as: UInt8.self) == y.load(fromByteOffset: count - 1, as: UInt8.self)
    default:
      return memcmp(x, y, count) == 0
    }
  }

  private func rowKind(_ b: Bytes) throws -> RowKind {
    if b.count > 0 {
      // The candidate from the length and first byte, then one comparison
      // (with a literal: no lazily initialised table on this path).
      let guess: (RowKind, StaticString)? =
        switch (b.count, b[0]) {
        case (4, 111): (.event(.open), "open")
        case (4, 119): (.event(.wake), "wake")
        case (7, 98): (.event(.battery), "battery")
        case (12, 99): (.event(.chargeStart), "charge_start")
        case (10, 99): (.event(.chargeEnd), "charge_end")
        case (7, 110): (.event(.network), "network")
        case (6, 117): (.event(.update), "update")
        case (8, 108): (.event(.location), "location")
        case (5, 98): (.begin, "begin")
        case (3, 101): (.end, "end")
        default: nil
        }
      if let guess, TraceReader.equal(b, guess.1) { return guess.0 }
    }
    let name = try text(b, "event")
    throw fail("event", "unknown event '\(escapedName(String(name.prefix(40))))' (expected begin, open, wake, battery, charge_start, charge_end, network, update, location, end)")
  }

  /// The next complete user, or `nil` after the last one.
  public func next() throws -> UserTrace? {
    var u = state
    state = UserState()
    defer { state = u }
    while let (raw, commas) = try nextLine() {
      if raw.isEmpty { continue }
      if !sawHeader {
        try headerLine(raw)
        continue
      }
      if u.skipping, let end = TraceReader.isEndRow(raw, commas: commas, of: u.userBytes) {
        if end { finishSkipped(&u) }
        continue
      }
      let f = try split(raw, commas: commas)
      let userField = f.0
      guard !userField.isEmpty else { throw fail("user", "empty user id") }
      if u.skipping, TraceReader.equal(userField, u.userBytes) {
        if case .end = try rowKind(f.2) { finishSkipped(&u) }
        continue
      }
      let time = try timeField(f.1)
      let row = try rowKind(f.2)

      if case .begin = row {
        try beginUser(f, time: time, &u)
        continue
      }
      try checkRowOrder(f, time: time, &u)
      guard case .event(let kind) = row else { return try endUser(f, time: time, &u) }
      // The event's app and value, checked here rather than in a helper:
      // this runs for every row, and the compiler does not inline it.
      var app: Int32 = -1
      if !f.3.isEmpty {
        guard kind == .open || kind == .wake || kind == .update else {
          throw fail("app", "'\(kind)' takes no app")
        }
        app = try self.app(f.3, &u)
      } else if kind == .open || kind == .update {
        throw fail("app", "'\(kind)' needs an app")
      }
      var value = 0.0
      switch kind {
      case .open, .wake:
        guard !f.4.isEmpty else { throw fail("value", "'\(kind)' needs a duration in seconds") }
        value = try number(f.4, "value")
        guard value >= 0, value <= 86_400 else { throw fail("value", "duration \(CSV.number(value)) s is outside 0...86400") }
      case .battery:
        value = try number(f.4, "value")
        guard value >= 0, value <= 100 else { throw fail("value", "battery level \(CSV.number(value)) is outside 0...100 %") }
      case .network:
        guard let k = TraceReader.networkNames.firstIndex(where: { TraceReader.equal(f.4, $0) }) else {
          let name = try text(f.4, "value")
          throw fail("value", "unknown network '\(escapedName(String(name.prefix(40))))' (expected offline, wifi, cellular, lte, 3g, 5g)")
        }
        value = Double(NetworkKind.allCases[k].rawValue)
      case .update:
        // Optional: the new item's size in bytes (large content); empty or
        // 0 = the world's drawn response size.
        if !f.4.isEmpty {
          value = try number(f.4, "value")
          guard value >= 0, value <= 1e12 else { throw fail("value", "item size \(CSV.number(value)) bytes is outside 0...1e12") }
        }
      case .chargeStart, .chargeEnd:
        guard f.4.isEmpty else { throw fail("value", "'\(kind)' takes no value") }
      case .location:
        value = try locationValue(f.4, &u).code
      }
      guard u.events.count < limits.maxEventsPerUser else { throw tooManyEvents(u) }
      u.events.append(TraceEvent(time: time, kind: kind, app: app, value: value))
    }
    try checkEndOfFile(u)
    return nil
  }

  /// The five fields of a row.
  typealias Fields = (Bytes, Bytes, Bytes, Bytes, Bytes)

  /// A line before the header: a `#` comment, or the header itself (a
  /// UTF-8 byte order mark may precede the first line).
  private func headerLine(_ raw: Bytes) throws {
    if raw[0] == 35 { return }  // '#' comments, before the header only
    let bom = line == 1 && raw.count >= 3 && raw[0] == 0xEF && raw[1] == 0xBB && raw[2] == 0xBF
    let header = bom ? Bytes(rebasing: raw[3...]) : raw
    if !header.isEmpty && header[0] == 35 { return }
    guard TraceReader.equal(header, TraceReader.headerBytes) else {
      if header.contains(13) {
        throw fail("-", TraceFormatError.crLineEnds)
      }
      throw fail("-", "expected header '\(traceHeader)'" + TraceReader.headerHint(header))
    }
    sawHeader = true
  }

  /// A `begin` row: checks the user id and time zone and starts the user
  /// (or its skipping, when ``skip`` passes over it).
  private func beginUser(_ f: Fields, time: Double, _ u: inout UserState) throws {
    let userField = f.0
    if u.inUser {
      throw fail("event", "user '\(u.user)' (begun on line \(u.firstLine)) has no 'end' row before this 'begin'")
    }
    let name = try text(userField, "user")
    if let problem = TraceReader.nameProblem(name, bytes: userField.count, what: "user id") { throw fail("user", problem) }
    let hash = StableHash.fnv1a(name)
    guard !finishedUsers.contains(hash) else {
      throw fail("user", "user '\(escapedName(name))' appears again; each user's rows must be contiguous")
    }
    guard f.3.isEmpty else { throw fail("app", "'begin' takes no app") }
    let tzText = try text(f.4, "value")
    guard let tz = TraceTimeZone(parsing: tzText) else {
      throw fail("value", "unknown time zone '\(escapedName(String(tzText.prefix(40))))' (\(TraceTimeZone.unknownHint(tzText)))")
    }
    u.inUser = true
    u.user = name
    u.userHash = hash
    u.userBytes = Array(userField)
    if let skip, skip(hash) {
      u.skipping = true
      u.firstLine = line
      return
    }
    u.timeZone = tz
    u.start = time
    u.apps = []
    u.regions = []
    u.regionIndex = [:]
    u.regionTable.removeAll()
    u.regionOfSpelling.removeAll(keepingCapacity: true)
    u.events = []
    u.events.reserveCapacity(min(lastEventCount, limits.maxEventsPerUser))
    u.appTable.removeAll()
    u.firstLine = line
    u.lastTime = time
  }

  /// A row after `begin`: it must be the current user's, not earlier than
  /// the previous row.
  @inline(__always) private func checkRowOrder(_ f: Fields, time: Double, _ u: inout UserState) throws {
    let userField = f.0
    guard u.inUser else { throw outsideUser(f.2, userField) }
    guard TraceReader.equal(userField, u.userBytes) else {
      throw fail("user", "user '\(escapedName(String(decoding: userField.prefix(TraceReader.maxNameBytes), as: UTF8.self)))' starts before user '\(u.user)' has its 'end' row")
    }
    guard time >= u.lastTime else {
      throw fail("time", "time \(CSV.number(time)) is earlier than the previous row's \(CSV.number(u.lastTime)); rows of a user must be sorted by time")
    }
    u.lastTime = time
  }

  /// The `end` row: the user is finished and returned.
  private func endUser(_ f: Fields, time: Double, _ u: inout UserState) throws -> UserTrace {
    guard f.3.isEmpty, f.4.isEmpty else { throw fail(f.3.isEmpty ? "value" : "app", "'end' takes no app or value") }
    u.inUser = false
    finishedUsers.insert(u.userHash)
    lastEventCount = u.events.count
    var trace = UserTrace(user: u.user, timeZone: u.timeZone, start: u.start, end: time, apps: u.apps, events: u.events)
    trace.regions = u.regions
    lastNameProbes = u.appTable.probes + u.regionTable.probes
    u.regions = []
    u.apps = []
    u.events = []
    return trace
  }

  /// The error for a user with more events than ``ResourceLimits/maxEventsPerUser``.
  private func tooManyEvents(_ u: UserState) -> TraceFormatError {
    fail(
      "user",
      "user '\(u.user)' (begun on line \(u.firstLine)) has more than \(limits.maxEventsPerUser) events, "
        + "the limit of one user in memory (FETCHLAB_MAX_EVENTS_PER_USER raises it)")
  }

  /// At the end of the file: the header was read and no user is left open.
  private func checkEndOfFile(_ u: UserState) throws {
    if !sawHeader {
      throw TraceFormatError(file: path, line: line, field: "-", message: "empty trace: no header row '\(traceHeader)'")
    }
    if u.inUser {
      throw TraceFormatError(file: path, line: line, field: "-", message: "file ends inside user '\(u.user)' (begun on line \(u.firstLine)): no 'end' row; is the file truncated?")
    }
  }

  private static let headerBytes = Array(traceHeader.utf8)

  /// The error for a row `event` of user `user` outside any user's
  /// `begin`...`end`: after that user's `end` row, or before its `begin`.
  private func outsideUser(_ event: Bytes, _ user: Bytes) -> TraceFormatError {
    let name = String(decoding: user.prefix(TraceReader.maxNameBytes), as: UTF8.self)
    let kind = String(decoding: event.prefix(40), as: UTF8.self)
    if let id = String(validating: user, as: UTF8.self), finishedUsers.contains(StableHash.fnv1a(id)) {
      return fail("event", "'\(kind)' row after the 'end' row of user '\(escapedName(name))'; a user's rows end with its 'end' row")
    }
    return fail("event", "'\(kind)' row before any 'begin' row for user '\(escapedName(name))'")
  }

  /// A skipped user's `end` row: the user is finished, nothing returned.
  private func finishSkipped(_ u: inout UserState) {
    u.inUser = false
    u.skipping = false
    finishedUsers.insert(u.userHash)
  }

  /// Whether `raw`, a row of the skipped user whose id is `user`, is its
  /// `end` row, read without splitting the row: it must start with the id
  /// and a comma, and its time and event fields hold no quote; otherwise
  /// nil (the row is then split like any other, and exactly the rows a
  /// split reads as the user's `end` row end it).
  ///
  /// A row without quotes whose commas ``nextLine()`` found (`commas`, a
  /// bit per comma; 0 for other rows) is read from its first three commas.
  ///
  /// - Complexity: O(length of the user id) for a row whose commas are
  ///   known, else O(length of the first three fields).
  private static func isEndRow(_ raw: Bytes, commas: UInt64, of user: [UInt8]) -> Bool? {
    // At least three commas: the user, time and event fields are known.
    var rest = commas & (commas &- 1)
    if rest & (rest &- 1) != 0 {
      let m = user.count
      // A first comma elsewhere: an id with a comma (quoted in its
      // `begin` row), or another user; the byte loop decides, as before.
      guard commas.trailingZeroBitCount == m else { return isEndRow(raw, of: user) }
      guard equal(Bytes(rebasing: raw[..<m]), user) else { return nil }
      let kind = rest.trailingZeroBitCount + 1
      rest &= rest &- 1
      return rest.trailingZeroBitCount - kind == 3 && raw[kind] == 101 && raw[kind + 1] == 110 && raw[kind + 2] == 100
    }
    return isEndRow(raw, of: user)
  }

  /// ``isEndRow(_:commas:of:)`` by scanning the row's bytes.
  private static func isEndRow(_ raw: Bytes, of user: [UInt8]) -> Bool? {
    let n = raw.count
    let m = user.count
    guard n > m, raw[m] == 44, equal(Bytes(rebasing: raw[..<m]), user) else { return nil }
    var i = m + 1
    while i < n && raw[i] != 44 {  // the time
      if raw[i] == 34 { return nil }
      i += 1
    }
    i += 1
    let kind = i
    while i < n && raw[i] != 44 {  // the event
      if raw[i] == 34 { return nil }
      i += 1
    }
    guard i < n else { return nil }
    return i - kind == 3 && raw[kind] == 101 && raw[kind + 1] == 110 && raw[kind + 2] == 100  // "end"
  }
}
