import FetchSupport
import Foundation

/// A user's time zone: a fixed UTC offset or an IANA zone name.
///
/// Written in the `value` of the `begin` row as `UTC` (or `Z`, or empty),
/// `±HH:MM` (hours 00–14, minutes 00–59: `+01:00`, `-05:30`), or a Zone or
/// Link name of the tz database (``ianaNames``, such as `Europe/Vienna`),
/// spelled exactly. Nothing else: no POSIX TZ strings (`UTC+1`), no
/// `GMT+0530` (write `+05:30`), no names the database has removed
/// (`US/Pacific-New`), whatever the platform's zone library would accept,
/// so that a trace reads alike everywhere (docs/trace-format.md; the
/// Python package checks the same list).
public enum TraceTimeZone: Sendable, Equatable, CustomStringConvertible {
  /// A fixed offset east of UTC, in seconds.
  case fixed(Int)
  /// An IANA time zone name, with daylight saving time.
  case named(String)

  /// Coordinated Universal Time.
  public static let utc = TraceTimeZone.fixed(0)

  /// Parses the `begin` row's value; `nil` for an unknown zone.
  public init?(parsing s: String) {
    if s == "UTC" || s == "Z" || s.isEmpty {
      self = .utc
      return
    }
    let b = Array(s.utf8)
    if b.count == 6, b[0] == UInt8(ascii: "+") || b[0] == UInt8(ascii: "-"), b[3] == UInt8(ascii: ":") {
      let digits = [b[1], b[2], b[4], b[5]]
      guard digits.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
      let h = Int(b[1] - 48) * 10 + Int(b[2] - 48)
      let m = Int(b[4] - 48) * 10 + Int(b[5] - 48)
      guard h <= 14, m < 60 else { return nil }
      let sign = b[0] == UInt8(ascii: "-") ? -1 : 1
      self = .fixed(sign * (h * 3600 + m * 60))
      return
    }
    guard TraceTimeZone.ianaNames.contains(s), TimeZone(identifier: s) != nil else { return nil }
    self = .named(s)
  }

  /// Why `s` is not a zone (``init(parsing:)`` gives `nil`), for an
  /// error after `unknown time zone '…'`: the forms that are, and for an
  /// offset written another way (`UTC+1`, `GMT+0530`, `+0530`) or a
  /// misspelt name, what to write instead.
  package static func unknownHint(_ s: String) -> String {
    let forms = "use UTC, ±HH:MM such as +05:30, or a tz database \(ianaRelease) name such as America/New_York"
    let b = Array(s.utf8)
    var i = 0
    for prefix in ["UTC", "GMT"] where s.hasPrefix(prefix) { i = 3 }
    if i < b.count, b[i] == 43 || b[i] == 45 {
      let digits = b[(i + 1)...].filter { $0 != 58 }
      if !digits.isEmpty, digits.count <= 4, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
        let d = digits.map { Int($0 - 48) }
        let (h, m) = d.count <= 2 ? (d.reduce(0) { $0 * 10 + $1 }, 0) : (d.dropLast(2).reduce(0) { $0 * 10 + $1 }, d[d.count - 2] * 10 + d[d.count - 1])
        if h <= 14, m < 60 {
          let text = TraceTimeZone.fixed((b[i] == 45 ? -1 : 1) * (h * 3600 + m * 60)).description
          return "an offset is written ±HH:MM: \(text == "UTC" ? "+00:00" : text)"
            + (i == 3 ? " (POSIX-style names such as UTC+1 read the other way round on some systems)" : "")
        }
      }
    }
    // A suggestion costs an edit distance per name (O(length × 30) each): only for name-sized text.
    guard s.utf8.count <= 64 else { return forms }
    if let close = Suggestion.closest(to: s, among: sortedNames) { return forms + "; did you mean \(close)?" }
    return forms
  }

  /// ``ianaNames`` in order, for suggestions.
  private static let sortedNames = ianaNames.sorted()

  /// The canonical text: `UTC`, `+HH:MM` or the IANA name.
  public var description: String {
    switch self {
    case .fixed(0): return "UTC"
    case .fixed(let off):
      let a = abs(off)
      let h = a / 3600, m = (a % 3600) / 60
      return (off < 0 ? "-" : "+") + (h < 10 ? "0" : "") + "\(h):" + (m < 10 ? "0" : "") + "\(m)"
    case .named(let n): return n
    }
  }
}

/// Converts Unix times to local wall-clock positions for one time zone.
///
/// Caches the current UTC-offset interval, so a time-ordered sweep costs one
/// Foundation call per daylight-saving transition, not per event.
package struct LocalClock: Sendable {
  private let zone: TimeZone?
  private var fixedOffset: Double
  private var validFrom = Double.infinity
  private var validTo = -Double.infinity
  private var cached = 0.0

  package init(_ tz: TraceTimeZone) {
    switch tz {
    case .fixed(let off):
      zone = nil
      fixedOffset = Double(off)
    case .named(let name):
      zone = TimeZone(identifier: name)
      fixedOffset = 0
    }
  }

  /// Offset east of UTC at `t`, in seconds.
  package mutating func offset(at t: Double) -> Double {
    guard let zone else { return fixedOffset }
    if t >= validFrom && t < validTo { return cached }
    let d = Date(timeIntervalSince1970: t)
    cached = Double(zone.secondsFromGMT(for: d))
    validFrom = t
    validTo = zone.nextDaylightSavingTimeTransition(after: d)?.timeIntervalSince1970 ?? .infinity
    return cached
  }

  /// ``offset(at:)`` at `t` and the end of the span it holds over: the
  /// offset is the same at every time in [`t`, `until`) (∞ for a fixed
  /// offset; the zone's next transition after `t` otherwise).
  package mutating func offsetSpan(at t: Double) -> (offset: Double, until: Double) {
    let o = offset(at: t)
    return (o, zone == nil ? .infinity : validTo)
  }

  /// Local time as seconds since the Unix epoch in local wall-clock terms.
  package mutating func local(_ t: Double) -> Double { t + offset(at: t) }

  /// Local hour of day in [0, 24).
  package mutating func hourOfDay(_ t: Double) -> Double {
    let l = local(t)
    let s = l - (l / 86_400).rounded(.down) * 86_400
    return s / 3600
  }

  /// Local day of week, 0 = Monday ... 6 = Sunday.
  package mutating func dayOfWeek(_ t: Double) -> Int {
    let day = Int((local(t) / 86_400).rounded(.down))
    // 1970-01-01 was a Thursday (index 3).
    return ((day + 3) % 7 + 7) % 7
  }

  /// Local hour of the week in [0, 168), Monday 00:00 = 0.
  package mutating func hourOfWeek(_ t: Double) -> Double {
    Double(dayOfWeek(t)) * 24 + hourOfDay(t)
  }
}
