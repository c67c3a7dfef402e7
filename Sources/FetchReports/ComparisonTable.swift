import FetchBenchmark
import FetchSimulation
import FetchTraces

/// The aligned policy comparison printed to stdout after a run.
///
/// Every figure is pooled over all (user, app) pairs and scored opens
/// (`pooled.csv`), which the headers say; `policies.csv` and the report give
/// per-user means with CIs instead ("user-mean"), where every user weighs
/// the same.
package enum ComparisonTable {
  /// Renders one row per policy: fetches, energy (battery energy, what runs
  /// rank on by default, then the total with the charger's share), data and
  /// staleness at open.
  package static func render(_ aggs: [PolicyAggregate], capacityJ: Double) -> String {
    let header = ["policy", "pairs", "opens", "fetch/day", "new%", "batt J/day", "total J/day", "%batt/day", "cell MB/day",
                  "pooled fresh%", "pooled mean age", "p50 age", "p90 age"]
    var rows = [header]
    for a in aggs {
      let p = a.pooled
      let newDataRatio = p.fetches > 0 ? Double(p.newData) / Double(p.fetches) : 0
      rows.append([
        a.policy, String(a.pairs), String(p.opens), fixed(p.fetchesPerDay, 1), fixed(100 * newDataRatio, 1),
        fixed(Metric.perDay(Metric.batteryEnergy.value(p), days: p.days), 1), fixed(p.energyJPerDay, 1),
        fixed(p.batteryPctPerDay(capacityJ: capacityJ), 3),
        fixed(p.cellularBytesPerDay / 1e6, 2), fixed(100 * p.freshRatio, 1), humanDuration(p.meanAgeS),
        humanDuration(p.p50AgeS), humanDuration(p.p90AgeS),
      ])
    }
    let widths = header.indices.map { c in rows.map { $0[c].count }.max()! }
    return rows.map { r in
      r.indices.map { c in
        let pad = String(repeating: " ", count: widths[c] - r[c].count)
        return c == 0 ? r[c] + pad : pad + r[c]
      }.joined(separator: "  ")
    }.joined(separator: "\n") + "\n"
  }

  /// `x` with exactly `d` decimals, locale-independent; `-` when not finite
  /// (staleness without opens).
  static func fixed(_ x: Double, _ d: Int) -> String {
    guard x.isFinite else { return "-" }
    var p = 1.0
    for _ in 0..<d { p *= 10 }
    let r = (x * p).rounded() / p
    let neg = r < 0
    let a = abs(r)
    let whole = a.rounded(.down)
    var s = String(Int(whole))
    if d > 0 {
      let frac = Int(((a - whole) * p).rounded())
      var f = String(frac)
      while f.count < d { f = "0" + f }
      s += "." + f
    }
    return neg && r != 0 ? "-" + s : s
  }

  /// Seconds as `0 s`, `42 s`, `12.3 min`, `5.2 h` or `3.1 d`.
  static func humanDuration(_ s: Double) -> String {
    if s.isNaN { return "-" }
    if s == 0 { return "0 s" }
    if s < 60 { return fixed(s, s < 10 ? 1 : 0) + " s" }
    if s < 3600 { return fixed(s / 60, 1) + " min" }
    if s < 86_400 * 2 { return fixed(s / 3600, 1) + " h" }
    return fixed(s / 86_400, 1) + " d"
  }
}
