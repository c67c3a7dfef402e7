/// A file could not be read or written: an I/O failure, as opposed to a
/// file whose content is wrong (those are the format errors of the layers
/// above, which name a line and a field).
///
/// Its description is `path: message`, e.g.
/// `out/summary.csv: write failed: No space left on device`.
package struct FileError: Error, CustomStringConvertible, Sendable {
  /// The file.
  package var path: String
  /// What failed, e.g. `cannot create file: Permission denied`.
  package var message: String

  package init(path: String, _ message: String) {
    self.path = path
    self.message = message
  }

  package var description: String { path + ": " + message }
}

/// A syntax error in text input (CSV, JSON): the 1-based line, the field or
/// key at fault (`-` for the whole line) and what is wrong. The layers above
/// add the file name (`TraceFormatError`).
package struct SyntaxError: Error, Sendable, Equatable {
  package var line: Int
  package var field: String
  package var message: String

  package init(line: Int, field: String = "-", message: String) {
    self.line = line
    self.field = field
    self.message = message
  }
}
