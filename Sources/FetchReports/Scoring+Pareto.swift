import FetchBenchmark
import Foundation

/// Pareto frontiers of staleness against cost.
package enum Pareto {
  /// Whether each point is on the frontier: no other point has cost ≤ its
  /// cost and staleness at least as good, with one of the two strictly
  /// better. "Good" is lower staleness, or higher when `higherIsBetter`
  /// (`fresh_ratio`).
  ///
  /// Duplicates do not dominate each other (both stay on the frontier); a
  /// point with a NaN coordinate is never on it and dominates nothing.
  /// - Complexity: O(n²); n is the number of configurations (tens).
  package static func frontier(cost: [Double], staleness: [Double], higherIsBetter: Bool = false) -> [Bool] {
    precondition(cost.count == staleness.count, "one staleness per cost")
    let s = higherIsBetter ? staleness.map { -$0 } : staleness  // lower is better from here
    let valid = cost.indices.map { !cost[$0].isNaN && !s[$0].isNaN }
    return cost.indices.map { i in
      guard valid[i] else { return false }
      for j in cost.indices where j != i && valid[j] {
        if cost[j] <= cost[i], s[j] <= s[i], cost[j] < cost[i] || s[j] < s[i] { return false }
      }
      return true
    }
  }
}

/// A piecewise-linear curve through measured points: a policy family's
/// sweep, e.g. `periodic:*` by energy per day.
///
/// Points with a non-finite coordinate are dropped; points with equal `x`
/// are merged into one at the mean of their `y`. ``value(at:)`` interpolates
/// linearly between neighbours and never extrapolates.
package struct LinearSweep: Sendable, Equatable {
  /// Sorted by `x`, distinct `x`.
  package let xs: [Double]
  package let ys: [Double]

  package init(_ points: [(x: Double, y: Double)]) {
    let sorted = points.filter { $0.x.isFinite && $0.y.isFinite }.sorted { $0.x < $1.x }
    var xs: [Double] = [], ys: [Double] = [], counts: [Int] = []
    for p in sorted {
      if let last = xs.last, last == p.x {
        ys[ys.count - 1] += p.y
        counts[counts.count - 1] += 1
      } else {
        xs.append(p.x)
        ys.append(p.y)
        counts.append(1)
      }
    }
    self.xs = xs
    self.ys = zip(ys, counts).map { $0 / Double($1) }
  }

  /// The curve's value at `x`, or nil outside `[xs.first, xs.last]`.
  /// - Complexity: O(log n).
  package func value(at x: Double) -> Double? {
    guard let first = xs.first, let last = xs.last, x >= first, x <= last else { return nil }
    var lo = 0, hi = xs.count - 1  // invariant: xs[lo] <= x <= xs[hi]
    while hi - lo > 1 {
      let mid = (lo + hi) / 2
      if xs[mid] <= x { lo = mid } else { hi = mid }
    }
    if xs[lo] == x { return ys[lo] }
    if xs[hi] == x { return ys[hi] }
    let t = (x - xs[lo]) / (xs[hi] - xs[lo])
    return ys[lo] + t * (ys[hi] - ys[lo])
  }
}

/// One row of `pareto.csv`: a configuration's coordinates in one
/// (staleness, cost) plane and whether it is on that plane's frontier.
package struct ParetoRow: Sendable, Equatable {
  package let dataset: String
  package let staleness: ScoreMetric
  package let cost: ScoreMetric
  package let policy: String
  package let costValue: Double
  package let stalenessValue: Double
  package let onFrontier: Bool
}

/// One row of `matched.csv`: a family's staleness interpolated at the energy
/// per day of one configuration of the run (nil outside the family's range).
package struct MatchedRow: Sendable, Equatable {
  package let dataset: String
  package let family: String
  /// The configuration whose energy is the reference.
  package let referencePolicy: String
  /// Its energy on the run's basis (``EnergyBasis``), J/day.
  package let energyJPerDay: Double
  package let meanAgeS: Double?
  package let p90AgeS: Double?
  package let freshRatio: Double?
}

