import FetchSupport
import Foundation

extension StrictCSV {
  /// Reads `bytes` (see ``StrictCSV/read(_:header:record:)``); CSV problems
  /// are ``TraceFormatError``s naming `file`, the line and the column.
  package static func read(
    _ bytes: UnsafeRawBufferPointer, file: String,
    header: ([String]) throws -> Void,
    record: (_ line: Int, _ fields: [String]) throws -> Void
  ) throws {
    do {
      try read(bytes, header: header, record: record)
    } catch let e as SyntaxError {
      throw TraceFormatError(file: file, e)
    }
  }

  /// Reads the file at `path` (see ``read(_:file:header:record:)``); a file
  /// that cannot be read is an error at line 0.
  package static func read(
    path: String, header: ([String]) throws -> Void, record: (_ line: Int, _ fields: [String]) throws -> Void
  ) throws {
    let data: Data
    do {
      data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
    } catch {
      throw TraceFormatError(file: path, line: 0, field: "-", message: "cannot read file: \(FileError.reason(error))")
    }
    try data.withUnsafeBytes { try read($0, file: path, header: header, record: record) }
  }

  /// Parses `text` into a header and records (small files and tests).
  package static func parse(_ text: String, file: String = "<text>") throws -> (header: [String], records: [[String]]) {
    var h: [String] = []
    var rows: [[String]] = []
    var utf8 = Array(text.utf8)
    try utf8.withUnsafeMutableBytes { raw in
      try read(UnsafeRawBufferPointer(raw), file: file, header: { h = $0 }, record: { rows.append($1) })
    }
    return (h, rows)
  }
}

