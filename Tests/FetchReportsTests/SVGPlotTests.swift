@testable import FetchReports
import FetchBenchmark
import FetchSimulation
import FetchSupport
import FetchTestSupport
import FetchTraces
import Foundation
import Testing

#if canImport(FoundationXML)
  import FoundationXML
#endif

/// Parses SVG text; collects elements (name, attributes, enclosing series
/// group) and the parse error if the text is not well-formed XML.
final class SVGElements: NSObject, XMLParserDelegate {
  struct Element {
    var name: String
    var attributes: [String: String]
    var series: String?
    /// The `data-policy` of the enclosing timeline lane.
    var lane: String? = nil
  }
  var elements: [Element] = []
  var texts: [String] = []
  var groups: [String?] = []
  var lanes: [String?] = []
  var wellFormed = false

  init(_ svg: String) {
    super.init()
    let p = XMLParser(data: Data(svg.utf8))
    p.delegate = self
    wellFormed = p.parse()
  }

  func parser(
    _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
    attributes: [String: String] = [:]
  ) {
    if name == "g" {
      groups.append(attributes["data-series"])
      lanes.append(attributes["data-policy"])
    }
    elements.append(
      Element(
        name: name, attributes: attributes, series: groups.last { $0 != nil } ?? nil,
        lane: lanes.last { $0 != nil } ?? nil))
  }

  func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
    if name == "g" {
      _ = groups.popLast()
      _ = lanes.popLast()
    }
  }

  func parser(_ parser: XMLParser, foundCharacters string: String) { texts.append(string) }

  /// Centres of the circles drawn by series `i` (not the legend).
  func circles(series i: Int) -> [(Double, Double)] {
    elements.filter { $0.name == "circle" && $0.series == String(i) }.compactMap {
      guard let x = $0.attributes["cx"].flatMap(Double.init), let y = $0.attributes["cy"].flatMap(Double.init) else {
        return nil
      }
      return (x, y)
    }
  }
}

private func policiesCSV(_ rows: [(String, Double, Double, Double, Double, Double, Double)]) -> String {
  // (policy, energy, lo, hi, age, lo, hi)
  var s = Scoring.policiesHeader.joined(separator: ",") + "\n"
  for r in rows {
    var f = ["", r.0, Scoring.family(of: r.0), "4"]
    for m in ScoreMetric.allCases {
      switch m {
      case .energy_j_per_day, .battery_energy_j_per_day: f += [r.1, r.2, r.3].map { CSV.number($0) }
      case .mean_age_s: f += [r.4, r.5, r.6].map { CSV.number($0) }
      default: f += ["1", "0.5", "2"]
      }
    }
    s += CSV.line(f)
  }
  return s
}

private func svgTempDir() -> String {
  Scratch.directory("svgplot")
}

@Suite("SVGPlot: deterministic SVG charts")
struct SVGPlotTests {
  /// periodic:1h (10 J, 1000 s), periodic:15m (100 J, 100 s); never at 0 J.
  static func stalenessChart() throws -> (SVGPlot, String) {
    let dir = svgTempDir()
    try policiesCSV([
      ("periodic:1h", 10, 5, 20, 1000, 500, 2000),
      ("periodic:15m", 100, 50, 200, 100, 50, 200),
      ("never", 0, 0, 0, 3000, 2000, 4000),
      ("oracle", 3, 2, 4, 2, 1, 3),
    ]).write(toFile: dir + "/policies.csv", atomically: true, encoding: .utf8)
    let header = ParetoColumn.allCases.map(\.rawValue).joined(separator: ",")
    try (header + "\n,mean_age_s,battery_energy_j_per_day,never,never,0,3000,1\n"
      + ",mean_age_s,battery_energy_j_per_day,oracle,oracle,3,2,1\n"
      + ",mean_age_s,battery_energy_j_per_day,periodic:1h,periodic,10,1000,0\n"
      + ",p90_age_s,battery_energy_j_per_day,oracle,oracle,3,2,1\n")
      .write(toFile: dir + "/pareto.csv", atomically: true, encoding: .utf8)
    let rows = try RunReport.readPolicies(path: dir + "/policies.csv")
    let front = try RunReport.readFrontier(path: dir + "/pareto.csv")
    #expect(front.map(\.policy) == ["never", "oracle"])
    let plot = SVGPlot.stalenessEnergy(dataset: "", rows: rows, frontier: front)
    return (plot, plot.render())
  }

