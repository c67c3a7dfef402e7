import FetchBenchmark
import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation

/// The one-user-day timeline chart.
///
/// Lanes, top to bottom, over the local hours 0–24 of one day: the network
/// (a coloured band: WiFi, LTE/cellular, 3G, 5G, offline), charging
/// periods, the radio activity of everything but the policy (the user's
/// sessions and other apps' wakes, with their tails), the server's content
/// updates, the app's opens, and one lane per policy: its background
/// fetches (filled circle: NewData, hollow: NoData, ×: failed; in the
/// policy's colour), the radio tail each fetch caused (shaded, drawn at
/// least 2 px wide) and, under them, each open with the age it showed (a
/// bar from the update the user had not got to the open, labelled when
/// there is room). Hovering any mark shows its exact values.
extension UserDayTimeline {
  static let width = 1000.0
  static let left = 168.0
  static let right = 980.0

  func x(_ t: Double) -> Double {
    Self.left + min(24, max(0, hour(t))) / 24 * (Self.right - Self.left)
  }

  /// A duration as `45 s`, `12 min`, `3.5 h`.
  static func duration(_ s: Double) -> String {
    if s < 90 { return CSV.number(s.rounded(), decimals: 0) + " s" }
    if s < 5_400 { return CSV.number((s / 60).rounded(), decimals: 0) + " min" }
    return CSV.number(s / 3_600, decimals: 1) + " h"
  }

  /// A local clock time `HH:MM:SS` of `t`.
  func clock(_ t: Double) -> String {
    let h = hour(t)
    let s = Int((h * 3_600).rounded(.down))
    func p(_ v: Int) -> String { v < 10 ? "0" + String(v) : String(v) }
    return p(s / 3_600) + ":" + p(s / 60 % 60) + ":" + p(s % 60)
  }

  static func networkStyle(_ n: NetworkKind) -> (color: String, opacity: String, label: String) {
    switch n {
    case .wifi: ("#56B4E9", "0.35", "WiFi")
    case .lte, .cellular: ("#E69F00", "0.35", n == .lte ? "LTE" : "cellular")
    case .umts3g: ("#D55E00", "0.35", "3G")
    case .nr5g: ("#CC79A7", "0.35", "5G")
    case .offline: ("#FFFFFF", "1", "offline")
    }
  }

  /// The chart's title.
  package var title: String {
    "One day of user \(user), app \(app)" + (dataset.isEmpty ? "" : " (" + dataset + ")") + ": " + day
  }

  /// Where the chart's parts sit: the fixed rows under the title, one lane
  /// per policy under them, then the hour axis, the legend and the notes.
  struct SVGLayout {
    typealias Row = (name: String, y: Double, h: Double)
    static let laneHeight = 52.0
    var rows: [Row] = []
    /// The top of the first policy lane.
    var lanesTop = 0.0
    /// The bottom of the last lane (where the hour axis runs).
    var bottom = 0.0
    /// The height of the whole document.
    var height = 0.0

    init(laneCount: Int) {
      var y = 62.0
      for (name, h) in [("network", 16.0), ("charging", 14), ("radio: sessions, wakes", 16), ("content updates", 16), ("app opens", 16)] {
        rows.append((name, y, h))
        y += h + 8
      }
      lanesTop = y + 4
      height = lanesTop + Double(laneCount) * (Self.laneHeight + 8) + 150
      bottom = lanesTop + Double(laneCount) * (Self.laneHeight + 8) - 4
    }

    /// The top of policy lane `i`.
    func laneTop(_ i: Int) -> Double { lanesTop + Double(i) * (Self.laneHeight + 8) }
  }

  /// The SVG document (deterministic: same timeline, same bytes).
  package func render() -> String {
    let styles = SVGPlot.policyStyles(lanes.map(\.policy))
    let layout = SVGLayout(laneCount: lanes.count)
    var o = ""
    renderHeading(layout, into: &o)
    renderGrid(layout, into: &o)
    renderRowLabels(layout, into: &o)
    renderNetwork(layout.rows[0], into: &o)
    renderCharging(layout.rows[1], into: &o)
    renderBackgroundRadio(layout.rows[2], into: &o)
    renderUpdates(layout.rows[3], into: &o)
    renderOpens(layout.rows[4], into: &o)
    for (li, lane) in lanes.enumerated() {
      let st = styles[lane.policy] ?? SVGPlot.PolicyStyle(color: "#000000", marker: .circle, dash: nil)
      renderLane(lane, top: layout.laneTop(li), style: st, into: &o)
    }
    renderXAxis(bottom: layout.bottom, into: &o)
    renderLegend(bottom: layout.bottom, into: &o)
    o += "</svg>\n"
    return o
  }

