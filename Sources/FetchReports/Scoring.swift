import FetchBenchmark
import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation

/// The per-user metrics that ``Scoring`` compares policies on (freshness metrics
/// after Cho & Garcia-Molina and Kaul, Yates, Gruteser). Raw values are `summary.csv` column names.
///
/// Each metric is declared once, in ``declaration``: its unit, how one
/// user's rows are averaged, its direction, and whether it gets a
/// bootstrap interval in `policies.csv` (`m_lo, m_hi`; every metric does
/// today).
public enum ScoreMetric: String, CaseIterable, Sendable {
  /// Marginal energy of background fetches, J per day (per app).
  case energy_j_per_day
  /// The part of it drawn from the battery (not while charging), J per day.
  case battery_energy_j_per_day
  /// The same in % of the battery per day.
  case battery_pct_per_day
  /// Cellular bytes of background fetches per day.
  case cellular_bytes_per_day
  /// Background fetches per day.
  case fetches_per_day
  /// Mean age at open (Cho & Garcia-Molina), s.
  case mean_age_s
  /// 90th percentile of the age at open, s.
  case p90_age_s
  /// Share of opens that showed fresh content (higher is better).
  case fresh_ratio
  /// Mean Age of Information at open, s.
  case mean_aoi_s

  /// How one user's rows (apps, replications) are averaged: plain mean
  /// (`rows`), weighted by opens (`opens`), or plain mean over the rows with
  /// at least one open (`rowsWithOpens`).
  enum Averaging { case rows, opens, rowsWithOpens }

  /// Everything about one metric besides its name, read from its
  /// declaration in the metric table (``Metric``): the figure its
  /// `summary.csv` column shows.
  struct Declaration {
    /// The declared figure.
    var figure: MetricFigure

    /// Its unit: `J/day`, `%/day`, `bytes/day`, `1/day`, `s`, `ratio`.
    var unit: String { figure.unit }
    /// How a user's rows average, from how the metric pools: sums per row,
    /// means and shares over opens weighted by opens, quantiles per row
    /// with opens.
    var averaging: Averaging {
      switch figure.metric.pooling {
      case .opensWeighted, .opensShare: .opens
      case .quantile, .mean: .rowsWithOpens
      case .sum, .recomputed, .none: .rows
      }
    }
    var higherIsBetter: Bool { figure.metric.direction == .higherIsBetter }
    /// Whether `policies.csv` gives it a 95 % bootstrap interval (else empty bounds).
    var interval: Bool { figure.metric.interval }
    /// The step of its `summary.csv` column (1e-3 for 3 decimals), in the
    /// metric's unit: a row's value is within half of it of the replay's.
    var resolution: Double { Scoring.step(decimals: figure.decimals ?? 0) }
    /// Whether `value · opens` of a row is a count (fresh opens): a user's
    /// value is then read exactly, Σ count / Σ opens, whatever the rounding.
    var countOverOpens: Bool { figure.metric.pooling == .opensShare }

    /// Paired values closer than this are a tie: each of the two per-user
    /// values is within half a ``resolution`` of its replay's, so a
    /// difference within one step cannot tell the policies apart (0 for
    /// exact counts).
    var tieTolerance: Double { countOverOpens ? 0 : resolution }
  }

  /// The metric's declaration.
  var declaration: Declaration { Self.declarations[index] }
  private static let declarations = allCases.map { m in
    guard let f = MetricFigure(column: m.rawValue) else { preconditionFailure("\(m.rawValue) is no declared figure") }
    return Declaration(figure: f)
  }

  /// Whether a higher value is better (only `fresh_ratio`).
  public var higherIsBetter: Bool { declaration.higherIsBetter }

  var averaging: Averaging { declaration.averaging }

  /// Position in `allCases`.
  var index: Int { Self.indexes[self]! }
  private static let indexes = Dictionary(uniqueKeysWithValues: allCases.enumerated().map { ($1, $0) })
}

/// The mean of a metric over users with its bootstrap confidence interval.
public struct MetricEstimate: Sendable, Equatable {
  /// Mean over users with a value (NaN when none has).
  public var mean: Double
  /// Users with a value (those without opens have no staleness value).
  public var users: Int
  /// Percentile bootstrap interval of the mean; nil when no user has a value.
  public var interval: ConfidenceInterval?