  @Test("staleness vs energy: well-formed XML; circles sit where the log axes put the CSV values")
  func pointsMatchCSV() throws {
    let (plot, svg) = try Self.stalenessChart()
    let doc = SVGElements(svg)
    #expect(doc.wellFormed)
    // Axes: energy 2…200 J/day plus a 0 → zero lane 0.1, decades 1…1000.
    #expect(plot.x.lower == 0.1 && plot.x.upper == 1000 && plot.x.zeroAtLower)
    #expect(plot.y.lower == 1 && plot.y.upper == 10000 && !plot.y.zeroAtLower)
    // Independent mapping: an 800 × 560 chart, plot area 84…550 px wide, 48…464 px high.
    func ex(_ v: Double) -> Double { 84 + (log10(v) - log10(0.1)) / 4 * 466 }
    func ey(_ v: Double) -> Double { 464 - (log10(v) - 0) / 4 * 416 }
    // Series 0 is the first family (periodic, circles), sorted by energy.
    let c = doc.circles(series: 0)
    #expect(c.count == 2)
    let expected = [(ex(10), ey(1000)), (ex(100), ey(100))]
    for (got, want) in zip(c, expected) {
      #expect(abs(got.0 - want.0) < 0.006 && abs(got.1 - want.1) < 0.006, "\(got) vs \(want)")
    }
    // Units on both axes, the family label, the frontier in the legend.
    let text = doc.texts.joined(separator: "|")
    for s in ["(J per app-day, log scale)", "mean age at open (log scale)", "periodic (2)", "Pareto frontier", "15m", "1h"] {
      #expect(text.contains(s), "missing \(s)")
    }
    // The 0 J/day configuration is on the zero tick, labelled 0.
    #expect(doc.elements.contains { $0.name == "path" && $0.attributes["class"] == "break" })
    #expect(svg.contains(">0</text>"))
  }

  @Test("same input, same bytes; text is XML-escaped; only palette colours")
  func deterministic() throws {
    let a = try Self.stalenessChart().1, b = try Self.stalenessChart().1
    #expect(a == b)
    var p = SVGPlot(
      title: "a < b & \"c\" 'd'", x: PlotAxis(label: "t (s) <x>", scale: .linear, lower: 0, upper: 10),
      y: PlotAxis(label: "y (%)", scale: .log, lower: 0.01, upper: 1e6),
      series: [PlotSeries(name: "s&t", points: [PlotPoint(x: 1, y: 5), PlotPoint(x: 2, y: 50)], line: .step)])
    p.notes = ["note <1>"]
    let svg = p.render()
    #expect(SVGElements(svg).wellFormed)
    #expect(svg.contains("a &lt; b &amp; &quot;c&quot; &apos;d&apos;"))
    #expect(svg == p.render())
    let colours = Set(a.matches(of: /#[0-9A-F]{6}/).map { String($0.output) })
    let allowed = Set(SVGPlot.palette + ["#FFFFFF", "#E5E5E5", "#333333", "#8A7F00"])
    #expect(colours.isSubset(of: allowed), "\(colours.subtracting(allowed))")
  }

  @Test("axes: decade ticks, 1-2-5 linear ticks, locale-free labels")
  func axes() {
    let l = PlotAxis.fitting([3, 4500], label: "x (s)", scale: .log)
    #expect(l.lower == 1 && l.upper == 10000)
    #expect(l.ticks == [1, 10, 100, 1000, 10000])
    #expect(l.ticks.map(l.tickLabel) == ["1", "10", "100", "1000", "10000"])
    let d = PlotAxis.fitting([0.2, 3], label: "x", scale: .log)
    #expect(d.ticks.map(d.tickLabel) == ["0.1", "0.2", "0.5", "1", "2", "5", "10"])
    let lin = PlotAxis.fitting([0.3, 7.2], label: "x", scale: .linear, includeZero: true)
    #expect(lin.lower == 0 && lin.upper == 8 && lin.ticks == [0, 2, 4, 6, 8])
    #expect(PlotAxis(label: "", scale: .log, lower: 1, upper: 1e7).tickLabel(1e7) == "1e7")
    #expect(l.fraction(0) == 0 && l.fraction(1e9) == 1 && l.fraction(100) == 0.5)
  }

  @Test("CDF reaches 100 %, starts at the share of ages below 1 s; hours sum to 100 %")
  func cdfAndHours() {
    let cdf = SVGPlot.ageCDF(dataset: "d", policies: ["a", "b"], ages: ["a": [0, 0, 5, 50], "b": [0.5, 2000]])
    #expect(SVGElements(cdf.render()).wellFormed)
    #expect(cdf.series.map { $0.points.first?.y } == [50, 50])
    #expect(cdf.series.allSatisfy { $0.points.last?.y == 100 })
    #expect(cdf.x.lower == 1 && cdf.x.upper == 10000)
    var opens = Array(repeating: 0, count: 24)
    opens[7] = 3
    opens[20] = 1
    let h = SVGPlot.hourOfDay(
      dataset: "", opens: opens, policies: ["never", "p"], fetches: ["p": Array(repeating: 2, count: 24)])
    #expect(h.series.count == 2 && h.notes.contains { $0.contains("never") })
    #expect(h.series[0].points[7].y == 75)
    #expect(h.x.label.contains("UTC"))
    #expect(SVGElements(h.render()).wellFormed)
  }

  @Test("malformed policies.csv: file:line: column")
  func malformed() throws {
    let dir = svgTempDir()
    var text = policiesCSV([("never", 0, 0, 0, 1, 1, 1), ("periodic:1h", 1, 1, 1, 1, 1, 1)])
    text = text.replacingOccurrences(of: ",periodic:1h,periodic,4,1,", with: ",periodic:1h,periodic,4,abc,")
    try text.write(toFile: dir + "/policies.csv", atomically: true, encoding: .utf8)
    #expect {
      try RunReport.readPolicies(path: dir + "/policies.csv")
    } throws: { e in
      (e as? TraceFormatError)?.description.hasPrefix(dir + "/policies.csv:3: energy_j_per_day: ") == true
    }
    try "dataset,policy\n,x\n".write(toFile: dir + "/p2.csv", atomically: true, encoding: .utf8)
    #expect {
      try RunReport.readPolicies(path: dir + "/p2.csv")
    } throws: { e in
      (e as? TraceFormatError)?.description.hasPrefix(dir + "/p2.csv:1: users: missing column") == true
    }
  }

