import Foundation

/// The header row every canonical trace starts with (after optional `#`
/// comment lines; comments may only come before it, so a user id may start
/// with `#`).
public let traceHeader = "user,time,event,app,value"

/// Reads a canonical trace one user at a time, validating as it goes.
///
/// Memory is one user's events plus a read buffer of the longest line, and
/// 8 bytes per user read so far (to detect a user whose rows are split).
/// Errors are ``TraceFormatError``s naming file, line and field. A line
/// longer than `limits.maxLineBytes` or a user with more than
/// `limits.maxEventsPerUser` events is refused (see ``ResourceLimits``), so a
/// hostile file cannot exhaust memory.
///
///     let reader = try TraceReader(path: "trace.csv")
///     while let user = try reader.next() { ... }
///
/// - Complexity: O(bytes); each row is parsed once without allocation except
///   for new user ids and app names.
public final class TraceReader {
  /// The path given to `init`, used in error messages.
  public let path: String
  /// Lines consumed so far.
  public private(set) var line = 0
  /// Bytes consumed so far.
  public private(set) var bytesRead = 0

  /// Longest accepted line by default, in bytes; longer lines are an error.
  public static let maxLineBytes = ResourceLimits().maxLineBytes
  /// The size limits this reader enforces.
  public let limits: ResourceLimits

  private let file: UnsafeMutablePointer<FILE>
  private var buf: [UInt8]
  private var bufStart = 0
  private var bufEnd = 0
  private var eof = false
  private var sawHeader = false
  /// 64-bit hashes of finished user ids (8 bytes a user), to catch a user
  /// whose rows are split.
  private var finishedUsers = Set<UInt64>()
  private var pending: UserTrace?
  private var pendingLine = 0
  private var appIndex: [String: Int32] = [:]
  private var lastTime = -Double.infinity

  public init(path: String, limits: ResourceLimits = .current) throws {
    self.path = path
    self.limits = limits
    buf = [UInt8](repeating: 0, count: max(limits.maxLineBytes + 2, 1 << 16))
    guard let f = fopen(path, "rb") else {
      throw TraceFormatError(file: path, line: 0, field: "-", message: "cannot open: \(String(cString: strerror(errno)))")
    }
    file = f
  }

  deinit { fclose(file) }

  private func fail(_ field: String, _ message: String) -> TraceFormatError {
    TraceFormatError(file: path, line: line, field: field, message: message)
  }

  private func tooLong() -> TraceFormatError {
    fail("-", "line longer than \(limits.maxLineBytes) bytes (the limit; FETCHLAB_MAX_LINE_BYTES raises it)")
  }

  /// Returns the next line's bytes (without the line ending) or `nil` at EOF.
  private func nextLine() throws -> ArraySlice<UInt8>? {
    while true {
      if let nl = buf[bufStart..<bufEnd].firstIndex(of: 10) {
        var end = nl
        if end > bufStart && buf[end - 1] == 13 { end -= 1 }
        let s = buf[bufStart..<end]
        bytesRead += nl + 1 - bufStart
        bufStart = nl + 1
        line += 1
        if s.count > limits.maxLineBytes { throw tooLong() }
        return s
      }
      if eof {
        guard bufStart < bufEnd else { return nil }
        var end = bufEnd
        if buf[end - 1] == 13 { end -= 1 }
        let s = buf[bufStart..<end]
        bytesRead += bufEnd - bufStart
        bufStart = bufEnd
        line += 1
        if s.count > limits.maxLineBytes { throw tooLong() }
        return s
      }
      // Shift the partial line to the front and read more.
      if bufStart > 0 {
        buf.withUnsafeMutableBufferPointer { p in
          let n = bufEnd - bufStart
          if n > 0 { memmove(p.baseAddress!, p.baseAddress! + bufStart, n) }
        }
        bufEnd -= bufStart
        bufStart = 0
      }
      if bufEnd == buf.count {
        line += 1
        throw tooLong()
      }
      let n = buf.withUnsafeMutableBufferPointer { p in
        fread(p.baseAddress! + bufEnd, 1, p.count - bufEnd, file)
      }
      if n == 0 {
        if ferror(file) != 0 { throw fail("-", "read error: \(String(cString: strerror(errno)))") }
        eof = true
      }
      bufEnd += n
    }
  }