  /// The document's opening tag, background, title and subtitle.
  private func renderHeading(_ layout: SVGLayout, into o: inout String) {
    let n = SVGPlot.n, e = SVGPlot.escape
    let height = layout.height
    o += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(n(Self.width))\" height=\"\(n(height))\" "
    o += "viewBox=\"0 0 \(n(Self.width)) \(n(height))\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
    o += "<title>\(e(title))</title>\n"
    o += "<rect x=\"0\" y=\"0\" width=\"\(n(Self.width))\" height=\"\(n(height))\" fill=\"#FFFFFF\"/>\n"
    o += "<text x=\"\(n(Self.width / 2))\" y=\"24\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">"
    o += e(SVGPlot.clip(title, 110)) + "</text>\n"
    let sub = "Replayed from the run's trace (\(traceCheck)) with its world parameters and seed \(seed); "
      + "time zone \(timeZone.description)."
    o += "<text x=\"\(n(Self.width / 2))\" y=\"42\" text-anchor=\"middle\" font-size=\"11\" fill=\"#333333\">"
    o += e(SVGPlot.clip(sub, 160)) + "</text>\n"
  }

  /// The hour grid and the shaded parts of the day outside the replayed window.
  private func renderGrid(_ layout: SVGLayout, into o: inout String) {
    let n = SVGPlot.n
    let top = layout.rows[0].y, bottom = layout.bottom
    o += "<g class=\"grid\" stroke=\"#E5E5E5\">\n"
    for h in stride(from: 0, through: 24, by: 1) {
      let X = Self.left + Double(h) / 24 * (Self.right - Self.left)
      o += "<line x1=\"\(n(X))\" y1=\"\(n(top - 4))\" x2=\"\(n(X))\" y2=\"\(n(bottom))\""
      o += h % 3 == 0 ? " stroke=\"#CCCCCC\"/>\n" : "/>\n"
    }
    o += "</g>\n"
    for (s, t) in [(dayStart, window.start), (window.end, dayEnd)] where t > s && s < dayEnd && t > dayStart {
      let a = x(max(s, dayStart)), b = x(min(t, dayEnd))
      o += "<rect class=\"outside\" x=\"\(n(a))\" y=\"\(n(top - 4))\" width=\"\(n(b - a))\" "
      o += "height=\"\(n(bottom - top + 4))\" fill=\"#E5E5E5\" fill-opacity=\"0.7\"/>\n"
      if b - a > 120 {
        o += "<text x=\"\(n((a + b) / 2))\" y=\"\(n(bottom - 6))\" text-anchor=\"middle\" font-size=\"10.5\" fill=\"#333333\">"
        o += (s == dayStart ? "training window (not replayed)" : "after the trace ends") + "</text>\n"
      }
    }
  }

  /// The names of the fixed rows, left of the plot.
  private func renderRowLabels(_ layout: SVGLayout, into o: inout String) {
    let n = SVGPlot.n, e = SVGPlot.escape
    o += "<g class=\"row-labels\" font-size=\"11\">\n"
    for r in layout.rows {
      o += "<text x=\"\(n(Self.left - 8))\" y=\"\(n(r.y + r.h / 2 + 4))\" text-anchor=\"end\">\(e(r.name))</text>\n"
    }
    o += "</g>\n"
  }

