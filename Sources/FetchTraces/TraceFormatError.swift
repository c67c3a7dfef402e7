import FetchSupport
import Foundation

/// A problem with an input file, located by file, line and field.
///
/// Its description has the form `file:line: field: message`, the form
/// compilers use, so editors and terminals can jump to the spot.
public struct TraceFormatError: Error, CustomStringConvertible, Sendable, Equatable {
  /// The file the problem is in.
  public let file: String
  /// 1-based line number; 0 when the problem concerns the whole file.
  public let line: Int
  /// The column or field at fault (e.g. `time`), or `-` for the whole row.
  public let field: String
  /// What is wrong, in words.
  public let message: String

  package init(file: String, line: Int, field: String, message: String) {
    self.file = file
    self.line = line
    self.field = field
    self.message = message
  }

  /// A failure of the line reader on `file`; `hint` follows the
  /// line-length message.
  package init(file: String, _ f: LineReader.Failure, hint: String = "") {
    switch f {
    case .tooLong(let line, let limit):
      self.init(file: file, line: line, field: "-", message: "line longer than \(limit) bytes\(hint)")
    case .readError(let line, let message):
      self.init(file: file, line: line, field: "-", message: "read error: \(message)")
    case .unterminatedQuote(let line):
      self.init(file: file, line: line, field: "-", message: "unterminated quoted field: a quote opened in this record is never closed")
    }
  }

  /// The message for a header that holds a CR: a file whose lines end in
  /// CR alone reads as one line.
  package static let crLineEnds =
    "lines end in CR alone (old Mac line ends); convert them to LF or CRLF, e.g. tr '\\r' '\\n'"

  /// A CSV or JSON syntax error in `file`.
  package init(file: String, _ e: SyntaxError) {
    self.init(file: file, line: e.line, field: e.field, message: e.message)
  }

  /// ``file``, ``line`` and ``field`` as an ``InputLocation`` (line 0 and
  /// field `-`, "the whole file" and "the whole row", become `nil`).
  public var location: InputLocation {
    InputLocation(file: file, line: line > 0 ? line : nil, field: field == "-" ? nil : field)
  }

  /// `file:line: field: message`, control characters escaped (ids and
  /// names from the input may hold ESC or NUL bytes); without `:line` when
  /// the problem concerns the whole file (line 0) and without `field: ` when
  /// it concerns the whole row (`-`), so no message names a line 0 or a
  /// field `-`.
  public var description: String {
    (line > 0 ? "\(escaped(file)):\(line): " : "\(escaped(file)): ") + (field == "-" ? "" : "\(escaped(field)): ")
      + escaped(message)
  }
}

/// `s` with control characters (C0 except tab, DEL, C1) shown as `\u{XX}`,
/// for messages that echo ids, names or paths taken from input.
package func escaped(_ s: String) -> String {
  guard s.unicodeScalars.contains(where: isControl) else { return s }
  var out = ""
  for u in s.unicodeScalars {
    if isControl(u) {
      out += "\\u{" + String(u.value, radix: 16, uppercase: true) + "}"
    } else {
      out.unicodeScalars.append(u)
    }
  }
  return out
}

/// An id or name from the input for quoting in a one-line message: every
/// control character, line breaks and tabs included, shown as `\u{XX}` (so
/// `file:line: ` stays on the line it names).
package func escapedName(_ s: String) -> String {
  var out = ""
  for u in s.unicodeScalars {
    if u.value < 0x20 || (0x7F...0x9F).contains(u.value) {
      out += "\\u{" + String(u.value, radix: 16, uppercase: true) + "}"
    } else {
      out.unicodeScalars.append(u)
    }
  }
  return out
}

private func isControl(_ u: Unicode.Scalar) -> Bool {
  (u.value < 0x20 && u != "\t" && u != "\n") || (0x7F...0x9F).contains(u.value)
}

extension LocatedJSON {
  /// Reads and parses the JSON file at `path`; `what` names it when it
  /// cannot be read (`config file`).
  /// - Throws: ``TraceFormatError`` naming the file and line.
  package static func parse(contentsOf path: String, what: String) throws -> LocatedJSON {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw TraceFormatError(file: path, line: 0, field: "-", message: "cannot read \(what)")
    }
    guard let text = String(validating: data, as: UTF8.self) else {
      throw TraceFormatError(file: path, line: 0, field: "-", message: "not valid UTF-8")
    }
    return try parse(text, file: path)
  }

  /// Parses the JSON text of `file`.
  /// - Throws: ``TraceFormatError`` naming the file and line.
  package static func parse(_ text: String, file: String) throws -> LocatedJSON {
    do {
      return try parse(text)
    } catch {
      throw TraceFormatError(file: file, error)
    }
  }
}
