import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation

/// One axis of an ``SVGPlot``: a label (with units), a scale and a domain.
///
/// On a log axis, values ≤ 0 cannot be shown; they are drawn on the lower
/// edge of the plot (callers say so in a note).
package struct PlotAxis: Sendable, Equatable {
  /// How values map to positions.
  package enum Scale: Sendable, Equatable { case linear, log }

  /// The axis title, with units, e.g. `energy (J/day, log scale)`.
  package var label: String
  package var scale: Scale
  /// The domain; `0 < lower < upper` on a log axis.
  package var lower: Double
  package var upper: Double
  /// Tick positions; nil picks decades (log) or a 1-2-5 step (linear).
  package var fixedTicks: [Double]?
  /// Log axis only: the lowest decade is a "zero lane": values ≤ 0 sit on
  /// `lower`, labelled `0`, with a break mark before the next decade.
  package var zeroAtLower: Bool
  /// The values are durations in s: a log axis ticks at 1 s, 10 s, 1 min,
  /// 10 min, 1 h, 10 h, 10 days (and 0.1 s, 0.01 s below), labelled in
  /// those units, so the axis title names no unit.
  package var durations = false

  package init(
    label: String, scale: Scale, lower: Double, upper: Double, ticks: [Double]? = nil, zeroAtLower: Bool = false
  ) {
    precondition(lower < upper, "axis domain must be increasing")
    precondition(scale == .linear || lower > 0, "log axis domain must be positive")
    self.label = label
    self.scale = scale
    self.lower = lower
    self.upper = upper
    self.fixedTicks = ticks
    self.zeroAtLower = zeroAtLower && scale == .log
  }

  /// An axis whose domain covers the finite `values` (on a log axis: the
  /// positive ones), widened to whole decades (log) or to 1-2-5 steps
  /// (linear). `fallback` is used when there is no usable value. With
  /// `zeroLane`, a log axis whose values include 0 (or less) gets one more
  /// decade below the data, labelled `0` (see ``zeroAtLower``).
  package static func fitting(
    _ values: [Double], label: String, scale: Scale, includeZero: Bool = false, zeroLane: Bool = false,
    fallback: (Double, Double) = (1, 10)
  ) -> PlotAxis {
    switch scale {
    case .log:
      let v = values.filter { $0.isFinite && $0 > 0 }
      guard let lo = v.min(), let hi = v.max() else {
        return PlotAxis(label: label, scale: .log, lower: fallback.0, upper: fallback.1)
      }
      let a = log10(lo).rounded(.down), b = log10(hi).rounded(.up)
      let zero = zeroLane && values.contains { $0.isFinite && $0 <= 0 }
      return PlotAxis(
        label: label, scale: .log, lower: decade(Int(a) - (zero ? 1 : 0)), upper: decade(Int(max(b, a + 1))),
        zeroAtLower: zero)
    case .linear:
      var v = values.filter(\.isFinite)
      if includeZero { v.append(0) }
      guard var lo = v.min(), var hi = v.max() else {
        return PlotAxis(label: label, scale: .linear, lower: fallback.0, upper: fallback.1)
      }
      if lo == hi { (lo, hi) = (lo - 1, hi + 1) }
      let step = niceStep((hi - lo) / 5)
      return PlotAxis(
        label: label, scale: .linear, lower: (lo / step).rounded(.down) * step, upper: (hi / step).rounded(.up) * step)
    }
  }

  /// 10^k, exact for the integers a Double holds.
  static func decade(_ k: Int) -> Double {
    var p = 1.0
    for _ in 0..<abs(k) { p *= 10 }
    return k < 0 ? 1 / p : p
  }

  /// The smallest of 1, 2, 5 × 10^k at least `raw`.
  static func niceStep(_ raw: Double) -> Double {
    let m = decade(Int(log10(raw).rounded(.down)))
    for f in [1.0, 2, 5, 10] where f * m >= raw * (1 - 1e-9) { return f * m }
    return 10 * m
  }

  /// Position of `v` in the domain, 0 at `lower` and 1 at `upper`, clamped
  /// to [0, 1] (log-axis values ≤ 0 map to 0).
  package func fraction(_ v: Double) -> Double {
    let f: Double
    switch scale {
    case .linear: f = (v - lower) / (upper - lower)
    case .log:
      guard v > 0 else { return 0 }
      f = (log10(v) - log10(lower)) / (log10(upper) - log10(lower))
    }
    return f.isNaN ? 0 : min(1, max(0, f))
  }

  /// The ticks of a log duration axis (see ``durations``), in s.
  static let durationTicks: [Double] = [0.001, 0.01, 0.1, 1, 10, 60, 600, 3_600, 36_000, 864_000, 8_640_000]

  /// The tick values, in increasing order.
  package var ticks: [Double] {
    if let fixedTicks { return fixedTicks }
    if durations, scale == .log {
      let inside = Self.durationTicks.filter { v in
        v >= lower * (1 - 1e-9) && v <= upper * (1 + 1e-9)
          && !(zeroAtLower && v < 10 * lower * (1 - 1e-9) && v > lower * (1 + 1e-9))
      }
      return (zeroAtLower && !inside.contains(lower) ? [lower] : []) + inside
    }
    switch scale {
    case .log:
      let a = Int(log10(lower).rounded(.down)), b = Int(log10(upper).rounded(.up))
      let dense = b - a <= 2
      var t: [Double] = []
      for k in a...b {
        for f in dense ? [1.0, 2, 5] : [1.0] {
          let v = f * Self.decade(k)
          if zeroAtLower, v > lower * (1 + 1e-9), v < 10 * lower * (1 - 1e-9) { continue }
          if v >= lower * (1 - 1e-9), v <= upper * (1 + 1e-9) { t.append(v) }
        }
      }
      return t
    case .linear:
      let step = Self.niceStep((upper - lower) / 5)
      var t: [Double] = []
      var k = (lower / step).rounded(.up)
      while k * step <= upper + step * 1e-9 {
        t.append(k * step)
        k += 1
      }
      return t
    }
  }

  /// A tick label: locale-free, at most 3 decimals, `1e6` style beyond.
  package func tickLabel(_ v: Double) -> String {
    if v == 0 || (zeroAtLower && v == lower) { return "0" }
    if durations { return Self.durationLabel(v) }
    let a = abs(v)
    if a >= 1e6 || a < 1e-3 {
      let e = Int(log10(a).rounded(.down))
      let m = v / Self.decade(e)
      return (m == 1 ? "" : CSV.number(m, decimals: 2) + "×") + "1e" + String(e)
    }
    if scale == .linear {
      let step = Self.niceStep((upper - lower) / 5)
      let d = max(0, min(3, -Int(log10(step).rounded(.down))))
      return CSV.number(v, decimals: d)
    }
    return CSV.number(v, decimals: 3)
  }
}