  /// The network band: one coloured segment per network, labelled when wide enough.
  private func renderNetwork(_ row: SVGLayout.Row, into o: inout String) {
    let e = SVGPlot.escape
    o += "<g class=\"network\">\n"
    for s in network {
      let st = Self.networkStyle(s.network)
      let a = x(s.start), b = x(s.end)
      o += Self.spanRect(
        a, b, y: row.y, h: row.h, minWidth: 0.5,
        "fill=\"\(st.color)\" fill-opacity=\"\(st.opacity)\""
          + (s.network == .offline ? " stroke=\"#333333\" stroke-width=\"0.6\">" : ">")
          + "<title>\(e(st.label)) \(clock(s.start))–\(clock(s.end))</title></rect>")
      if b - a > 8 * Double(st.label.count) + 6 { o += Self.spanLabel(a, b, y: row.y + 12, st.label) }
    }
    o += "</g>\n"
  }

  /// The `<rect>` of a span from x `a` to `b` (at least `minWidth` px wide)
  /// over `y` to `y + h`; `rest` holds its fill attributes and its end
  /// (`/>`, or `>` with a `<title>` and `</rect>`).
  private static func spanRect(_ a: Double, _ b: Double, y: Double, h: Double, minWidth: Double, _ rest: String) -> String {
    let n = SVGPlot.n
    return "<rect x=\"\(n(a))\" y=\"\(n(y))\" width=\"\(n(max(minWidth, b - a)))\" height=\"\(n(h))\" " + rest + "\n"
  }

  /// A label centred over the span from x `a` to `b`, baseline at `y`.
  private static func spanLabel(_ a: Double, _ b: Double, y: Double, _ text: String) -> String {
    let n = SVGPlot.n
    return "<text x=\"\(n((a + b) / 2))\" y=\"\(n(y))\" text-anchor=\"middle\" font-size=\"10\">" + text + "</text>\n"
  }

  /// A grey note at the start of a row (a row with nothing to draw), baseline at `y`.
  private static func rowNote(y: Double, _ text: String) -> String {
    "<text x=\"\(SVGPlot.n(left + 4))\" y=\"\(SVGPlot.n(y))\" font-size=\"10\" fill=\"#333333\">" + text + "</text>\n"
  }

  /// The charging periods.
  private func renderCharging(_ row: SVGLayout.Row, into o: inout String) {
    o += "<g class=\"charging\">\n"
    for s in charging {
      let a = x(s.start), b = x(s.end)
      o += Self.spanRect(
        a, b, y: row.y, h: row.h, minWidth: 1,
        "fill=\"#F0E442\" fill-opacity=\"0.8\" stroke=\"#8A7F00\" stroke-width=\"0.5\"><title>charging \(clock(s.start))–\(clock(s.end))</title></rect>")
      if b - a > 70 { o += Self.spanLabel(a, b, y: row.y + 11, "plugged in") }
    }
    if charging.isEmpty { o += Self.rowNote(y: row.y + 11, "not charging this day") }
    o += "</g>\n"
  }

  /// The radio activity of everything but the policy, over its tails.
  private func renderBackgroundRadio(_ row: SVGLayout.Row, into o: inout String) {
    o += "<g class=\"background-radio\">\n"
    for s in backgroundTails {
      let a = x(s.start), b = x(s.end)
      o += Self.spanRect(a, b, y: row.y + 3, h: row.h - 6, minWidth: 1, "fill=\"#000000\" fill-opacity=\"0.25\"/>")
    }
    for s in backgroundBusy {
      let a = x(s.start), b = x(s.end)
      o += Self.spanRect(
        a, b, y: row.y, h: row.h, minWidth: 1,
        "fill=\"#000000\" fill-opacity=\"0.75\"><title>radio busy \(clock(s.start))–\(clock(s.end))</title></rect>")
    }
    o += "</g>\n"
  }

  /// The server's content updates, one tick each.
  private func renderUpdates(_ row: SVGLayout.Row, into o: inout String) {
    let n = SVGPlot.n
    o += "<g class=\"updates\" stroke=\"#000000\" stroke-width=\"1.2\">\n"
    for (i, t) in updates.enumerated() {
      let X = n(x(t))
      o += "<line x1=\"\(X)\" y1=\"\(n(row.y + 2))\" x2=\"\(X)\" y2=\"\(n(row.y + row.h - 2))\">"
      o += "<title>update \(i + 1) at \(clock(t))</title></line>\n"
    }
    o += "</g>\n"
  }

