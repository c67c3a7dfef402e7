import Foundation

/// Paths recorded in a run's `manifest.json`, so that a later command
/// (`fetchlab report`) finds the inputs from the run directory wherever it
/// is started.
package enum RunPaths {
  /// `path` as seen from `directory`: relative when both are on the same
  /// file system tree (`../../datasets/t.csv`), with `.` and `..` resolved;
  /// relative inputs are taken from the current directory.
  ///
  ///     RunPaths.relative("datasets/t.csv", from: "results/run")  // "../../datasets/t.csv"
  package static func relative(_ path: String, from directory: String) -> String {
    let target = components(absolute(path)), base = components(absolute(directory))
    var common = 0
    while common < target.count, common < base.count, target[common] == base[common] { common += 1 }
    let up = [String](repeating: "..", count: base.count - common)
    let rest = up + target[common...]
    return rest.isEmpty ? "." : rest.joined(separator: "/")
  }

  /// `path` made absolute against the current directory.
  package static func absolute(_ path: String) -> String {
    path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
  }

  /// `path` made absolute against the current directory, with `.` and `..`
  /// resolved (no symbolic links): what a manifest records as a trace's
  /// `absolute_path`.
  package static func canonical(_ path: String) -> String {
    "/" + components(absolute(path)).joined(separator: "/")
  }

  /// The components of an absolute path with `.` and `..` resolved (no symbolic links).
  static func components(_ path: String) -> [String] {
    var out: [String] = []
    for c in path.split(separator: "/") where c != "." {
      if c == ".." {
        if !out.isEmpty { out.removeLast() }
      } else {
        out.append(String(c))
      }
    }
    return out
  }
}
