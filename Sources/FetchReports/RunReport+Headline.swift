import FetchBenchmark
import FetchSupport
import FetchTraces
import Foundation

/// The headline of a report: which real policy wins at each energy budget,
/// and the paired comparison against the baseline when `paired.csv` exists.
extension RunReport {
  /// Families that know the future (content updates or opens): drawn and
  /// tabled, but never a headline winner or on the real frontier.
  package static let oracleFamilies: Set<String> = ["oracle", "oracle-budget"]

  /// Whether a configuration is a real policy (not an oracle).
  package static func isReal(_ r: PolicyRow) -> Bool { !oracleFamilies.contains(r.family) }

  /// The (mean J/day, mean age) Pareto frontier of the real policies of one
  /// dataset, in energy order: a configuration is on it when no other has
  /// lower-or-equal energy and mean age with one of them strictly lower.
  /// Rows without both means are left out.
  ///
  /// - Complexity: O(n log n).
  package static func realFrontier(_ rows: [PolicyRow]) -> [PolicyRow] {
    let real = rows.filter { isReal($0) && $0.energy.mean != nil && $0.meanAge.mean != nil }
      .sorted { ($0.energy.mean!, $0.meanAge.mean!, $0.policy) < ($1.energy.mean!, $1.meanAge.mean!, $1.policy) }
    var out: [PolicyRow] = []
    for r in real where out.last.map({ r.meanAge.mean! < $0.meanAge.mean! }) ?? true { out.append(r) }
    return out
  }

  /// One line of the headline: the best real policy within an energy budget.
  package struct BudgetWinner: Sendable, Equatable {
    /// The budget, J/day (mean over users); nil: no limit.
    package var budget: Double?
    package var row: PolicyRow
  }

  /// The best real policy (lowest mean age at open, mean over users) whose
  /// mean energy is within each budget: decades of J/day spanning the real
  /// policies' energies, then no limit. A budget whose winner is the same
  /// as the previous budget's is left out, so each line says something new.
  package static func budgetWinners(_ rows: [PolicyRow]) -> [BudgetWinner] {
    let front = realFrontier(rows)
    guard !front.isEmpty else { return [] }
    let budgets = headlineBudgets(front.compactMap(\.energy.mean))
    var out: [BudgetWinner] = []
    for b in budgets {
      // The frontier is in energy order with falling age: the winner is
      // its last point within the budget.
      guard let w = front.last(where: { b == nil || $0.energy.mean! <= b! }) else { continue }
      if out.last?.row.policy == w.policy { continue }
      out.append(BudgetWinner(budget: b, row: w))
    }
    return out
  }

  /// The headline's energy budgets for configurations of `energies`
  /// J/day: the decades spanning the positive ones (at most six), then nil
  /// (no limit).
  package static func headlineBudgets(_ energies: [Double]) -> [Double?] {
    let positive = energies.filter { $0.isFinite && $0 > 0 }
    var budgets: [Double?] = []
    if let lo = positive.min(), let hi = positive.max() {
      var e = Int(log10(lo).rounded(.up))
      while pow(10, Double(e)) < hi * 10 && budgets.count < 6 {
        budgets.append(pow(10, Double(e)))
        e += 1
      }
    }
    return budgets + [nil]
  }

  /// One row of `paired.csv` as the report shows it.
  package struct PairedRow: Sendable, Equatable {
    package var dataset: String
    package var baseline: String
    package var policy: String
    package var metric: String
    package var baselineMean: Double?
    package var policyMean: Double?
    package var difference: Estimate
    package var wins: Int
    package var losses: Int
    package var signTestP: Double?
  }

  /// Reads `paired.csv` (``PairedColumn``).
  package static func readPaired(path: String) throws -> [PairedRow] {
    let traceName = Scoring.traceDataset(runDir: (path as NSString).deletingLastPathComponent)
    var cols = Columns()
    var out: [PairedRow] = []
    try StrictCSV.read(
      path: path, header: { cols = try Columns($0, file: path, required: PairedColumn.allCases.map(\.rawValue)) },
      record: { line, f in
        let c = cols.index
        func n(_ k: PairedColumn) throws -> Double? { try number(f[c[k.rawValue]!], file: path, line: line, column: k.rawValue) }
        func count(_ k: PairedColumn) throws -> Int {
          guard let v = Int(f[c[k.rawValue]!]), v >= 0 else {
            throw TraceFormatError(file: path, line: line, field: k.rawValue, message: "not a count: '\(f[c[k.rawValue]!])'")
          }
          return v
        }
        out.append(
          PairedRow(
            dataset: f[c["dataset"]!] == traceName ? "" : f[c["dataset"]!], baseline: f[c["baseline"]!], policy: f[c["policy"]!], metric: f[c["metric"]!],
            baselineMean: try n(.baseline_mean), policyMean: try n(.policy_mean),
            difference: Estimate(mean: try n(.mean_diff), low: try n(.mean_diff_lo), high: try n(.mean_diff_hi)),
            wins: try count(.wins), losses: try count(.losses), signTestP: try n(.sign_test_p)))
      })
    return out
  }

