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

  public init(file: String, line: Int, field: String, message: String) {
    self.file = file
    self.line = line
    self.field = field
    self.message = message
  }

  public var description: String { "\(file):\(line): \(field): \(message)" }
}
