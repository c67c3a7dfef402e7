import FetchBenchmark
import FetchTraces
import Foundation

/// Choosing the policy configurations a report's charts show.
extension RunReport {
  /// A `--policies` name that is not a configuration of the run.
  package struct PolicySelectionError: Error, CustomStringConvertible {
    /// The names asked for that the run does not have.
    package var unknown: [String]
    /// The run's configurations, in `policies.csv` order.
    package var valid: [String]
    /// The file the configurations were read from.
    package var file: String

    package var description: String {
      let quoted = unknown.map { "'" + escaped($0) + "'" }
      return escaped(file) + ": no policy \(quoted.joined(separator: ", ")) in this run; valid policies: "
        + valid.joined(separator: ", ")
    }
  }

  /// The configurations to draw: all of `rows`' policies when `wanted` is
  /// nil, else `wanted` (each must be one of them; an empty list is an error).
  static func selectPolicies(_ wanted: [String]?, from rows: [PolicyRow], file: String) throws -> Set<String> {
    var valid: [String] = []
    for r in rows where !valid.contains(r.policy) { valid.append(r.policy) }
    guard let wanted else { return Set(valid) }
    let unknown = wanted.filter { !valid.contains($0) }
    guard unknown.isEmpty, !wanted.isEmpty else {
      throw PolicySelectionError(unknown: wanted.isEmpty ? [""] : unknown, valid: valid, file: file)
    }
    return Set(wanted)
  }
}

extension RunReport {
  /// The most policies the age CDF and hour-of-day charts draw unasked;
  /// beyond it they draw the headline's (``headlinePolicies(_:)``).
  static let eventChartLimit = 12

  /// `never`, `periodic:1h` and `oracle` when run, then the headline's best
  /// real policy per energy budget: the policies a busy chart keeps.
  static func headlinePolicies(_ rows: [PolicyRow]) -> [String] {
    var ps = ["never", "periodic:1h"].filter { p in rows.contains { $0.policy == p } }
    for w in budgetWinners(rows) where !ps.contains(w.row.policy) { ps.append(w.row.policy) }
    return ps
  }

  /// The age CDF and hour-of-day charts per dataset from the event files
  /// (`opens.csv`, `fetches.csv`), and notes on what was left out. `shown`:
  /// the configurations asked for with `--policies`; nil: every one, or the
  /// ``headlinePolicies(_:)`` (plus `oracle`) of a dataset that ran more than
  /// ``eventChartLimit``. Hours of day are each user's local time from the
  /// run's trace when `readsTrace` (and the trace is found, a regular file
  /// with the manifest's SHA-256), UTC otherwise.
  static func eventCharts(
    runDir: String, suffixes: [String: String], rows: [PolicyRow], shown: Set<String>?, readsTrace: Bool = true,
    charted: Set<String>? = nil
  ) throws -> (charts: [Chart], notes: [String])
  {
    let fm = FileManager.default
    let opens = runDir + "/opens.csv", fetches = runDir + "/fetches.csv"
    guard fm.fileExists(atPath: opens) else {
      return (
        [], ["no opens.csv (the run used --no-event-files or event_files: false): age CDF and hour-of-day charts skipped"]
      )
    }
    var charts: [Chart] = []
    var notes: [String] = []
    let hasFetches = fm.fileExists(atPath: fetches)
    if !hasFetches { notes.append("no fetches.csv: hour-of-day charts show opens only") }
    let (zones, zoneNotes) = readsTrace ? UserDayTimeline.timeZones(runDir: runDir) : ([:], [])
    notes += zoneNotes
    if !readsTrace { notes.append("hour of day in UTC: --no-timeline reads no trace, so the users' time zones are unknown") }
    let ev = try readEvents(opensPath: opens, fetchesPath: hasFetches ? fetches : nil, timeZones: zones)
    for d in ev.datasets where charted?.contains(d) ?? true {
      let s = suffixes[d] ?? (d.isEmpty ? "" : "-" + slug(d))
      let all = ev.policies[d] ?? []
      var ps = all.filter { shown?.contains($0) ?? true }
      var more: String?
      if shown == nil, ps.count > eventChartLimit {
        let keep = headlinePolicies(rows.filter { $0.dataset == d }) + ["oracle"]
        ps = ps.filter { keep.contains($0) }
        more = "\(ps.count) of \(all.count) policies: never, periodic:1h, oracle and the headline's; "
          + "choose others with fetchlab report --policies."
      }
      var cdf = SVGPlot.ageCDF(dataset: d, policies: ps, ages: ev.ages[d] ?? [:])
      var hours = SVGPlot.hourOfDay(
        dataset: d, opens: ev.opensByHour[d] ?? Array(repeating: 0, count: 24), policies: hasFetches ? ps : [],
        fetches: ev.fetchesByHour[d] ?? [:], localTime: !(zones[d]?.isEmpty ?? true))
      if let more {
        cdf.notes.append(more)
        hours.notes.append(more)
      }
      charts.append(Chart(file: "age-cdf\(s).svg", plot: cdf))
      charts.append(Chart(file: "hour-of-day\(s).svg", plot: hours))
    }
    return (charts, notes)
  }
}
