import Foundation

/// Text sizes, text measurement and the placement of point labels.
extension SVGPlot {
  /// Font sizes in px of the canvas. Chosen so that a chart printed at a
  /// paper's text width (6.5 in = 468 pt) keeps every text at 7 pt or more
  /// on the 800 px trade-off charts (12 px × 468 / 800 ≈ 7 pt); the largest
  /// canvas is 800 px wide.
  package enum Fonts {
    package static let title = 17.0
    /// Axis titles.
    package static let axis = 15.0
    /// Tick labels (the SVG's default size).
    package static let tick = 14.0
    package static let legend = 13.0
    /// Labels beside points (`1h` of `periodic:1h`).
    package static let pointLabel = 12.0
    /// Notes under the chart.
    package static let note = 12.0
  }

  /// Advance widths of Helvetica (and of its metric twins Arial and
  /// Liberation Sans) in 1/1000 em, for ASCII from space (0x20) to `~`.
  static let helveticaWidths: [Int] = [
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278,  // space…/
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556,  // 0…?
    1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778,  // @…O
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556,  // P…_
    333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556,  // `…o
    556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,  // p…~
  ]

  /// The width in px of `s` set in Helvetica at `fontSize` px; characters
  /// outside ASCII count as 0.8 em, so the estimate errs on the wide side.
  package static func textWidth(_ s: String, fontSize: Double) -> Double {
    var w = 0
    for c in s.unicodeScalars {
      let v = Int(c.value)
      w += (0x20...0x7E).contains(v) ? helveticaWidths[v - 0x20] : 800
    }
    return Double(w) / 1000 * fontSize
  }

  /// `s` broken at spaces into lines at most `width` px wide at `fontSize`
  /// (a word longer than a line gets a line of its own).
  package static func wrap(_ s: String, width: Double, fontSize: Double) -> [String] {
    var lines: [String] = []
    var line = ""
    for word in s.split(separator: " ", omittingEmptySubsequences: true) {
      let candidate = line.isEmpty ? String(word) : line + " " + word
      if line.isEmpty || textWidth(candidate, fontSize: fontSize) <= width {
        line = candidate
      } else {
        lines.append(line)
        line = String(word)
      }
    }
    if !line.isEmpty { lines.append(line) }
    return lines
  }

  struct LabelKey: Hashable {
    var series: Int
    var point: Int
  }

  /// A placed point label: its text position and anchor, its box (px), and
  /// a leader line from the marker when it sits away from it.
  struct PlacedLabel {
    var x: Double
    var y: Double
    var anchorEnd: Bool
    var box: (x0: Double, y0: Double, x1: Double, y1: Double)
    var leader: (x0: Double, y0: Double, x1: Double, y1: Double)?
  }

  /// Where each point label goes, placed greedily in series and point
  /// order: the first spot, among eight around its marker and then eight
  /// farther out (joined to the marker by a leader line), whose box stays
  /// inside the plot area and overlaps no marker and no label placed
  /// before it. Labels without such a spot are left out (the point's
  /// tooltip still names it). Box sizes use Helvetica's widths
  /// (``textWidth(_:fontSize:)``) plus 1 px of padding on every side.
  /// - Complexity: O(labels × (labels + markers)).
  func placeLabels() -> [LabelKey: PlacedLabel] {
    let a = plotArea
    typealias Box = (x0: Double, y0: Double, x1: Double, y1: Double)
    var taken: [Box] = []
    for s in series where s.marker != nil {
      for (k, p) in s.points.enumerated() where k >= s.markOffset && (k - s.markOffset) % s.markEvery == 0 {
        let r = 5.2 * (p.size ?? 1) + 1
        taken.append((px(p.x) - r, py(p.y) - r, px(p.x) + r, py(p.y) + r))
      }
    }
    func overlaps(_ b: Box) -> Bool {
      taken.contains { b.x0 < $0.x1 && $0.x0 < b.x1 && b.y0 < $0.y1 && $0.y0 < b.y1 }
    }
    let fs = Fonts.pointLabel
    let ascent = 0.75 * fs, descent = 0.25 * fs
    var out: [LabelKey: PlacedLabel] = [:]
    for (i, s) in series.enumerated() {
      for (k, p) in s.points.enumerated() {
        guard let l = p.label, !l.isEmpty else { continue }
        let w = Self.textWidth(Self.clip(l, 24), fontSize: fs), X = px(p.x), Y = py(p.y)
        // (dx, dy) of the label's anchor corner from the marker's centre;
        // the box extends right of it (start) or left (end).
        for ring in [7.0, 24.0] {
          let up = Y - ring + descent, down = Y + ring + ascent
          let spots: [(Double, Double, Bool)] = [
            (X + ring, up, false), (X + ring, down, false), (X - ring, up, true), (X - ring, down, true),
            (X + ring + 2, Y + ascent / 2, false), (X - ring - 2, Y + ascent / 2, true),
            (X + w / 2, Y - ring - 4 + descent, true), (X + w / 2, Y + ring + 4 + ascent, true),
          ]
          var placed: PlacedLabel?
          for (x, y, end) in spots {
            let b: Box = end ? (x - w - 1, y - ascent - 1, x + 1, y + descent + 1) : (x - 1, y - ascent - 1, x + w + 1, y + descent + 1)
            guard b.x0 >= a.left + 1, b.x1 <= a.right - 1, b.y0 >= a.top + 1, b.y1 <= a.bottom - 1, !overlaps(b) else {
              continue
            }
            // A leader from the marker's edge towards the box's nearest point.
            var leader: Box?
            if ring > 7 {
              let nx = min(max(X, b.x0), b.x1), ny = min(max(Y, b.y0), b.y1)
              let d = ((nx - X) * (nx - X) + (ny - Y) * (ny - Y)).squareRoot()
              let r0 = 5.5 * (p.size ?? 1)
              if d > r0 + 2 { leader = (X + (nx - X) * r0 / d, Y + (ny - Y) * r0 / d, nx, ny) }
            }
            placed = PlacedLabel(x: x, y: y, anchorEnd: end, box: b, leader: leader)
            break
          }
          if let placed {
            taken.append(placed.box)
            out[LabelKey(series: i, point: k)] = placed
            break
          }
        }
      }
    }
    return out
  }
}
