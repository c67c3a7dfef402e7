import FetchSupport
import FetchTraces
import Foundation

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
///   weighted by `opens`, so they are the user's mean over all their opens
///   (`fresh_ratio` exactly: each row's fresh opens, `fresh_ratio · opens`
///   rounded to a whole number, summed over the user's opens);
/// - `p90_age_s`: plain mean over the rows with at least one open.
///
/// A user without opens has no staleness value (NaN) and is left out of the
/// staleness statistics. Duplicate (dataset, replication, user, app, policy)
/// rows, non-finite numbers and magnitudes beyond ``maxMagnitude`` are
/// errors with file, line and column.
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

  /// The largest magnitude of a value read, 10¹⁰⁰: far past any figure a
  /// run writes (J, bytes, s), and small enough that sums over any number
  /// of rows and the squares of the bootstrap stay finite.
  static let maxMagnitude = 1e100

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
      guard let x = DecimalText.finite(s) else {
        throw TraceFormatError(
          file: file, line: line, field: header[c],
          message: "column \(c + 1): " + (s.isEmpty ? "empty, expected a number" : "not a finite number: '\(s)'"))
      }
      guard abs(x) <= SummaryTable.maxMagnitude else {
        throw TraceFormatError(
          file: file, line: line, field: header[c],
          message: "column \(c + 1): \(s.count > 40 ? String(s.prefix(40)) + "…" : s) is beyond ±1e100, far past any "
            + "figure FetchLab writes (its sums and squares would overflow to infinity)")
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
      case .opens: if o > 0 { sums[m] += metric.declaration.countOverOpens ? Self.count(v[m], opens: o) : v[m] * o }
      case .rowsWithOpens: if o > 0 { sums[m] += v[m] }
      }
    }
  }

  /// `ratio · opens` rounded to the count it was computed from: exact when
  /// the ratio was written with 6 decimals (an error ≤ 5e-7) and
  /// `opens` < 10⁶; the plain product beyond.
  static func count(_ ratio: Double, opens: Double) -> Double {
    opens < 1e6 ? (ratio * opens).rounded() : ratio * opens
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
