import Foundation

/// Scratch space for the test suites: one directory per test process,
/// `<tmp>/fetchlab-tests-<pid>`, removed when the process exits, so a test
/// run leaves nothing behind in the temporary directory.
package enum Scratch {
  /// The process's scratch root (created on first use).
  package static let root: String = {
    let r = FileManager.default.temporaryDirectory.appendingPathComponent("fetchlab-tests-\(getpid())").path
    try? FileManager.default.createDirectory(atPath: r, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(atPath: Scratch.root) }
    return r
  }()

  /// A fresh directory under ``root``, named after `label`.
  package static func directory(_ label: String) -> String {
    let d = root + "/" + label + "-" + UUID().uuidString
    try! FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
    return d
  }
}
