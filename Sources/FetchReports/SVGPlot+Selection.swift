import Foundation

/// Which configurations a trade-off chart draws by default: at most
/// ``seriesLimit`` families, each with its non-dominated settings, in
/// colours a reader tells apart.
extension SVGPlot {
  /// The most policy series (families) a default trade-off chart draws:
  /// beyond about eight, a legend's colours and a chart's labels stop
  /// being readable in print.
  package static let seriesLimit = 8

  /// The least CIEDE2000 colour difference between two families drawn in
  /// one default chart; below about 20, small markers of two hues (the
  /// registry's magenta and pink, or two greens) are easily taken for one
  /// another.
  package static let minimumColourDifference = 20.0

  /// The reference families: `never` (no background fetch) and the oracles.
  static let referenceFamilies = ["never", "oracle", "oracle-budget"]

  /// The rows a default chart draws, and a note naming what it leaves out
  /// (nil when it draws everything).
  ///
  /// The references (``referenceFamilies``) come first, then the real
  /// families by their distance to the frontier of the real policies (the
  /// best staleness at each cost or less): 0 for a family with a setting on
  /// it; otherwise the least, over its settings, of the log ratio of its
  /// staleness to the frontier's (a share in points for a higher-is-better
  /// axis). A family whose colour is within ``minimumColourDifference`` of
  /// a family already chosen (a reference or a real one) is left out, so
  /// every two families a default chart draws differ by at least that. Of
  /// each family only its non-dominated
  /// settings are drawn (no other setting of the family is as cheap and as
  /// fresh). `cost` and `staleness` give a row's plotted means.
  /// - Complexity: O(n²) in the rows.
  static func chooseSeries(
    _ rows: [RunReport.PolicyRow], limit: Int, cost: (RunReport.PolicyRow) -> Double?,
    staleness: (RunReport.PolicyRow) -> Double?, higherIsBetter: Bool
  ) -> (rows: [RunReport.PolicyRow], note: String?) {
    let usable = rows.filter { cost($0) != nil && staleness($0) != nil }
    var families: [String] = []
    for r in usable where !families.contains(r.family) { families.append(r.family) }
    let better: (Double, Double) -> Bool = higherIsBetter ? { $0 > $1 } : { $0 < $1 }
    // The real frontier as (cost, best staleness at that cost or less).
    var frontier: [(Double, Double)] = []
    for r in usable.filter({ !referenceFamilies.contains($0.family) || $0.family == "never" })
      .sorted(by: { (cost($0) ?? 0) < (cost($1) ?? 0) })
    {
      let c = cost(r) ?? 0, s = staleness(r) ?? 0
      if frontier.last.map({ better(s, $0.1) }) ?? true { frontier.append((c, s)) }
    }
    func distance(_ r: RunReport.PolicyRow) -> Double {
      let c = cost(r) ?? 0, s = staleness(r) ?? 0
      guard let f = frontier.last(where: { $0.0 <= c })?.1 else { return 0 }
      if higherIsBetter { return max(0, f - s) }
      return max(0, log10(max(s, 1e-9) / max(f, 1e-9)))
    }
    let references = families.filter { referenceFamilies.contains($0) }
    let real = families.filter { !referenceFamilies.contains($0) }
      .map { f in (f, usable.filter { $0.family == f }.map(distance).min() ?? .infinity) }
      .enumerated().sorted { ($0.element.1, $0.offset) < ($1.element.1, $1.offset) }.map(\.element.0)
    var chosen = Array(references.prefix(limit))
    var clashing: [String] = []
    for f in real where chosen.count < limit {
      let c = familyStyle(f).color
      if let near = chosen.first(where: { colourDifference(familyStyle($0).color, c) < minimumColourDifference }) {
        clashing.append(f + " (its colour is " + near + "'s)")
        continue
      }
      chosen.append(f)
    }
    // Each chosen family's non-dominated settings, in run order.
    var keep = Set<String>()
    for f in chosen {
      var best: Double?
      for r in usable.filter({ $0.family == f }).sorted(by: { ((cost($0) ?? 0), $0.policy) < ((cost($1) ?? 0), $1.policy) }) {
        let s = staleness(r) ?? 0
        if best.map({ better(s, $0) }) ?? true {
          keep.insert(r.policy)
          best = s
        }
      }
    }
    let out = rows.filter { keep.contains($0.policy) }
    guard out.count < rows.count else { return (rows, nil) }
    let left = families.filter { !chosen.contains($0) }
    var note = "Shown: \(out.count) of \(rows.count) configurations"
    if !left.isEmpty {
      note += ", \(chosen.count) of \(families.count) families (the references, then the families nearest the real frontier"
        + (clashing.isEmpty ? "" : "; left out for a look-alike colour: " + clashing.joined(separator: ", ")) + ")"
    }
    note += "; of each family its settings no other of the family beats on both axes. Every configuration is in the "
      + "tables and the frontier lines; choose others with fetchlab report --policies."
    return (out, note)
  }

