import FetchSupport
import FetchTraces
import Foundation

/// The units an experiment run has before it starts, and the work each one
/// is estimated to take, for progress ("k of N units") and its ETA.
///
/// Per dataset: its users and user-days (a synthetic population's
/// settings, or a trace's `begin` and `end` rows, read in one pass over the
/// file: O(bytes) time, O(1) memory), so its blocks of `unit_users` users
/// and units (replications × blocks, every shard's); this run's share of
/// them (its shard's); and the estimated work of one unit, the block's
/// user-days times the configurations: replay time grows with
/// policy-user-days (see `fetchlab bench`).
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
      let users: Int, userDays: Double
      switch d.source {
      case .synthetic(let s):
        users = s.users
        userDays = Double(s.users) * Double(s.days)
      case .trace(let p):
        (users, userDays) = Self.traceExtent(p)
      }
      let blocks = (users + e.unitUsers - 1) / e.unitUsers
      let n = blocks * e.replications
      units.append(n)
      mine.append((first..<(first + n)).filter { shard?.owns(unit: $0) ?? true }.count)
      unitWork.append(max(userDays, 1) / Double(max(1, blocks)) * Double(max(1, e.configurations.count)))
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

  /// The users of a canonical trace (its `begin` rows) and their days
  /// (each user's `end` time minus its `begin` time, over 86,400 s); (0, 0)
  /// when the file cannot be read. Only the first three fields of a line
  /// are looked at (`user,time,event`), unquoted.
  static func traceExtent(_ path: String) -> (users: Int, days: Double) {
    guard let h = FileHandle(forReadingAtPath: path) else { return (0, 0) }
    defer { try? h.close() }
    var users = 0, seconds = 0.0, begin: Double?
    var field = 0, time: [UInt8] = [], event: [UInt8] = [], comment = false, atStart = true
    func endOfEvent() {
      if event == Array("begin".utf8) {
        users += 1
        begin = Double(String(decoding: time, as: UTF8.self))
      } else if event == Array("end".utf8), let b = begin, let t = Double(String(decoding: time, as: UTF8.self)) {
        seconds += max(0, t - b)
        begin = nil
      }
    }
    while let chunk = try? h.read(upToCount: 1 << 20), !chunk.isEmpty {
      for c in chunk {
        if c == UInt8(ascii: "\n") {
          if !comment, field == 2 { endOfEvent() }
          field = 0
          time.removeAll(keepingCapacity: true)
          event.removeAll(keepingCapacity: true)
          comment = false
          atStart = true
          continue
        }
        if atStart {
          atStart = false
          comment = c == UInt8(ascii: "#")
        }
        if comment || field > 2 { continue }
        if c == UInt8(ascii: ",") {
          if field == 2 { endOfEvent() }
          field += 1
        } else if c != UInt8(ascii: "\r") {
          if field == 1, time.count < 32 { time.append(c) }
          if field == 2, event.count < 8 { event.append(c) }
        }
      }
    }
    return (users, seconds / 86_400)
  }
}
