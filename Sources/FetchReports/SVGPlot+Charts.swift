import FetchBenchmark
import FetchModels
import FetchSupport
import FetchTraces
import Foundation

/// The charts of a run report, built from the parsed run files
/// (see ``RunReport``).
extension SVGPlot {
  /// One axis of a trade-off chart: a `policies.csv` metric (mean over
  /// users), shown multiplied by `factor`.
  package struct TradeoffAxis: Sendable {
    package var metric: ScoreMetric
    package var label: String
    package var scale: PlotAxis.Scale
    package var factor: Double = 1
    /// The unit in tooltips, e.g. `J per app-day`.
    package var unit: String
    /// Durations in s, ticked in s, min and h (``PlotAxis/durations``).
    package var durations = false

    /// Energy per app-day on `basis`.
    package static func energy(_ basis: EnergyBasis = .standard) -> TradeoffAxis {
      TradeoffAxis(
        metric: basis.scoreMetric, label: "background-fetch \(basis.label) (J per app-day, log scale)", scale: .log,
        unit: "J per app-day")
    }
    package static let meanAge = TradeoffAxis(
      metric: .mean_age_s, label: "mean age at open (log scale)", scale: .log, unit: "s mean age", durations: true)
    package static let fresh = TradeoffAxis(
      metric: .fresh_ratio, label: "fresh opens (%)", scale: .linear, factor: 100, unit: "% fresh")
    package static let cellular = TradeoffAxis(
      metric: .cellular_bytes_per_day, label: "cellular data (MB per app-day, log scale)", scale: .log, factor: 1e-6,
      unit: "MB per app-day")
  }

  /// Mean age at open against energy per day, both on log axes, one point
  /// per policy configuration with 95 % CI whiskers in both directions; the
  /// configurations of one family (text before `:`) joined in energy order;
  /// the frontier of the real policies (solid) and the Pareto frontier with
  /// the oracles (mean age × J/day, dashed).
  ///
  /// - Parameters:
  ///   - rows: the `policies.csv` rows of one dataset.
  ///   - frontier: that dataset's frontier points (`on_frontier` = 1).
  ///   - limit: the most policy series drawn (``seriesLimit`` by default;
  ///     nil: every family, as when the report is given `--policies`).
  package static func stalenessEnergy(
    dataset: String, rows: [RunReport.PolicyRow], frontier: [RunReport.FrontierPoint], limit: Int? = seriesLimit,
    basis: EnergyBasis = .standard
  ) -> SVGPlot {
    tradeoff(
      title: "Staleness vs energy", dataset: dataset, rows: rows, x: .energy(basis), y: .meanAge, frontier: frontier,
      limit: limit)
  }

