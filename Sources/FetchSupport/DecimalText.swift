/// The one number grammar of FetchLab's inputs: decimal notation only.
///
///     number   = [ "+" | "-" ] ( digits [ "." [ digits ] ] | "." digits ) [ exponent ]
///     exponent = ( "e" | "E" ) [ "+" | "-" ] digits
///     digits   = 1*( "0" … "9" )
///
/// No hexadecimal (`0x10`, `0x1.a5p30`), no `inf`, `nan` or `infinity`, no
/// spaces, no digit grouping. Traces, event logs, result files read back
/// (`compare`, `report`), `--set`, `--train-fraction` and `predict --from`
/// read numbers with it, and the Python package's loader with the same
/// grammar (docs/trace-format.md states it once for both).
package enum DecimalText {
  /// Whether `b` is a number of the grammar.
  ///
  /// - Complexity: O(bytes), no allocation.
  package static func isDecimal(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
    let n = b.count
    var i = 0
    if i < n, b[i] == 43 || b[i] == 45 { i += 1 }
    var mantissa = 0
    while i < n, b[i] &- 48 < 10 { i += 1; mantissa += 1 }
    if i < n, b[i] == 46 {
      i += 1
      while i < n, b[i] &- 48 < 10 { i += 1; mantissa += 1 }
    }
    guard mantissa > 0 else { return false }
    if i < n, b[i] == 101 || b[i] == 69 {
      i += 1
      if i < n, b[i] == 43 || b[i] == 45 { i += 1 }
      let first = i
      while i < n, b[i] &- 48 < 10 { i += 1 }
      guard i > first else { return false }
    }
    return i == n
  }

  /// ``isDecimal(_:)-(UnsafeBufferPointer<UInt8>)`` on text.
  package static func isDecimal(_ s: some StringProtocol) -> Bool {
    var s = String(s)
    return s.withUTF8 { isDecimal($0) }
  }

  /// The value of `s` when it is a number of the grammar (possibly ±∞ for
  /// a magnitude beyond 1.8e308, such as `1e400`); `nil` otherwise.
  package static func value(_ s: some StringProtocol) -> Double? {
    isDecimal(s) ? Double(String(s)) : nil
  }

  /// ``value(_:)`` when finite; `nil` for text outside the grammar and
  /// for magnitudes beyond 1.8e308.
  package static func finite(_ s: some StringProtocol) -> Double? {
    guard let x = value(s), x.isFinite else { return nil }
    return x
  }
}