  /// Splits a line into exactly five fields, honouring RFC 4180 quotes.
  private func split(_ s: ArraySlice<UInt8>) throws -> [ArraySlice<UInt8>] {
    var fields: [ArraySlice<UInt8>] = []
    fields.reserveCapacity(5)
    var i = s.startIndex
    while true {
      if i < s.endIndex && s[i] == 34 {  // quoted field: unescape into a copy
        var out: [UInt8] = []
        var j = i + 1
        var closed = false
        while j < s.endIndex {
          if s[j] == 34 {
            if j + 1 < s.endIndex && s[j + 1] == 34 { out.append(34); j += 2; continue }
            closed = true
            j += 1
            break
          }
          out.append(s[j]); j += 1
        }
        guard closed else { throw fail(TraceReader.columns[min(fields.count, 4)], "unterminated quoted field") }
        guard j == s.endIndex || s[j] == 44 else { throw fail(TraceReader.columns[min(fields.count, 4)], "text after closing quote") }
        fields.append(out[...])
        if j == s.endIndex { break }
        i = j + 1
      } else {
        let end = s[i...].firstIndex(of: 44) ?? s.endIndex
        fields.append(s[i..<end])
        if end == s.endIndex { break }
        i = end + 1
      }
    }
    guard fields.count == 5 else {
      throw fail("-", "expected 5 fields (\(traceHeader)), found \(fields.count)")
    }
    return fields
  }

  static let columns = ["user", "time", "event", "app", "value"]

  private func text(_ b: ArraySlice<UInt8>, _ field: String) throws -> String {
    guard let s = String(validating: b, as: UTF8.self) else { throw fail(field, "not valid UTF-8") }
    return s
  }

  private func number(_ b: ArraySlice<UInt8>, _ field: String) throws -> Double {
    if let x = TraceReader.fastDecimal(b) { return x }
    guard let s = String(validating: b, as: UTF8.self), let x = Double(s), x.isFinite else {
      throw fail(field, "expected a finite number, found '\(String(decoding: b.prefix(40), as: UTF8.self))'")
    }
    return x
  }

  /// Parses `-?digits(.digits)?` quickly; `nil` for anything else.
  static func fastDecimal(_ b: ArraySlice<UInt8>) -> Double? {
    var i = b.startIndex
    guard i < b.endIndex else { return nil }
    var neg = false
    if b[i] == 45 { neg = true; i += 1 }
    var mant: UInt64 = 0
    var digits = 0
    var scale = 0
    var sawDot = false
    while i < b.endIndex {
      let c = b[i]
      if c >= 48 && c <= 57 {
        guard digits < 18 else { return nil }
        mant = mant * 10 + UInt64(c - 48)
        digits += 1
        if sawDot { scale += 1 }
      } else if c == 46 && !sawDot {
        sawDot = true
      } else {
        return nil
      }
      i += 1
    }
    // Above 2^53 the mantissa itself would round, and dividing a rounded
    // mantissa rounds twice; let the slow path parse those exactly.
    guard digits > 0, mant <= 1 << 53 else { return nil }
    var x = Double(mant)
    if scale > 0 { x /= TraceReader.pow10[scale] }
    return neg ? -x : x
  }

  static let pow10: [Double] = (0...18).map { (0..<$0).reduce(1.0) { a, _ in a * 10 } }