  /// The app's opens, one triangle each.
  private func renderOpens(_ row: SVGLayout.Row, into o: inout String) {
    let e = SVGPlot.escape
    let opens = lanes.first?.opens ?? []
    o += "<g class=\"opens\">\n"
    for r in opens {
      let X = x(r.time)
      o += SVGPlot.marker(.triangleDown, X, row.y + row.h / 2, "#000000", scale: 0.8)
        .replacingOccurrences(of: "/>\n", with: "><title>open at \(clock(r.time))</title></polygon>\n")
    }
    if opens.isEmpty {
      o += Self.rowNote(y: row.y + 12, "no opens of \(e(app)) this day")
    }
    o += "</g>\n"
  }

  /// One policy's lane: its label and totals, the radio tails its fetches
  /// caused, the fetch markers and the age of each open.
  private func renderLane(_ lane: Lane, top: Double, style st: SVGPlot.PolicyStyle, into o: inout String) {
    let n = SVGPlot.n, e = SVGPlot.escape
    o += "<g class=\"lane\" data-policy=\"\(e(lane.policy))\">\n"
    o += "<rect x=\"\(n(Self.left))\" y=\"\(n(top))\" width=\"\(n(Self.right - Self.left))\" height=\"\(n(SVGLayout.laneHeight))\" "
    o += "fill=\"none\" stroke=\"#CCCCCC\"/>\n"
    o += "<rect x=\"6\" y=\"\(n(top + 4))\" width=\"10\" height=\"10\" fill=\"\(st.color)\" stroke=\"#000000\" stroke-width=\"0.6\"/>\n"
    o += "<text x=\"20\" y=\"\(n(top + 13))\" font-size=\"11.5\" font-weight=\"bold\">"
    o += e(SVGPlot.clip(lane.policy, 22)) + "</text>\n"
    let newData = lane.fetches.filter { $0.result == .newData }.count
    o += "<text x=\"20\" y=\"\(n(top + 28))\" font-size=\"10\" fill=\"#333333\">"
    o += "\(lane.fetches.count) fetches, \(newData) new</text>\n"
    o += "<text x=\"20\" y=\"\(n(top + 41))\" font-size=\"10\" fill=\"#333333\">"
    o += RunReport.sig(lane.energyJ) + " J; opens: age</text>\n"
    // Caused tails.
    for t in lane.tails where t.end > t.start {
      let a = x(t.start), b = x(t.end)
      o += "<rect class=\"tail\" x=\"\(n(a))\" y=\"\(n(top + 21))\" width=\"\(n(max(4, b - a)))\" height=\"5\" "
      o += "fill=\"\(st.color)\" fill-opacity=\"0.6\" stroke=\"#333333\" stroke-width=\"0.4\">"
      o += "<title>radio tail \(CSV.number(t.end - t.start, decimals: 1)) s caused by the fetch at \(clock(t.start))</title></rect>\n"
    }
    for f in lane.fetches { renderFetch(f, y: top + 12, color: st.color, into: &o) }
    renderAges(lane.opens, y: top + 37, into: &o)
    o += "</g>\n"
  }

  /// A fetch's marker at its start: filled circle (NewData), hollow (NoData) or × (failed).
  private func renderFetch(_ f: FetchRecord, y midF: Double, color: String, into o: inout String) {
    let n = SVGPlot.n, e = SVGPlot.escape
    let X = x(f.start)
    let tip = "fetch \(clock(f.start)), \(f.result == .newData ? "NewData" : f.result == .noData ? "NoData" : "Failed")"
      + (f.failure.isEmpty ? "" : " (\(f.failure))") + ", \(f.network), " + CSV.number(f.energyJ, decimals: 2)
      + " J, " + CSV.number(f.bytes / 1000, decimals: 1) + " kB"
    switch f.result {
    case .newData:
      o += "<circle class=\"fetch\" data-t=\"\(CSV.number(f.start))\" cx=\"\(n(X))\" cy=\"\(n(midF))\" r=\"4.5\" "
      o += "fill=\"\(color)\" stroke=\"#000000\" stroke-width=\"0.8\"><title>\(e(tip))</title></circle>\n"
    case .noData:
      o += "<circle class=\"fetch\" data-t=\"\(CSV.number(f.start))\" cx=\"\(n(X))\" cy=\"\(n(midF))\" r=\"4\" "
      o += "fill=\"#FFFFFF\" stroke=\"\(color == "#F0E442" ? "#8A7F00" : color)\" stroke-width=\"1.6\">"
      o += "<title>\(e(tip))</title></circle>\n"
    case .failed:
      o += "<path class=\"fetch\" data-t=\"\(CSV.number(f.start))\" d=\"M\(n(X - 4)) \(n(midF - 4))L\(n(X + 4)) "
      o += "\(n(midF + 4))M\(n(X - 4)) \(n(midF + 4))L\(n(X + 4)) \(n(midF - 4))\" stroke=\"#000000\" "
      o += "stroke-width=\"2\" fill=\"none\"><title>\(e(tip))</title></path>\n"
    }
  }