  /// A trade-off chart: `y` against `x` (means over users), one point per
  /// configuration with 95 % CI whiskers, a family's settings joined in `x`
  /// order and labelled by value, the frontier of the real policies (the
  /// best `y` at each `x` or less; solid) and the run's Pareto frontier with
  /// the oracles (`frontier`, from `pareto.csv`; dashed).
  package static func tradeoff(
    title: String, dataset: String, rows allRows: [RunReport.PolicyRow], x: TradeoffAxis, y: TradeoffAxis,
    frontier: [RunReport.FrontierPoint], limit: Int? = nil
  ) -> SVGPlot {
    func value(_ r: RunReport.PolicyRow, _ a: TradeoffAxis) -> RunReport.Estimate {
      let e = r.estimates[a.metric.rawValue] ?? RunReport.Estimate()
      return RunReport.Estimate(
        mean: e.mean.map { $0 * a.factor }, low: e.low.map { $0 * a.factor }, high: e.high.map { $0 * a.factor })
    }
    let chosen = limit.map {
      chooseSeries(allRows, limit: $0, cost: { value($0, x).mean }, staleness: { value($0, y).mean },
        higherIsBetter: y.metric.higherIsBetter)
    }
    let rows = chosen?.rows ?? allRows
    var families: [String] = []
    var byFamily: [String: [RunReport.PolicyRow]] = [:]
    for r in rows {
      if byFamily[r.family] == nil { families.append(r.family) }
      byFamily[r.family, default: []].append(r)
    }
    var xs: [Double] = [], ys: [Double] = []
    var zeros = 0
    var series: [PlotSeries] = []
    for f in families {
      let members = byFamily[f, default: []].filter { value($0, x).mean != nil && value($0, y).mean != nil }
        .sorted { (value($0, x).mean ?? 0, $0.policy) < (value($1, x).mean ?? 0, $1.policy) }
      guard !members.isEmpty else { continue }
      let points = members.map { r -> PlotPoint in
        let ex = value(r, x), ey = value(r, y)
        let px = ex.mean ?? .nan, py = ey.mean ?? .nan
        xs += [px, ex.low ?? px, ex.high ?? px]
        ys += [py, ey.low ?? py, ey.high ?? py]
        if (x.scale == .log && px <= 0) || (y.scale == .log && py <= 0) { zeros += 1 }
        // The setting after ':' without key names: `price=0.03` → `0.03`.
        let setting = r.policy.contains(":")
          ? String(r.policy.drop { $0 != ":" }.dropFirst()).split(separator: ",").map { kv in
            kv.split(separator: "=", maxSplits: 1).last.map(String.init) ?? String(kv)
          }.joined(separator: ",") : nil
        return PlotPoint(
          x: px, y: py, xLow: ex.low, xHigh: ex.high, yLow: ey.low, yHigh: ey.high,
          label: members.count > 1 ? setting : nil,
          tooltip: r.policy + ": " + RunReport.sig(px) + " " + x.unit + ", " + RunReport.sig(py) + " " + y.unit)
      }
      let st = familyStyle(f)
      let name = members.count == 1 ? members[0].policy : f + " (" + String(members.count) + ")"
      series.append(
        PlotSeries(name: name, points: points, line: members.count > 1 ? .straight : .none, marker: st.marker, color: st.color))
    }
    // The frontier of the real policies: what a deployable scheduler
    // reaches at each cost, beside the one that includes the oracles.
    let better: (Double, Double) -> Bool = y.metric.higherIsBetter ? { $0 > $1 } : { $0 < $1 }
    var real: [PlotPoint] = []
    let candidates = allRows.filter { RunReport.isReal($0) }
      .compactMap { r -> (Double, Double, String)? in
        guard let px = value(r, x).mean, let py = value(r, y).mean else { return nil }
        return (px, py, r.policy)
      }
      .sorted { ($0.0, y.metric.higherIsBetter ? -$0.1 : $0.1, $0.2) < ($1.0, y.metric.higherIsBetter ? -$1.1 : $1.1, $1.2) }
    for c in candidates where real.last.map({ better(c.1, $0.y) }) ?? true { real.append(PlotPoint(x: c.0, y: c.1)) }
    if real.count > 1 {
      series.append(PlotSeries(name: "Pareto frontier (real)", points: real, line: .step, marker: nil, color: "#333333"))
    }
    let front = frontier.map { (x: $0.cost * x.factor, y: $0.staleness * y.factor) }.sorted { ($0.x, $0.y) < ($1.x, $1.y) }
    if !front.isEmpty {
      xs += front.map(\.x)
      ys += front.map(\.y)
      series.append(
        PlotSeries(
          name: "Pareto frontier (+oracles)", points: front.map { PlotPoint(x: $0.x, y: $0.y) }, line: .step,
          marker: nil, color: "#000000", dashed: true))
    }
    var notes = [
      "Whiskers: 95 % bootstrap CI of the mean over users. Lines join a family's settings in cost order, labelled "
        + "by value (overlaps left out; hover for names)."
    ]
    if let left = chosen?.note { notes.append(left) }
    if zeros > 0 {
      notes.append("\(zeros) configuration(s) at 0 on a log axis: drawn at the tick labelled 0, beyond the axis break.")
    }
    var xAxis = PlotAxis.fitting(xs, label: x.label, scale: x.scale, zeroLane: x.scale == .log)
    var yAxis =
      y.scale == .log
      ? PlotAxis.fitting(ys, label: y.label, scale: .log, zeroLane: true)
      : PlotAxis.fitting(ys, label: y.label, scale: .linear, includeZero: false)
    xAxis.durations = x.durations
    yAxis.durations = y.durations
    return SVGPlot(
      title: title + (dataset.isEmpty ? "" : " (" + dataset + ")"), x: xAxis, y: yAxis,
      series: series, notes: notes, width: 800, height: 560)
  }

  /// Empirical CDF of the age at open per policy: the share of opens with
  /// age ≤ x at 24 log-spaced ages per decade from 1 s (log axis). Opens
  /// with age below 1 s (fresh ones, age 0) count from the left edge.
  /// - Complexity: O(n log n) in the number of opens.
  package static func ageCDF(dataset: String, policies: [String], ages: [String: [Double]]) -> SVGPlot {
    cdf(
      title: "Age at open, cumulative", dataset: dataset, xLabel: "age at open (log scale)",
      yLabel: "opens with age ≤ x (%)", policies: policies, values: ages,
      notes: [
        "Opens with age below 1 s (fresh opens have age 0) count from the left edge; pooled over users, apps, replications.",
        "Markers once per decade of age, shifted per policy.",
      ])
  }

