import FetchSupport

/// Behavioural cues that tell a background process from an app the user
/// opened, from the timing of its records alone (no name list).
///
/// UbiqLog logs *running* processes. A service, a launcher or a persistent
/// system app runs whenever the phone logs anything, and a process the system
/// starts is logged in the same second as the system's own always-running
/// processes. A user's app does neither: it runs some of the time, at times
/// the user chooses. Two cues, per participant:
///
/// 1. **Always running.** The process's records touch at least
///    ``alwaysRunningCoverage`` of the participant's logged
///    ``binSeconds``-long bins (a bin is logged when any record of the
///    participant, kept or not, touches it).
/// 2. **Lockstep.** At least ``lockstepShare`` of the process's merged
///    records start within ``lockstepToleranceSeconds`` of a merged record
///    start of an always-running process (the settings app on some phones:
///    restarted with the system services, not by the user).
///
/// A process with fewer than ``minimumRecords`` merged records is never
/// flagged (too little evidence). Flagged processes are dropped in addition
/// to the name rules of ``UbiqLogAdapter/Options``.
///
/// The thresholds are round values read off the cue distributions of the
/// bundled participants. `UbiqLogBehaviouralFilter` tests check, with no
/// name list at all, that the cues agree with the name rules as well on 8
/// participants (every third in file order) as on the other 16: on the 8,
/// they drop 74 % of the records of processes the name rules call
/// background and 4 % of the others (16: 65 % and 15 %; most of those 15 %
/// are HTC's persistent dialer process and settings apps, which the name
/// rules keep and the cues drop). The bundled trace was built without the
/// cues (``UbiqLogAdapter/Options/behaviouralFilter`` is `nil` by default).
///
/// - Complexity: O(r log r + b) per participant for r records touching b bins.
package struct UbiqLogBehaviouralFilter: Sendable, Equatable {
  /// Length of a coverage bin, s; > 0.
  package var binSeconds: Int64 = 900
  /// Share of the participant's logged bins a process must touch to count
  /// as always running; in (0, 1].
  package var alwaysRunningCoverage = 0.85
  /// Share of a process's merged records that must start in lockstep with
  /// an always-running process; in (0, 1].
  package var lockstepShare = 0.9
  /// How close two record starts must be to count as lockstep, s; ≥ 0.
  package var lockstepToleranceSeconds: Int64 = 1
  /// Fewest merged records a process needs before a cue can flag it; ≥ 1.
  package var minimumRecords = 20

  package init() {}

  /// Why these settings cannot be used, or `nil`.
  package var problem: String? {
    if binSeconds <= 0 { return "the coverage bin must be > 0 s" }
    if !(alwaysRunningCoverage > 0 && alwaysRunningCoverage <= 1) { return "the always-running coverage must be in (0, 1]" }
    if !(lockstepShare > 0 && lockstepShare <= 1) { return "the lockstep share must be in (0, 1]" }
    if lockstepToleranceSeconds < 0 { return "the lockstep tolerance must be ≥ 0 s" }
    if minimumRecords < 1 { return "the minimum record count must be ≥ 1" }
    return nil
  }

  /// The cue values of one process.
  package struct Cues: Sendable, Equatable {
    /// Share of the participant's logged bins the process touches.
    package var coverage: Double
    /// Share of its merged records starting in lockstep with an
    /// always-running process (0 when there is none, or when it is one).
    package var lockstep: Double
    /// Merged records.
    package var records: Int
    /// Why it is flagged, or `nil` when it is not.
    package var reason: String?
  }

  /// The cues of every app of one participant. `records` are (start, end,
  /// app) in seconds, any order; `mergeGap` merges an app's records as the
  /// adapter does.
  package func cues(records: [(start: Int64, end: Int64, app: Int32)], appCount: Int, mergeGap: Double) -> [Cues] {
    var logged = Set<Int64>()
    var touched = [Set<Int64>](repeating: [], count: appCount)
    for r in records {
      var b = UbiqLogAdapter.floorDiv(r.start, binSeconds)
      let last = UbiqLogAdapter.floorDiv(r.end, binSeconds)
      while b <= last {
        logged.insert(b)
        touched[Int(r.app)].insert(b)
        b += 1
      }
    }
    // Merged record starts per app.
    var starts = [[Int64]](repeating: [], count: appCount)
    var lastEnd = [Int64](repeating: .min, count: appCount)
    for r in records.sorted(by: { ($0.start, $0.end) < ($1.start, $1.end) }) {
      let a = Int(r.app)
      if lastEnd[a] != .min && Double(r.start - lastEnd[a]) < mergeGap {
        lastEnd[a] = max(lastEnd[a], r.end)
      } else {
        starts[a].append(r.start)
        lastEnd[a] = r.end
      }
    }
    let denominator = Double(max(logged.count, 1))
    var out = (0..<appCount).map { a in
      Cues(coverage: Double(touched[a].count) / denominator, lockstep: 0, records: starts[a].count, reason: nil)
    }
    var heartbeat = Set<Int64>()
    for a in 0..<appCount where out[a].records >= minimumRecords && out[a].coverage >= alwaysRunningCoverage {
      out[a].reason = "always running (\(CSV.number(out[a].coverage * 100, decimals: 0)) % of logged \(binSeconds / 60)-min bins)"
      for s in starts[a] {
        for d in -lockstepToleranceSeconds...lockstepToleranceSeconds { heartbeat.insert(s + d) }
      }
    }
    guard !heartbeat.isEmpty else { return out }
    for a in 0..<appCount where out[a].reason == nil && out[a].records > 0 {
      let share = Double(starts[a].filter { heartbeat.contains($0) }.count) / Double(starts[a].count)
      out[a].lockstep = share
      if out[a].records >= minimumRecords && share >= lockstepShare {
        out[a].reason = "starts in lockstep with always-running processes (\(CSV.number(share * 100, decimals: 0)) % of its records)"
      }
    }
    return out
  }
}
