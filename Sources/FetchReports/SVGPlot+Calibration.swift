import FetchSupport
import FetchTraces
import Foundation

/// The reliability diagram of the open predictors scored by
/// `fetchlab fit --report DIR` (`DIR/calibration.csv`).
extension SVGPlot {
  /// One row of `calibration.csv`: the test points of one predictor whose
  /// predicted probability fell in one decile group.
  package struct CalibrationBin: Sendable, Equatable {
    package var predictor: String
    package var decile: Int
    /// Test points in the group (0: the row has no mean or frequency).
    package var count: Int
    /// Mean predicted P(≥ 1 open of the app within the horizon).
    package var meanPredicted: Double?
    /// Observed share of those points with ≥ 1 open within the horizon.
    package var observed: Double?
    /// The test points the row scores: `all`, or `outside_gaps` (those
    /// whose horizon overlaps no logging gap).
    package var subset: String

    package init(
      predictor: String, decile: Int, count: Int, meanPredicted: Double?, observed: Double?, subset: String = "all"
    ) {
      self.subset = subset
      self.predictor = predictor
      self.decile = decile
      self.count = count
      self.meanPredicted = meanPredicted
      self.observed = observed
    }
  }

  /// Colour and marker of the fit's predictors: the habit model in the
  /// colour of `ios-minimum` (the policy that uses it), the baselines in
  /// other Okabe–Ito colours.
  static func predictorStyle(_ name: String, index: Int) -> (color: String, marker: MarkerShape) {
    switch name {
    case "habit": return familyStyle("ios-minimum")
    case "hour_of_day": return ("#E69F00", .circle)
    case "last_seen_hour": return ("#009E73", .square)
    case "constant": return ("#CC79A7", .diamond)
    default:
      let c = ["#D55E00", "#56B4E9", "#000000"]
      return (c[index % c.count], [.plus, .cross, .triangleDown][index % 3])
    }
  }

  /// Marker scale for a bin of `count` points when the largest has `maxCount`:
  /// marker area ∝ count, from 0.45 (a handful) to 1.9 × the default size.
  package static func calibrationMarkerScale(count: Int, maxCount: Int) -> Double {
    guard maxCount > 0, count > 0 else { return 0.45 }
    return max(0.45, 1.9 * (Double(count) / Double(maxCount)).squareRoot())
  }

  /// Predicted against observed probability of "≥ 1 open of the app in the
  /// next hour" per decile group of each predictor's predictions, pooled
  /// over the (user, app) test windows; the diagonal is perfect calibration.
  /// Marker area is proportional to the test points in the group. Both axes
  /// run from 0 to the same upper bound (the largest value, rounded up to a
  /// 1-2-5 step), so the diagonal is at 45°.
  ///
  /// One line per predictor and subset of test points, each joining its
  /// own deciles in order of prediction (a report passes one subset).
  ///
  /// - Parameters:
  ///   - bins: the rows of `calibration.csv`, in file order.
  ///   - brier: per predictor, its Brier score on `subset` (shown in the legend).
  ///   - auc: per predictor, its AUC on `subset` (shown in a note).
  ///   - subset: the subset the scores are of, named in a note.
  package static func calibration(
    bins: [CalibrationBin], brier: [String: Double] = [:], auc: [String: Double] = [:], horizon: String = "1 h",
    subset: String = "all"
  ) -> SVGPlot {
    var predictors: [String] = []
    for b in bins where !predictors.contains(b.predictor) { predictors.append(b.predictor) }
    var subsets: [String] = []
    for b in bins where !subsets.contains(b.subset) { subsets.append(b.subset) }
    let usable = bins.filter { $0.count > 0 && $0.meanPredicted != nil && $0.observed != nil }
    let maxCount = usable.map(\.count).max() ?? 0
    let top = usable.flatMap { [$0.meanPredicted!, $0.observed!] }.max() ?? 1
    let upper: Double = [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1].first { $0 >= top - 1e-12 } ?? 1
    // Ticks at a 1-2-5 step, so each label names its position exactly.
    let step = PlotAxis.niceStep(upper / 5)
    let ticks = (0...Int((upper / step).rounded())).map { Double($0) * step }
    func axis(_ label: String) -> PlotAxis {
      PlotAxis(label: label, scale: .linear, lower: 0, upper: upper, ticks: ticks)
    }
    var series = [
      PlotSeries(
        name: "perfectly calibrated", points: [PlotPoint(x: 0, y: 0), PlotPoint(x: upper, y: upper)], line: .straight,
        marker: nil, color: "#000000", dashed: true)
    ]
    for (i, p) in predictors.enumerated() {
      for (j, sub) in subsets.enumerated() {
        let rows = usable.filter { $0.predictor == p && $0.subset == sub }
          .sorted { ($0.meanPredicted!, $0.decile) < ($1.meanPredicted!, $1.decile) }
        guard !rows.isEmpty else { continue }
        let st = predictorStyle(p, index: i)
        let points = rows.map { b in
          PlotPoint(
            x: b.meanPredicted!, y: b.observed!, size: calibrationMarkerScale(count: b.count, maxCount: maxCount),
            tooltip: "\(p), decile \(b.decile + 1) of 10: \(b.count) test points, predicted "
              + CSV.number(b.meanPredicted!, decimals: 4) + ", observed " + CSV.number(b.observed!, decimals: 4))
        }
        // Scores are of `subset`; a second subset's line is named, dashed, unscored.
        let label = subsets.count > 1 ? p + " (" + sub + ")" : p
        let name = sub == subset ? brier[p].map { label + " (Brier " + RunReport.sig($0) + ")" } ?? label : label
        series.append(
          PlotSeries(
            name: name, points: points, line: .straight, marker: st.marker, color: st.color,
            dash: j == 0 ? nil : variantDashes[(j - 1) % variantDashes.count]))
      }
    }
    let scope = subsets.map { s in
      s == "all" ? "all test points" : s == "outside_gaps" ? "outside_gaps: horizon clear of logging gaps" : s
    }
    var notes = [
      "Each point: one decile of a predictor's test predictions (every 15 min, all (user, app) pairs; "
        + scope.joined(separator: "; ") + "); marker area ∝ its points (max \(maxCount)).",
    ]
    let aucs = predictors.compactMap { p in auc[p].map { p + " " + RunReport.sig($0) } }
    let on = " on " + (subset == "all" ? "all test points" : subset)
    notes.append(
      (brier.isEmpty ? "" : "Brier score" + on + ": lower is better. ")
        + (aucs.isEmpty ? "" : "AUC" + on + " (higher is better): " + aucs.joined(separator: ", ") + "."))
    return SVGPlot(
      title: "Habit-model calibration: P(≥ 1 open within \(horizon)), held-out test windows",
      x: axis("predicted probability of ≥ 1 open of the app in the next \(horizon)"),
      y: axis("observed frequency of ≥ 1 open"),
      series: series, notes: notes, width: 760, height: 540)
  }
}