  /// The CIEDE2000 difference of two `#RRGGBB` colours (sRGB, D65), after
  /// Sharma, Wu and Dalal, "The CIEDE2000 color-difference formula",
  /// Color Research & Application 30(1), 2005. About 2 is just noticeable
  /// side by side; small markers need far more.
  package static func colourDifference(_ a: String, _ b: String) -> Double {
    let (l1, a1, b1) = lab(a), (l2, a2, b2) = lab(b)
    func deg(_ r: Double) -> Double { r * 180 / .pi }
    func rad(_ d: Double) -> Double { d * .pi / 180 }
    let cBar = (hypot(a1, b1) + hypot(a2, b2)) / 2
    let g = 0.5 * (1 - sqrt(pow(cBar, 7) / (pow(cBar, 7) + pow(25, 7))))
    let a1p = (1 + g) * a1, a2p = (1 + g) * a2
    let c1p = hypot(a1p, b1), c2p = hypot(a2p, b2)
    func hue(_ b: Double, _ a: Double) -> Double {
      let h = deg(atan2(b, a))
      return h < 0 ? h + 360 : h
    }
    let h1p = hue(b1, a1p), h2p = hue(b2, a2p)
    var dh = h2p - h1p
    if c1p * c2p == 0 { dh = 0 } else if dh > 180 { dh -= 360 } else if dh < -180 { dh += 360 }
    let dL = l2 - l1, dC = c2p - c1p, dH = 2 * sqrt(c1p * c2p) * sin(rad(dh / 2))
    let lBar = (l1 + l2) / 2, cBarP = (c1p + c2p) / 2
    let hBar: Double =
      c1p * c2p == 0
      ? h1p + h2p : abs(h1p - h2p) <= 180 ? (h1p + h2p) / 2 : h1p + h2p < 360 ? (h1p + h2p + 360) / 2 : (h1p + h2p - 360) / 2
    let t =
      1 - 0.17 * cos(rad(hBar - 30)) + 0.24 * cos(rad(2 * hBar)) + 0.32 * cos(rad(3 * hBar + 6))
      - 0.2 * cos(rad(4 * hBar - 63))
    let dTheta = 30 * exp(-pow((hBar - 275) / 25, 2))
    let rC = 2 * sqrt(pow(cBarP, 7) / (pow(cBarP, 7) + pow(25, 7)))
    let sL = 1 + 0.015 * pow(lBar - 50, 2) / sqrt(20 + pow(lBar - 50, 2))
    let sC = 1 + 0.045 * cBarP, sH = 1 + 0.015 * cBarP * t
    let rT = -sin(rad(2 * dTheta)) * rC
    return sqrt(pow(dL / sL, 2) + pow(dC / sC, 2) + pow(dH / sH, 2) + rT * (dC / sC) * (dH / sH))
  }

  /// CIELAB (D65) of a `#RRGGBB` sRGB colour; black for anything else.
  static func lab(_ hex: String) -> (Double, Double, Double) {
    let digits = hex.dropFirst()
    guard hex.hasPrefix("#"), digits.count == 6, let v = UInt32(digits, radix: 16) else { return (0, 0, 0) }
    func linear(_ c: UInt32) -> Double {
      let x = Double(c) / 255
      return x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4)
    }
    let r = linear(v >> 16 & 0xFF), g = linear(v >> 8 & 0xFF), b = linear(v & 0xFF)
    let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    let y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883
    func f(_ t: Double) -> Double { t > 0.008856 ? cbrt(t) : 7.787 * t + 16.0 / 116 }
    return (116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z)))
  }
}
