import FetchSupport
import FetchTraces
import Foundation

// A command never writes over its own inputs: an input that is (or lies
// inside) a file or directory a commit into this directory may replace or
// remove is refused, with or without --force.

extension ResultDirectory {
  /// Refuses when one of `inputs` (a role such as `--trace`, and a path)
  /// is a file this directory's commit may replace or remove: a result
  /// name (``resultNames``), `parts` or `datasets`, or anything inside
  /// them. Files are compared by device and inode (hard and symbolic links
  /// included).
  ///
  /// - Throws: ``ExperimentError`` naming the input and the file.
  package func refuseOverwriting(inputs: [(role: String, path: String)]) throws {
    var outputs: [(id: FileID, name: String)] = []
    for name in Self.resultNames + ["parts", "datasets"] {
      if let id = FileID(path + "/" + name) { outputs.append((id, name)) }
    }
    guard !outputs.isEmpty else { return }
    for input in inputs {
      // The input and each directory above it, up to the root.
      var p = OutputPath.canonical(input.path)
      while true {
        if let id = FileID(p), let hit = outputs.first(where: { $0.id == id }) {
          throw ExperimentError(
            .directoryConflict,
            "\(input.role) \(escaped(input.path)) is \(hit.name == "parts" || hit.name == "datasets" || hit.name == "plots" ? "inside " : "")"
              + "\(path)/\(hit.name), which this command would replace: it never writes over its own input "
              + "(--force does not change that); copy the input elsewhere or choose another output directory")
        }
        let up = OutputPath.parentOf(p)
        if up == p || p == "/" { break }
        p = up
      }
    }
  }

  /// A file's identity: device and inode (following symbolic links).
  struct FileID: Equatable {
    let device: UInt64
    let inode: UInt64
    init?(_ path: String) {
      var st = stat()
      guard stat(path, &st) == 0 else { return nil }
      device = UInt64(st.st_dev)
      inode = UInt64(st.st_ino)
    }
  }
}

extension ResultDirectory {
  /// The first of `settings` (manifest keys, dotted for nested ones such as
  /// `trace.sha256`, and their values in this run) whose value in the
  /// directory's `manifest.json` differs, or `nil` when there is no
  /// manifest or all agree. A `run --trace` into a directory holding a
  /// different run's result needs `--force`; an identical run replaces it
  /// freely.
  package func differingSetting(_ settings: KeyValuePairs<String, Any>) -> String? {
    guard let d = FileManager.default.contents(atPath: path + "/manifest.json"),
      let manifest = (try? JSONSerialization.jsonObject(with: d)) as? [String: Any]
    else { return nil }
    for (key, value) in settings {
      var recorded: Any? = manifest
      for k in key.split(separator: ".") { recorded = (recorded as? [String: Any])?[String(k)] }
      // Both through the same JSON parser, so that numbers compare alike.
      guard let mine = try? JSONSerialization.data(withJSONObject: ["v": value], options: [.sortedKeys]),
        let parsed = (try? JSONSerialization.jsonObject(with: mine)) as? [String: Any], let recorded,
        let a = try? JSONSerialization.data(withJSONObject: ["v": recorded], options: [.sortedKeys]),
        let b = try? JSONSerialization.data(withJSONObject: parsed, options: [.sortedKeys]), a == b
      else { return key }
    }
    return nil
  }
}

/// An experiment's input files (its file and its datasets' traces), for
/// ``ResultDirectory/refuseOverwriting(inputs:)``.
func experimentInputs(_ e: Experiment) -> [(role: String, path: String)] {
  var inputs: [(role: String, path: String)] = [("the experiment file", e.path)]
  for d in e.datasets {
    if case .trace(let p) = d.source { inputs.append(("dataset \(d.name)'s trace", p)) }
  }
  return inputs
}