  /// A fit report directory: calibration.csv (two predictors, one with an
  /// empty decile) and evaluation_overall.csv.
  static func fitDir() throws -> String {
    let dir = svgTempDir()
    var c = "predictor,decile,n,mean_predicted,observed\n"
    c += "habit,0,100,0.02,0.03\nhabit,1,400,0.1,0.08\nhabit,2,25,0.3,0.36\n"
    c += "hour_of_day,0,200,0.05,0.04\nhour_of_day,1,0,,\nhour_of_day,2,325,0.2,0.25\n"
    try c.write(toFile: dir + "/calibration.csv", atomically: true, encoding: .utf8)
    try "predictor,pairs,brier,auc\nhabit,3,0.081,0.8\nhour_of_day,3,0.09,0.7\n"
      .write(toFile: dir + "/evaluation_overall.csv", atomically: true, encoding: .utf8)
    try "{\"trace\": {\"path\": \"t.csv\"}}\n".write(toFile: dir + "/manifest.json", atomically: true, encoding: .utf8)
    return dir
  }

  @Test("calibration: points sit at (mean_predicted, observed) of calibration.csv; area ∝ n; the diagonal")
  func calibration() throws {
    let dir = try Self.fitDir()
    let (charts, _, rows) = try RunReport.charts(runDir: dir)
    #expect(rows.isEmpty && charts.map(\.file) == ["calibration.svg"])
    let plot = charts[0].plot
    let svg = plot.render()
    let doc = SVGElements(svg)
    #expect(doc.wellFormed)
    // Both axes 0…0.4 (largest value 0.36); plot area 84…510 × 48…444 px.
    #expect(plot.x.upper == 0.4 && plot.y.upper == 0.4 && plot.x.lower == 0)
    // Each tick label names its tick's position.
    #expect(plot.x.ticks.map(plot.x.tickLabel) == ["0", "0.1", "0.2", "0.3", "0.4"] && plot.y.ticks == plot.x.ticks)
    func ex(_ v: Double) -> Double { 84 + v / 0.4 * 426 }
    func ey(_ v: Double) -> Double { 444 - v / 0.4 * 396 }
    // Series 0 is the diagonal, 1 habit (triangles), 2 hour_of_day (circles).
    #expect(plot.series[0].name == "perfectly calibrated" && plot.series[0].points.last?.x == 0.4)
    let bins = try RunReport.readCalibration(path: dir + "/calibration.csv")
    let hod = bins.filter { $0.predictor == "hour_of_day" && $0.count > 0 }
    let circles = doc.elements.filter { $0.name == "circle" && $0.series == "2" }
    #expect(circles.count == hod.count)
    for (c, b) in zip(circles, hod) {
      let x = Double(c.attributes["cx"]!)!, y = Double(c.attributes["cy"]!)!, r = Double(c.attributes["r"]!)!
      #expect(abs(x - ex(b.meanPredicted!)) < 0.006 && abs(y - ey(b.observed!)) < 0.006)
      #expect(abs(r - 4.5 * max(0.45, 1.9 * (Double(b.count) / 400).squareRoot())) < 0.006)
    }
    #expect(plot.series[1].points.map(\.x) == [0.02, 0.1, 0.3] && plot.series[1].points.map(\.y) == [0.03, 0.08, 0.36])
    let text = doc.texts.joined(separator: " ")  // notes wrap over lines
    for s in ["predicted probability", "observed frequency", "habit (Brier 0.081)", "(higher is better): habit 0.8, hour_of_day 0.7", "(max", "400)."] {
      #expect(text.contains(s), "missing \(s)")
    }
    // The habit model has the colour of ios-minimum, the policy that uses it.
    #expect(plot.series[1].color == SVGPlot.policyStyle("ios-minimum", among: []).color)
    #expect(svg == (try RunReport.charts(runDir: dir)).charts[0].plot.render())
    // A fit-only directory gets a report with the chart alone.
    let out = try RunReport.write(runDir: dir, options: .init(timeline: nil))
    #expect(out.files.contains(dir + "/plots/calibration.svg"))
    #expect(try String(contentsOfFile: dir + "/report.html", encoding: .utf8).contains(svg))
    // A probability outside [0, 1] is an error with file:line.
    try "predictor,decile,n,mean_predicted,observed\nhabit,0,3,1.5,0\n"
      .write(toFile: dir + "/calibration.csv", atomically: true, encoding: .utf8)
    #expect {
      try RunReport.readCalibration(path: dir + "/calibration.csv")
    } throws: { e in
      (e as? TraceFormatError)?.description.hasPrefix(dir + "/calibration.csv:2: mean_predicted") == true
    }
  }

  @Test("one colour per policy family in every chart; a family's configurations differ by dash")
  func consistentColours() throws {
    let policies = ["never", "periodic:15m", "periodic:1h", "oracle", "ios-minimum", "ios-minimum:price=0.1", "imp"]
    let styles = SVGPlot.policyStyles(policies)
    #expect(styles["periodic:15m"]?.color == styles["periodic:1h"]?.color)
    #expect(styles["periodic:15m"]?.dash == nil && styles["periodic:1h"]?.dash != nil)
    // Every family has its own (colour, marker) pair from the palette.
    let fams = ["never", "periodic", "oracle", "oracle-budget", "ios-minimum", "ios-custom", "silent-push",
      "android-workmanager", "android-standby", "tailender", "imp"]
    let pairs = fams.map { SVGPlot.familyStyle($0) }
    #expect(Set(pairs.map { "\($0.color)\($0.marker)" }).count == fams.count)
    // ... and a colour of its own (silent-push and imp; periodic,
    // WorkManager and Standby).
    #expect(Set(pairs.map(\.color)).count == fams.count)
    #expect(pairs.allSatisfy { SVGPlot.palette.contains($0.color) })
    // An unknown family: colour and marker picked by the FNV-1a hash of its
    // name (0xC5ED898383AE78B0 for "new-thing": colour 4 of 6, marker 0 of 4).
    #expect(SVGPlot.familyStyle("new-thing") == ("#D55E00", .plus))
    #expect(SVGPlot.familyStyle("x") == ("#CC79A7", .plus))
    // The colour does not depend on which other policies a chart shows.
    #expect(SVGPlot.policyStyle("imp", among: ["imp"]).color == styles["imp"]?.color)

    var ages: [String: [Double]] = [:]
    for p in policies { ages[p] = [0, 10, 100] }
    let cdf = SVGPlot.ageCDF(dataset: "", policies: policies, ages: ages)
    let hours = SVGPlot.hourOfDay(
      dataset: "", opens: Array(repeating: 1, count: 24), policies: policies,
      fetches: Dictionary(uniqueKeysWithValues: policies.map { ($0, Array(repeating: 1, count: 24)) }))
    let staleness = try Self.stalenessChart().0
    for p in policies {
      let c = styles[p]!.color
      #expect(cdf.series.first { $0.name == p }?.color == c, "\(p) in the CDF")
      if p != "never" { #expect(hours.series.first { $0.name == p }?.color == c, "\(p) by hour") }
      #expect(cdf.series.first { $0.name == p }?.dash == styles[p]!.dash)
    }
    for s in staleness.series where !s.name.hasPrefix("Pareto frontier") {
      let family = Scoring.family(of: s.name.split(separator: " ").first.map(String.init) ?? s.name)
      #expect(s.color == SVGPlot.familyStyle(family).color, "\(s.name) in the staleness chart")
    }
    // The timeline's lane swatches use the same colours.
    let (run, _) = try timelineRun()
    let t = try UserDayTimeline.build(runDir: run)
    let doc = SVGElements(t.render())
    for lane in t.lanes {
      let swatch = doc.elements.first { $0.lane == lane.policy && $0.name == "rect" && $0.attributes["width"] == "10" }
      #expect(swatch?.attributes["fill"] == SVGPlot.policyStyle(lane.policy, among: []).color, "\(lane.policy)")
    }
  }
}