  package init(mean: Double, users: Int, interval: ConfidenceInterval? = nil) {
    self.mean = mean
    self.users = users
    self.interval = interval
  }
}

/// One policy configuration's scores in one dataset: one row of the scored
/// `policies.csv`.
public struct PolicyScore: Sendable, Equatable {
  /// The dataset's name.
  public let dataset: String
  /// The canonical policy string.
  public let policy: String
  /// Users with at least one row for this policy.
  public let users: Int
  let estimates: [MetricEstimate]

  /// `estimates` maps every metric; missing ones are NaN over 0 users.
  package init(dataset: String = "", policy: String, users: Int, estimates: [ScoreMetric: MetricEstimate]) {
    self.dataset = dataset
    self.policy = policy
    self.users = users
    self.estimates = ScoreMetric.allCases.map { estimates[$0] ?? MetricEstimate(mean: .nan, users: 0) }
  }

  /// The estimate of one metric.
  public subscript(_ m: ScoreMetric) -> MetricEstimate { estimates[m.index] }

  /// The policy family: the spec name before `:` (``Scoring/family(of:)``).
  public var family: String { Scoring.family(of: policy) }
}

/// A problem with the request rather than the file (e.g. an unknown
/// baseline); file problems are ``TraceFormatError``s.
///
/// A public struct over an internal enum (like `LinearAlgebraError`): match
/// on ``code``, show ``message``; new codes do not break callers.
package struct ScoringError: CodedError {
  enum Kind: Sendable, Hashable {
    case unknownBaseline
  }

  /// The category of a ``ScoringError``.
  package struct Code: Sendable, Hashable, CustomStringConvertible {
    let kind: Kind

    /// The baseline policy is not in the run's summary table.
    package static let unknownBaseline = Code(kind: .unknownBaseline)

    /// A stable kebab-case name.
    package var description: String {
      switch kind {
      case .unknownBaseline: "unknown-baseline"
      }
    }
  }

  /// The category.
  package let code: Code
  /// What is wrong, in words (also the ``description``).
  package let message: String
  /// The summary table the request was checked against, and the option at fault.
  package var location: InputLocation

  package init(code: Code, message: String, location: InputLocation) {
    (self.code, self.message, self.location) = (code, message, location)
  }
}

/// Statistics over a run's `summary.csv` with users as the resampling unit:
/// per-policy means with bootstrap intervals, Pareto frontiers, staleness at
/// matched energy, the gap to the budgeted oracle, and paired comparisons
/// against a baseline. See ``SummaryTable`` for how a user's rows are
/// averaged and ``writeScores(runDir:resamples:jobs:energy:)`` for the files.
public enum Scoring {
  /// The family of a policy configuration: `periodic:1h` → `periodic`,
  /// `ios-minimum:price=0.1` → `ios-minimum`, `never` → `never`.
  public static func family(of policy: String) -> String { PolicySpec.familyName(of: policy) }

  /// Mean over users and a percentile bootstrap interval of every metric,
  /// per (dataset, policy) in file order. Users are resampled jointly for
  /// all metrics, from a stream seeded by the dataset and policy names, so
  /// the (dataset, policy) pairs are scored on `jobs` threads with the same
  /// results as on one (the bootstrap, B · users · metrics draws a pair, would
  /// otherwise be the serial tail of a two-job run).
  ///
  /// - Complexity: O(pairs · resamples · users · metrics / jobs).
  package static func score(
    _ table: SummaryTable, resamples: Int = Bootstrap.defaultResamples, level: Double = Bootstrap.defaultLevel,
    jobs: Int = 1
  ) -> [PolicyScore] {
    let pairs = table.datasets.flatMap { d in table.policies(in: d).map { (dataset: d, policy: $0) } }
    return parallelMap(pairs.count, jobs: jobs) { k -> PolicyScore? in
      let (d, p) = pairs[k]
      guard let v = table.values(dataset: d, policy: p) else { return nil }
      var rng = Bootstrap.generator("policies", d, p)
      let columns = ScoreMetric.allCases.map { v[$0] }
      let intervals = Bootstrap.meanIntervals(columns, resamples: resamples, level: level, using: &rng)
      var est: [ScoreMetric: MetricEstimate] = [:]
      for (i, m) in ScoreMetric.allCases.enumerated() {
        est[m] = MetricEstimate(
          mean: nanMean(columns[i]), users: columns[i].filter { !$0.isNaN }.count,
          interval: m.declaration.interval ? intervals[i] : nil)
      }
      return PolicyScore(dataset: d, policy: p, users: v.users.count, estimates: est)
    }.compactMap { $0 }
  }

