import FetchSupport
import FetchTraces
import Foundation

/// A run's output directory, whose results are replaced as a whole or not
/// at all (see docs/reliability.md).
///
/// **Lock.** Every run (`run --trace`, an experiment, a shard, `merge`)
/// holds an exclusive `flock` on `OUT/.fetchlab.lock` from start to end; a
/// second run into the same directory stops at once.
///
/// **Staging.** A run writes its complete result (CSVs, scores, manifest)
/// into ``staging``, `OUT/.staging-<pid>`, on the same file system.
///
/// **Commit.** ``commit(removing:)`` writes the list of new names into the
/// staging directory (`.names`), then renames it to `OUT/.commit`: that
/// rename is the commit point. It then moves each new file into `OUT`,
/// removes every result name (``resultNames``) the new result lacks, and
/// removes `OUT/.commit`.
///
/// **Recovery rule.** A process killed before the commit point leaves the
/// old result untouched (and a `.staging-*` directory, removed by the next
/// run). Killed after it, the directory holds `OUT/.commit`: the next
/// fetchlab command that opens the directory (any run, `report`, `compare`)
/// rolls the swap forward first, so it sees the complete new result. A
/// reader must treat a directory holding `.commit` as "new result, not yet
/// in place".
package final class ResultDirectory {
  /// The output directory.
  package let path: String
  /// This run's private staging directory inside ``path``.
  package let staging: String
  private let lockFD: Int32
  /// Whether this run created ``path`` (then a failed run removes it again).
  private let created: Bool
  private var committed = false

  /// Every name a run or `report` writes at the top of its directory.
  package static let resultNames = [
    "manifest.json", "summary.csv", "opens.csv", "fetches.csv", "pooled.csv", "policies.csv", "pareto.csv",
    "matched.csv", "oracle_gap.csv", "loss_split.csv", "robustness.csv", "paired.csv", "report.html", "report.md",
    "plots", "shard.json",
  ]
  static let lockName = ".fetchlab.lock"
  static let journalName = ".commit"
  static let stagingPrefix = ".staging-"

  /// Creates (if needed) and locks `path`, rolls an interrupted commit
  /// forward, removes leftovers of killed runs, and makes the staging
  /// directory.
  ///
  /// `role` names the path in messages (`--out`, or `report`'s run
  /// directory).
  ///
  /// - Throws: ``ExperimentError`` naming the path and what to do.
  package init(path: String, role: String = "--out", mustExist: Bool = false) throws {
    try Self.checkPath(path, what: role)
    var isDir: ObjCBool = false
    if mustExist, !FileManager.default.fileExists(atPath: path, isDirectory: &isDir) || !isDir.boolValue {
      throw ExperimentError("\(role) \(escaped(path)) does not exist (or is not a directory)")
    }
    do {
      created = try OutputPath.makeDirectory(path, role: "\(role) \(escaped(path))")
    } catch let e as FileError {
      throw ExperimentError(e.description)
    }
    self.path = path
    let fm = FileManager.default
    let fd = open(path + "/" + Self.lockName, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
    guard fd >= 0 else {
      let msg = String(cString: strerror(errno))
      if created { rmdir(path) }
      throw ExperimentError("\(role) \(path): cannot write there (\(msg)); choose a writable directory")
    }
    guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
      close(fd)
      throw ExperimentError(.directoryConflict, "\(path) is in use by another fetchlab run; wait for it or choose another --out")
    }
    lockFD = fd
    staging = path + "/" + Self.stagingPrefix + "\(getpid())"
    do {
      try Self.rollForward(path)
    } catch let e as ExperimentError {
      close(fd)
      throw e
    } catch {
      close(fd)
      throw ExperimentError("\(path): cannot finish the interrupted commit (\(Self.reason(error))); check its permissions and free space")
    }
    do {
      for f in (try? fm.contentsOfDirectory(atPath: path)) ?? []
      where f.hasPrefix(Self.stagingPrefix) || f.contains(".tmp-") {
        try? fm.removeItem(atPath: path + "/" + f)
      }
      try fm.createDirectory(atPath: staging, withIntermediateDirectories: false)
    } catch {
      close(fd)
      throw ExperimentError("\(path): cannot prepare the directory (\(Self.reason(error))); check its permissions and free space")
    }
  }

  deinit {
    let fm = FileManager.default
    if !committed {
      try? fm.removeItem(atPath: staging)
      // A run that failed in a directory it created leaves nothing behind.
      if created, ((try? fm.contentsOfDirectory(atPath: path)) ?? []) == [Self.lockName] {
        unlink(path + "/" + Self.lockName)
        rmdir(path)
      }
    }
    close(lockFD)
  }

  /// Whether this run created the directory.
  package var isNew: Bool { created }

  /// Refuses an empty path or one with a NUL byte.
  package static func checkPath(_ path: String, what: String) throws {
    guard !path.isEmpty else { throw ExperimentError("\(what) is empty: give a path") }
    guard !path.utf8.contains(0) else {
      throw ExperimentError("\(what) \(escaped(path)) contains a NUL byte: no file name can hold one")
    }
  }

  /// A short reason from a Foundation error (the underlying POSIX message
  /// when there is one), instead of its `NSCocoaErrorDomain` dump.
  package static func reason(_ error: Error) -> String { FileError.reason(error) }

  /// What `path` holds, for a `run --trace` deciding whether it may
  /// replace it: `nil` when empty or a previous `run --trace`'s result,
  /// else a description.
  package func foreignContent() -> String? {
    let fm = FileManager.default
    let names = Set((try? fm.contentsOfDirectory(atPath: path)) ?? [])
    if names.contains("parts") || names.contains("shard.json") { return "an experiment's parts or shard" }
    if let d = fm.contents(atPath: path + "/manifest.json") {
      let o = (try? JSONSerialization.jsonObject(with: d)) as? [String: Any]
      if o?["config_hash"] != nil { return "an experiment's results" }
      if o?["trace"] != nil { return nil }
      return "a manifest.json fetchlab did not write"
    }
    let results = names.intersection(Self.resultNames)
    if !results.isEmpty { return "files fetchlab did not write (\(results.sorted().joined(separator: ", ")))" }
    return nil
  }

  /// Puts the staged result in place: see the type's documentation.
  /// `extra` names (such as `parts`) are removed too. With `replacingOnly`
  /// (`report`, which adds to a run's result), only the staged names are
  /// replaced and nothing else is removed.
  package func commit(removing extra: [String] = [], replacingOnly: Bool = false) throws {
    let fm = FileManager.default
    let names = ((try? fm.contentsOfDirectory(atPath: staging)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
    // Each new name with its inode, which the rename keeps: a roll-forward
    // recognizes a file it already moved (ResultDirectory+Journal.swift).
    let journal =
      names.map { "+" + $0 + (FileID(staging + "/" + $0).map { "\t\($0.inode)" } ?? "") } + extra.map { "-" + $0 }
      + (replacingOnly ? ["="] : [])
    let list = try AtomicTextFile(path: staging + "/.names")
    try list.write(journal.joined(separator: "\n") + "\n")
    try list.commit()
    try Self.testKill(step: 1)
    guard rename(staging, path + "/" + Self.journalName) == 0 else {
      throw ExperimentError("\(path): cannot commit the results (\(String(cString: strerror(errno))))")
    }
    committed = true
    Self.syncDirectory(path)
    try Self.rollForward(path)
  }

  /// Finishes an interrupted commit in `path` (see the recovery rule);
  /// does nothing without `path/.commit`. The caller holds the lock.
  ///
  /// The journal is checked first (``readJournal(_:)``): a damaged one is
  /// refused and left as it is, with every file in the directory.
  package static func rollForward(_ path: String) throws {
    let fm = FileManager.default
    let j = path + "/" + journalName
    var st = stat()
    guard lstat(j, &st) == 0 else { return }
    let journal = try readJournal(path)
    let new = journal.new, extra = journal.extra, replacingOnly = journal.replacingOnly
    var step = 2
    for name in new where fm.fileExists(atPath: j + "/" + name) {
      try testKill(step: step)
      step += 1
      var isDir: ObjCBool = false
      if fm.fileExists(atPath: path + "/" + name, isDirectory: &isDir), isDir.boolValue {
        try fm.removeItem(atPath: path + "/" + name)
      }
      guard rename(j + "/" + name, path + "/" + name) == 0 else {
        throw ExperimentError("\(path)/\(name): cannot move into place (\(String(cString: strerror(errno))))")
      }
    }
    for name in ((replacingOnly ? [] : resultNames) + extra) where !new.contains(name) && fm.fileExists(atPath: path + "/" + name) {
      try testKill(step: step)
      step += 1
      try fm.removeItem(atPath: path + "/" + name)
    }
    try testKill(step: step)
    try fm.removeItem(atPath: j)
    syncDirectory(path)
  }

  /// Locks `path` briefly and rolls an interrupted commit forward; does
  /// nothing when another run holds it (tests, and readers that do not
  /// write).
  package static func recoverForReading(_ path: String) {
    let fd = open(path + "/" + lockName, O_RDWR | O_CLOEXEC)
    guard fd >= 0 else { return }
    defer { close(fd) }
    guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return }
    try? rollForward(path)
  }

  private static func syncDirectory(_ path: String) {
    let fd = open(path, O_RDONLY | O_DIRECTORY)
    if fd >= 0 {
      fsync(fd)
      close(fd)
    }
  }

  /// Test hook: `FETCHLAB_TEST_KILL_AT_COMMIT_STEP=k` sends this process
  /// SIGKILL at step `k` of a commit (1: before the commit point; 2, 3, …:
  /// before each move or removal of the roll-forward; the last: before
  /// the journal is removed).
  static func testKill(step: Int) throws {
    guard let s = killStep, s == step else { return }
    kill(getpid(), SIGKILL)
    pause()
  }

  private static let killStep: Int? =
    ProcessInfo.processInfo.environment["FETCHLAB_TEST_KILL_AT_COMMIT_STEP"].flatMap { Int($0) }
}