@Suite("Trade-off charts")
struct TradeoffChartTests {
  static func row(_ policy: String, energy: Double, fresh: Double, cellularMB: Double) -> RunReport.PolicyRow {
    func e(_ x: Double) -> RunReport.Estimate { RunReport.Estimate(mean: x, low: x * 0.9, high: x * 1.1) }
    return RunReport.PolicyRow(
      dataset: "d", policy: policy, family: String(policy.split(separator: ":")[0]), users: 3,
      estimates: [
        ScoreMetric.energy_j_per_day.rawValue: e(energy), ScoreMetric.battery_energy_j_per_day.rawValue: e(energy),
        ScoreMetric.fresh_ratio.rawValue: e(fresh),
        ScoreMetric.cellular_bytes_per_day.rawValue: e(cellularMB * 1e6), ScoreMetric.mean_age_s.rawValue: e(100),
      ])
  }

  @Test("fresh share vs energy: the real frontier keeps the freshest at each energy (higher is better); oracles left out")
  func freshFrontier() {
    let rows = [
      Self.row("periodic:4h", energy: 10, fresh: 0.70, cellularMB: 1), Self.row("periodic:1h", energy: 30, fresh: 0.80, cellularMB: 2),
      Self.row("tailender:1h", energy: 20, fresh: 0.65, cellularMB: 2), Self.row("oracle", energy: 5, fresh: 1, cellularMB: 0.5),
    ]
    let plot = SVGPlot.tradeoff(title: "Fresh opens vs energy", dataset: "d", rows: rows, x: .energy(), y: .fresh, frontier: [])
    let real = plot.series.first { $0.name == "Pareto frontier (real)" }
    // tailender (20 J, 65 %) is dominated by periodic:4h (10 J, 70 %); the oracle is not a real policy.
    #expect(real?.points.map { [$0.x, $0.y] } == [[10, 70], [30, 80]])
    #expect(plot.y.scale == .linear && plot.y.label.contains("fresh"))
  }
}

