import FetchTraces
import Foundation

/// A strict RFC 4180 CSV reader for FetchLab's own report files.
///
/// Fields are separated by commas and records by LF or CRLF; a field may be
/// quoted with `"`, inside which commas, line breaks and doubled quotes (`""`)
/// are literal. Anything else is an error located by file, line and column:
/// a quote inside an unquoted field, text after a closing quote, an
/// unterminated quoted field, a bare CR, invalid UTF-8, or a record whose
/// field count differs from the header's. A UTF-8 byte-order mark before the
/// header is skipped; the last record may omit its line break.
///
/// - Complexity: O(bytes); one record's fields in memory at a time.
package enum StrictCSV {
  /// Calls `body` with the header, then with every record and the 1-based
  /// line number it starts on. Errors are ``TraceFormatError``s naming `file`,
  /// the line and the column (its header name when known).
  package static func read(
    _ bytes: UnsafeRawBufferPointer, file: String,
    header: ([String]) throws -> Void,
    record: (_ line: Int, _ fields: [String]) throws -> Void
  ) throws {
    let n = bytes.count
    var i = 0
    if n >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { i = 3 }
    guard i < n else {
      throw TraceFormatError(file: file, line: 1, field: "-", message: "empty file: no header")
    }
    var line = 1
    var names: [String] = []
    var fields: [String] = []
    var quotedBytes: [UInt8] = []
    func column(_ k: Int) -> String { k <= names.count && !names.isEmpty ? names[k - 1] : "column \(k)" }
    func fail(_ l: Int, _ k: Int, _ msg: String) -> TraceFormatError {
      let named = k <= names.count && !names.isEmpty
      return TraceFormatError(file: file, line: l, field: column(k), message: (named ? "column \(k): " : "") + msg)
    }
    while i < n {
      let recordLine = line
      fields.removeAll(keepingCapacity: true)
      var endOfRecord = false
      while !endOfRecord {
        let k = fields.count + 1
        let fieldLine = line
        let text: String?
        if i < n, bytes[i] == UInt8(ascii: "\"") {
          i += 1
          quotedBytes.removeAll(keepingCapacity: true)
          var closed = false
          while i < n {
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
              if i + 1 < n, bytes[i + 1] == UInt8(ascii: "\"") {
                quotedBytes.append(c)
                i += 2
                continue
              }
              i += 1
              closed = true
              break
            }
            if c == UInt8(ascii: "\n") { line += 1 }
            quotedBytes.append(c)
            i += 1
          }
          guard closed else { throw fail(fieldLine, k, "unterminated quoted field") }
          if i < n, bytes[i] != UInt8(ascii: ","), bytes[i] != UInt8(ascii: "\n"), bytes[i] != UInt8(ascii: "\r") {
            throw fail(line, k, "unexpected text after a closing quote")
          }
          text = String(validating: quotedBytes, as: UTF8.self)
        } else {
          let start = i
          while i < n {
            let c = bytes[i]
            if c == UInt8(ascii: ",") || c == UInt8(ascii: "\n") || c == UInt8(ascii: "\r") { break }
            if c == UInt8(ascii: "\"") { throw fail(line, k, "quote inside an unquoted field") }
            i += 1
          }
          text = String(validating: UnsafeRawBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        }
        guard let text else { throw fail(fieldLine, k, "invalid UTF-8") }
        fields.append(text)
        if i >= n {
          endOfRecord = true
        } else if bytes[i] == UInt8(ascii: ",") {
          i += 1
        } else if bytes[i] == UInt8(ascii: "\n") {
          i += 1
          line += 1
          endOfRecord = true
        } else {  // "\r"
          guard i + 1 < n, bytes[i + 1] == UInt8(ascii: "\n") else { throw fail(line, k, "bare CR (line breaks are LF or CRLF)") }
          i += 2
          line += 1
          endOfRecord = true
        }
      }
      if names.isEmpty {
        var firstColumn: [String: Int] = [:]
        for (k, name) in fields.enumerated() {
          if let j = firstColumn[name] {
            throw TraceFormatError(
              file: file, line: recordLine, field: name, message: "column \(k + 1): duplicate column name (also column \(j + 1))")
          }
          firstColumn[name] = k
        }
        names = fields
        try header(names)
        continue
      }
      guard fields.count == names.count else {
        if fields == [""] {
          throw TraceFormatError(file: file, line: recordLine, field: "-", message: "empty line")
        }
        let k = fields.count < names.count ? fields.count + 1 : names.count + 1  // first missing or extra
        throw fail(recordLine, k, "expected \(names.count) fields, found \(fields.count)")
      }
      try record(recordLine, fields)
    }
    if names.isEmpty {
      throw TraceFormatError(file: file, line: 1, field: "-", message: "empty file: no header")
    }
  }

  /// Reads the file at `path` (see ``read(_:file:header:record:)``); a file
  /// that cannot be read is an error at line 0.
  package static func read(
    path: String, header: ([String]) throws -> Void, record: (_ line: Int, _ fields: [String]) throws -> Void
  ) throws {
    let data: Data
    do {
      data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
    } catch {
      let reason = (error as NSError).localizedDescription
      throw TraceFormatError(file: path, line: 0, field: "-", message: "cannot read file: \(reason)")
    }
    try data.withUnsafeBytes { try read($0, file: path, header: header, record: record) }
  }

  /// Parses `text` into a header and records (small files and tests).
  package static func parse(_ text: String, file: String = "<text>") throws -> (header: [String], records: [[String]]) {
    var h: [String] = []
    var rows: [[String]] = []
    var utf8 = Array(text.utf8)
    try utf8.withUnsafeMutableBytes { raw in
      try read(UnsafeRawBufferPointer(raw), file: file, header: { h = $0 }, record: { rows.append($1) })
    }
    return (h, rows)
  }
}

