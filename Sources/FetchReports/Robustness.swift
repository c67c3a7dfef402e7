import FetchBenchmark
import FetchSupport
import Foundation

/// Which conclusions of a run survive its world assumptions: for each world
/// point of a grid or of `world_variants` other than the reference, how
/// the policies' ranking moved and whether each headline claim still holds
/// (`robustness.csv`), energies on the run's basis; and for each reference
/// the same measures with the energy counted on the other basis (point
/// `energy-total` or `energy-battery`, changed `energy=total` or
/// `energy=battery`), so that battery against total energy is an axis too.
package enum Robustness {
  /// Families that know the future: never a "best real policy".
  static let oracleFamilies = RunReport.oracleFamilies

  /// Kendall's τ-b of the paired values `x` and `y` over the pairs of
  /// indices that `eligible` admits (all pairs by default): (concordant −
  /// discordant) / √((N − ties in x)(N − ties in y)) over the N eligible
  /// pairs; nil when either is constant on them.
  ///
  /// - Complexity: O(n²).
  package static func kendallTauB(
    _ x: [Double], _ y: [Double], eligible: (Int, Int) -> Bool = { _, _ in true }
  ) -> (tau: Double?, pairs: Int) {
    precondition(x.count == y.count)
    var n = 0, tiesX = 0, tiesY = 0, s = 0
    for i in x.indices {
      for j in (i + 1)..<max(i + 1, x.count) where eligible(i, j) {
        n += 1
        let dx = x[i] - x[j], dy = y[i] - y[j]
        if dx == 0 { tiesX += 1 }
        if dy == 0 { tiesY += 1 }
        if dx != 0 && dy != 0 { s += (dx > 0) == (dy > 0) ? 1 : -1 }
      }
    }
    let d = (Double(n - tiesX) * Double(n - tiesY)).squareRoot()
    return (d > 0 ? Double(s) / d : nil, n)
  }

  /// The decade of J/day an energy falls in (its own band below 1e-9 J).
  static func band(_ e: Double) -> Int { e < 1e-9 ? Int.min : Int(log10(e).rounded(.down)) }

  /// Two configurations count as of equal energy within this relative
  /// difference.
  package static let equalEnergy = 0.1

  /// One row of `robustness.csv`.
  package struct Row: Sendable, Equatable {
    package var dataset: String
    package var point: String
    package var changed: String
    package var measure: String
    package var tau: Double?
    package var pairs: Int?
    package var claim: String
    package var holds: Bool?
    package var referenceValue: String
    package var value: String
  }

  /// The rows for every non-reference point, then for each reference on
  /// the other energy basis, in dataset order; energies on `basis`.
  package static func rows(
    _ scores: [PolicyScore], points: [(dataset: String, point: Experiment.WorldPoint)], basis: EnergyBasis = .standard
  ) -> [Row] {
    let byDataset = Dictionary(grouping: scores, by: \.dataset)
    var out: [Row] = []
    for (name, p) in points where !p.isReference {
      guard let ref = points.first(where: { $0.point.base == p.base && $0.point.isReference }) else { continue }
      out += compare(
        reference: byDataset[ref.dataset] ?? [], point: byDataset[name] ?? [], base: p.base, label: p.label,
        changed: p.changed, bases: (basis, basis))
    }
    let other: EnergyBasis = basis == .battery ? .total : .battery
    for (name, p) in points where p.isReference {
      let mine = byDataset[name] ?? []
      out += compare(
        reference: mine, point: mine, base: p.base, label: "energy-" + other.rawValue, changed: "energy=" + other.rawValue,
        bases: (basis, other))
    }
    return out
  }

  /// The labels of the points that count the reference's energy on the
  /// other basis: `energy-battery`, `energy-total`.
  static let energyPointLabels = Set(EnergyBasis.allCases.map { "energy-" + $0.rawValue })

  static func energy(_ s: PolicyScore, _ basis: EnergyBasis) -> Double { s[basis.scoreMetric].mean }
  static func age(_ s: PolicyScore) -> Double { s[.mean_age_s].mean }

  /// The measures and claims of one point against the reference, the
  /// reference's energies on `bases.0` and the point's on `bases.1`.
  static func compare(
    reference: [PolicyScore], point: [PolicyScore], base: String, label: String, changed: String,
    bases: (EnergyBasis, EnergyBasis)
  ) -> [Row] {
    let at = Dictionary(point.map { ($0.policy, $0) }, uniquingKeysWith: { a, _ in a })
    func energy0(_ s: PolicyScore) -> Double { energy(s, bases.0) }
    func energy1(_ s: PolicyScore) -> Double { energy(s, bases.1) }
    let both = reference.filter { at[$0.policy] != nil && energy0($0).isFinite && age($0).isFinite }
      .filter { energy1(at[$0.policy]!).isFinite && age(at[$0.policy]!).isFinite }
    func row(_ measure: String, tau: (Double?, Int)? = nil, claim: String = "", holds: Bool? = nil, _ r: String = "", _ v: String = "") -> Row {
      Row(dataset: base, point: label, changed: changed, measure: measure, tau: tau?.0, pairs: tau?.1, claim: claim, holds: holds, referenceValue: r, value: v)
    }
    var out: [Row] = []
    let e0 = both.map(energy0), e1 = both.map { energy1(at[$0.policy]!) }
    let a0 = both.map(age), a1 = both.map { age(at[$0.policy]!) }
    out.append(row("kendall_tau_energy", tau: kendallTauB(e0, e1)))
    let bands = e0.map(band)
    out.append(row("kendall_tau_age_in_energy_bands", tau: kendallTauB(a0, a1) { bands[$0] == bands[$1] }))
    // The headline: the best real policy within each budget of the reference.
    let real0 = reference.filter { !oracleFamilies.contains($0.family) }
    let real1 = point.filter { !oracleFamilies.contains($0.family) }
    for b in budgets(real0, bases.0) {
      let w0 = best(real0, within: b, bases.0), w1 = best(real1, within: b, bases.1)
      let text = b.map { "best real policy within \(CSV.number($0)) J/day" } ?? "best real policy"
      out.append(row("best_within_budget", claim: text, holds: w0 != nil && w0 == w1, w0 ?? "", w1 ?? ""))
    }
    // A beats B at equal energy: real configurations within 10 % of each
    // other's energy at the reference, A with the lower mean age.
    let real = both.indices.filter { !oracleFamilies.contains(both[$0].family) }
    for i in real {
      for j in real where i != j && a0[i] < a0[j] {
        guard e0[j] > 0, abs(e0[i] - e0[j]) <= equalEnergy * max(e0[i], e0[j]) else { continue }
        let claim = "\(both[i].policy) beats \(both[j].policy) at equal energy"
        out.append(row("beats_at_equal_energy", claim: claim, holds: a1[i] < a1[j], CSV.number(a0[j] - a0[i], decimals: 3), CSV.number(a1[j] - a1[i], decimals: 3)))
      }
    }
    return out
  }

  /// The budgets of the headline (``RunReport/headlineBudgets(_:)``) over
  /// the real policies' energies.
  static func budgets(_ real: [PolicyScore], _ basis: EnergyBasis) -> [Double?] {
    RunReport.headlineBudgets(real.map { energy($0, basis) })
  }

  /// The real configuration with the lowest mean age whose energy on
  /// `basis` is within `budget` (ties: the lower energy, then the name).
  static func best(_ real: [PolicyScore], within budget: Double?, _ basis: EnergyBasis) -> String? {
    func e(_ s: PolicyScore) -> Double { energy(s, basis) }
    return real.filter { e($0).isFinite && age($0).isFinite && (budget == nil || e($0) <= budget!) }
      .min { (age($0), e($0), $0.policy) < (age($1), e($1), $1.policy) }?.policy
  }

  /// The measures of claim rows (with `claim` and `holds`).
  static let claimMeasures: Set<String> = ["best_within_budget", "beats_at_equal_energy"]

  /// The columns of `robustness.csv`.
  package static let header = [
    "dataset", "world_point", "changed", "measure", "kendall_tau", "n_pairs", "claim", "holds", "reference_value", "value",
  ]

  /// Writes `robustness.csv` into `runDir` (nothing without world points).
  package static func write(
    runDir: String, scores: [PolicyScore], points: [(dataset: String, point: Experiment.WorldPoint)],
    basis: EnergyBasis = .standard
  ) throws {
    guard !points.isEmpty else { return }
    let file = try AtomicTextFile(path: runDir + "/robustness.csv")
    try file.write(CSV.line(header))
    for r in rows(scores, points: points, basis: basis) {
      try file.write(
        CSV.line([
          r.dataset, r.point, r.changed, r.measure, r.tau.map { CSV.number($0, decimals: 6) } ?? "", r.pairs.map(String.init) ?? "",
          r.claim, r.holds.map { $0 ? "1" : "0" } ?? "", r.referenceValue, r.value,
        ]))
    }
    try file.commit()
  }
}