/// The charts of the default benchmark's results (`Golden/default-run`:
/// its policies.csv and the frontier rows of its pareto.csv), as a paper
/// and a phone show them.
@Suite("Report charts for papers and phones")
struct ReportLegibilityTests {
  /// The trade-off charts of each dataset of the default benchmark.
  static func defaultCharts() throws -> [SVGPlot] {
    let dir = goldenURL("default-run").path
    let rows = try RunReport.readPolicies(path: dir + "/policies.csv")
    let age = try RunReport.readFrontier(path: dir + "/pareto.csv")
    let fresh = try RunReport.readFrontier(path: dir + "/pareto.csv", staleness: .fresh_ratio)
    let cell = try RunReport.readFrontier(path: dir + "/pareto.csv", cost: .cellular_bytes_per_day)
    return ["ubiqlog", "synthetic"].flatMap { d -> [SVGPlot] in
      let mine = rows.filter { $0.dataset == d }
      return [
        SVGPlot.stalenessEnergy(dataset: d, rows: mine, frontier: age.filter { $0.dataset == d }),
        SVGPlot.tradeoff(
          title: "Fresh opens vs energy", dataset: d, rows: mine, x: .energy(), y: .fresh,
          frontier: fresh.filter { $0.dataset == d }, limit: SVGPlot.seriesLimit),
        SVGPlot.tradeoff(
          title: "Staleness vs cellular data", dataset: d, rows: mine, x: .cellular, y: .meanAge,
          frontier: cell.filter { $0.dataset == d }, limit: SVGPlot.seriesLimit),
      ]
    }
  }

