import FetchSupport
import Foundation

/// The figures of an earlier `fetchlab bench` (its `bench.csv`), to
/// compare a run against (`bench --compare FILE`).
///
/// The comparison is only meaningful on the same work: the file's
/// `trace_users` and `trace_events` must be this run's (the same
/// `--users`, `--days` and population, or the same `--trace`).
package struct BenchBaseline: Sendable {
  /// The file it was read from, for messages.
  package let path: String
  /// Value by metric name.
  package let values: [String: Double]

  /// Reads `path`, a `bench.csv` (metric, value, unit, target, met).
  ///
  /// - Throws: ``BenchCompareError`` naming the file, line and field of a
  ///   row that does not parse.
  package init(path: String) throws {
    let text: String
    do {
      text = try String(contentsOfFile: path, encoding: .utf8)
    } catch {
      throw BenchCompareError("\(path): cannot read: \(FileError.reason(error))")
    }
    try self.init(csv: text, path: path)
  }

  /// Parses the text of a `bench.csv`.
  package init(csv text: String, path: String) throws {
    self.path = path
    var values: [String: Double] = [:]
    let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
    let header = BenchColumn.allCases.map(\.rawValue).joined(separator: ",")
    guard lines.first.map(String.init) == header else {
      throw BenchCompareError("\(path):1: header: expected \"\(header)\"")
    }
    for (i, line) in lines.enumerated().dropFirst() where !line.isEmpty {
      let f = line.split(separator: ",", omittingEmptySubsequences: false)
      guard f.count == BenchColumn.allCases.count else {
        throw BenchCompareError("\(path):\(i + 1): expected \(BenchColumn.allCases.count) fields, found \(f.count)")
      }
      guard let v = Double(f[1]), v.isFinite else {
        throw BenchCompareError("\(path):\(i + 1): value: \"\(f[1])\" is not a finite number")
      }
      values[String(f[0])] = v
    }
    self.values = values
  }
}

/// A `--compare` file that cannot be read or does not match the run.
package struct BenchCompareError: Error, CustomStringConvertible {
  package let description: String
  init(_ message: String) { description = message }
}

/// How a figure compares between runs: which way is better.
enum BenchDirection {
  case higherIsBetter, lowerIsBetter
}

extension BenchTarget {
  /// The least speed-up over the baseline of each per-core replay rate
  /// (`replay_*_policy_user_days_per_core_s`): 1, no slower.
  package static let replayOverBaseline = 1.0
}

extension BenchReport {
  /// Which way `metric` (a name of ``metricNames``) is better, nil for the
  /// figures that describe the work rather than its speed (sizes, counts,
  /// ratios already measured within a run).
  static func direction(of metric: String) -> BenchDirection? {
    if metric.hasSuffix("_per_s") || metric.hasSuffix("_per_core_s") { return .higherIsBetter }
    if metric == "peak_rss" || metric.hasSuffix("_wall_s") || metric == "fit_population_s" || metric == "bench_total_s"
      || metric.hasPrefix("run_jobs_")
    {
      return .lowerIsBetter
    }
    return nil
  }

  /// The name of the comparison row of `metric`.
  static func comparisonName(_ metric: String) -> String { metric + "_vs_baseline" }

  /// Appends, for every figure with a direction that `baseline` also has,
  /// its speed-up over the baseline (`<metric>_vs_baseline`, in x: this
  /// run's rate over the baseline's, or the baseline's time or memory over
  /// this run's, so more than 1 is better either way). The per-core replay
  /// rates carry a target (``BenchTarget/replayOverBaseline``).
  ///
  /// - Throws: ``BenchCompareError`` when the baseline measured other work
  ///   (its `trace_users` or `trace_events` differ from this run's).
  package mutating func compare(with baseline: BenchBaseline) throws {
    let mine = Dictionary(metrics.map { ($0.name, $0.value) }) { a, _ in a }
    for key in ["trace_users", "trace_events"] {
      guard let a = mine[key], let b = baseline.values[key] else {
        throw BenchCompareError("\(baseline.path): \(key): missing, so the runs cannot be matched")
      }
      guard a == b else {
        throw BenchCompareError(
          "\(baseline.path): \(key): \(BenchMetric.format(b)) in the baseline, \(BenchMetric.format(a)) here: "
            + "compare runs of the same --users and --days (or the same --trace)")
      }
    }
    var rows: [BenchMetric] = []
    for m in metrics {
      guard let dir = Self.direction(of: m.name), let b = baseline.values[m.name], b > 0, m.value > 0 else { continue }
      let ratio = dir == .higherIsBetter ? m.value / b : b / m.value
      let replayRate = m.name.hasPrefix("replay_") && m.name.hasSuffix("_per_core_s")
      rows.append(
        BenchMetric(
          name: Self.comparisonName(m.name), value: ratio, unit: "x",
          goal: replayRate ? .atLeast(BenchTarget.replayOverBaseline) : nil))
    }
    metrics += rows
  }
}
