import Foundation

/// Durations as text: `90`, `90s`, `15m`, `1h30m`, `1.5h`, `2d` (units
/// d, h, m, s in decreasing order; a bare number is seconds). Parsing and
/// printing round-trip for whole seconds below 2^53.
package enum DurationText {
  private static let units: [(Character, Double)] = [("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)]

  /// Parses `90`, `90s`, `15m`, `1h30m`, `1.5h`, `2d` into seconds; `nil` if malformed.
  package static func parse(_ s: String) -> Double? {
    guard !s.isEmpty else { return nil }
    // Beyond 2^53 s whole seconds are no longer exact (and formatDuration
    // could not print them): not a duration.
    if let x = DecimalText.finite(s) { return abs(x) < 0x1p53 ? x : nil }
    var total = 0.0
    var num = ""
    var lastUnit = Double.infinity
    for c in s {
      if c.isNumber || c == "." {
        num.append(c)
      } else if let u = units.first(where: { $0.0 == c })?.1 {
        guard let x = Double(num), x.isFinite, u < lastUnit else { return nil }
        total += x * u
        lastUnit = u
        num = ""
      } else {
        return nil
      }
    }
    return num.isEmpty && total < 0x1p53 ? total : nil
  }

  /// Seconds as the shortest `1h30m`-style text; fractions of a second as `s`.
  package static func format(_ secs: Double) -> String {
    if secs != secs.rounded() || !(abs(secs) < 0x1p53) { return CSV.number(secs) + "s" }
    var rest = Int(secs)
    var out = ""
    for (c, u) in units {
      let n = rest / Int(u)
      if n > 0 { out += "\(n)\(c)" }
      rest -= n * Int(u)
    }
    return out.isEmpty ? "0s" : out
  }
}