extension PlotAxis {
  /// A duration tick: `0.1 s`, `10 s`, `1 min`, `10 min`, `1 h`, `10 days`.
  static func durationLabel(_ v: Double) -> String {
    let a = abs(v)
    let (scale, unit): (Double, String) =
      a < 60 ? (1, "s") : a < 3_600 ? (60, "min") : a < 86_400 ? (3_600, "h") : (86_400, a == 86_400 ? "day" : "days")
    let x = v / scale
    let d = x == x.rounded() ? 0 : max(0, min(3, 1 - Int(log10(abs(x)).rounded(.down))))
    return CSV.number(x, decimals: d) + " " + unit
  }
}

/// A marker shape; together with the colour it tells series apart, also in
/// greyscale.
package typealias MarkerShape = PolicyMarker

/// A data point with optional error bars (low and high ends).
package struct PlotPoint: Sendable, Equatable {
  package var x: Double
  package var y: Double
  package var xLow: Double?, xHigh: Double?
  package var yLow: Double?, yHigh: Double?
  /// A short label drawn beside the marker (e.g. `1h` of `periodic:1h`).
  package var label: String?
  /// Marker size relative to the default (1); e.g. to show a bin's count.
  package var size: Double?
  /// Text shown on hover (an SVG `<title>` on the marker).
  package var tooltip: String?
}