  @Test("default benchmark: at most 8 families, colours ≥ 20 CIEDE2000 apart, per-app units, durations in s/min/h")
  func defaultChartsArePaperReady() throws {
    let charts = try Self.defaultCharts()
    for plot in charts {
      let families = plot.series.filter { $0.marker != nil }
      #expect(families.count >= 3 && families.count <= SVGPlot.seriesLimit, "\(plot.title): \(families.map(\.name))")
      let real = families.filter { s in !["never", "oracle", "oracle-budget"].contains { s.name.hasPrefix($0) } }
      for (i, a) in real.enumerated() {
        for b in real[(i + 1)...] {
          let d = SVGPlot.colourDifference(a.color, b.color)
          #expect(d >= SVGPlot.minimumColourDifference, "\(plot.title): \(a.name) and \(b.name) look alike (\(d))")
        }
      }
      #expect(plot.x.label.contains("per app-day"), "\(plot.x.label)")
      #expect(!plot.x.label.contains("/day") && !plot.y.label.contains("/day"))
      let text = SVGElements(plot.render()).texts.joined(separator: "|")
      if plot.y.durations {
        let labels = plot.y.ticks.map { plot.y.tickLabel($0) }
        #expect(labels.contains("1 min") || labels.contains("10 min"), "\(plot.title): \(labels)")
        #expect(labels.contains("1 h"), "\(plot.title): \(labels)")
        #expect(labels.allSatisfy { $0 == "0" || $0.hasSuffix(" s") || $0.hasSuffix(" min") || $0.hasSuffix(" h") })
        for l in labels { #expect(text.contains("|" + l + "|"), "\(plot.title): tick \(l) not drawn") }
      }
      // What the chart leaves out, it says.
      #expect(plot.notes.contains { $0.hasPrefix("Shown: ") }, "\(plot.title): \(plot.notes)")
    }
    // No family of the default benchmark is left out for a look-alike colour.
    for plot in charts { #expect(!plot.notes.joined().contains("look-alike"), "\(plot.title): \(plot.notes)") }
  }

  /// The families a default fresh-share chart draws of `rows`.
  static func defaultFamilies(_ rows: [RunReport.PolicyRow]) -> [String] {
    let freshKey = ScoreMetric.fresh_ratio.rawValue
    func cost(_ r: RunReport.PolicyRow) -> Double? { r.energy.mean }
    func fresh(_ r: RunReport.PolicyRow) -> Double? { r.estimates[freshKey]?.mean }
    let chosen = SVGPlot.chooseSeries(rows, limit: SVGPlot.seriesLimit, cost: cost, staleness: fresh, higherIsBetter: true)
    var out: [String] = []
    for r in chosen.rows where !out.contains(r.family) { out.append(r.family) }
    return out
  }

  @Test("any families a default chart can draw: every two colours, references included, ≥ 20 CIEDE2000 apart")
  func everyDefaultPairOfColoursDiffers() throws {
    // Every built-in family with one configuration, all on the frontier
    // (each fresher and dearer than the last), in many orders: whichever
    // eight the chart keeps, no two look alike.
    let docs = try String(contentsOfFile: NotebookTests.repository + "/docs/policies.md", encoding: .utf8)
    let builtIn = Set(docs.split(separator: "\n").compactMap { l in
      l.hasPrefix("### `") ? String(l.dropFirst(5).prefix { $0 != "`" }) : nil
    })
    var families: [String] = []
    for f in PolicyRegistry.families where builtIn.contains(f.name) { families.append(f.name) }
    #expect(families.count >= 19)
    var orders: [[String]] = [families, Array(families.reversed())]
    for k in stride(from: 1, to: families.count, by: 2) {
      orders.append(Array(families[k...]) + Array(families[..<k]))
    }
    var drawn = 0
    for order in orders {
      var rows: [RunReport.PolicyRow] = []
      for (i, f) in order.enumerated() {
        let fresh = 0.5 + Double(i) / Double(4 * order.count)
        rows.append(TradeoffChartTests.row(f, energy: Double(i + 1), fresh: fresh, cellularMB: 1))
      }
      let chosen = Self.defaultFamilies(rows)
      #expect(chosen.count == SVGPlot.seriesLimit, "\(chosen)")
      for (i, a) in chosen.enumerated() {
        for b in chosen[(i + 1)...] {
          let d = SVGPlot.colourDifference(SVGPlot.familyStyle(a).color, SVGPlot.familyStyle(b).color)
          #expect(d >= SVGPlot.minimumColourDifference, "\(a) and \(b) drawn together, \(d) apart")
          drawn += 1
        }
      }
    }
    #expect(drawn >= 28 * orders.count)
    // The rule matters: the registry has look-alike pairs, one with a reference.
    #expect(SVGPlot.colourDifference(SVGPlot.familyStyle("oracle").color, SVGPlot.familyStyle("transfer").color) < 20)
  }

  @Test("duration ticks: 0 in the zero lane, then s, min, h and days")
  func durationAxisTicks() {
    var axis = PlotAxis(label: "age", scale: .log, lower: 1, upper: 100_000, zeroAtLower: true)
    axis.durations = true
    let ticks = axis.ticks
    #expect(ticks == [1, 10, 60, 600, 3_600, 36_000])
    #expect(ticks.map { axis.tickLabel($0) } == ["0", "10 s", "1 min", "10 min", "1 h", "10 h"])
    #expect([0.1, 10, 86_400, 864_000].map(PlotAxis.durationLabel) == ["0.1 s", "10 s", "1 day", "10 days"])
  }

  @Test("default benchmark: no two point labels overlap, and each stays in the plot area")
  func labelsDoNotOverlap() throws {
    var labelled = 0
    for plot in try Self.defaultCharts() {
      let doc = SVGElements(plot.render())
      #expect(doc.wellFormed)
      let placed = plot.placeLabels()
      #expect(doc.elements.filter { $0.attributes["class"] == "point-label" }.count == placed.count)
      // Helvetica: lower-case letters and digits are at most 0.556 em wide,
      // m and w 0.833 em, a point 0.278 em; the box spans ascent and descent.
      var boxes: [(x0: Double, y0: Double, x1: Double, y1: Double, text: String)] = []
      for (key, p) in placed {
        let text = plot.series[key.series].points[key.point].label!
        let fs = SVGPlot.Fonts.pointLabel
        let wide = text.filter { $0 == "m" || $0 == "w" }.count, points = text.filter { $0 == "." }.count
        let w = fs * (0.556 * Double(text.count) + 0.278 * Double(wide - points))
        let x0 = p.anchorEnd ? p.x - w : p.x
        boxes.append((x0, p.y - 0.75 * fs, x0 + w, p.y + 0.25 * fs, text))
      }
      labelled += boxes.count
      let a = plot.plotArea
      for (i, b) in boxes.enumerated() {
        #expect(b.x0 >= a.left && b.x1 <= a.right && b.y0 >= a.top && b.y1 <= a.bottom, "\(b.text) leaves the plot")
        for c in boxes[(i + 1)...] {
          let overlap = b.x0 < c.x1 && c.x0 < b.x1 && b.y0 < c.y1 && c.y0 < b.y1
          #expect(!overlap, "\(plot.title): labels \(b.text) and \(c.text) overlap")
        }
      }
    }
    #expect(labelled > 40, "most labels are placed")
  }

  @Test("printed at a 6.5 in text width, every text of every chart is at least 7 pt; the SVG is well-formed")
  func legibleInPrint() throws {
    let fit = try SVGPlotTests.fitDir()
    var plots = try Self.defaultCharts() + (try RunReport.charts(runDir: fit)).charts.map(\.plot)
    plots.append(
      SVGPlot.hourOfDay(dataset: "d", opens: Array(repeating: 1, count: 24), policies: [], fetches: [:]))
    for plot in plots {
      let svg = plot.render()
      let doc = SVGElements(svg)
      #expect(doc.wellFormed)
      let root = try #require(doc.elements.first { $0.name == "svg" })
      let width = try #require(root.attributes["width"].flatMap(Double.init))
      #expect(root.attributes["viewBox"]?.hasPrefix("0 0 ") == true)
      let sizes = doc.elements.compactMap { $0.attributes["font-size"].flatMap(Double.init) }
      let smallest = try #require(sizes.min())
      #expect(smallest * 468 / width >= 7, "\(plot.title): \(smallest) px on a \(width) px canvas")
    }
  }

  @Test("notes wrap at the canvas width, never cut; the canvas grows by the extra lines")
  func notesWrap() {
    let long = Array(repeating: "word", count: 90).joined(separator: " ") + " END"
    let p = SVGPlot(
      title: "t", x: PlotAxis(label: "x", scale: .linear, lower: 0, upper: 1),
      y: PlotAxis(label: "y", scale: .linear, lower: 0, upper: 1), notes: ["first", long])
    let doc = SVGElements(p.render())
    let notes = doc.elements.filter { $0.attributes["class"] == "note" }
    #expect(notes.count >= 4)
    #expect(doc.texts.joined(separator: " ").contains("word END"))
    let height = Double(doc.elements.first { $0.name == "svg" }!.attributes["height"]!)!
    #expect(height == p.height + 15 * Double(notes.count - 2))
    for line in SVGPlot.wrap(long, width: p.width - 20, fontSize: SVGPlot.Fonts.note) {
      #expect(SVGPlot.textWidth(line, fontSize: SVGPlot.Fonts.note) <= p.width - 20)
    }
  }

  @Test("the default benchmark's families: distinct colours and markers, colours ≥ 35 CIELAB ΔE apart")
  func distinctFamilies() {
    let families = [
      "never", "periodic", "oracle", "oracle-budget", "ios-minimum", "ios-custom", "silent-push",
      "android-workmanager", "android-standby", "tailender", "imp",
    ]
    let styles = families.map { SVGPlot.familyStyle($0) }
    #expect(Set(styles.map(\.color)).count == families.count)
    #expect(Set(styles.map(\.marker)).count == families.count)
    #expect(styles.allSatisfy { SVGPlot.palette.contains($0.color) })
    /// CIELAB (D65) of a `#RRGGBB` sRGB colour.
    func lab(_ hex: String) -> (Double, Double, Double) {
      let v = Int(hex.dropFirst(), radix: 16)!
      let rgb = [v >> 16, (v >> 8) & 255, v & 255].map { c -> Double in
        let x = Double(c) / 255
        return x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4)
      }
      let X = (0.4124 * rgb[0] + 0.3576 * rgb[1] + 0.1805 * rgb[2]) / 0.95047
      let Y = 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]
      let Z = (0.0193 * rgb[0] + 0.1192 * rgb[1] + 0.9505 * rgb[2]) / 1.08883
      func f(_ t: Double) -> Double { t > 0.008856 ? cbrt(t) : 7.787 * t + 16.0 / 116 }
      return (116 * f(Y) - 16, 500 * (f(X) - f(Y)), 200 * (f(Y) - f(Z)))
    }
    for i in families.indices {
      for j in families.indices where j > i {
        let a = lab(styles[i].color), b = lab(styles[j].color)
        let d = ((a.0 - b.0) * (a.0 - b.0) + (a.1 - b.1) * (a.1 - b.1) + (a.2 - b.2) * (a.2 - b.2)).squareRoot()
        #expect(d >= 35, "\(families[i]) and \(families[j]) look alike (ΔE \(d))")
      }
    }
  }

