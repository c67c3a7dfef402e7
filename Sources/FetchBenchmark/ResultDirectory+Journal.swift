import FetchSupport
import FetchTraces
import Foundation

// The commit journal `OUT/.commit` and the checks that run before any
// roll-forward: a journal that is not exactly what ``ResultDirectory/commit``
// writes is refused and left for the user, never acted on.

extension ResultDirectory {
  /// A commit journal read from `OUT/.commit/.names` and checked against
  /// the files it lists.
  struct Journal: Equatable {
    /// Names to move from the journal into the directory (`+name`).
    var new: [String] = []
    /// The inode of each new file, when recorded (`+name<TAB>inode`).
    var inodes: [String: UInt64] = [:]
    /// Names to remove besides the result names the new result lacks (`-name`).
    var extra: [String] = []
    /// Whether only the staged names are replaced (`=`: `report`, `compare`).
    var replacingOnly = false

    /// Parses the text of `.names`: lines `+name` (or `+name<TAB>inode`),
    /// `-name` or `=`, each
    /// ending in a line feed; at least one `+` line; no name twice.
    ///
    /// - Returns: the journal, or what is wrong with it.
    static func parse(_ data: Data) -> Result<Journal, JournalDamage> {
      guard let text = String(data: data, encoding: .utf8) else { return .failure(.init("the names list is not UTF-8")) }
      guard text.hasSuffix("\n") else {
        return .failure(.init(text.isEmpty ? "the names list is empty" : "the names list does not end with a line feed"))
      }
      var j = Journal()
      var seen = Set<String>()
      for (i, line) in text.dropLast().split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        let where_ = "line \(i + 1) of the names list"
        if line == "=" {
          guard !j.replacingOnly else { return .failure(.init("\(where_): '=' twice")) }
          j.replacingOnly = true
          continue
        }
        guard let mark = line.first, mark == "+" || mark == "-" else {
          return .failure(.init("\(where_): '\(escaped(String(line)))' is not +NAME, -NAME or ="))
        }
        let fields = line.dropFirst().split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
        let name = String(fields[0])
        if fields.count == 2 {
          guard mark == "+", let inode = UInt64(fields[1]) else {
            return .failure(.init("\(where_): '\(escaped(String(line)))' is not +NAME<TAB>INODE"))
          }
          j.inodes[name] = inode
        }
        guard validName(name) else { return .failure(.init("\(where_): '\(escaped(name))' is not a file name of a result")) }
        guard seen.insert(name).inserted else { return .failure(.init("\(where_): '\(escaped(name))' listed twice")) }
        if mark == "+" {
          j.new.append(name)
        } else {
          guard resultNames.contains(name) || name == "parts" || name == "datasets" else {
            return .failure(.init("\(where_): '\(escaped(name))' is not a name a commit removes"))
          }
          j.extra.append(name)
        }
      }
      guard !j.new.isEmpty else { return .failure(.init("the names list has no new file")) }
      return .success(j)
    }

    /// A plain name inside the directory: not empty, no `/`, not hidden.
    static func validName(_ name: String) -> Bool {
      !name.isEmpty && !name.contains("/") && !name.hasPrefix(".") && !name.utf8.contains(0)
    }
  }

  /// What makes a journal unusable, for the refusal message.
  struct JournalDamage: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
  }

  /// Reads and checks `path/.commit`: the names list well formed, every
  /// listed new file in the journal or already moved into `path` (the same
  /// inode as recorded), and
  /// nothing in the journal that the list does not name.
  ///
  /// - Throws: ``ExperimentError`` saying what is damaged and that nothing
  ///   was changed.
  static func readJournal(_ path: String) throws -> Journal {
    let fm = FileManager.default
    let j = path + "/" + journalName
    func refuse(_ reason: String) -> ExperimentError {
      ExperimentError(
        "\(j) is a damaged commit journal (\(reason)): fetchlab changed nothing. It holds the files of an "
          + "interrupted commit; look at them, keep what you need, then remove \(j) and run again")
    }
    var isDir: ObjCBool = false
    guard fm.fileExists(atPath: j, isDirectory: &isDir), isDir.boolValue else { throw refuse("not a directory") }
    var st = stat()
    guard lstat(j + "/.names", &st) == 0 else { throw refuse("no names list (.names)") }
    guard (st.st_mode & S_IFMT) == S_IFREG else { throw refuse(".names is not a regular file") }
    guard st.st_size <= 1 << 20, let data = fm.contents(atPath: j + "/.names") else {
      throw refuse(".names is unreadable or larger than 1 MiB")
    }
    let journal: Journal
    switch Journal.parse(data) {
    case .success(let parsed): journal = parsed
    case .failure(let damage): throw refuse(damage.reason)
    }
    let inJournal = ((try? fm.contentsOfDirectory(atPath: j)) ?? []).filter { !$0.hasPrefix(".") }
    if let stray = inJournal.sorted().first(where: { !journal.new.contains($0) }) {
      throw refuse("it holds '\(escaped(stray))', which the names list does not name")
    }
    // A new file no longer in the journal must be in the directory, and be
    // the very file that was staged (its inode), not an older one.
    for name in journal.new where !inJournal.contains(name) {
      guard let id = FileID(path + "/" + name) else {
        throw refuse("'\(escaped(name))' is listed but neither in the journal nor in the directory")
      }
      guard let inode = journal.inodes[name], inode == id.inode else {
        throw refuse("'\(escaped(name))' is listed as moved, but \(path)/\(escaped(name)) is not the file the commit staged")
      }
    }
    return journal
  }
}
