import FetchSimulation
import FetchTraces
import Foundation

/// The record of one finished work unit of an experiment, `parts/<unit>.state`.
///
/// A unit is (dataset, replication, block of `unit_users` users in trace
/// order). Its rows go to `parts/<unit>.csv` (summary) and, with event files,
/// `parts/<unit>.opens.csv` and `parts/<unit>.fetches.csv`; this record is
/// written last (temp + rename), so its presence means the unit is complete.
/// It holds what `pooled.csv` needs, exactly: every (user, app, policy)
/// summary at full precision in row order, and the unit's age histograms.
///
/// Text format, one item a line (doubles as Swift's shortest round-trip
/// `description`):
///
///     fetchlab-part 1
///     config <configuration SHA-256>
///     unit <unit id>
///     users <count> =<first user> =<last user>   (ids percent-encoded)
///     file <kind> <bytes> <SHA-256>              (kind: summary, opens, fetches)
///     pair <policy> <AppSummary fields, PartRecord.Pair order>
///     ages <policy> <zeros> <count> <bin>:<n> ...
///     end
struct PartRecord: Equatable {
  static let formatVersion = 1

  /// One (user, app, policy) replay's summary.
  struct Pair: Equatable {
    var policy: Int
    var summary: [Double]

    /// The ``AppSummary`` fields kept, in order.
    static let fields = 19

    init(policy: Int, _ s: AppSummary) {
      self.policy = policy
      summary = [
        s.days, Double(s.opens), Double(s.fetches), Double(s.newData), Double(s.noData), Double(s.failed),
        Double(s.wasted), s.meanAgeS, s.p50AgeS, s.p90AgeS, s.p99AgeS, s.freshRatio, s.meanAoiS, s.timeAvgAgeS,
        s.timeFreshRatio, s.energyJ, s.cellularBytes, s.wifiBytes, Double(s.updates),
      ]
    }

    init(policy: Int, summary: [Double]) {
      self.policy = policy
      self.summary = summary
    }

    var days: Double { summary[0] }
    var opens: Int { Int(summary[1]) }
    var fetches: Int { Int(summary[2]) }
    var newData: Int { Int(summary[3]) }
    var noData: Int { Int(summary[4]) }
    var failed: Int { Int(summary[5]) }
    var wasted: Int { Int(summary[6]) }
    var meanAgeS: Double { summary[7] }
    var freshRatio: Double { summary[11] }
    var meanAoiS: Double { summary[12] }
    var energyJ: Double { summary[15] }
    var cellularBytes: Double { summary[16] }
  }

  /// One output file of the unit.
  struct File: Equatable {
    var kind: String
    var bytes: Int
    var sha256: String
  }

  var config: String
  var unit: String
  var users: Int
  var firstUser: String
  var lastUser: String
  var files: [File]
  var pairs: [Pair]
  /// Per policy: the unit's pooled age histogram.
  var ages: [AgeHistogram]

  /// The record's text.
  func encoded() -> String {
    var s = "fetchlab-part \(Self.formatVersion)\nconfig \(config)\nunit \(unit)\n"
    s += "users \(users) \(Self.escape(firstUser)) \(Self.escape(lastUser))\n"
    for f in files { s += "file \(f.kind) \(f.bytes) \(f.sha256)\n" }
    for p in pairs {
      s += "pair \(p.policy) " + p.summary.map(\.description).joined(separator: " ") + "\n"
    }
    for (i, h) in ages.enumerated() {
      s += "ages \(i) \(h.zeros) \(h.count)"
      for (b, n) in h.counts.enumerated() where n > 0 { s += " \(b):\(n)" }
      s += "\n"
    }
    return s + "end\n"
  }

  /// Parses a record; `nil` when the text is not a complete record of this
  /// format.
  static func decode(_ text: String) -> PartRecord? {
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    guard lines.last == "" else { return nil }
    lines.removeLast()
    guard lines.first == "fetchlab-part \(formatVersion)", lines.last == "end" else { return nil }
    var r = PartRecord(config: "", unit: "", users: 0, firstUser: "", lastUser: "", files: [], pairs: [], ages: [])
    for line in lines.dropFirst().dropLast() {
      let w = line.split(separator: " ").map(String.init)
      guard let tag = w.first else { return nil }
      switch (tag, w.count) {
      case ("config", 2): r.config = w[1]
      case ("unit", 2): r.unit = w[1]
      case ("users", 4):
        guard let n = Int(w[1]), let a = unescape(w[2]), let b = unescape(w[3]) else { return nil }
        (r.users, r.firstUser, r.lastUser) = (n, a, b)
      case ("file", 4):
        guard let n = Int(w[2]) else { return nil }
        r.files.append(File(kind: w[1], bytes: n, sha256: w[3]))
      case ("pair", Pair.fields + 2):
        guard let p = Int(w[1]) else { return nil }
        let xs = w.dropFirst(2).compactMap(Double.init)
        guard xs.count == Pair.fields else { return nil }
        r.pairs.append(Pair(policy: p, summary: xs))
      case ("ages", 4...):
        guard let p = Int(w[1]), p == r.ages.count, let zeros = Int(w[2]), let count = Int(w[3]) else { return nil }
        var h = AgeHistogram()
        for _ in 0..<zeros { h.add(0) }
        for item in w.dropFirst(4) {
          let bn = item.split(separator: ":")
          guard bn.count == 2, let b = Int(bn[0]), let n = Int(bn[1]), (0..<AgeHistogram.bins).contains(b) else {
            return nil
          }
          let centre = AgeHistogram.minAge * pow(10, (Double(b) + 0.5) / AgeHistogram.perDecade)
          for _ in 0..<n { h.add(centre) }
        }
        guard h.count == count else { return nil }
        r.ages.append(h)
      default:
        return nil
      }
    }
    return r
  }

  /// Reads `path`; `nil` when missing or not a complete record.
  static func load(_ path: String) -> PartRecord? {
    guard let d = FileManager.default.contents(atPath: path), let s = String(validating: d, as: UTF8.self) else {
      return nil
    }
    return decode(s)
  }

  /// `=` and the percent-encoded text (never empty, no spaces).
  static func escape(_ s: String) -> String {
    var allowed = CharacterSet.alphanumerics
    allowed.insert(charactersIn: "-._")
    return "=" + (s.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")
  }

  static func unescape(_ s: String) -> String? {
    guard s.hasPrefix("=") else { return nil }
    return String(s.dropFirst()).removingPercentEncoding
  }
}

extension PolicyAggregate {
  /// Adds one pair from a part record: the same arithmetic, in the same
  /// order, as ``add(_:)`` on the replay (its ages are merged separately).
  mutating func add(_ p: PartRecord.Pair) {
    var s = AppSummary()
    s.days = p.days
    s.opens = p.opens
    s.fetches = p.fetches
    s.newData = p.newData
    s.noData = p.noData
    s.failed = p.failed
    s.wasted = p.wasted
    s.freshRatio = p.freshRatio
    s.meanAgeS = p.meanAgeS
    s.meanAoiS = p.meanAoiS
    s.energyJ = p.energyJ
    s.cellularBytes = p.cellularBytes
    add(summary: s)
  }
}