  /// A duration in s as a readable figure: s below 2 min, min below 2 h,
  /// h below 2 days, else days.
  static func duration(_ s: Double?) -> String {
    guard let s, s.isFinite else { return "–" }
    let a = abs(s)
    if a < 120 { return sig(s) + " s" }
    if a < 7_200 { return sig(s / 60) + " min" }
    if a < 172_800 { return sig(s / 3_600) + " h" }
    return sig(s / 86_400) + " days"
  }

  /// The one unit of a column of durations in s: its scale (s per unit)
  /// and name, from the median magnitude of the nonzero `values` (s below
  /// 2 min, min below 2 h, h below 2 days, else days).
  static func durationUnit(_ values: [Double]) -> (scale: Double, unit: String) {
    let a = values.filter { $0.isFinite && $0 != 0 }.map(abs).sorted()
    let m = a.isEmpty ? 0 : a[a.count / 2]
    return m < 120 ? (1, "s") : m < 7_200 ? (60, "min") : m < 172_800 ? (3_600, "h") : (86_400, "days")
  }

  /// `mean [lo, hi]` scaled, with a unit.
  static func ci(_ e: Estimate, scale: Double = 1, unit: String) -> String {
    guard let m = e.mean else { return "–" }
    guard let lo = e.low, let hi = e.high else { return sig(m * scale) + unit }
    return sig(m * scale) + " [" + sig(lo * scale) + ", " + sig(hi * scale) + "]" + unit
  }

  /// The headline table of one dataset: header and rows of cells.
  static func headlineTable(_ rows: [PolicyRow]) -> (header: [String], rows: [[String]]) {
    let winners = budgetWinners(rows)
    let age = durationUnit(winners.compactMap { $0.row.meanAge.mean })
    let energy = (rows.first?.basis ?? .standard).label
    let header = [
      "\(energy) budget (J per app-day)", "best real policy", "user-mean age at open (\(age.unit))",
      "user-mean fresh at open (%)", "\(energy) (J per app-day)",
    ]
    let body = winners.map { w -> [String] in
      let r = w.row
      return [
        w.budget.map { "≤ " + sig($0) } ?? "no limit", r.policy, ci(r.meanAge, scale: 1 / age.scale, unit: ""),
        ci(r.estimates[ScoreMetric.fresh_ratio.rawValue] ?? Estimate(), scale: 100, unit: ""), ci(r.energy, unit: ""),
      ]
    }
    return (header, body)
  }

  /// The paired table of one dataset: the mean-age difference of every
  /// policy against the baseline, best first.
  static func pairedTable(_ paired: [PairedRow], dataset: String, basis: EnergyBasis = .standard)
    -> (baseline: String, header: [String], rows: [[String]])?
  {
    let age = paired.filter { $0.dataset == dataset && $0.metric == ScoreMetric.mean_age_s.rawValue && $0.policy != $0.baseline }
    guard let first = age.first else { return nil }
    let energy = Dictionary(
      paired.filter { $0.dataset == dataset && $0.metric == basis.column }.map { ($0.policy, $0) },
      uniquingKeysWith: { a, _ in a })
    let sorted = age.sorted { ($0.difference.mean ?? .infinity, $0.policy) < ($1.difference.mean ?? .infinity, $1.policy) }
    let unit = durationUnit(sorted.compactMap { $0.difference.mean })
    let header = [
      "policy", "user-mean age change (\(unit.unit))", "\(basis.label) change (J per app-day)", "users better / worse",
      "sign test p",
    ]
    let body = sorted.map { r -> [String] in
      [
        r.policy, ci(r.difference, scale: 1 / unit.scale, unit: ""), energy[r.policy].map { ci($0.difference, unit: "") } ?? "–",
        "\(r.wins) / \(r.losses)", r.signTestP.map { Scoring.pValue($0) } ?? "–",
      ]
    }
    return (first.baseline, header, body)
  }
}