  @Test("calibration: one line per predictor on the `all` subset, its Brier in the legend, every note shown")
  func calibrationSubsets() throws {
    let dir = Scratch.directory("calibration-subsets")
    var c = "predictor,subset,decile,n,mean_predicted,observed\n"
    c += "habit,all,0,100,0.02,0.03\nhabit,all,1,400,0.1,0.08\nhabit,all,2,25,0.3,0.36\n"
    c += "constant,all,0,525,0.06,0.07\n"
    c += "habit,outside_gaps,0,90,0.025,0.05\nhabit,outside_gaps,1,300,0.12,0.09\nhabit,outside_gaps,2,20,0.28,0.3\n"
    c += "constant,outside_gaps,0,410,0.065,0.08\n"
    try c.write(toFile: dir + "/calibration.csv", atomically: true, encoding: .utf8)
    var e = "predictor,subset,pairs,brier,auc\n"
    e += "habit,all,3,0.121,0.81\nconstant,all,3,0.2,0.5\nhabit,outside_gaps,3,0.144,0.79\nconstant,outside_gaps,3,0.21,0.5\n"
    try e.write(toFile: dir + "/evaluation_overall.csv", atomically: true, encoding: .utf8)
    let plot = try #require(try RunReport.charts(runDir: dir).charts.first).plot
    // The diagonal, then one series per predictor: the `all` rows only, in order of prediction.
    #expect(plot.series.map(\.name) == ["perfectly calibrated", "habit (Brier 0.121)", "constant (Brier 0.2)"])
    #expect(plot.series[1].points.map(\.x) == [0.02, 0.1, 0.3])
    #expect(plot.series[2].points.map(\.y) == [0.07])
    let text = SVGElements(plot.render()).texts.joined(separator: " ")
    #expect(text.contains("AUC on all test points (higher is better): habit 0.81, constant 0.5."), "\(text)")
    #expect(!text.contains("…"))
    // Both subsets passed to the chart: one line per (predictor, subset), never one zig-zag.
    let bins = try RunReport.readCalibration(path: dir + "/calibration.csv")
    let both = SVGPlot.calibration(bins: bins)
    #expect(both.series.count == 5)
    for s in both.series.dropFirst() { #expect(s.points.map(\.x) == s.points.map(\.x).sorted() && s.points.count <= 3) }
  }

  @Test("report.html: viewport meta, charts scale to the width, tables scroll sideways")
  func phoneLayout() throws {
    let dir = Scratch.directory("phone-layout")
    for f in ["policies.csv", "pareto.csv"] {
      try FileManager.default.copyItem(atPath: goldenURL("default-run/" + f).path, toPath: dir + "/" + f)
    }
    try "{}\n".write(toFile: dir + "/manifest.json", atomically: true, encoding: .utf8)
    try RunReport.write(runDir: dir, options: .init(timeline: nil))
    let html = try String(contentsOfFile: dir + "/report.html", encoding: .utf8)
    #expect(html.contains("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"))
    #expect(html.contains("figure svg{display:block;width:100%;max-width:960px;height:auto}"))
    let tables = html.components(separatedBy: "<table>").count - 1
    #expect(tables > 0 && html.components(separatedBy: "<div class=\"scroll\"><table>").count - 1 == tables)
    #expect(html.contains(".scroll{overflow-x:auto"))
  }

  @Test("a chosen set of policies: only those in the charts, all in the tables; unknown names list the valid ones")
  func chosenPolicies() throws {
    let dir = goldenURL("default-run").path
    let chosen = ["never", "periodic:1h", "ios-minimum:price=0.1", "oracle"]
    let (charts, _, rows) = try RunReport.charts(runDir: dir, policies: chosen)
    // The tables keep every row of policies.csv (one per dataset and configuration).
    let lines = try String(contentsOfFile: dir + "/policies.csv", encoding: .utf8).split(separator: "\n")
    #expect(rows.count == lines.count - 1 && rows.count > chosen.count * 2)
    for c in charts {
      let tooltips = c.plot.series.flatMap { $0.points.compactMap(\.tooltip) }
      #expect(!tooltips.isEmpty)
      for t in tooltips { #expect(chosen.contains { t.hasPrefix($0 + ":") }, "\(c.file): \(t)") }
    }
    #expect {
      try RunReport.charts(runDir: dir, policies: ["never", "periodic:3h"])
    } throws: { e in
      let d = (e as? RunReport.PolicySelectionError)?.description ?? ""
      return d.contains("no policy 'periodic:3h'") && d.contains("valid policies: never, periodic:15m")
    }
  }
}