  /// Per-user distribution of the user-mean age at open per policy: the
  /// share of users whose mean age (over their opens, apps and
  /// replications, as in `policies.csv`) is ≤ x, on the same log grid as
  /// ``ageCDF(dataset:policies:ages:)``. Users without scored opens are left
  /// out. Where the mean over users hides a long tail of badly served
  /// users, this shows it.
  /// - Complexity: O(n log n) in the number of users.
  package static func userAgeCDF(dataset: String, policies: [String], userMeans: [String: [Double]]) -> SVGPlot {
    cdf(
      title: "Users by their mean age at open", dataset: dataset, xLabel: "user-mean age at open (log scale)",
      yLabel: "users with mean age ≤ x (%)", policies: policies, values: userMeans.mapValues { $0.filter { !$0.isNaN } },
      notes: [
        "Each user's mean age over their scored opens, as in policies.csv; below 1 s counts from the left edge.",
        "Policies: never and periodic:1h when run, then the headline's best real policy per energy budget.",
      ])
  }

  /// An empirical CDF per policy of `values` at 24 log-spaced points per
  /// decade from 1 (log x axis, % on y).
  private static func cdf(
    title: String, dataset: String, xLabel: String, yLabel: String, policies: [String], values: [String: [Double]],
    notes: [String]
  ) -> SVGPlot {
    let maxValue = policies.compactMap { values[$0]?.max() }.max() ?? 10
    var x = PlotAxis.fitting([1, max(maxValue, 10)], label: xLabel, scale: .log)
    x.durations = true
    let perDecade = 24
    let decades = Int((log10(x.upper) - log10(x.lower)).rounded())
    let grid = (0...(decades * perDecade)).map { k in
      k % perDecade == 0
        ? x.lower * PlotAxis.decade(k / perDecade) : x.lower * pow(10, Double(k) / Double(perDecade))
    }
    var series: [PlotSeries] = []
    let styles = policyStyles(policies)
    for (i, p) in policies.enumerated() {
      let sorted = (values[p] ?? []).sorted()
      guard !sorted.isEmpty else { continue }
      let points = grid.map { g -> PlotPoint in
        let below = firstIndex(in: 0..<sorted.count) { sorted[$0] > g }  // values ≤ g
        return PlotPoint(x: g, y: 100 * Double(below) / Double(sorted.count))
      }
      let st = styles[p]!
      series.append(
        PlotSeries(
          name: p, points: points, line: .straight, marker: st.marker, color: st.color, markEvery: perDecade,
          markOffset: (3 * i) % perDecade, dash: st.dash))
    }
    return SVGPlot(
      title: title + (dataset.isEmpty ? "" : " (" + dataset + ")"), x: x,
      y: PlotAxis(label: yLabel, scale: .linear, lower: 0, upper: 100, ticks: [0, 20, 40, 60, 80, 100]),
      series: series, notes: notes)
  }

  /// Opens and background fetches by hour of day, each series as a share of
  /// its own events, so timing can be compared across policies.
  ///
  /// - Parameters:
  ///   - opens: opens per hour (0–23), counted once (one policy's rows).
  ///   - fetches: per policy, fetches per hour; policies without fetches
  ///     are left out (listed in a note).
  ///   - localTime: whether the hours are each user's local hours (from the
  ///     trace's time zones) or UTC.
  package static func hourOfDay(
    dataset: String, part: String = "", opens: [Int], policies: [String], fetches: [String: [Int]],
    localTime: Bool = false
  ) -> SVGPlot {
    precondition(opens.count == 24, "24 hours")
    func share(_ c: [Int]) -> [PlotPoint] {
      let total = Double(c.reduce(0, +))
      return c.enumerated().map { PlotPoint(x: Double($0.offset), y: total > 0 ? 100 * Double($0.element) / total : 0) }
    }
    var series = [
      PlotSeries(
        name: "opens (\(opens.reduce(0, +)))", points: share(opens), line: .straight, marker: nil, color: "#000000",
        dashed: true)
    ]
    var none: [String] = []
    var ys = share(opens).map(\.y)
    let styles = policyStyles(policies)
    for p in policies {
      let c = fetches[p] ?? Array(repeating: 0, count: 24)
      guard c.reduce(0, +) > 0 else {
        none.append(p)
        continue
      }
      let st = styles[p]!
      let pts = share(c)
      ys += pts.map(\.y)
      series.append(
        PlotSeries(
          name: p, points: pts, line: .straight, marker: st.marker, color: st.color, dash: st.dash))
    }
    var notes = [
      "Black dashed: the app's opens; one line per policy: its background fetches. Each line sums to 100 %. "
        + "Opens are counted once (every policy replays the same opens)."
    ]
    if !none.isEmpty { notes.append("No fetches: " + none.joined(separator: ", ")) }
    return SVGPlot(
      title: "Opens and fetches by hour of day" + (dataset.isEmpty ? "" : " (" + dataset + ")") + part,
      x: PlotAxis(
        label: localTime
          ? "hour of day (each user's local time, from the trace's time zones)"
          : "hour of day (UTC: the trace was not found, so local time zones are not applied)",
        scale: .linear, lower: -0.5,
        upper: 23.5, ticks: [0, 3, 6, 9, 12, 15, 18, 21]),
      y: .fitting(ys, label: "share of the series' events (%)", scale: .linear, includeZero: true),
      series: series, notes: notes)
  }
}