  /// Opens with their age: a tick for a fresh open, else a bar from the
  /// missed update to the open, labelled where labels do not overlap.
  private func renderAges(_ opens: [OpenRecord], y ageY: Double, into o: inout String) {
    let n = SVGPlot.n
    var labelRight = -Double.infinity
    for r in opens {
      let X = x(r.time)
      if r.fresh {
        o += "<line x1=\"\(n(X))\" y1=\"\(n(ageY - 5))\" x2=\"\(n(X))\" y2=\"\(n(ageY + 5))\" stroke=\"#333333\" "
        o += "stroke-width=\"1.5\"><title>open \(clock(r.time)): fresh</title></line>\n"
      } else {
        let a = x(r.time - r.ageS)
        o += "<rect x=\"\(n(a))\" y=\"\(n(ageY - 3))\" width=\"\(n(max(1, X - a)))\" height=\"6\" fill=\"#D55E00\" "
        o += "fill-opacity=\"0.45\"/>\n"
        o += "<line x1=\"\(n(X))\" y1=\"\(n(ageY - 6))\" x2=\"\(n(X))\" y2=\"\(n(ageY + 6))\" stroke=\"#D55E00\" "
        o += "stroke-width=\"1.5\"><title>open \(clock(r.time)): age \(Self.duration(r.ageS))</title></line>\n"
        let label = Self.duration(r.ageS)
        let w = 5.2 * Double(label.count)
        if X + 2 - w / 2 > labelRight + 3, X + w / 2 < Self.right {
          o += "<text x=\"\(n(X))\" y=\"\(n(ageY + 15))\" text-anchor=\"middle\" font-size=\"9\" fill=\"#333333\">"
          o += "\(label)</text>\n"
          labelRight = X + w / 2
        }
      }
    }
  }

  /// The hour axis under the lanes.
  private func renderXAxis(bottom: Double, into o: inout String) {
    let n = SVGPlot.n, e = SVGPlot.escape
    o += "<g class=\"x-axis\">\n"
    o += "<line x1=\"\(n(Self.left))\" y1=\"\(n(bottom))\" x2=\"\(n(Self.right))\" y2=\"\(n(bottom))\" stroke=\"#000000\"/>\n"
    for h in stride(from: 0, through: 24, by: 3) {
      let X = Self.left + Double(h) / 24 * (Self.right - Self.left)
      o += "<line x1=\"\(n(X))\" y1=\"\(n(bottom))\" x2=\"\(n(X))\" y2=\"\(n(bottom + 5))\" stroke=\"#000000\"/>\n"
      o += "<text x=\"\(n(X))\" y=\"\(n(bottom + 18))\" text-anchor=\"middle\">\(h)</text>\n"
    }
    o += "<text class=\"x-label\" x=\"\(n((Self.left + Self.right) / 2))\" y=\"\(n(bottom + 36))\" text-anchor=\"middle\">"
    o += "local hour of day (h, \(e(timeZone.description)))</text>\n</g>\n"
  }

