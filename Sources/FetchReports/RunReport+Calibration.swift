import FetchSupport
import FetchTraces
import Foundation

/// The fit report's files: `calibration.csv` and `evaluation_overall.csv`
/// (written by `fetchlab fit --report`).
extension RunReport {
  /// The directory holding `calibration.csv`: `runDir` or `runDir/fit`.
  static func calibrationDirectory(runDir: String) -> String? {
    [runDir, runDir + "/fit"].first { FileManager.default.fileExists(atPath: $0 + "/calibration.csv") }
  }

  /// Reads `calibration.csv` (columns predictor, decile, n, mean_predicted,
  /// observed, and `subset` when the file has it; rows without one are of
  /// the subset `all`).
  package static func readCalibration(path: String) throws -> [SVGPlot.CalibrationBin] {
    var cols = Columns()
    var out: [SVGPlot.CalibrationBin] = []
    try StrictCSV.read(
      path: path,
      header: { cols = try Columns($0, file: path, required: ["predictor", "decile", "n", "mean_predicted", "observed"]) },
      record: { line, f in
        let c = cols.index
        guard let d = Int(f[c["decile"]!]), let k = Int(f[c["n"]!]), k >= 0 else {
          throw TraceFormatError(file: path, line: line, field: "n", message: "not a count: '\(f[c["n"]!])'")
        }
        let p = try number(f[c["mean_predicted"]!], file: path, line: line, column: "mean_predicted")
        let o = try number(f[c["observed"]!], file: path, line: line, column: "observed")
        for (v, name) in [(p, "mean_predicted"), (o, "observed")] where v.map({ $0 < 0 || $0 > 1 }) ?? false {
          throw TraceFormatError(file: path, line: line, field: name, message: "not a probability in [0, 1]")
        }
        out.append(
          SVGPlot.CalibrationBin(
            predictor: f[c["predictor"]!], decile: d, count: k, meanPredicted: p, observed: o,
            subset: c["subset"].map { f[$0] } ?? "all"))
      })
    return out
  }

  /// The calibration chart of the fit report in `fitDir`, for one subset of
  /// the test points (`all` when the file has it, else its first), with
  /// that subset's Brier and AUC from `evaluation_overall.csv` when present.
  static func calibrationChart(fitDir: String, runDir: String) throws -> Chart {
    let bins = try readCalibration(path: fitDir + "/calibration.csv")
    let subset = bins.contains { $0.subset == "all" } ? "all" : bins.first?.subset ?? "all"
    var brier: [String: Double] = [:], auc: [String: Double] = [:]
    let overall = fitDir + "/evaluation_overall.csv"
    if FileManager.default.fileExists(atPath: overall) {
      var cols = Columns()
      try StrictCSV.read(
        path: overall, header: { cols = try Columns($0, file: overall, required: ["predictor", "brier", "auc"]) },
        record: { line, f in
          let c = cols.index
          guard (c["subset"].map { f[$0] } ?? "all") == subset else { return }
          let b = try number(f[c["brier"]!], file: overall, line: line, column: "brier")
          let a = try number(f[c["auc"]!], file: overall, line: line, column: "auc")
          brier[f[c["predictor"]!]] = b
          auc[f[c["predictor"]!]] = a
        })
    }
    let plot = SVGPlot.calibration(bins: bins.filter { $0.subset == subset }, brier: brier, auc: auc, subset: subset)
    return Chart(file: "calibration.svg", plot: plot)
  }
}