/// A named series: points, how they are joined, colour and marker.
package struct PlotSeries: Sendable, Equatable {
  /// How consecutive points are joined.
  package enum Line: Sendable, Equatable {
    case none, straight
    /// Horizontal, then vertical (a Pareto staircase or an empirical CDF).
    case step
  }

  package var name: String
  package var points: [PlotPoint]
  package var line: Line
  /// nil: no markers.
  package var marker: MarkerShape?
  /// `#RRGGBB`.
  package var color: String
  package var dashed: Bool
  /// An SVG `stroke-dasharray` for the line (overrides `dashed`), e.g. to
  /// tell apart configurations of one policy family drawn in its colour.
  package var dash: String?
  /// Draw a marker on every `markEvery`-th point, starting at `markOffset`.
  package var markEvery: Int
  package var markOffset: Int

  package init(
    name: String, points: [PlotPoint], line: Line = .none, marker: MarkerShape? = .circle,
    color: String = SVGPlot.palette[0], dashed: Bool = false, markEvery: Int = 1, markOffset: Int = 0,
    dash: String? = nil
  ) {
    precondition(markEvery >= 1, "markEvery must be at least 1")
    self.dash = dash
    self.name = name
    self.points = points
    self.line = line
    self.marker = marker
    self.color = color
    self.dashed = dashed
    self.markEvery = markEvery
    self.markOffset = markOffset
  }
}