  /// The next complete user, or `nil` after the last one.
  public func next() throws -> UserTrace? {
    while let raw = try nextLine() {
      if raw.isEmpty { continue }
      if !sawHeader && raw.first == 35 { continue }  // '#' comments, before the header only
      if !sawHeader {
        guard raw.elementsEqual(traceHeader.utf8) else {
          throw fail("-", "expected header '\(traceHeader)'")
        }
        sawHeader = true
        continue
      }
      let f = try split(raw)
      let userField = f[0]
      guard !userField.isEmpty else { throw fail("user", "empty user id") }
      let time = try number(f[1], "time")
      guard abs(time) < 1e11 else { throw fail("time", "time \(time) is not a plausible Unix time in seconds") }
      let eventName = try text(f[2], "event")

      if eventName == "begin" {
        if let p = pending {
          throw fail("event", "user '\(p.user)' (begun on line \(pendingLine)) has no 'end' row before this 'begin'")
        }
        let user = try text(userField, "user")
        guard !finishedUsers.contains(StableHash.fnv1a(user)) else {
          throw fail("user", "user '\(user)' appears again; each user's rows must be contiguous")
        }
        guard f[3].isEmpty else { throw fail("app", "'begin' takes no app") }
        let tzText = try text(f[4], "value")
        guard let tz = TraceTimeZone(parsing: tzText) else {
          throw fail("value", "unknown time zone '\(tzText)' (use UTC, +HH:MM or an IANA name)")
        }
        pending = UserTrace(user: user, timeZone: tz, start: time, end: time)
        pendingLine = line
        appIndex.removeAll(keepingCapacity: true)
        lastTime = time
        continue
      }

      guard var cur = pending else {
        throw fail("event", "'\(eventName)' row before any 'begin' row for user '\(String(decoding: userField, as: UTF8.self))'")
      }
      guard userField.elementsEqual(cur.user.utf8) else {
        throw fail("user", "user '\(String(decoding: userField, as: UTF8.self))' starts before user '\(cur.user)' has its 'end' row")
      }
      guard time >= lastTime else {
        throw fail("time", "time \(CSV.number(time)) is earlier than the previous row's \(CSV.number(lastTime)); rows of a user must be sorted by time")
      }
      lastTime = time

      if eventName == "end" {
        guard f[3].isEmpty, f[4].isEmpty else { throw fail(f[3].isEmpty ? "value" : "app", "'end' takes no app or value") }
        cur.end = time
        pending = nil
        finishedUsers.insert(StableHash.fnv1a(cur.user))
        return cur
      }
      guard let kind = EventKind.allCases.first(where: { $0.description == eventName }) else {
        throw fail("event", "unknown event '\(eventName)' (expected begin, open, wake, battery, charge_start, charge_end, network, update, end)")
      }
      pending = nil  // avoid a copy-on-write of the events array
      var app: Int32 = -1
      if !f[3].isEmpty {
        guard kind == .open || kind == .wake || kind == .update else {
          pending = cur
          throw fail("app", "'\(eventName)' takes no app")
        }
        let name = try text(f[3], "app")
        if let i = appIndex[name] {
          app = i
        } else {
          app = Int32(cur.apps.count)
          cur.apps.append(name)
          appIndex[name] = app
        }
      } else if kind == .open || kind == .update {
        throw fail("app", "'\(eventName)' needs an app")
      }
      var value = 0.0
      switch kind {
      case .open, .wake:
        guard !f[4].isEmpty else { throw fail("value", "'\(eventName)' needs a duration in seconds") }
        value = try number(f[4], "value")
        guard value >= 0, value <= 86_400 else { throw fail("value", "duration \(CSV.number(value)) s is outside 0...86400") }
      case .battery:
        value = try number(f[4], "value")
        guard value >= 0, value <= 100 else { throw fail("value", "battery level \(CSV.number(value)) is outside 0...100 %") }
      case .network:
        let name = try text(f[4], "value")
        guard let n = NetworkKind(name: name) else {
          throw fail("value", "unknown network '\(name)' (expected offline, wifi, cellular, lte, 3g, 5g)")
        }
        value = Double(n.rawValue)
      case .chargeStart, .chargeEnd, .update:
        guard f[4].isEmpty else { throw fail("value", "'\(eventName)' takes no value") }
      }
      guard cur.events.count < limits.maxEventsPerUser else {
        throw fail(
          "user",
          "user '\(cur.user)' (begun on line \(pendingLine)) has more than \(limits.maxEventsPerUser) events, "
            + "the limit of one user in memory (FETCHLAB_MAX_EVENTS_PER_USER raises it)")
      }
      cur.events.append(TraceEvent(time: time, kind: kind, app: app, value: value))
      pending = cur
    }
    if !sawHeader {
      throw TraceFormatError(file: path, line: line, field: "-", message: "empty trace: no header row '\(traceHeader)'")
    }
    if let p = pending {
      throw TraceFormatError(file: path, line: line, field: "-", message: "file ends inside user '\(p.user)' (begun on line \(pendingLine)): no 'end' row; is the file truncated?")
    }
    return nil
  }
}