  /// Header of the scored `policies.csv`: `dataset, policy, family, users`,
  /// then for each ``ScoreMetric`` in order `m, m_lo, m_hi`.
  package static var policiesHeader: [String] {
    ["dataset", "policy", "family", "users"] + ScoreMetric.allCases.flatMap { [$0.rawValue, $0.rawValue + "_lo", $0.rawValue + "_hi"] }
  }

  /// A CSV number cell: empty for nil or NaN, else rounded to 10
  /// significant digits and printed by ``CSV/number(_:)``.
  static func cell(_ x: Double?) -> String {
    guard let x, !x.isNaN else { return "" }
    return CSV.number(rounded(x, significant: 10))
  }

  /// The `dataset` cell of a `--trace` run's scored files (`policies.csv`,
  /// `pareto.csv`, `matched.csv`, `oracle_gap.csv`, `paired.csv`): the
  /// trace file's name without its extension (`ubiqlog-opens`), or `trace`
  /// when that is empty; from `runDir/manifest.json`. nil for an experiment
  /// (its rows name their datasets) or without a readable manifest. Readers
  /// of these files map it back to `""`, the dataset of the run's other files.
  package static func traceDataset(runDir: String) -> String? {
    guard let data = FileManager.default.contents(atPath: runDir + "/manifest.json"),
      let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
      let trace = json["trace"] as? [String: Any], let path = trace["path"] as? String
    else { return nil }
    let stem = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
    return stem.isEmpty ? "trace" : stem
  }

  /// 10^−`decimals`, the step of a column written with `decimals` decimals.
  static func step(decimals: Int) -> Double {
    var p = 1.0
    for _ in 0..<decimals { p *= 10 }
    return 1 / p
  }

  /// `x` rounded to `s` significant decimal digits.
  static func rounded(_ x: Double, significant s: Int) -> Double {
    guard x.isFinite, x != 0 else { return x }
    let decimals = s - 1 - Int(log10(abs(x)).rounded(.down))
    if decimals > 22 { return x }
    if decimals <= 0 {
      let p = pow(10, Double(-decimals))
      return (x / p).rounded() * p
    }
    let p = pow(10, Double(decimals))
    return (x * p).rounded() / p
  }

  /// `x` in about 4 significant digits for tables: `263.9`, `0.01234`,
  /// `12345`, `1.235e+06`; `+` in front of positives when `plus`.
  static func short(_ x: Double, plus: Bool = false) -> String {
    guard x.isFinite else { return x.isNaN ? "-" : (x > 0 ? "inf" : "-inf") }
    if x == 0 { return "0" }
    let sign = x < 0 ? "-" : (plus ? "+" : "")
    let a = abs(x)
    if a >= 1e6 || a < 1e-3 { return sign + scientific(a, decimals: 3) }
    let e = Int(log10(a).rounded(.down))
    return sign + ComparisonTable.fixed(a, max(0, 3 - e))
  }

  /// A p-value: 4 significant digits down to 0.001, then `2.1e-07`.
  static func pValue(_ p: Double) -> String {
    if p >= 0.001 { return short(p) }
    if p == 0 { return "<1e-300" }
    return scientific(p, decimals: 1)
  }

  /// Positive `a` as `m.mmme±XX`.
  static func scientific(_ a: Double, decimals: Int) -> String {
    var e = Int(log10(a).rounded(.down))
    var m = a / pow(10, Double(e))
    let p = pow(10, Double(decimals))
    m = (m * p).rounded() / p
    if m >= 10 {
      m /= 10
      e += 1
    }
    let digits = String(abs(e))
    return ComparisonTable.fixed(m, decimals) + "e" + (e < 0 ? "-" : "+") + (digits.count < 2 ? "0" : "") + digits
  }
}