/// One row of `oracle_gap.csv`: how much staler a configuration is than the
/// budgeted oracle given the same budget.
package struct OracleGapRow: Sendable, Equatable {
  /// What a budget counts.
  package enum Budget: String, Sendable {
    /// `oracle-budget:N`: fetches per day; matched on `fetches_per_day`.
    case fetches
    /// `oracle-budget:XJ`: battery joules per day; matched on the run's
    /// energy basis (``EnergyBasis``).
    case energy

    /// The metric the sweep is interpolated along, on energy basis `basis`.
    package func axis(_ basis: EnergyBasis) -> ScoreMetric { self == .fetches ? .fetches_per_day : basis.scoreMetric }

    /// The budget kind of an `oracle-budget:*` configuration that knows the
    /// opens and the content (no `know=`), else nil.
    package init?(policy: String) {
      guard policy.hasPrefix("oracle-budget:"), !policy.contains(",know=") else { return nil }
      let arg = policy.dropFirst("oracle-budget:".count).split(separator: ",").first ?? ""
      self = arg.hasSuffix("J") || arg.hasSuffix("j") ? .energy : .fetches
    }
  }

  package let dataset: String
  package let budget: Budget
  /// The metric of ``budgetValue``: `fetches_per_day` or the basis's energy.
  package let axis: ScoreMetric
  package let policy: String
  /// The configuration's fetches or joules per day.
  package let budgetValue: Double
  package let meanAgeS: Double
  /// The budgeted oracle's frontier (``OracleFrontier``) of mean age at ``budgetValue``.
  package let oracleMeanAgeS: Double?
  package let freshRatio: Double
  /// The frontier's fresh share at ``budgetValue``.
  package let oracleFreshRatio: Double?
  /// `never`'s fresh share, when the run has it.
  package let neverFreshRatio: Double?
  /// `meanAgeS − oracleMeanAgeS` (≥ 0 when the oracle is optimal).
  package var gapS: Double? { oracleMeanAgeS.map { meanAgeS - $0 } }
  /// The share of the gap in fresh share from `never` to the oracle's
  /// frontier that the configuration closes: `(fresh − never) / (oracle −
  /// never)`; nil without `never` or where the frontier is no fresher.
  package var freshGapClosed: Double? {
    guard let n = neverFreshRatio, let o = oracleFreshRatio, o > n else { return nil }
    return (freshRatio - n) / (o - n)
  }
}

/// The budgeted oracle's frontier along one axis (fetches or joules per
/// day): every `oracle-budget` setting of the run, whatever its budget,
/// and `never` (the oracle with a budget of 0) when it ran. Between measured
/// points the value is linear, never worse than at a cheaper point; beyond
/// the most expensive point it is the best point's (an oracle given more
/// budget may leave it unspent); below the cheapest point it is undefined.
package struct OracleFrontier: Sendable, Equatable {
  package let sweep: LinearSweep
  /// Whether a larger value is better (`fresh_ratio`).
  package let higherIsBetter: Bool

  package init(_ points: [(x: Double, y: Double)], higherIsBetter: Bool) {
    sweep = LinearSweep(points)
    self.higherIsBetter = higherIsBetter
  }

  /// The frontier's value at `x`; nil below its cheapest point or without points.
  package func value(at x: Double) -> Double? {
    let xs = sweep.xs, ys = sweep.ys
    guard let first = xs.first, x >= first else { return nil }
    func better(_ a: Double, _ b: Double) -> Double { higherIsBetter ? max(a, b) : min(a, b) }
    var best = ys[0]  // the best of ys[0...i]
    for i in xs.indices.dropLast() {
      if x <= xs[i + 1] { return better(best, ys[i] + (x - xs[i]) / (xs[i + 1] - xs[i]) * (ys[i + 1] - ys[i])) }
      best = better(best, ys[i + 1])
    }
    return best
  }
}

extension Scoring {
  /// Staleness metrics of the Pareto planes (fresh_ratio is maximised).
  package static let paretoStaleness: [ScoreMetric] = [.mean_age_s, .p90_age_s, .fresh_ratio]
  /// Cost metrics of the Pareto planes: both energies (``EnergyBasis``),
  /// the battery share and cellular data.
  package static let paretoCosts: [ScoreMetric] = [
    .battery_energy_j_per_day, .energy_j_per_day, .battery_pct_per_day, .cellular_bytes_per_day,
  ]

  /// Every configuration in every (staleness, cost) plane, per dataset, in
  /// the order: dataset, staleness, cost, policy (run order).
  package static func pareto(_ scores: [PolicyScore]) -> [ParetoRow] {
    var rows: [ParetoRow] = []
    for (dataset, group) in byDataset(scores) {
      for s in paretoStaleness {
        for c in paretoCosts {
          let cost = group.map { $0[c].mean }, stale = group.map { $0[s].mean }
          let on = Pareto.frontier(cost: cost, staleness: stale, higherIsBetter: s.higherIsBetter)
          for (i, g) in group.enumerated() {
            rows.append(
              ParetoRow(
                dataset: dataset, staleness: s, cost: c, policy: g.policy, costValue: cost[i],
                stalenessValue: stale[i], onFrontier: on[i]))
          }
        }
      }
    }
    return rows
  }

