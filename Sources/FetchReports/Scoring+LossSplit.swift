import FetchSimulation
import FetchSupport

/// One row of `loss_split.csv`: at one budget, a scheduler against the
/// reference that knows one thing more, per user paired.
///
/// - **learning** loss: `planner:budget=B` against the model oracle
///   `planner:budget=B,models=true` (the same plan with the generator's
///   models): what learning the models costs.
/// - **foresight** loss: the model oracle against the content-blind oracle
///   `oracle-budget:BJ,know=opens` (the opens known in advance): what not
///   knowing the future costs a scheduler with perfect models.
package struct LossSplitRow: Sendable, Equatable {
  package enum Loss: String, Sendable { case learning, foresight }

  package let dataset: String
  /// The budget, J per app-day.
  package let budget: Double
  package let loss: Loss
  package let policy: String
  package let reference: String
  package let metric: ScoreMetric
  /// Paired per-user statistics of `reference − policy` (so a positive
  /// mean difference in fresh share, or a negative one in mean age, is a
  /// loss of the policy).
  package let paired: PairedSummary
  /// `never`'s mean, when the run has it.
  package let neverMean: Double?

  /// The policy's gain over `never` as a share of the reference's
  /// (nil without `never` or when the reference gains nothing).
  package var gainShare: Double? {
    guard let n = neverMean else { return nil }
    let r = paired.policyMean - n, p = paired.baselineMean - n
    return r != 0 ? p / r : nil
  }
}

extension Scoring {
  /// The budget of `planner[:budget=B][,models=true]` (no other setting),
  /// J per app-day (the planner's own default without `budget=`), and
  /// whether it plans with the truth; nil otherwise.
  package static func plannerBudget(_ policy: String) -> (budget: Double, truth: Bool)? {
    guard policy == "planner" || policy.hasPrefix("planner:") else { return nil }
    var budget = PlannerParameters().budgetJPerDay, truth = false
    for item in policy.dropFirst("planner:".count).split(separator: ",") where policy != "planner" {
      let kv = item.split(separator: "=", maxSplits: 1).map(String.init)
      guard kv.count == 2 else { return nil }
      switch kv[0] {
      case "budget": guard let b = Double(kv[1]) else { return nil }; budget = b
      case "models" where kv[1] == "true": truth = true
      default: return nil
      }
    }
    return (budget, truth)
  }

  /// The budget of `oracle-budget:XJ,know=opens`, J per day; nil otherwise.
  package static func contentBlindBudget(_ policy: String) -> Double? {
    guard policy.hasPrefix("oracle-budget:"), policy.hasSuffix("J,know=opens") else { return nil }
    return Double(policy.dropFirst("oracle-budget:".count).dropLast("J,know=opens".count))
  }

  /// The learning and foresight losses of every budget with both sides in
  /// a dataset, on fresh share and mean age; budgets in increasing order,
  /// learning before foresight. Each bootstrap stream is seeded by the
  /// dataset, the two policies and the metric.
  package static func lossSplit(_ table: SummaryTable, resamples: Int = Bootstrap.defaultResamples) -> [LossSplitRow] {
    var rows: [LossSplitRow] = []
    for dataset in table.datasets {
      let policies = table.policies(in: dataset)
      var learned: [Double: String] = [:], truth: [Double: String] = [:], blind: [Double: String] = [:]
      for p in policies {
        if let (b, t) = plannerBudget(p) {
          if t { truth[b] = p } else { learned[b] = p }
        } else if let b = contentBlindBudget(p) {
          blind[b] = p
        }
      }
      let never = table.values(dataset: dataset, policy: "never")
      var neverSlot: [String: Int] = [:]
      for (i, u) in (never?.users ?? []).enumerated() { neverSlot[u] = i }
      for b in truth.keys.sorted() {
        let oracle = truth[b]!
        let pairs: [(LossSplitRow.Loss, String, String)] =
          [(.learning, learned[b], oracle), (.foresight, oracle, blind[b])].compactMap { l, p, r in
            guard let p, let r else { return nil }
            return (l, p, r)
          }
        for (loss, policy, reference) in pairs {
          guard let pv = table.values(dataset: dataset, policy: policy),
            let rv = table.values(dataset: dataset, policy: reference)
          else { continue }
          var slot: [String: Int] = [:]
          for (i, u) in pv.users.enumerated() { slot[u] = i }
          let matched = rv.users.enumerated().compactMap { i, u in slot[u].map { (i, $0) } }
          for m in [ScoreMetric.fresh_ratio, .mean_age_s] {
            var rng = Bootstrap.generator("loss-split", dataset, policy, reference, m.rawValue)
            let s = PairedComparison.summarize(
              policy: matched.map { rv[m][$0.0] }, baseline: matched.map { pv[m][$0.1] }, higherIsBetter: m.higherIsBetter,
              tolerance: m.declaration.tieTolerance, resamples: resamples, using: &rng)
            let n = never.map { v in nanMean(matched.compactMap { _, j in neverSlot[pv.users[j]].map { v[m][$0] } }) }
            rows.append(
              LossSplitRow(
                dataset: dataset, budget: b, loss: loss, policy: policy, reference: reference, metric: m, paired: s,
                neverMean: n))
          }
        }
      }
    }
    return rows
  }

  /// The paired mean loss (reference − policy) of `loss` on `metric` that
  /// `rows` give the learned planner `policy` at its budget: the learning
  /// loss is its own row's, the foresight loss the row of the model oracle
  /// at the same budget. Nil when the run has no such pair.
  ///
  /// - Complexity: O(rows).
  package static func loss(
    _ loss: LossSplitRow.Loss, _ metric: ScoreMetric, of policy: String, dataset: String, in rows: [LossSplitRow]
  ) -> Double? {
    guard let (budget, truth) = plannerBudget(policy), !truth else { return nil }
    return rows.first { r in
      r.dataset == dataset && r.loss == loss && r.metric == metric && r.budget == budget
        && (loss == .foresight || r.policy == policy)
    }?.paired.meanDifference
  }

  /// `loss_split.csv`'s lines (header first; ``LossSplitColumn``), the
  /// dataset named by `named`.
  package static func lossSplitLines(_ rows: [LossSplitRow], named: (String) -> String) -> [String] {
    [LossSplitColumn.headerLine]
      + rows.map { r in
        CSV.line([
          named(r.dataset), cell(r.budget), r.loss.rawValue, r.policy, r.reference, r.metric.rawValue,
          String(r.paired.users), cell(r.paired.baselineMean), cell(r.paired.policyMean), cell(r.paired.meanDifference),
          cell(r.paired.interval?.lower), cell(r.paired.interval?.upper), cell(r.neverMean), cell(r.gainShare),
        ])
      }
  }
}

/// Columns of `loss_split.csv` (see ``Scoring/lossSplit(_:resamples:)``):
/// the reference's mean minus the policy's, paired per user, with its 95 %
/// bootstrap interval, and the policy's gain over `never` as a share of the
/// reference's.
package enum LossSplitColumn: String, CaseIterable, Sendable {
  case dataset, budget_j_per_day, loss, policy, reference, metric, users, policy_mean, reference_mean
  case reference_minus_policy, reference_minus_policy_lo, reference_minus_policy_hi, never_mean, gain_share
}