/// A small deterministic SVG chart: axes with ticks and labelled units, a
/// title, a legend, series with markers, lines and error bars, and notes.
///
/// The same plot renders to the same bytes on every machine: fixed size, no
/// timestamps or random ids, coordinates rounded to 0.01 px with
/// ``CSV/number(_:decimals:)``, text XML-escaped. The output is a standalone
/// SVG document without an XML declaration, so it can also be inlined in HTML.
/// - Complexity: O(points).
package struct SVGPlot: Sendable, Equatable {
  /// The colours of the charts, all from colour-blind-safe schemes:
  /// Okabe–Ito (Okabe & Ito 2008) and Paul Tol's muted, bright and vibrant
  /// schemes (Tol 2021, "Colour schemes", SRON/EPS/TN/09-002). The first
  /// eleven are the families of the default benchmark, chosen for the
  /// largest smallest CIELAB distance (ΔE ≥ 38) among them and to black;
  /// light colours (yellow, sand, pale cyan) are left to families rarely
  /// run together with them.
  package static let palette = [
    "#E69F00", "#56B4E9", "#009E73", "#332288", "#EE3377", "#CC3311", "#AA4499", "#000000", "#661100", "#777777",
    "#999933", "#0072B2", "#CC79A7", "#882255", "#44AA99", "#117733", "#DDCC77", "#6699CC", "#88CCEE", "#D55E00",
  ]

  package var title: String
  package var x: PlotAxis
  package var y: PlotAxis
  package var series: [PlotSeries]
  /// Lines of small text under the x axis (at most 2 are shown).
  package var notes: [String]
  package var width: Double
  package var height: Double

  /// The plot area in pixels: left, right, top, bottom. The legend takes
  /// the 250 px right of it; ticks, the x label and two lines of notes the
  /// 96 px below (further note lines make the canvas taller).
  package var plotArea: (left: Double, right: Double, top: Double, bottom: Double) {
    (84, width - 250, 48, height - 96)
  }

  package init(
    title: String, x: PlotAxis, y: PlotAxis, series: [PlotSeries] = [], notes: [String] = [],
    width: Double = 800, height: Double = 560
  ) {
    self.title = title
    self.x = x
    self.y = y
    self.series = series
    self.notes = notes
    self.width = width
    self.height = height
  }

  /// The horizontal pixel position of `v`.
  package func px(_ v: Double) -> Double {
    let a = plotArea
    return a.left + x.fraction(v) * (a.right - a.left)
  }

  /// The vertical pixel position of `v` (up is larger).
  package func py(_ v: Double) -> Double {
    let a = plotArea
    return a.bottom - y.fraction(v) * (a.bottom - a.top)
  }

  /// Text escaped for XML content and attribute values.
  package static func escape(_ s: String) -> String {
    var out = ""
    out.reserveCapacity(s.count)
    for c in s.unicodeScalars {
      switch c {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      case "'": out += "&apos;"
      default:
        // Characters XML 1.0 forbids (C0 controls except tab and line breaks).
        if c.value < 0x20 && c != "\t" && c != "\n" && c != "\r" { out += "?" } else { out.unicodeScalars.append(c) }
      }
    }
    return out
  }

  /// A pixel coordinate as text (0.01 px, locale-free).
  static func n(_ v: Double) -> String { CSV.number(v, decimals: 2) }

  /// `s` cut to `max` characters with an ellipsis.
  static func clip(_ s: String, _ max: Int) -> String {
    s.count <= max ? s : String(s.prefix(max - 1)) + "…"
  }

  /// The SVG document. Its height is ``height`` plus 15 px for each note
  /// line past the second (notes wrap at the canvas width, never cut).
  package func render() -> String {
    let a = plotArea
    let n = Self.n
    let f = Fonts.self
    let noteLines = notes.flatMap { Self.wrap($0, width: width - 20, fontSize: f.note) }
    let canvasHeight = height + 15 * Double(max(0, noteLines.count - 2))
    var o = ""
    o += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(n(width))\" height=\"\(n(canvasHeight))\" "
    o += "viewBox=\"0 0 \(n(width)) \(n(canvasHeight))\" font-family=\"Helvetica, Arial, Liberation Sans, sans-serif\" "
    o += "font-size=\"\(n(f.tick))\">\n"
    o += "<title>\(Self.escape(title))</title>\n"
    o += "<rect x=\"0\" y=\"0\" width=\"\(n(width))\" height=\"\(n(canvasHeight))\" fill=\"#FFFFFF\"/>\n"
    o += "<text x=\"\(n(width / 2))\" y=\"28\" text-anchor=\"middle\" font-size=\"\(n(f.title))\" font-weight=\"bold\">"
    o += Self.escape(Self.clip(title, Int((width - 20) / (0.6 * f.title)))) + "</text>\n"

    // Grid, ticks and tick labels.
    o += "<g class=\"axes\" stroke=\"#000000\" stroke-width=\"1\">\n"
    for t in x.ticks {
      let X = n(px(t))
      o += "<line x1=\"\(X)\" y1=\"\(n(a.top))\" x2=\"\(X)\" y2=\"\(n(a.bottom))\" stroke=\"#E5E5E5\"/>\n"
      o += "<line x1=\"\(X)\" y1=\"\(n(a.bottom))\" x2=\"\(X)\" y2=\"\(n(a.bottom + 5))\"/>\n"
    }
    for t in y.ticks {
      let Y = n(py(t))
      o += "<line x1=\"\(n(a.left))\" y1=\"\(Y)\" x2=\"\(n(a.right))\" y2=\"\(Y)\" stroke=\"#E5E5E5\"/>\n"
      o += "<line x1=\"\(n(a.left - 5))\" y1=\"\(Y)\" x2=\"\(n(a.left))\" y2=\"\(Y)\"/>\n"
    }
    o += "<rect x=\"\(n(a.left))\" y=\"\(n(a.top))\" width=\"\(n(a.right - a.left))\" height=\"\(n(a.bottom - a.top))\" "
    o += "fill=\"none\"/>\n</g>\n"
    // Axis breaks after a zero lane: two slanted strokes over a white gap.
    if x.zeroAtLower {
      let X = px(x.lower * 3.1623)
      o += "<path class=\"break\" d=\"M\(n(X - 5)) \(n(a.bottom + 6))L\(n(X - 1)) \(n(a.bottom - 6))M\(n(X + 1)) "
      o += "\(n(a.bottom + 6))L\(n(X + 5)) \(n(a.bottom - 6))\" stroke=\"#000000\" fill=\"none\"/>\n"
    }
    if y.zeroAtLower {
      let Y = py(y.lower * 3.1623)
      o += "<path class=\"break\" d=\"M\(n(a.left - 6)) \(n(Y + 5))L\(n(a.left + 6)) \(n(Y + 1))M\(n(a.left - 6)) "
      o += "\(n(Y - 1))L\(n(a.left + 6)) \(n(Y - 5))\" stroke=\"#000000\" fill=\"none\"/>\n"
    }
    o += "<g class=\"tick-labels\" fill=\"#000000\">\n"
    for t in x.ticks {
      o += "<text x=\"\(n(px(t)))\" y=\"\(n(a.bottom + 20))\" text-anchor=\"middle\">\(Self.escape(x.tickLabel(t)))</text>\n"
    }
    for t in y.ticks {
      o += "<text x=\"\(n(a.left - 8))\" y=\"\(n(py(t) + 5))\" text-anchor=\"end\">\(Self.escape(y.tickLabel(t)))</text>\n"
    }
    o += "</g>\n"
    o += "<text class=\"x-label\" x=\"\(n((a.left + a.right) / 2))\" y=\"\(n(a.bottom + 42))\" text-anchor=\"middle\" "
    o += "font-size=\"\(n(f.axis))\">" + Self.escape(x.label) + "</text>\n"
    let cy = (a.top + a.bottom) / 2
    o += "<text class=\"y-label\" x=\"20\" y=\"\(n(cy))\" text-anchor=\"middle\" transform=\"rotate(-90 20 \(n(cy)))\" "
    o += "font-size=\"\(n(f.axis))\">" + Self.escape(y.label) + "</text>\n"
    for (i, line) in noteLines.enumerated() {
      o += "<text class=\"note\" x=\"10\" y=\"\(n(a.bottom + 64 + 15 * Double(i)))\" font-size=\"\(n(f.note))\" "
      o += "fill=\"#333333\">" + Self.escape(line) + "</text>\n"
    }

    // Series: error bars, then lines, then markers on top.
    let labels = placeLabels()
    for (i, s) in series.enumerated() {
      o += "<g class=\"series\" data-series=\"\(i)\">\n"
      o += "<title>\(Self.escape(s.name))</title>\n"
      o += errorBars(s)
      o += line(s)
      for (k, p) in s.points.enumerated() where (k - s.markOffset) % s.markEvery == 0 && k >= s.markOffset {
        guard let m = s.marker else { continue }
        let mk = Self.marker(m, px(p.x), py(p.y), s.color, scale: p.size ?? 1)
        if let tip = p.tooltip, !tip.isEmpty {
          o += "<g><title>\(Self.escape(tip))</title>\n" + mk + "</g>\n"
        } else {
          o += mk
        }
      }
      o += "</g>\n"
    }
    // Point labels over every line, each with a white halo.
    o += "<g class=\"point-labels\">\n"
    for (i, s) in series.enumerated() {
      for (k, p) in s.points.enumerated() {
        guard let l = p.label, !l.isEmpty, let at = labels[LabelKey(series: i, point: k)] else { continue }
        if let leader = at.leader {
          o += "<line class=\"leader\" x1=\"\(n(leader.x0))\" y1=\"\(n(leader.y0))\" x2=\"\(n(leader.x1))\" "
          o += "y2=\"\(n(leader.y1))\" stroke=\"\(s.color)\" stroke-width=\"0.9\"/>\n"
        }
        o += "<text class=\"point-label\" x=\"\(n(at.x))\" y=\"\(n(at.y))\" font-size=\"\(n(f.pointLabel))\" fill=\"#333333\""
        // A white halo keeps the label legible over lines and whiskers.
        o += " stroke=\"#FFFFFF\" stroke-width=\"3\" stroke-linejoin=\"round\" paint-order=\"stroke\""
        o += at.anchorEnd ? " text-anchor=\"end\">" : ">"
        o += Self.escape(Self.clip(l, 24)) + "</text>\n"
      }
    }
    o += "</g>\n"
    o += legend()
    o += "</svg>\n"
    return o
  }

  func errorBars(_ s: PlotSeries) -> String {
    let n = Self.n
    var o = ""
    for p in s.points {
      let X = px(p.x), Y = py(p.y)
      if let lo = p.xLow, let hi = p.xHigh, lo.isFinite, hi.isFinite {
        let a = px(lo), b = px(hi)
        o += "<path d=\"M\(n(a)) \(n(Y - 3))V\(n(Y + 3))M\(n(a)) \(n(Y))H\(n(b))M\(n(b)) \(n(Y - 3))V\(n(Y + 3))\" "
        o += "stroke=\"\(s.color)\" stroke-width=\"1\" fill=\"none\"/>\n"
      }
      if let lo = p.yLow, let hi = p.yHigh, lo.isFinite, hi.isFinite {
        let a = py(lo), b = py(hi)
        o += "<path d=\"M\(n(X - 3)) \(n(a))H\(n(X + 3))M\(n(X)) \(n(a))V\(n(b))M\(n(X - 3)) \(n(b))H\(n(X + 3))\" "
        o += "stroke=\"\(s.color)\" stroke-width=\"1\" fill=\"none\"/>\n"
      }
    }
    return o
  }

  func line(_ s: PlotSeries) -> String {
    guard s.line != .none, s.points.count >= 2 else { return "" }
    let n = Self.n
    var d = ""
    for (k, p) in s.points.enumerated() {
      let X = n(px(p.x)), Y = n(py(p.y))
      if k == 0 {
        d += "M\(X) \(Y)"
      } else if s.line == .step {
        d += "H\(X)V\(Y)"
      } else {
        d += "L\(X) \(Y)"
      }
    }
    let dash = Self.dashAttribute(s)
    return "<path d=\"\(d)\" stroke=\"\(s.color)\" stroke-width=\"1.8\" fill=\"none\"\(dash)/>\n"
  }

  /// The `stroke-dasharray` attribute of a series' line ("" when solid).
  static func dashAttribute(_ s: PlotSeries) -> String {
    if let d = s.dash, !d.isEmpty { return " stroke-dasharray=\"\(escape(d))\"" }
    return s.dashed ? " stroke-dasharray=\"6 4\"" : ""
  }

  /// One marker centred at (x, y): filled shapes with a dark outline so
  /// light colours (yellow) stay visible. `scale` multiplies the size.
  static func marker(_ m: MarkerShape, _ x: Double, _ y: Double, _ color: String, scale: Double = 1) -> String {
    let r = 4.5 * scale
    let style = "fill=\"\(color)\" stroke=\"#000000\" stroke-width=\"0.8\""
    // The open shapes: an outline in the series' colour.
    let outline = "fill=\"none\" stroke=\"\(color)\" stroke-width=\"2.2\""
    func poly(_ pts: [(Double, Double)], open: Bool = false) -> String {
      "<polygon points=\"" + pts.map { "\(n(x + $0.0)) \(n(y + $0.1))" }.joined(separator: " ") + "\" \(open ? outline : style)/>\n"
    }
    /// `k` vertices on a circle of radius `R`, the first on top; every
    /// second one at `inner`·R (a star) when `inner` < 1.
    func regular(_ k: Int, radius R: Double, inner: Double = 1) -> [(Double, Double)] {
      (0..<k).map { i in
        let a = -Double.pi / 2 + 2 * .pi * Double(i) / Double(k)
        let rr = i % 2 == 1 ? R * inner : R
        return (rr * cos(a), rr * sin(a))
      }
    }
    let triangle: [(Double, Double)] = [(0, -r * 1.15), (r, r * 0.75), (-r, r * 0.75)]
    let diamond: [(Double, Double)] = [(0, -r * 1.2), (r, 0), (0, r * 1.2), (-r, 0)]
    switch m {
    case .circle:
      return "<circle cx=\"\(n(x))\" cy=\"\(n(y))\" r=\"\(n(r))\" \(style)/>\n"
    case .ring:
      return "<circle cx=\"\(n(x))\" cy=\"\(n(y))\" r=\"\(n(r))\" \(outline)/>\n"
    case .square:
      return "<rect x=\"\(n(x - r * 0.85))\" y=\"\(n(y - r * 0.85))\" width=\"\(n(1.7 * r))\" height=\"\(n(1.7 * r))\" \(style)/>\n"
    case .triangle: return poly(triangle)
    case .triangleDown: return poly([(0, r * 1.15), (r, -r * 0.75), (-r, -r * 0.75)])
    case .diamond: return poly(diamond)
    case .triangleLeft: return poly([(-r * 1.15, 0), (r * 0.75, -r), (r * 0.75, r)])
    case .triangleRight: return poly([(r * 1.15, 0), (-r * 0.75, -r), (-r * 0.75, r)])
    case .openSquare: return poly([(-r * 0.85, -r * 0.85), (r * 0.85, -r * 0.85), (r * 0.85, r * 0.85), (-r * 0.85, r * 0.85)], open: true)
    case .openDiamond: return poly(diamond, open: true)
    case .openTriangle: return poly(triangle, open: true)
    case .openHexagon: return poly(regular(6, radius: r * 1.1), open: true)
    case .openPentagon: return poly(regular(5, radius: r * 1.1), open: true)
    case .openOctagon: return poly(regular(8, radius: r * 1.1), open: true)
    case .asterisk:
      let a = r * 1.1, b = r * 0.8
      let d = "M\(n(x - a)) \(n(y))H\(n(x + a))M\(n(x)) \(n(y - a))V\(n(y + a))"
        + "M\(n(x - b)) \(n(y - b))L\(n(x + b)) \(n(y + b))M\(n(x - b)) \(n(y + b))L\(n(x + b)) \(n(y - b))"
      return "<path d=\"\(d)\" stroke=\"\(color)\" stroke-width=\"1.8\" fill=\"none\"/>\n"
    case .star: return poly(regular(10, radius: r * 1.35, inner: 0.45))
    case .pentagon: return poly(regular(5, radius: r * 1.1))
    case .hexagon: return poly(regular(6, radius: r * 1.1))
    case .octagon: return poly(regular(8, radius: r * 1.1))
    case .plus, .cross:
      let (dx, dy) = m == .plus ? (r * 1.1, 0.0) : (r * 0.8, r * 0.8)
      let d =
        m == .plus
        ? "M\(n(x - dx)) \(n(y))H\(n(x + dx))M\(n(x)) \(n(y - dx))V\(n(y + dx))"
        : "M\(n(x - dx)) \(n(y - dy))L\(n(x + dx)) \(n(y + dy))M\(n(x - dx)) \(n(y + dy))L\(n(x + dx)) \(n(y - dy))"
      return "<path d=\"\(d)\" stroke=\"\(color == "#F0E442" ? "#8A7F00" : color)\" stroke-width=\"2.2\" fill=\"none\"/>\n"
    }
  }

  /// The legend, right of the plot area: one row per series (at most as
  /// many as fit), with its line sample and marker.
  func legend() -> String {
    let a = plotArea
    let n = Self.n
    let x0 = a.right + 14
    let rowHeight = 19.0
    let rows = Int((a.bottom - a.top) / rowHeight)
    var o = "<g class=\"legend\">\n"
    let shown = series.count > rows ? rows - 1 : series.count
    for (i, s) in series.prefix(shown).enumerated() {
      let y = a.top + 8 + rowHeight * Double(i)
      if s.line != .none {
        let dash = Self.dashAttribute(s)
        o += "<line x1=\"\(n(x0))\" y1=\"\(n(y))\" x2=\"\(n(x0 + 24))\" y2=\"\(n(y))\" stroke=\"\(s.color)\" stroke-width=\"1.8\"\(dash)/>\n"
      }
      if let m = s.marker { o += Self.marker(m, x0 + 12, y, s.color) }
      o += "<text x=\"\(n(x0 + 30))\" y=\"\(n(y + 4.5))\" font-size=\"\(n(Fonts.legend))\">"
      o += Self.escape(Self.clip(s.name, 28)) + "</text>\n"
    }
    if shown < series.count {
      let y = a.top + 8 + rowHeight * Double(shown)
      o += "<text x=\"\(n(x0))\" y=\"\(n(y + 4.5))\" font-size=\"\(n(Fonts.legend))\">"
      o += "… \(series.count - shown) more (hover in a browser)</text>\n"
    }
    o += "</g>\n"
    return o
  }
}