/// Reads `runDir/summary.csv` and writes, each atomically:
///
/// - `policies.csv` (replacing the run's pooled one): one row per (dataset,
///   policy): `dataset, policy, family, users`, then for each of
///   `energy_j_per_day, battery_energy_j_per_day, battery_pct_per_day, cellular_bytes_per_day,
///   fetches_per_day, mean_age_s, p90_age_s, fresh_ratio, mean_aoi_s` the
///   mean over users and its 95 % percentile bootstrap interval (`_lo`,
///   `_hi`; `resamples` resamples of users, seeded by dataset and policy).
///   `dataset` is the trace's name (``Scoring/traceDataset(runDir:)``) when
///   the summary has no dataset column (a `--trace` run).
/// - `pareto.csv`: `dataset, staleness_metric, cost_metric, policy, family,
///   cost, staleness, on_frontier` for every configuration in each of the 3×4
///   planes (``Scoring/paretoStaleness`` × ``Scoring/paretoCosts``).
/// - `matched.csv`: `dataset, family, reference_policy, E, mean_age_s,
///   p90_age_s, fresh_ratio`, E the `energy` basis's column
///   (`battery_energy_j_per_day` by default): each family's sweep
///   interpolated at each configuration's energy (empty outside the
///   family's range).
/// - `oracle_gap.csv` (energies on the `energy` basis): `dataset, budget_metric, policy, budget_value,
///   mean_age_s, budget_oracle_mean_age_s, gap_to_budget_oracle_mean_age_s, fresh_ratio,
///   budget_oracle_fresh_ratio, fresh_gap_closed, learning_loss_fresh_ratio,
///   learning_loss_mean_age_s, foresight_loss_fresh_ratio, foresight_loss_mean_age_s`
///   (``OracleGapRow``; header only without an `oracle-budget:*`
///   configuration; the frontier is every budget of the oracle that knows
///   opens and content, `know=` variants are rows). The loss columns, on a
///   learned planner's row with its references at its budget, are the paired
///   mean losses of `loss_split.csv` (``Scoring/loss(_:_:of:dataset:in:)``).
/// - `loss_split.csv`: the learning and foresight losses per budget
///   (``Scoring/lossSplit(_:resamples:)``; header only without a model oracle).
///
/// Every value is per user first (see ``SummaryTable``), then averaged over
/// users; numbers have 10 significant digits, empty when undefined.
/// Throws ``TraceFormatError`` (file, line, column) when the summary is
/// missing or malformed; then no file is changed.
@discardableResult
public func writeScores(
  runDir: String, resamples: Int = Bootstrap.defaultResamples, jobs: Int = 1, energy: EnergyBasis = .standard
) throws -> [PolicyScore] {
  let table = try SummaryTable(path: runDir + "/summary.csv")
  let scores = Scoring.score(table, resamples: resamples, jobs: jobs)
  let cell = Scoring.cell
  let label = Scoring.traceDataset(runDir: runDir) ?? ""
  func named(_ d: String) -> String { d.isEmpty ? label : d }

  let policies = try AtomicTextFile(path: runDir + "/policies.csv")
  try policies.write(CSV.line(Scoring.policiesHeader))
  for s in scores {
    var f = [named(s.dataset), s.policy, s.family, String(s.users)]
    for m in ScoreMetric.allCases {
      let e = s[m]
      f += [cell(e.mean), cell(e.interval?.lower), cell(e.interval?.upper)]
    }
    try policies.write(CSV.line(f))
  }

  let pareto = try AtomicTextFile(path: runDir + "/pareto.csv")
  try pareto.write(ParetoColumn.headerLine)
  for r in Scoring.pareto(scores) {
    try pareto.write(
      CSV.line([
        named(r.dataset), r.staleness.rawValue, r.cost.rawValue, r.policy, Scoring.family(of: r.policy),
        cell(r.costValue), cell(r.stalenessValue), r.onFrontier ? "1" : "0",
      ]))
  }

  let matched = try AtomicTextFile(path: runDir + "/matched.csv")
  try matched.write(CSV.line(MatchedColumn.header(energy)))
  for r in Scoring.matchedEnergy(scores, basis: energy) {
    try matched.write(
      CSV.line([
        named(r.dataset), r.family, r.referencePolicy, cell(r.energyJPerDay), cell(r.meanAgeS), cell(r.p90AgeS),
        cell(r.freshRatio),
      ]))
  }

  let losses = Scoring.lossSplit(table, resamples: resamples)
  let gaps = try AtomicTextFile(path: runDir + "/oracle_gap.csv")
  try gaps.write(OracleGapColumn.headerLine)
  for r in Scoring.oracleGaps(scores, basis: energy) {
    let split = [LossSplitRow.Loss.learning, .foresight].flatMap { l in
      [ScoreMetric.fresh_ratio, .mean_age_s].map { cell(Scoring.loss(l, $0, of: r.policy, dataset: r.dataset, in: losses)) }
    }
    try gaps.write(
      CSV.line(
        [
          named(r.dataset), r.axis.rawValue, r.policy, cell(r.budgetValue), cell(r.meanAgeS),
          cell(r.oracleMeanAgeS), cell(r.gapS), cell(r.freshRatio), cell(r.oracleFreshRatio), cell(r.freshGapClosed),
        ] + split))
  }
  let split = try AtomicTextFile(path: runDir + "/loss_split.csv")
  for line in Scoring.lossSplitLines(losses, named: named) { try split.write(line) }
  for f in [policies, pareto, matched, gaps, split] { try f.commit() }
  return scores
}