  /// Staleness at matched energy: each family's sweep (its configurations
  /// sorted by mean energy per day on `basis`) interpolated at the energy
  /// of every configuration of the dataset. Rows: dataset, family (first
  /// appearance), reference configurations by increasing energy (ties in
  /// run order).
  package static func matchedEnergy(_ scores: [PolicyScore], basis: EnergyBasis = .standard) -> [MatchedRow] {
    var rows: [MatchedRow] = []
    let energy = basis.scoreMetric
    for (dataset, group) in byDataset(scores) {
      let references = group.enumerated().filter { $0.element[energy].mean.isFinite }.sorted {
        ($0.element[energy].mean, $0.offset) < ($1.element[energy].mean, $1.offset)
      }.map(\.element)
      var families: [String] = []
      for g in group where !families.contains(g.family) { families.append(g.family) }
      for f in families {
        let members = group.filter { $0.family == f }
        func sweep(_ m: ScoreMetric) -> LinearSweep {
          LinearSweep(members.map { (x: $0[energy].mean, y: $0[m].mean) })
        }
        let age = sweep(.mean_age_s), p90 = sweep(.p90_age_s), fresh = sweep(.fresh_ratio)
        for r in references {
          let e = r[energy].mean
          rows.append(
            MatchedRow(
              dataset: dataset, family: f, referencePolicy: r.policy, energyJPerDay: e,
              meanAgeS: age.value(at: e), p90AgeS: p90.value(at: e), freshRatio: fresh.value(at: e)))
        }
      }
    }
    return rows
  }

  /// The gap in mean age and fresh share to the budgeted oracle. For each
  /// budget kind with `oracle-budget:*` configurations in a dataset, the
  /// oracle's frontier (``OracleFrontier``: all of them and `never`) is
  /// read along the axis (measured fetches or joules per day) at every
  /// other configuration's value, energies on `basis`. Empty when no
  /// budgeted oracle ran.
  package static func oracleGaps(_ scores: [PolicyScore], basis: EnergyBasis = .standard) -> [OracleGapRow] {
    var rows: [OracleGapRow] = []
    for (dataset, group) in byDataset(scores) {
      let never = group.first { $0.policy == "never" }
      for budget in [OracleGapRow.Budget.fetches, .energy] {
        let oracles = group.filter { OracleGapRow.Budget(policy: $0.policy) == budget }
        guard !oracles.isEmpty else { continue }
        let axis = budget.axis(basis)
        func frontier(_ m: ScoreMetric) -> OracleFrontier {
          let points = (oracles + [never].compactMap { $0 }).map { (x: $0[axis].mean, y: $0[m].mean) }
          return OracleFrontier(points, higherIsBetter: m.higherIsBetter)
        }
        let age = frontier(.mean_age_s), fresh = frontier(.fresh_ratio)
        for g in group where OracleGapRow.Budget(policy: g.policy) == nil {
          let x = g[axis].mean
          rows.append(
            OracleGapRow(
              dataset: dataset, budget: budget, axis: axis, policy: g.policy, budgetValue: x,
              meanAgeS: g[.mean_age_s].mean, oracleMeanAgeS: age.value(at: x), freshRatio: g[.fresh_ratio].mean,
              oracleFreshRatio: fresh.value(at: x), neverFreshRatio: never?[.fresh_ratio].mean))
        }
      }
    }
    return rows
  }

  /// Scores grouped by dataset, both in first-appearance order.
  static func byDataset(_ scores: [PolicyScore]) -> [(String, [PolicyScore])] {
    var order: [String] = []
    var groups: [String: [PolicyScore]] = [:]
    for s in scores {
      if groups[s.dataset] == nil { order.append(s.dataset) }
      groups[s.dataset, default: []].append(s)
    }
    return order.map { ($0, groups[$0] ?? []) }
  }
}

/// Columns of `pareto.csv` (see ``writeScores(runDir:resamples:jobs:energy:)``).
package enum ParetoColumn: String, CaseIterable, Sendable {
  case dataset, staleness_metric, cost_metric, policy, family, cost, staleness, on_frontier
}

/// Columns of `matched.csv` (see ``writeScores(runDir:resamples:jobs:energy:)``);
/// the energy column is the basis's (`battery_energy_j_per_day` or
/// `energy_j_per_day`).
package enum MatchedColumn: String, CaseIterable, Sendable {
  case dataset, family, reference_policy, energy, mean_age_s, p90_age_s, fresh_ratio

  /// The header on energy basis `basis`.
  package static func header(_ basis: EnergyBasis) -> [String] {
    allCases.map { $0 == .energy ? basis.column : $0.rawValue }
  }
}

extension EnergyBasis {
  /// The score of the basis's energy per day.
  package var scoreMetric: ScoreMetric {
    guard let m = ScoreMetric(rawValue: column) else { preconditionFailure("\(column) is no score metric") }
    return m
  }
}

/// Columns of `oracle_gap.csv` (see ``writeScores(runDir:resamples:jobs:energy:)``).
package enum OracleGapColumn: String, CaseIterable, Sendable {
  case dataset, budget_metric, policy, budget_value, mean_age_s, budget_oracle_mean_age_s
  case gap_to_budget_oracle_mean_age_s, fresh_ratio, budget_oracle_fresh_ratio, fresh_gap_closed
  case learning_loss_fresh_ratio, learning_loss_mean_age_s, foresight_loss_fresh_ratio, foresight_loss_mean_age_s
}
