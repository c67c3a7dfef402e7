import Foundation

/// RFC 4180 CSV writing and locale-independent number formatting.
package enum CSV {
  /// `s` quoted when it contains a comma, quote, CR or LF; inner quotes doubled.
  package static func field(_ s: String) -> String {
    let needsQuotes = s.contains { $0 == "," || $0 == "\"" || $0.isNewline }
    return needsQuotes ? "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : s
  }

  /// One CSV line (with the trailing LF) from already formatted fields.
  package static func line(_ fields: [String]) -> String {
    fields.map(field).joined(separator: ",") + "\n"
  }

  /// A number as text, the same on every machine and locale.
  ///
  /// Integral values of magnitude below 2^53 print without a fraction
  /// (`42`); others use `Double.description` (shortest round-trip form).
  /// NaN prints as `NaN`, infinities as `inf` / `-inf`; empty when `nil`.
  package static func number(_ x: Double?) -> String {
    guard let x else { return "" }
    if x.isNaN { return "NaN" }
    if x.isInfinite { return x < 0 ? "-inf" : "inf" }
    if x == x.rounded(), abs(x) < 9_007_199_254_740_992 {
      return String(Int64(x))
    }
    return x.description
  }

  /// `x` rounded to `digits` decimals, then formatted by ``number(_:)``.
  package static func number(_ x: Double, decimals digits: Int) -> String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(24)
    appendNumber(x, decimals: digits, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Appends the UTF-8 bytes of ``number(_:decimals:)`` to `out`, without
  /// making strings in the common cases: integral values, and values whose
  /// shortest round-trip form is the rounded decimal itself (see below).
  ///
  /// With `k` = round(`x` · 10^`digits`) and `v` = `k` / 10^`digits` (the
  /// double nearest the decimal D = `k` / 10^`digits`), `Double.description`
  /// prints the shortest digit string that rounds to `v`. D rounds to `v`,
  /// and any other string with no more significant digits differs from D by
  /// at least 10^−(`digits`+1); when the spacing of doubles at `v` is below
  /// a twentieth of 10^−`digits`, no such string rounds to `v`, so the
  /// shortest form is D without trailing zeros. It prints without an
  /// exponent for 10^−4 ≤ |`v`| < 2^53. Other values take `number(v)`.
  ///
  /// - Complexity: O(1) (`digits` ≤ 15).
  package static func appendNumber(_ x: Double, decimals digits: Int, to out: inout [UInt8]) {
    guard x.isFinite else { return out.append(contentsOf: number(x).utf8) }
    var p = 1.0
    for _ in 0..<digits { p *= 10 }
    let k = (x * p).rounded()
    let v = k / p
    let magnitude = abs(v)
    if v == v.rounded(), magnitude < 9_007_199_254_740_992 {
      if v < 0 { out.append(UInt8(ascii: "-")) }
      return appendDigits(UInt64(magnitude), to: &out)
    }
    guard digits <= 15, magnitude >= 1e-4, abs(k) < 9_007_199_254_740_992, v.ulp * p * 20 < 1 else {
      return out.append(contentsOf: number(v).utf8)
    }
    let scaled = UInt64(abs(k))
    let unit = UInt64(p)
    if v < 0 { out.append(UInt8(ascii: "-")) }
    appendDigits(scaled / unit, to: &out)
    out.append(UInt8(ascii: "."))
    // The fraction, `digits` places with its trailing zeros dropped (it is
    // not zero: v is not integral), its leading zeros kept.
    var fraction = scaled % unit
    var places = digits
    while fraction % 10 == 0 {
      fraction /= 10
      places -= 1
    }
    appendDigits(fraction, to: &out, width: places)
  }

  /// Appends the decimal digits of `n`, with leading zeros to `width`
  /// digits.
  private static func appendDigits(_ n: UInt64, to out: inout [UInt8], width: Int = 1) {
    let start = out.count
    var n = n
    repeat {
      out.append(UInt8(ascii: "0") + UInt8(n % 10))
      n /= 10
    } while n != 0 || out.count - start < width
    // Reverse in place (a slice's `reverse()` copies).
    var i = start, j = out.count - 1
    while i < j {
      out.swapAt(i, j)
      i += 1
      j -= 1
    }
  }

  /// Splits one record at `delimiter` (`,` or tab), honouring RFC 4180
  /// quotes: a quoted field may hold the delimiter, line breaks and doubled
  /// quotes. Lenient, for foreign logs: text after a closing quote is kept.
  /// `nil` for an unterminated quote.
  ///
  /// - Complexity: O(bytes).
  package static func split(_ line: [UInt8], delimiter: UInt8) -> [[UInt8]]? {
    var fields: [[UInt8]] = []
    var field: [UInt8] = []
    var i = 0
    let n = line.count
    var quotedField = false
    while i <= n {
      if i == n || line[i] == delimiter {
        fields.append(field)
        field.removeAll(keepingCapacity: true)
        quotedField = false
        i += 1
        continue
      }
      let c = line[i]
      if c == 34 && field.isEmpty && !quotedField {
        quotedField = true
        i += 1
        var closed = false
        while i < n {
          if line[i] == 34 {
            if i + 1 < n && line[i + 1] == 34 {
              field.append(34)
              i += 2
              continue
            }
            closed = true
            i += 1
            break
          }
          field.append(line[i])
          i += 1
        }
        guard closed else { return nil }
        continue
      }
      field.append(c)
      i += 1
    }
    return fields
  }
}

/// Writes text to a file through a buffer, atomically: the data goes to
/// `path.tmp-<pid>` and is renamed onto `path` by ``commit()``; a writer that is
/// never committed leaves no file at `path`.
package final class AtomicTextFile {
  package let path: String
  private let tmpPath: String
  private let handle: UnsafeMutablePointer<FILE>
  private var buffer: [UInt8] = []
  private var finished = false
  /// Whether ``prepare()`` has written, synced and closed the temporary file.
  private var closed = false

  package init(path: String) throws {
    self.path = path
    self.tmpPath = path + ".tmp-\(getpid())"
    guard let h = fopen(tmpPath, "wb") else {
      throw FileError(path: path, "cannot create file: \(String(cString: strerror(errno)))")
    }
    handle = h
    buffer.reserveCapacity(1 << 16)
  }

  deinit {
    if !finished {
      if !closed { fclose(handle) }
      unlink(tmpPath)
    }
  }

  /// Appends `s` (UTF-8).
  package func write(_ s: String) throws {
    buffer.append(contentsOf: s.utf8)
    if buffer.count >= 1 << 16 { try flush() }
  }

  private func flush() throws {
    guard !buffer.isEmpty else { return }
    if AtomicTextFile.testWriteBudget.spend(buffer.count) {
      throw FileError(path: path, "write failed: \(String(cString: strerror(ENOSPC)))")
    }
    let n = buffer.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, $0.count, handle) }
    guard n == buffer.count else {
      throw FileError(path: path, "write failed: \(String(cString: strerror(errno)))")
    }
    buffer.removeAll(keepingCapacity: true)
  }

  /// Test hook: `FETCHLAB_TEST_WRITE_LIMIT_BYTES=n` makes every write
  /// after the process's first `n` bytes fail with ENOSPC, as on a full disk.
  static let testWriteBudget = WriteBudget(
    ProcessInfo.processInfo.environment["FETCHLAB_TEST_WRITE_LIMIT_BYTES"].flatMap { Int($0) })

  final class WriteBudget: @unchecked Sendable {
    private let lock = NSLock()
    private var left: Int?
    init(_ bytes: Int?) { left = bytes }
    /// Spends `n` bytes; whether the budget is exhausted.
    func spend(_ n: Int) -> Bool {
      lock.lock()
      defer { lock.unlock() }
      guard let l = left else { return false }
      left = l - n
      return l - n < 0
    }
  }

  /// Flushes, syncs and closes the temporary file, without moving it into
  /// place: what can fail for want of space fails here, so a command that
  /// writes two things can prepare both before it commits either.
  package func prepare() throws {
    guard !closed else { return }
    try flush()
    closed = true
    let ok = fflush(handle) == 0 && fsync(fileno(handle)) == 0
    let reason = String(cString: strerror(errno))
    fclose(handle)
    guard ok else {
      finished = true
      unlink(tmpPath)
      throw FileError(path: path, "cannot finish file: \(reason)")
    }
  }

  /// Flushes, closes and renames the file into place (``prepare()``, then
  /// one `rename(2)`).
  package func commit() throws {
    try prepare()
    finished = true
    guard rename(tmpPath, path) == 0 else {
      let reason = String(cString: strerror(errno))
      unlink(tmpPath)
      throw FileError(path: path, "cannot finish file: \(reason)")
    }
  }
}