/// A run's `summary.csv` reduced to one value per (dataset, policy, user) and
/// metric: the resampling unit of every statistic in ``Scoring``.
///
/// Both layouts are read: today's (`user, app, policy, ...`) and the
/// experiment layout with two leading columns `dataset, replication`. Columns
/// are found by name, so their order does not matter and extra columns are
/// ignored. Results are per dataset (``datasets`` is `[""]` without a
/// `dataset` column); a user's rows over apps and replications are averaged:
///
/// - cost metrics (`energy_j_per_day`, `battery_pct_per_day`,
///   `cellular_bytes_per_day`, `fetches_per_day`): plain mean over the rows;
/// - open-sampled means (`mean_age_s`, `fresh_ratio`, `mean_aoi_s`):
///   weighted by `opens`, so they are the user's mean over all their opens;
/// - `p90_age_s`: plain mean over the rows with at least one open.
///
/// A user without opens has no staleness value (NaN) and is left out of the
/// staleness statistics. Duplicate (dataset, replication, user, app, policy)
/// rows and non-finite numbers are errors with file, line and column.
package struct SummaryTable: Sendable {
  /// The file read.
  package let file: String
  /// Whether the file has a `dataset` column.
  package let hasDatasetColumn: Bool
  /// Datasets in order of first appearance (`[""]` without a dataset column;
  /// empty when the file has no rows and a dataset column).
  package let datasets: [String]
  /// Policies in order of first appearance over the whole file.
  package let policies: [String]
  /// Number of data rows read.
  package let rows: Int
  let groups: [String: [String: UserValues]]  // dataset -> policy -> values
  let policyOrder: [String: [String]]  // dataset -> policies in order

  /// Reads and reduces `path`; throws ``TraceFormatError`` on any problem.
  package init(path: String) throws {
    var b = Builder(file: path)
    try StrictCSV.read(path: path, header: { try b.header($0) }, record: { try b.add(line: $0, $1) })
    self.init(b)
  }

  /// Reads CSV text (for tests); `file` names it in errors.
  package init(text: String, file: String = "summary.csv") throws {
    var b = Builder(file: file)
    var utf8 = Array(text.utf8)
    try utf8.withUnsafeMutableBytes { raw in
      try StrictCSV.read(UnsafeRawBufferPointer(raw), file: file, header: { try b.header($0) }, record: { try b.add(line: $0, $1) })
    }
    self.init(b)
  }

  init(_ b: Builder) {
    file = b.file
    hasDatasetColumn = b.datasetColumn != nil
    datasets = b.datasetNames.isEmpty && !hasDatasetColumn ? [""] : b.datasetNames
    policies = b.policyNames
    rows = b.rows
    var groups: [String: [String: UserValues]] = [:]
    var order: [String: [String]] = [:]
    for g in b.groups {
      let dataset = b.datasetNames[g.dataset], policy = b.policyNames[g.policy]
      var columns = [[Double]](repeating: [], count: ScoreMetric.allCases.count)
      for acc in g.accumulators {
        for (m, v) in acc.values.enumerated() { columns[m].append(v) }
      }
      let names = g.users.map { b.userNames[g.dataset][$0] }
      groups[dataset, default: [:]][policy] = UserValues(users: names, columns: columns)
      order[dataset, default: []].append(policy)
    }
    self.groups = groups
    self.policyOrder = order
  }

  /// The policies present in `dataset`, in order of first appearance.
  package func policies(in dataset: String) -> [String] { policyOrder[dataset] ?? [] }

  /// Per-user values of `policy` in `dataset`, or nil when absent.
  package func values(dataset: String, policy: String) -> UserValues? { groups[dataset]?[policy] }

  /// One (dataset, policy): its users in order of first appearance.
  struct Group {
    let dataset: Int
    let policy: Int
    var users: [Int] = []
    var slot: [Int: Int] = [:]
    var accumulators: [UserAccumulator] = []
  }

  /// Accumulates rows into per-user sums.
  struct Builder {
    struct Key: Hashable {
      let dataset: Int
      let policy: Int
    }
    let file: String
    var datasetColumn: Int?
    var replicationColumn: Int?
    var userColumn = 0, appColumn = 0, policyColumn = 0, opensColumn = 0
    var metricColumns: [Int] = []
    var header: [String] = []
    var rows = 0
    var datasetNames: [String] = []
    var datasetIndex: [String: Int] = [:]
    var policyNames: [String] = []
    var policyIndex: [String: Int] = [:]
    var userNames: [[String]] = []
    var userIndex: [[String: Int]] = []
    var groups: [Group] = []
    var groupIndex: [Key: Int] = [:]
    var seen: Set<[String]> = []

    init(file: String) { self.file = file }

    mutating func header(_ h: [String]) throws {
      header = h
      func find(_ name: String) throws -> Int {
        guard let i = h.firstIndex(of: name) else {
          throw TraceFormatError(
            file: file, line: 1, field: name, message: "missing column '\(name)' (header: \(h.joined(separator: ",")))")
        }
        return i
      }
      datasetColumn = h.firstIndex(of: "dataset")
      replicationColumn = h.firstIndex(of: "replication")
      userColumn = try find("user")
      appColumn = try find("app")
      policyColumn = try find("policy")
      opensColumn = try find("opens")
      metricColumns = try ScoreMetric.allCases.map { try find($0.rawValue) }
    }

    func number(_ fields: [String], _ c: Int, line: Int) throws -> Double {
      let s = fields[c]
      guard let x = Double(s), x.isFinite else {
        throw TraceFormatError(
          file: file, line: line, field: header[c],
          message: "column \(c + 1): " + (s.isEmpty ? "empty, expected a number" : "not a finite number: '\(s)'"))
      }
      return x
    }

    mutating func add(line: Int, _ f: [String]) throws {
      rows += 1
      let dataset = datasetColumn.map { f[$0] } ?? ""
      let key = [dataset, replicationColumn.map { f[$0] } ?? "", f[userColumn], f[appColumn], f[policyColumn]]
      guard seen.insert(key).inserted else {
        throw TraceFormatError(
          file: file, line: line, field: "-",
          message: "duplicate row for user '\(key[2])', app '\(key[3])', policy '\(key[4])'"
            + (datasetColumn == nil ? "" : " in dataset '\(dataset)', replication '\(key[1])'"))
      }
      for c in [userColumn, policyColumn] where f[c].isEmpty {
        throw TraceFormatError(file: file, line: line, field: header[c], message: "column \(c + 1): empty")
      }
      let opens = try number(f, opensColumn, line: line)
      guard opens >= 0 else {
        throw TraceFormatError(
          file: file, line: line, field: "opens", message: "column \(opensColumn + 1): negative: '\(f[opensColumn])'")
      }
      var values = [Double](repeating: 0, count: metricColumns.count)
      for (m, c) in metricColumns.enumerated() {
        // A pair without opens has no staleness: its empty fields stay NaN
        // (the per-user means skip such rows).
        values[m] = opens == 0 && f[c].isEmpty && ScoreMetric.allCases[m].averaging != .rows ? .nan : try number(f, c, line: line)
      }

      let d = Self.intern(dataset, &datasetIndex, &datasetNames)
      if d == userNames.count {
        userNames.append([])
        userIndex.append([:])
      }
      let p = Self.intern(f[policyColumn], &policyIndex, &policyNames)
      let u = Self.intern(f[userColumn], &userIndex[d], &userNames[d])
      let g: Int
      if let x = groupIndex[Key(dataset: d, policy: p)] {
        g = x
      } else {
        g = groups.count
        groupIndex[Key(dataset: d, policy: p)] = g
        groups.append(Group(dataset: d, policy: p))
      }
      if let s = groups[g].slot[u] {
        groups[g].accumulators[s].add(opens: opens, values)
      } else {
        groups[g].slot[u] = groups[g].users.count
        groups[g].users.append(u)
        var acc = UserAccumulator()
        acc.add(opens: opens, values)
        groups[g].accumulators.append(acc)
      }
    }

    /// The index of `name`, added at the end when new.
    static func intern(_ name: String, _ index: inout [String: Int], _ names: inout [String]) -> Int {
      if let i = index[name] { return i }
      index[name] = names.count
      names.append(name)
      return names.count - 1
    }
  }
}

