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
