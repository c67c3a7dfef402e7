import FetchModels
import FetchSupport
import FetchTraces
import Foundation

/// The charts of a run report, built from the parsed run files
/// (see ``RunReport``).
extension SVGPlot {
  /// Mean age at open against energy per day, both on log axes, one point
  /// per policy configuration with 95 % CI whiskers in both directions; the
  /// configurations of one family (text before `:`) joined in energy order;
  /// the Pareto frontier (mean age × J/day) as a dashed black staircase.
  ///
  /// - Parameters:
  ///   - rows: the `policies.csv` rows of one dataset.
  ///   - frontier: that dataset's frontier points (`on_frontier` = 1).
  public static func stalenessEnergy(dataset: String, rows: [RunReport.PolicyRow], frontier: [RunReport.FrontierPoint])
    -> SVGPlot
  {
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
      let members = byFamily[f, default: []].filter { $0.energy.mean != nil && $0.meanAge.mean != nil }
        .sorted { ($0.energy.mean ?? 0, $0.policy) < ($1.energy.mean ?? 0, $1.policy) }
      guard !members.isEmpty else { continue }
      let points = members.map { r -> PlotPoint in
        let x = r.energy.mean ?? .nan, y = r.meanAge.mean ?? .nan
        xs += [x, r.energy.low ?? x, r.energy.high ?? x]
        ys += [y, r.meanAge.low ?? y, r.meanAge.high ?? y]
        if x <= 0 || y <= 0 { zeros += 1 }
        // The setting after ':' without key names: `price=0.03` → `0.03`.
        let setting = r.policy.contains(":")
          ? String(r.policy.drop { $0 != ":" }.dropFirst()).split(separator: ",").map { kv in
            kv.split(separator: "=", maxSplits: 1).last.map(String.init) ?? String(kv)
          }.joined(separator: ",") : nil
        return PlotPoint(
          x: x, y: y, xLow: r.energy.low, xHigh: r.energy.high, yLow: r.meanAge.low, yHigh: r.meanAge.high,
          label: members.count > 1 ? setting : nil,
          tooltip: r.policy + ": " + RunReport.sig(x) + " J/day, mean age " + RunReport.sig(y) + " s")
      }
      let st = familyStyle(f)
      let name = members.count == 1 ? members[0].policy : f + " (" + String(members.count) + ")"
      series.append(
        PlotSeries(name: name, points: points, line: members.count > 1 ? .straight : .none, marker: st.marker, color: st.color))
    }
    // The frontier of the real policies: what a deployable scheduler
    // reaches at each energy, beside the one that includes the oracles.
    let real = RunReport.realFrontier(rows)
    if real.count > 1 {
      series.append(
        PlotSeries(
          name: "Pareto frontier (real)",
          points: real.map { PlotPoint(x: $0.energy.mean!, y: $0.meanAge.mean!) }, line: .step, marker: nil,
          color: "#333333"))
    }
    let front = frontier.sorted { ($0.cost, $0.staleness) < ($1.cost, $1.staleness) }
    if !front.isEmpty {
      xs += front.map(\.cost)
      ys += front.map(\.staleness)
      series.append(
        PlotSeries(
          name: "Pareto frontier (+oracles)", points: front.map { PlotPoint(x: $0.cost, y: $0.staleness) }, line: .step,
          marker: nil, color: "#000000", dashed: true))
    }
    var notes = [
      "Whiskers: 95 % bootstrap CI of the mean over users. Lines join a family's settings in energy order, labelled "
        + "by value (overlaps left out; hover for names)."
    ]
    if zeros > 0 {
      notes.append(
        "\(zeros) configuration(s) with 0 J/day or 0 s mean age: drawn at the tick labelled 0, beyond the axis break.")
    }
    return SVGPlot(
      title: "Staleness vs energy" + (dataset.isEmpty ? "" : " (" + dataset + ")"),
      x: .fitting(xs, label: "background-fetch energy (J/day, log scale)", scale: .log, zeroLane: true),
      y: .fitting(ys, label: "mean age at open (s, log scale)", scale: .log, zeroLane: true),
      series: series, notes: notes, width: 960, height: 600)
  }

  /// Empirical CDF of the age at open per policy: the share of opens with
  /// age ≤ x at 24 log-spaced ages per decade from 1 s (log axis). Opens
  /// with age below 1 s (fresh ones, age 0) count from the left edge.
  /// - Complexity: O(n log n) in the number of opens.
  public static func ageCDF(dataset: String, policies: [String], ages: [String: [Double]]) -> SVGPlot {
    let maxAge = policies.compactMap { ages[$0]?.max() }.max() ?? 10
    let x = PlotAxis.fitting([1, max(maxAge, 10)], label: "age at open (s, log scale)", scale: .log)
    let perDecade = 24
    let decades = Int((log10(x.upper) - log10(x.lower)).rounded())
    let grid = (0...(decades * perDecade)).map { k in
      k % perDecade == 0
        ? x.lower * PlotAxis.decade(k / perDecade) : x.lower * pow(10, Double(k) / Double(perDecade))
    }
    var series: [PlotSeries] = []
    let styles = policyStyles(policies)
    for (i, p) in policies.enumerated() {
      let sorted = (ages[p] ?? []).sorted()
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
      title: "Age at open, cumulative" + (dataset.isEmpty ? "" : " (" + dataset + ")"), x: x,
      y: PlotAxis(label: "opens with age ≤ x (%)", scale: .linear, lower: 0, upper: 100, ticks: [0, 20, 40, 60, 80, 100]),
      series: series,
      notes: [
        "Opens with age below 1 s (fresh opens have age 0) count from the left edge; pooled over users, apps, replications.",
        "Markers once per decade of age, shifted per policy.",
      ])
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
  public static func hourOfDay(
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
