import FetchSupport

/// Reading times written as text: ISO 8601 date-times, and the hint for
/// numbers that are Unix times in the wrong unit. Shared by the trace reader
/// (`time` column) and ``EventLogImporter``.
package enum TimeText {
  /// An ISO 8601 date-time: seconds since 1970-01-01 00:00:00 of its wall
  /// clock, and its zone offset east of UTC in seconds (`nil` without one).
  /// The Unix time is `wallSeconds − offset`.
  package struct ISO8601: Sendable, Equatable {
    package var wallSeconds: Double
    package var offset: Int?
    /// The Unix time, when the text has a zone (`Z` or an offset).
    package var unixSeconds: Double? { offset.map { wallSeconds - Double($0) } }
  }

  /// Parses `YYYY-MM-DD(T|t| )HH:MM[:SS[(.|,)fraction]][Z|z|±HH:MM|±HHMM|±HH]`
  /// (proleptic Gregorian, the extended format of ISO 8601 / RFC 3339, with
  /// the space separator and lowercase `t`, `z` RFC 3339 allows; offset
  /// hours 00–14, minutes 00–59); `nil` for anything else, including
  /// invalid dates (2026-02-30), times (24:00, a leap second :60), week
  /// or ordinal dates and a date alone. docs/trace-format.md states the
  /// grammar, which the Python package's loader shares.
  ///
  ///     TimeText.parseISO8601("2026-01-05T08:00:00+01:00")?.unixSeconds  // 1767596400
  ///
  /// - Complexity: O(length), no allocation.
  package static func parseISO8601(_ b: UnsafeBufferPointer<UInt8>) -> ISO8601? {
    let n = b.count
    guard n >= 16, b[4] == 45, b[7] == 45, b[10] == 84 || b[10] == 32 || b[10] == 116, b[13] == 58 else {
      return nil
    }
    func num(_ from: Int, _ count: Int) -> Int? {
      guard from + count <= n else { return nil }
      var v = 0
      for i in from..<(from + count) {
        let c = b[i] &- 48
        guard c < 10 else { return nil }
        v = v * 10 + Int(c)
      }
      return v
    }
    guard let y = num(0, 4), let mo = num(5, 2), let d = num(8, 2), let h = num(11, 2), let mi = num(14, 2),
      CivilDate.isValid(year: y, month: mo, day: d), h < 24, mi < 60
    else { return nil }
    var i = 16
    var seconds = 0.0
    if i < n, b[i] == 58 {
      guard let s = num(i + 1, 2), s < 60 else { return nil }
      seconds = Double(s)
      i += 3
      if i < n, b[i] == 46 || b[i] == 44 {
        i += 1
        var scale = 0.1
        let first = i
        while i < n, b[i] &- 48 < 10 {
          seconds += Double(b[i] - 48) * scale
          scale /= 10
          i += 1
        }
        guard i > first else { return nil }
      }
    }
    var offset: Int? = nil
    if i < n {
      if b[i] == 90 || b[i] == 122 {  // Z, z
        offset = 0
        i += 1
      } else if b[i] == 43 || b[i] == 45 {  // + -
        let sign = b[i] == 45 ? -1 : 1
        guard let oh = num(i + 1, 2), oh <= 14 else { return nil }
        i += 3
        var om = 0
        if i < n {
          if b[i] == 58 { i += 1 }
          guard let m = num(i, 2), m < 60 else { return nil }
          om = m
          i += 2
        }
        offset = sign * (oh * 3600 + om * 60)
      } else {
        return nil
      }
    }
    guard i == n else { return nil }
    let day = CivilDate.days(year: y, month: mo, day: d)
    return ISO8601(wallSeconds: Double(day) * 86_400 + Double(h * 3600 + mi * 60) + seconds, offset: offset)
  }

  /// Whether `b` starts like a date (four digits and `-`): text that is
  /// no number, for which a message names the time forms instead.
  package static func looksLikeDate(_ b: some Collection<UInt8>) -> Bool {
    b.count >= 5 && b.prefix(4).allSatisfy { $0 >= 48 && $0 <= 57 } && b.dropFirst(4).first == 45
  }

  /// Why date-like `text` is not a time, naming the accepted forms (those
  /// of docs/trace-format.md).
  package static func notATimeMessage(_ text: String) -> String {
    "'\(text)' is not a time: the accepted forms are Unix seconds (such as 1767600000) and ISO 8601 calendar "
      + "date-times, YYYY-MM-DDTHH:MM[:SS[.fff]] with Z or an offset such as +01:00 (a valid date); week dates "
      + "(2026-W02-1), ordinal dates (2026-005) and a date without a time are not"
  }

  /// ``parseISO8601(_:)-(UnsafeBufferPointer<UInt8>)`` on a string.
  package static func parseISO8601(_ s: String) -> ISO8601? {
    var s = s
    return s.withUTF8 { parseISO8601($0) }
  }

  /// Unix seconds as ISO 8601 UTC, to the second: `2026-01-05T07:00:00Z`.
  package static func isoUTC(_ t: Double) -> String {
    let whole = Int64((t).rounded(.down))
    let day = Int(whole >= 0 ? whole / 86_400 : (whole - 86_399) / 86_400)
    let sec = Int(whole - Int64(day) * 86_400)
    let c = CivilDate.civil(fromDays: day)
    func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
    let year = c.year >= 0 && c.year < 10_000 ? String(repeating: "0", count: 4 - String(c.year).count) + String(c.year) : String(c.year)
    return "\(year)-\(two(c.month))-\(two(c.day))T\(two(sec / 3600)):\(two(sec / 60 % 60)):\(two(sec % 60))Z"
  }

  /// Largest magnitude read as Unix seconds when guessing a log's unit:
  /// 10¹¹ s is the year 5138, while Unix milliseconds of any date after 1973
  /// exceed it.
  package static let maximumUnixSeconds = 1e11

  /// The times a trace may hold: 1970-01-01 to 2100-01-01 (Unix s). Every
  /// later stage (windows, content timelines, calendars) relies on it.
  package static let plausibleTimes = 0.0...4_102_444_800.0

  /// Why `t` is not a time a trace may hold: the unit it looks like
  /// (``implausibleSecondsMessage(_:)``) when dividing by 10³, 10⁶ or 10⁹
  /// brings it into the years 2000–2100, else the range it is outside, with
  /// its date when it has one before the year 10000 (seconds of the year
  /// 9999 are not milliseconds of 1978).
  package static func outOfRangeMessage(_ t: Double) -> String {
    if unitGuess(t) != nil { return implausibleSecondsMessage(t) }
    let date = abs(t) < 253_402_300_800 ? " (\(isoUTC(t)))" : ""
    return "time \(CSV.number(t))\(date) is outside 1970-01-01...2100-01-01, the dates a trace may hold "
      + "(times are Unix seconds or ISO 8601)"
  }

  /// The unit `t` (not a plausible time in seconds) looks like: the first
  /// of milliseconds, microseconds and nanoseconds that brings it into the
  /// years 2000–2100 (phone logs), as (name, factor, flag), or nil.
  static func unitGuess(_ t: Double) -> (name: String, factor: Double, flag: String)? {
    guard t >= maximumUnixSeconds else { return nil }
    let units: [(String, Double, String)] = [
      ("milliseconds", 1e3, "ms"), ("microseconds", 1e6, "us"), ("nanoseconds", 1e9, "ns"),
    ]
    return units.first { (946_684_800.0...plausibleTimes.upperBound).contains(t / $0.1) }
  }

  /// Why `t` is not a plausible Unix time in seconds, with the likely unit
  /// and what to do: milliseconds (10¹¹–10¹⁴), microseconds (10¹⁴–10¹⁷) or
  /// nanoseconds (10¹⁷–10²⁰) when dividing brings it to a date between 2000
  /// and 2100 (``unitGuess(_:)``).
  ///
  ///     TimeText.implausibleSecondsMessage(1_767_571_200_000)
  ///     // "time 1767571200000 is not a plausible Unix time in seconds: it looks like
  ///     //  milliseconds (2026-01-05T00:00:00Z): divide by 1000, or convert the log
  ///     //  with 'fetchlab import-events --time-unit ms'"
  package static func implausibleSecondsMessage(_ t: Double) -> String {
    let base = "time \(CSV.number(t)) is not a plausible Unix time in seconds"
    if let (name, factor, flag) = unitGuess(t) {
      return base + ": it looks like \(name) (\(isoUTC(t / factor))): divide by \(CSV.number(factor)), or convert"
        + " the log with 'fetchlab import-events --time-unit \(flag)'"
    }
    return base + " (expected seconds since 1970-01-01 UTC, or ISO 8601 such as 2026-01-05T08:00:00Z)"
  }
}
