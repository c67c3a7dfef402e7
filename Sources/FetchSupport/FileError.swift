import Foundation

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

  /// A short reason from a Foundation error (the underlying POSIX message
  /// when there is one), instead of its `NSCocoaErrorDomain` dump or its
  /// "The operation could not be completed" wording.
  package static func reason(_ error: Error) -> String {
    let ns = error as NSError
    if let u = ns.userInfo[NSUnderlyingErrorKey] as? NSError, u.domain == NSPOSIXErrorDomain {
      return String(cString: strerror(Int32(u.code)))
    }
    if ns.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(ns.code))) }
    switch ns.code {
    case NSFileWriteOutOfSpaceError: return "no space left on the device"
    case NSFileWriteVolumeReadOnlyError: return "read-only file system"
    case NSFileWriteNoPermissionError, NSFileReadNoPermissionError: return "permission denied"
    case NSFileWriteFileExistsError: return "a file of that name exists"
    case NSFileNoSuchFileError, NSFileReadNoSuchFileError: return "no such file or directory"
    case NSFileReadCorruptFileError, NSFileReadUnknownError: return "unreadable (a directory, or an I/O error)"
    default: return ns.domain == NSCocoaErrorDomain ? "file system error \(ns.code)" : "\(error)"
    }
  }
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