/// One user's sums over their rows for one (dataset, policy).
struct UserAccumulator {
  var rows = 0
  var openRows = 0
  var opens = 0.0
  var sums = [Double](repeating: 0, count: ScoreMetric.allCases.count)

  mutating func add(opens o: Double, _ v: [Double]) {
    rows += 1
    opens += o
    if o > 0 { openRows += 1 }
    for (m, metric) in ScoreMetric.allCases.enumerated() {
      switch metric.averaging {
      case .rows: sums[m] += v[m]
      case .opens: if o > 0 { sums[m] += v[m] * o }
      case .rowsWithOpens: if o > 0 { sums[m] += v[m] }
      }
    }
  }

  /// The user's value of each metric (NaN when undefined: no opens).
  var values: [Double] {
    ScoreMetric.allCases.enumerated().map { m, metric in
      switch metric.averaging {
      case .rows: sums[m] / Double(rows)
      case .opens: opens > 0 ? sums[m] / opens : .nan
      case .rowsWithOpens: openRows > 0 ? sums[m] / Double(openRows) : .nan
      }
    }
  }
}

/// Per-user values of every ``ScoreMetric`` for one (dataset, policy).
package struct UserValues: Sendable, Equatable {
  /// User ids, in order of first appearance.
  package let users: [String]
  let columns: [[Double]]

  /// One value per user (aligned with ``users``); NaN where undefined.
  package subscript(_ metric: ScoreMetric) -> [Double] { columns[metric.index] }
}
