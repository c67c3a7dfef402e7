import Foundation

/// Where fetchlab may create and write output, checked before anything is
/// written (docs/reliability.md, "Where output goes"):
///
/// - never into the root directory `/`, and never a new directory directly
///   in it (`/nonexistent`);
/// - an output directory (`--out`, `--report`) gets at most its final
///   directory and that one's parent created (`results/demo`,
///   `shards/shard-3`); an output file (`--notebook`) at most its directory;
/// - a parent that is a regular file is named as such.
package enum OutputPath {
  /// Most missing directories created for an output directory: the final
  /// one and its parent.
  package static let maxNewDirectories = 2

  /// Refuses the root directory, then creates `path` as a directory when it
  /// does not exist (see the type's rule); returns whether it created it.
  ///
  /// - Throws: ``FileError`` naming `path` (as `role`, e.g. `--out results/x`).
  @discardableResult
  package static func makeDirectory(_ path: String, role: String) throws -> Bool {
    try refuseRoot(path, role: role)
    var isDir: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDir) {
      guard isDir.boolValue else { throw FileError(path: role, "is a file, not a directory: choose a directory name") }
      return false
    }
    try checkCreatable(path, role: role, maxNew: maxNewDirectories)
    do {
      try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    } catch {
      throw FileError(path: role, "cannot create the directory: \(FileError.reason(error)); choose a writable place")
    }
    return true
  }

  /// Checks that the directory an output file goes into exists or may be
  /// created (at most that one directory, not directly in `/`).
  package static func checkFileParent(_ file: String, role: String) throws {
    let parent = parentOf(file)
    var isDir: ObjCBool = false
    if FileManager.default.fileExists(atPath: parent, isDirectory: &isDir) {
      guard isDir.boolValue else { throw FileError(path: role, "its parent \(parent) is a file, not a directory") }
      return
    }
    try checkCreatable(parent, role: role, maxNew: 1)
  }

  /// The outermost directory of `path` that does not exist yet (`path`
  /// itself, or a missing parent), which creating `path` would create;
  /// `nil` when `path` exists (a symbolic link counts, even dangling). A
  /// command that fails removes it, leaving nothing behind.
  package static func firstMissing(_ path: String) -> String? {
    var st = stat()
    var first: String?
    var p = path
    while lstat(p, &st) != 0 {
      first = p
      let up = parentOf(p)
      if up == p { break }
      p = up
    }
    return first
  }

  /// Refuses a path that is (or resolves to) the root directory.
  package static func refuseRoot(_ path: String, role: String) throws {
    if canonical(path) == "/" {
      throw FileError(path: role, "is the root directory: fetchlab writes only into a directory of its own below it (e.g. /srv/fetchlab-results)")
    }
  }

  /// `path` absolute, with `.`, `..` and (where it exists) symbolic links resolved.
  package static func canonical(_ path: String) -> String {
    let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    if let r = realpath(absolute, nil) {
      defer { free(r) }
      return String(cString: r)
    }
    return URL(fileURLWithPath: absolute).standardizedFileURL.path
  }

  /// The directory holding `path` (`.` for a bare name).
  package static func parentOf(_ path: String) -> String {
    var p = path
    while p.count > 1, p.hasSuffix("/") { p.removeLast() }
    guard let slash = p.lastIndex(of: "/") else { return "." }
    return slash == p.startIndex ? "/" : String(p[..<slash])
  }

  /// Refuses creating the missing directory `dir` when more than `maxNew`
  /// directories would be created, when the first would go directly in
  /// `/`, or when the nearest existing ancestor is a file.
  private static func checkCreatable(_ dir: String, role: String, maxNew: Int) throws {
    var missing: [String] = []
    var p = dir
    var isDir: ObjCBool = false
    while !FileManager.default.fileExists(atPath: p, isDirectory: &isDir) {
      missing.append(p)
      let up = parentOf(p)
      if up == p { break }
      p = up
    }
    guard isDir.boolValue else { throw FileError(path: role, "\(p) is a file, not a directory") }
    guard let first = missing.last else { return }
    if canonical(p) == "/" {
      throw FileError(
        path: role,
        "the directory \(first) does not exist, and fetchlab does not create directories in the root directory: "
          + "create it first or choose another place")
    }
    if missing.count > maxNew {
      throw FileError(
        path: role,
        "the directory \(first) does not exist, and fetchlab creates at most \(maxNew == 1 ? "the file's directory" : "the last \(maxNew) directories of a path"): "
          + "create \(first) first or choose another place")
    }
  }
}