// MARK: - Paired comparison against a baseline

/// Paired statistics of per-user differences `policy − baseline`.
package struct PairedSummary: Sendable, Equatable {
  /// Users with a value under both policies.
  package var users: Int
  package var baselineMean: Double
  package var policyMean: Double
  /// Mean of the per-user differences (NaN when `users` is 0).
  package var meanDifference: Double
  /// Percentile bootstrap interval of ``meanDifference``.
  package var interval: ConfidenceInterval?
  /// Users for whom the policy is better than the baseline.
  package var wins: Int
  /// Users for whom it is worse.
  package var losses: Int
  /// Users with equal values: |d| ≤ the tie tolerance (the metric's
  /// `summary.csv` resolution), or ≤ 1e-9 · max(|policy|, |baseline|).
  package var ties: Int

  /// Two-sided exact sign test on wins against losses, ties dropped.
  package var signTestP: Double { SignTest.twoSidedP(wins: wins, losses: losses) }
}

/// One row of `paired.csv`: a policy against the baseline on one metric.
package struct PairedDifference: Sendable, Equatable {
  package let dataset: String
  package let policy: String
  package let baseline: String
  package let metric: ScoreMetric
  package let summary: PairedSummary
}

/// Per-user paired comparisons of every policy against a baseline.
package enum PairedComparison {
  /// Metrics compared by default.
  package static let defaultMetrics: [ScoreMetric] = [
    .battery_energy_j_per_day, .energy_j_per_day, .mean_age_s, .p90_age_s, .fresh_ratio, .cellular_bytes_per_day,
  ]

  /// Paired statistics of `policy[i] − baseline[i]` over the indices where
  /// both are not NaN. "Better" is lower, or higher when `higherIsBetter`;
  /// differences within `tolerance` (the metric's unit) are ties.
  package static func summarize(
    policy: [Double], baseline: [Double], higherIsBetter: Bool, tolerance: Double = 0,
    resamples: Int = Bootstrap.defaultResamples, level: Double = Bootstrap.defaultLevel,
    using rng: inout SplitMix64
  ) -> PairedSummary {
    precondition(policy.count == baseline.count, "one baseline value per policy value")
    var d: [Double] = [], ps: [Double] = [], bs: [Double] = []
    var wins = 0, losses = 0, ties = 0
    for (p, b) in zip(policy, baseline) where !p.isNaN && !b.isNaN {
      let x = p - b
      d.append(x)
      ps.append(p)
      bs.append(b)
      if abs(x) <= max(tolerance, 1e-9 * max(abs(p), abs(b))) {
        ties += 1
      } else if (x > 0) == higherIsBetter {
        wins += 1
      } else {
        losses += 1
      }
    }
    let ci = d.isEmpty ? nil : Bootstrap.meanInterval(d, resamples: resamples, level: level, using: &rng)
    return PairedSummary(
      users: d.count, baselineMean: nanMean(bs), policyMean: nanMean(ps), meanDifference: nanMean(d),
      interval: ci, wins: wins, losses: losses, ties: ties)
  }

  /// Every other policy against `baseline`, per dataset that has the
  /// baseline, per metric; users matched by id within the dataset. Each
  /// bootstrap stream is seeded by dataset, baseline, policy and metric.
  /// Throws ``ScoringError`` listing the run's policies when no dataset has
  /// the baseline.
  package static func compare(
    _ table: SummaryTable, baseline: String, metrics: [ScoreMetric] = defaultMetrics,
    resamples: Int = Bootstrap.defaultResamples, level: Double = Bootstrap.defaultLevel
  ) throws -> [PairedDifference] {
    guard table.policies.contains(baseline) else {
      let list = table.policies.isEmpty ? "(none)" : table.policies.joined(separator: ", ")
      throw ScoringError(
        .unknownBaseline, "unknown baseline '\(baseline)'; policies in \(table.file): \(list)",
        location: InputLocation(file: table.file, field: "--baseline"))
    }
    var out: [PairedDifference] = []
    for dataset in table.datasets {
      guard let base = table.values(dataset: dataset, policy: baseline) else { continue }
      var slot: [String: Int] = [:]
      for (i, u) in base.users.enumerated() { slot[u] = i }
      for p in table.policies(in: dataset) where p != baseline {
        guard let v = table.values(dataset: dataset, policy: p) else { continue }
        let pairs = v.users.enumerated().compactMap { i, u in slot[u].map { (i, $0) } }
        for m in metrics {
          let pv = v[m], bv = base[m]
          var rng = Bootstrap.generator("paired", dataset, baseline, p, m.rawValue)
          let s = summarize(
            policy: pairs.map { pv[$0.0] }, baseline: pairs.map { bv[$0.1] }, higherIsBetter: m.higherIsBetter,
            tolerance: m.declaration.tieTolerance, resamples: resamples, level: level, using: &rng)
          out.append(PairedDifference(dataset: dataset, policy: p, baseline: baseline, metric: m, summary: s))
        }
      }
    }
    return out
  }

  /// Writes `paired.csv` atomically (columns: ``PairedColumn``) for the run
  /// in `runDir`, whose ``Scoring/traceDataset(runDir:)`` names the rows of
  /// a `--trace` run; `path` may lie elsewhere (a staging directory).
  package static func write(_ rows: [PairedDifference], to path: String, runDir: String) throws {
    let cell = Scoring.cell
    let label = Scoring.traceDataset(runDir: runDir) ?? ""
    let f = try AtomicTextFile(path: path)
    try f.write(PairedColumn.headerLine)
    for r in rows {
      let s = r.summary
      try f.write(
        CSV.line([
          r.dataset.isEmpty ? label : r.dataset, r.baseline, r.policy, r.metric.rawValue, r.metric.higherIsBetter ? "higher" : "lower",
          String(s.users), cell(s.baselineMean), cell(s.policyMean), cell(s.meanDifference),
          cell(s.interval?.lower), cell(s.interval?.upper), String(s.wins), String(s.losses), String(s.ties),
          CSV.number(s.signTestP),
        ]))
    }
    try f.commit()
  }

  /// An aligned table, one row per (dataset, policy, metric); the dataset
  /// column only when the summary has datasets.
  package static func render(_ rows: [PairedDifference], resamples: Int = Bootstrap.defaultResamples) -> String {
    guard !rows.isEmpty else { return "no policy besides the baseline to compare\n" }
    let showDataset = rows.contains { !$0.dataset.isEmpty }
    let baselines = Set(rows.map(\.baseline)).sorted().joined(separator: ", ")
    var lines: [String] = [
      "Paired by user against baseline \(baselines): differences policy - baseline over the users with both. "
        + "Every figure is a mean over users (each user weighs the same), not pooled over opens as pooled.csv "
        + "and the table of 'fetchlab run' are."
    ]
    if let w = smallSampleWarning(rows) { lines.append(w) }
    let header =
      (showDataset ? ["dataset"] : []) + ["policy", "metric", "users", "baseline", "value", "diff", "95% CI", "W/L/T", "p"]
    var table = [header]
    for r in rows {
      let s = r.summary
      let ci = s.interval.map { "[\(Scoring.short($0.lower)), \(Scoring.short($0.upper))]" } ?? "-"
      table.append(
        (showDataset ? [r.dataset] : []) + [
          r.policy, r.metric.rawValue, String(s.users), Scoring.short(s.baselineMean), Scoring.short(s.policyMean),
          Scoring.short(s.meanDifference, plus: true), ci, "\(s.wins)/\(s.losses)/\(s.ties)",
          Scoring.pValue(s.signTestP),
        ])
    }
    let leftAligned = showDataset ? 3 : 2
    let widths = header.indices.map { c in table.map { $0[c].count }.max() ?? 0 }
    for r in table {
      lines.append(
        r.indices.map { c in
          let pad = String(repeating: " ", count: widths[c] - r[c].count)
          return c < leftAligned ? r[c] + pad : pad + r[c]
        }.joined(separator: "  "))
    }
    lines.append(
      "baseline, value: means over users; diff: mean difference with 95% percentile bootstrap CI (B = \(resamples)); "
        + "W/L/T: users where the policy is better/worse/equal; p: two-sided exact sign test.")
    return lines.joined(separator: "\n") + "\n"
  }
}

