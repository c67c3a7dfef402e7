import FetchSupport
import Foundation

extension ResultDirectory {
  /// Where an interrupted run stood when ``abandon(path:)`` took its
  /// staging directory away.
  package enum Abandoned: Equatable, Sendable {
    /// Before the commit point: the directory holds its previous result
    /// (or none), and the finished units in `parts/`.
    case beforeCommit
    /// After it: the new result is complete in `OUT/.commit` or in place;
    /// the next fetchlab command that opens the directory finishes moving it.
    case afterCommit
  }

  /// Removes what this process was writing in the result directory `path`:
  /// its staging directory (`.staging-<pid>`) and its temporary files
  /// (`*.tmp-<pid>` in `path`, `parts/` and `datasets/`). For a run
  /// interrupted by a signal, called on another thread while the run's own
  /// threads may still be writing.
  ///
  /// The staging directory is first renamed, atomically, to a name the next
  /// run also clears: the run's commit, which renames it to `.commit`,
  /// then either happened before (``Abandoned/afterCommit``) or fails. A
  /// unit whose record (`.state`) was not renamed into place is not
  /// finished and is computed again by the next run.
  package static func abandon(path: String) -> Abandoned {
    let fm = FileManager.default
    let pid = getpid()
    let staging = path + "/" + stagingPrefix + "\(pid)"
    let aside = staging + "-interrupted"
    let moved = rename(staging, aside) == 0
    if moved { try? fm.removeItem(atPath: aside) }
    for dir in [path, path + "/parts", path + "/datasets"] {
      for f in (try? fm.contentsOfDirectory(atPath: dir)) ?? [] where f.hasSuffix(".tmp-\(pid)") {
        unlink(dir + "/" + f)
      }
    }
    var st = stat()
    return !moved && lstat(path + "/" + journalName, &st) == 0 ? .afterCommit : .beforeCommit
  }

  /// The finished units (records `parts/*.state`) in the result directory
  /// `path`.
  package static func finishedUnits(path: String) -> Int { PartRecord.unitCount(path + "/parts") }
}
