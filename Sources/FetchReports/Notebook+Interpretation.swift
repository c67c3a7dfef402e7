import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation

/// The written interpretation: statements computed from the run's numbers
/// (the notebook's `interpret(...)` cells print the same in Python).
extension Notebook {
  /// One policy's numbers for the statements.
  struct Point {
    var policy: String
    var family: String
    var energy: RunReport.Estimate
    var age: RunReport.Estimate
    var cellular: RunReport.Estimate
    var fresh: RunReport.Estimate
    var e: Double { energy.mean ?? .nan }
    var a: Double { age.mean ?? .nan }
    var isOracle: Bool { family.hasPrefix("oracle") }
  }

  static func ci(_ e: RunReport.Estimate, _ scale: Double = 1) -> String {
    guard let lo = e.low, let hi = e.high else { return "" }
    return " [" + format(lo * scale) + ", " + format(hi * scale) + "]"
  }

  static func overlap(_ x: RunReport.Estimate, _ y: RunReport.Estimate) -> String? {
    guard let a = x.low, let b = x.high, let c = y.low, let d = y.high else { return nil }
    return a <= d && c <= b ? "overlap" : "do not overlap"
  }

  /// Lowest mean age, then lowest energy, then policy name.
  static func freshest(_ ps: [Point]) -> Point? {
    ps.min { ($0.a, $0.e, $0.policy) < ($1.a, $1.e, $1.policy) }
  }

  /// The interpretation of one dataset: Markdown bullets derived from
  /// `policies.csv` and `pareto.csv`. Mirrored by the notebook's Python
  /// `interpretation(dataset)`; keep the two in step.
  static func statements(_ run: RunData, dataset d: String) -> [String] {
    let rows = run.rows.filter { $0.dataset == d }
    let usable = rows.filter { $0.energy.mean != nil && $0.meanAge.mean != nil }.map { r in
      Point(
        policy: r.policy, family: r.family, energy: r.energy, age: r.meanAge,
        cellular: r.estimates[ScoreMetric.cellular_bytes_per_day.rawValue] ?? RunReport.Estimate(),
        fresh: r.estimates[ScoreMetric.fresh_ratio.rawValue] ?? RunReport.Estimate())
    }
    var family: [String: String] = [:]
    for r in rows { family[r.policy] = r.family }
    let real = usable.filter { !$0.isOracle }
    func p(_ s: String) -> String { MarkdownText.code(s) }
    func point(_ policy: String, _ e: Double, _ a: Double) -> String {
      p(policy) + " (" + format(e) + " J/day, " + format(a) + " s)"
    }
    var out: [String] = []
    let front = run.frontier.filter { $0.dataset == d }.sorted {
      ($0.cost, $0.staleness, $0.policy) < ($1.cost, $1.staleness, $1.policy)
    }
    if front.isEmpty {
      out.append("- pareto.csv has no (mean age, J/day) frontier for this dataset.")
    } else {
      out.append(
        "- Pareto frontier (mean age against J/day): \(front.count) of \(usable.count) configurations: "
          + front.map { point($0.policy, $0.cost, $0.staleness) }.joined(separator: ", ") + ".")
      let k = front.filter { (family[$0.policy] ?? Scoring.family(of: $0.policy)).hasPrefix("oracle") }.count
      if k > 0 {
        out.append(
          "- \(k) of the \(front.count) frontier points are oracle configurations, which know the future opens and "
            + "updates: no real scheduler reaches them.")
      }
    }
    var realFront: [Point] = []
    for q in real.sorted(by: { ($0.e, $0.a, $0.policy) < ($1.e, $1.a, $1.policy) })
    where realFront.last.map({ q.a < $0.a }) ?? true {
      realFront.append(q)
    }
    if !realFront.isEmpty {
      out.append(
        "- Without the oracles, the frontier is: " + realFront.map { point($0.policy, $0.e, $0.a) }.joined(separator: ", ")
          + ".")
    }
    for b in budgetsJPerDay {
      if let q = freshest(real.filter { $0.e <= b }) {
        out.append(
          "- Under \(format(b)) J/day, the freshest configuration without oracles is \(p(q.policy)): mean age "
            + "\(format(q.a)) s\(ci(q.age)) at \(format(q.e)) J/day.")
      } else {
        out.append("- No configuration without oracles spends at most \(format(b)) J/day.")
      }
    }
    if let o = usable.first(where: { $0.policy == "oracle" }) {
      var s = "- The oracle's mean age is \(format(o.a)) s at \(format(o.e)) J/day."
      if let q = freshest(real.filter { $0.e <= o.e }) {
        s += " At that energy or less, the freshest configuration without oracles is \(p(q.policy)) at "
        s += "\(format(q.a)) s, \(format(q.a - o.a)) s more."
      } else {
        s += " No configuration without oracles spends that little."
      }
      if let q = freshest(real) {
        s += " The freshest configuration without oracles, \(p(q.policy)) (\(format(q.a)) s), spends \(format(q.e)) J/day"
        s += o.e > 0 ? ", \(format(q.e / o.e))× the oracle's energy." : "."
      }
      out.append(s)
    }
    let m = usable.first { $0.policy == "ios-minimum" }, t = usable.first { $0.policy == "periodic:1h" }
    if let m, let t {
      var s = "- \(p("ios-minimum")) against \(p("periodic:1h")): \(format(m.e)) J/day\(ci(m.energy)) against "
      s += "\(format(t.e))\(ci(t.energy))"
      s += t.e > 0 ? " (\(format(m.e / t.e))× the energy)" : ""
      s += "; mean age \(format(m.a)) s\(ci(m.age)) against \(format(t.a)) s\(ci(t.age)); fresh opens "
      s += "\(format(m.fresh.mean.map { $0 * 100 })) % against \(format(t.fresh.mean.map { $0 * 100 })) %."
      if let x = overlap(m.energy, t.energy) { s += " The energy CIs \(x)." }
      if let x = overlap(m.age, t.age) { s += " The mean-age CIs \(x)." }
      out.append(s)
    }
    if let t {
      let c = real.filter { $0.a <= t.a && $0.cellular.mean != nil }
      if let q = c.min(by: { ($0.cellular.mean!, $0.a, $0.policy) < ($1.cellular.mean!, $1.a, $1.policy) }) {
        let mb = format(t.cellular.mean.map { $0 * 1e-6 })
        if q.policy == t.policy {
          out.append(
            "- No configuration without oracles that is at least as fresh as \(p("periodic:1h")) (mean age ≤ "
              + "\(format(t.a)) s) uses less cellular data than its \(mb) MB/day.")
        } else {
          out.append(
            "- At least as fresh as \(p("periodic:1h")) (mean age ≤ \(format(t.a)) s), the configuration without "
              + "oracles with the least cellular data is \(p(q.policy)): \(format(q.cellular.mean.map { $0 * 1e-6 })) "
              + "MB/day against \(mb).")
        }
      }
    }
    if let fewest = rows.map(\.users).min(), PairedComparison.isSmallSample(users: fewest) {
      out.append(
        "- Only \(fewest) users in this dataset (fewer than \(PairedComparison.reliableUsers)): its bootstrap CIs, and "
          + "whether two of them overlap, are unreliable; read the per-user numbers (summary.csv) and the means instead.")
    }
    return out
  }
}