extension PairedComparison {
  /// Users below which a bootstrap CI and a sign test say little: with
  /// fewer, a percentile bootstrap of a mean has a handful of distinct
  /// resamples and undercovers, and the sign test cannot reach p < 0.05
  /// with fewer than 6 users.
  package static let reliableUsers = 10

  /// A warning when some comparison has fewer than ``reliableUsers`` users,
  /// naming the smallest count; nil otherwise.
  package static func smallSampleWarning(_ rows: [PairedDifference]) -> String? {
    guard let fewest = rows.map(\.summary.users).min(), isSmallSample(users: fewest) else { return nil }
    return "warning: only \(fewest) users in some comparisons (fewer than \(reliableUsers)): their bootstrap CIs "
      + "and sign-test p-values are unreliable; read the per-user W/L/T counts and the means instead."
  }

  /// Whether CIs over `users` users are too few to read (fewer than
  /// ``reliableUsers``): the rule of `compare`'s warning and of the
  /// notebook's interpretation (python/fetchlab/notebook.py holds the same
  /// number as `RELIABLE_USERS`; a test keeps the two equal).
  package static func isSmallSample(users: Int) -> Bool { users < reliableUsers }
}

/// Columns of `paired.csv`: one row per (dataset, policy, metric) against the
/// baseline. `better` is `lower` or `higher`; `mean_diff` is the mean of
/// per-user `policy − baseline` over the `users` who have both, with its
/// 95 % percentile bootstrap interval; `wins`/`losses`/`ties` count users
/// where the policy is better/worse/equal; `sign_test_p` is the exact
/// two-sided sign test on wins against losses.
package enum PairedColumn: String, CaseIterable, Sendable {
  case dataset, baseline, policy, metric, better, users
  case baseline_mean, policy_mean, mean_diff, mean_diff_lo, mean_diff_hi
  case wins, losses, ties, sign_test_p
}

/// Reads `runDir/summary.csv`, compares every policy with `baseline` and
/// writes `runDir/paired.csv` (``PairedColumn``); returns the rows.
@discardableResult
package func writePaired(
  runDir: String, baseline: String, metrics: [ScoreMetric] = PairedComparison.defaultMetrics,
  resamples: Int = Bootstrap.defaultResamples
) throws -> [PairedDifference] {
  let table = try SummaryTable(path: runDir + "/summary.csv")
  let rows = try PairedComparison.compare(table, baseline: baseline, metrics: metrics, resamples: resamples)
  try PairedComparison.write(rows, to: runDir + "/paired.csv", runDir: runDir)
  return rows
}