  /// The legend (two rows of items: marks, then bands) and the notes under it.
  private func renderLegend(bottom: Double, into o: inout String) {
    let n = SVGPlot.n, e = SVGPlot.escape
    var ly = bottom + 58
    o += "<g class=\"legend\" font-size=\"10.5\">\n"
    var lx = 20.0
    func item(_ mark: String, _ text: String) {
      o += mark + "<text x=\"\(n(lx + 14))\" y=\"\(n(ly + 4))\">\(e(text))</text>\n"
      lx += 14 + 5.6 * Double(text.count) + 18
    }
    item(
      "<circle cx=\"\(n(lx + 5))\" cy=\"\(n(ly))\" r=\"4.5\" fill=\"#999999\" stroke=\"#000000\" stroke-width=\"0.8\"/>",
      "fetch: NewData")
    item(
      "<circle cx=\"\(n(lx + 5))\" cy=\"\(n(ly))\" r=\"4\" fill=\"#FFFFFF\" stroke=\"#333333\" stroke-width=\"1.6\"/>",
      "NoData")
    item(
      "<path d=\"M\(n(lx + 1)) \(n(ly - 4))L\(n(lx + 9)) \(n(ly + 4))M\(n(lx + 1)) \(n(ly + 4))L\(n(lx + 9)) \(n(ly - 4))\" stroke=\"#000000\" stroke-width=\"2\"/>",
      "failed")
    item(
      "<rect x=\"\(n(lx))\" y=\"\(n(ly - 2))\" width=\"10\" height=\"5\" fill=\"#999999\" fill-opacity=\"0.6\" stroke=\"#333333\" stroke-width=\"0.4\"/>",
      "cellular tail the fetch caused (≥ 4 px)")
    item(
      "<rect x=\"\(n(lx))\" y=\"\(n(ly - 3))\" width=\"10\" height=\"6\" fill=\"#D55E00\" fill-opacity=\"0.45\"/>",
      "open shows stale content: age (missed update → open)")
    item(
      "<line x1=\"\(n(lx + 5))\" y1=\"\(n(ly - 5))\" x2=\"\(n(lx + 5))\" y2=\"\(n(ly + 5))\" stroke=\"#333333\" stroke-width=\"1.5\"/>",
      "fresh open")
    ly += 20
    lx = 20
    for k in [NetworkKind.wifi, .lte, .umts3g, .nr5g, .offline] {
      let s = Self.networkStyle(k)
      item(
        "<rect x=\"\(n(lx))\" y=\"\(n(ly - 6))\" width=\"10\" height=\"12\" fill=\"\(s.color)\" fill-opacity=\"\(s.opacity)\" stroke=\"#333333\" stroke-width=\"0.4\"/>",
        s.label)
    }
    item(
      "<rect x=\"\(n(lx))\" y=\"\(n(ly - 6))\" width=\"10\" height=\"12\" fill=\"#F0E442\" fill-opacity=\"0.8\" stroke=\"#8A7F00\" stroke-width=\"0.5\"/>",
      "charging")
    item(
      "<rect x=\"\(n(lx))\" y=\"\(n(ly - 6))\" width=\"10\" height=\"12\" fill=\"#000000\" fill-opacity=\"0.75\"/>",
      "radio busy (sessions, wakes)")
    item(
      "<rect x=\"\(n(lx))\" y=\"\(n(ly - 6))\" width=\"10\" height=\"12\" fill=\"#000000\" fill-opacity=\"0.25\"/>",
      "their tail")
    o += "</g>\n"
    renderNotes(ly: ly, into: &o)
  }

  /// The notes under the legend, from its second row at `ly`.
  private func renderNotes(ly: Double, into o: inout String) {
    let n = SVGPlot.n, e = SVGPlot.escape
    let px = (Self.right - Self.left) / 24 / 3_600
    let notes = [
      "A fetch pays only the radio time nobody else paid for: one inside a session or in another's tail causes no tail of its own.",
      "Cellular tail \(CSV.number(cellularTailS, decimals: 1)) s = \(CSV.number(cellularTailS * px, decimals: 2)) px at this "
        + "scale: drawn ≥ 4 px wide; WiFi tails not drawn. Fetch markers sit at the fetch start.",
      "Hover any mark for exact times, energy (J, marginal) and bytes. Ages are per policy; opens also refresh content in the foreground.",
    ]
    for (i, s) in notes.enumerated() {
      o += "<text class=\"note\" x=\"20\" y=\"\(n(ly + 24 + 15 * Double(i)))\" font-size=\"10.5\" fill=\"#333333\">"
      o += e(s) + "</text>\n"
    }
  }
}
