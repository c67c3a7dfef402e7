import FetchSupport
import FetchTraces
import Foundation

/// The units an experiment run has before it starts, and the work each one
/// is estimated to take, for progress ("k of N units") and its ETA.
///
/// Per dataset: its users (a synthetic population's setting, or the `begin`
/// rows of a trace, counted in one pass over the file, O(bytes) time and
/// O(1) memory), so its blocks of `unit_users` users and units
/// (replications × blocks, every shard's); this run's share of them (its
/// shard's); and the estimated work of one unit, the rows of a block times
/// the configurations (rows: a trace's bytes over
/// ``ResourceLimits/traceBytesPerRow``, a synthetic population's user-days
/// times ``ResourceLimits/syntheticRowsPerUserDay``).
struct UnitPlan {
  /// Units per dataset, every shard's.
  var units: [Int]
  /// Units per dataset that this run computes or reuses (its shard's).
  var mine: [Int]
  /// Estimated work of one unit per dataset (rows × configurations).
  var unitWork: [Double]

  init(_ e: Experiment, shard: ExperimentShard?) {
    units = []
    mine = []
    unitWork = []
    var first = 0  // global index of the dataset's first unit
    for d in e.datasets {
      let users: Int, rows: Double
      switch d.source {
      case .synthetic(let s):
        users = s.users
        rows = Double(s.users) * Double(s.days) * ResourceLimits.syntheticRowsPerUserDay
      case .trace(let p):
        users = Self.traceUsers(p)
        rows = Double(((try? FileManager.default.attributesOfItem(atPath: p)[.size]) as? Int) ?? 0)
          / ResourceLimits.traceBytesPerRow
      }
      let blocks = (users + e.unitUsers - 1) / e.unitUsers
      let n = blocks * e.replications
      units.append(n)
      mine.append((first..<(first + n)).filter { shard?.owns(unit: $0) ?? true }.count)
      unitWork.append(rows / Double(max(1, blocks)) * Double(max(1, e.configurations.count)))
      first += n
    }
  }

  /// This run's units over every dataset.
  var total: Int { mine.reduce(0, +) }

  /// This run's estimated work over every dataset.
  var totalWork: Double {
    var sum = 0.0
    for (k, w) in zip(mine, unitWork) { sum += Double(k) * w }
    return sum
  }

  /// The users of a canonical trace: its rows whose third field (`event`)
  /// is `begin`, one per user; 0 when the file cannot be read.
  static func traceUsers(_ path: String) -> Int {
    guard let h = FileHandle(forReadingAtPath: path) else { return 0 }
    defer { try? h.close() }
    let begin = Array("begin".utf8)
    var count = 0, field = 0, matched = 0, atLineStart = true, comment = false
    while let chunk = try? h.read(upToCount: 1 << 20), !chunk.isEmpty {
      for b in chunk {
        if b == UInt8(ascii: "\n") {
          if !comment, field == 2, matched == begin.count { count += 1 }
          field = 0
          matched = 0
          atLineStart = true
          comment = false
          continue
        }
        if atLineStart {
          atLineStart = false
          comment = b == UInt8(ascii: "#")
        }
        if comment { continue }
        if b == UInt8(ascii: ",") {
          if field == 2, matched == begin.count { count += 1 }
          field += 1
          matched = field == 2 ? 0 : -1
        } else if field == 2, matched >= 0 {
          matched = matched < begin.count && begin[matched] == b ? matched + 1 : -1
        }
      }
    }
    return count
  }
}
