import FetchSupport

/// Where in the user's input a problem lies: a file, a 1-based line, and the
/// field, key or command-line option at fault.
///
/// Every part is optional: a bad `--apps` value has only a field (`--apps`),
/// a damaged manifest has a file, a bad CSV cell has all three. Errors about
/// user input carry one (``TraceFormatError/location``, `PolicySpecError`,
/// `ExperimentError`, …) beside a stable code and a message, so programs can
/// point at the spot without parsing the message.
public struct InputLocation: Sendable, Hashable, CustomStringConvertible, ErrorLocation {
  /// The file, or `nil` when the input did not come from a file.
  public var file: String?
  /// The 1-based line in ``file``, or `nil` when the problem concerns the whole input.
  public var line: Int?
  /// The column, JSON key path (`world.radio.tail_s`) or option (`--apps`) at fault.
  public var field: String?

  /// A location; every part defaults to unknown.
  package init(file: String? = nil, line: Int? = nil, field: String? = nil) {
    self.file = file
    self.line = line
    self.field = field
  }

  /// Nothing is known.
  package static var unknown: InputLocation { InputLocation() }

  /// True when nothing is known.
  package var isUnknown: Bool { file == nil && line == nil && field == nil }

  /// `file:line: field`, leaving out the parts that are unknown.
  public var description: String {
    var out = file.map(escaped) ?? ""
    if let line { out += (out.isEmpty ? "line " : ":") + String(line) }
    if let field { out += (out.isEmpty ? "" : ": ") + escaped(field) }
    return out
  }
}
