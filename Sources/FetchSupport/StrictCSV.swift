import Foundation

/// A strict RFC 4180 CSV reader for FetchLab's own report files.
///
/// Fields are separated by commas and records by LF or CRLF; a field may be
/// quoted with `"`, inside which commas, line breaks and doubled quotes (`""`)
/// are literal. Anything else is an error located by file, line and column:
/// a quote inside an unquoted field, text after a closing quote, an
/// unterminated quoted field, a bare CR, invalid UTF-8, or a record whose
/// field count differs from the header's. A UTF-8 byte-order mark before the
/// header is skipped; the last record may omit its line break.
///
/// - Complexity: O(bytes); one record's fields in memory at a time.
package enum StrictCSV {
  /// Calls `header` with the header, then `record` with every record and
  /// the 1-based line number it starts on. CSV problems are
  /// ``SyntaxError``s naming the line and the column (its header name when
  /// known); errors of the closures pass through.
  package static func read(
    _ bytes: UnsafeRawBufferPointer,
    header: ([String]) throws -> Void,
    record: (_ line: Int, _ fields: [String]) throws -> Void
  ) throws {
    let n = bytes.count
    var i = 0
    if n >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { i = 3 }
    guard i < n else {
      throw SyntaxError(line: 1, field: "-", message: "empty file: no header")
    }
    var line = 1
    var names: [String] = []
    var fields: [String] = []
    var quotedBytes: [UInt8] = []
    func column(_ k: Int) -> String { k <= names.count && !names.isEmpty ? names[k - 1] : "column \(k)" }
    func fail(_ l: Int, _ k: Int, _ msg: String) -> SyntaxError {
      let named = k <= names.count && !names.isEmpty
      return SyntaxError(line: l, field: column(k), message: (named ? "column \(k): " : "") + msg)
    }
    while i < n {
      let recordLine = line
      fields.removeAll(keepingCapacity: true)
      var endOfRecord = false
      while !endOfRecord {
        let k = fields.count + 1
        let fieldLine = line
        let text: String?
        if i < n, bytes[i] == UInt8(ascii: "\"") {
          i += 1
          quotedBytes.removeAll(keepingCapacity: true)
          var closed = false
          while i < n {
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
              if i + 1 < n, bytes[i + 1] == UInt8(ascii: "\"") {
                quotedBytes.append(c)
                i += 2
                continue
              }
              i += 1
              closed = true
              break
            }
            if c == UInt8(ascii: "\n") { line += 1 }
            quotedBytes.append(c)
            i += 1
          }
          guard closed else { throw fail(fieldLine, k, "unterminated quoted field") }
          if i < n, bytes[i] != UInt8(ascii: ","), bytes[i] != UInt8(ascii: "\n"), bytes[i] != UInt8(ascii: "\r") {
            throw fail(line, k, "unexpected text after a closing quote")
          }
          text = String(validating: quotedBytes, as: UTF8.self)
        } else {
          let start = i
          while i < n {
            let c = bytes[i]
            if c == UInt8(ascii: ",") || c == UInt8(ascii: "\n") || c == UInt8(ascii: "\r") { break }
            if c == UInt8(ascii: "\"") { throw fail(line, k, "quote inside an unquoted field") }
            i += 1
          }
          text = String(validating: UnsafeRawBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        }
        guard let text else { throw fail(fieldLine, k, "invalid UTF-8") }
        fields.append(text)
        if i >= n {
          endOfRecord = true
        } else if bytes[i] == UInt8(ascii: ",") {
          i += 1
        } else if bytes[i] == UInt8(ascii: "\n") {
          i += 1
          line += 1
          endOfRecord = true
        } else {  // "\r"
          guard i + 1 < n, bytes[i + 1] == UInt8(ascii: "\n") else { throw fail(line, k, "bare CR (line breaks are LF or CRLF)") }
          i += 2
          line += 1
          endOfRecord = true
        }
      }
      if names.isEmpty {
        var firstColumn: [String: Int] = [:]
        for (k, name) in fields.enumerated() {
          if let j = firstColumn[name] {
            throw SyntaxError(line: recordLine, field: name, message: "column \(k + 1): duplicate column name (also column \(j + 1))")
          }
          firstColumn[name] = k
        }
        names = fields
        try header(names)
        continue
      }
      guard fields.count == names.count else {
        if fields == [""] {
          throw SyntaxError(line: recordLine, field: "-", message: "empty line")
        }
        let k = fields.count < names.count ? fields.count + 1 : names.count + 1  // first missing or extra
        throw fail(recordLine, k, "expected \(names.count) fields, found \(fields.count)")
      }
      try record(recordLine, fields)
    }
    if names.isEmpty {
      throw SyntaxError(line: 1, field: "-", message: "empty file: no header")
    }
  }
}
