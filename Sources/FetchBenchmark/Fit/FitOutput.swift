import FetchModels
import FetchSupport
import FetchTraces
import Foundation

/// Ten calibration rows of `s`, each prefixed by `key`.
func calibrationRows(_ key: [String], _ s: PredictionScore) -> String {
  s.calibration.map { r in
    CSV.line(
      key + [
        String(r.decile), String(r.count),
        r.count > 0 ? CSV.number(r.meanPredicted, decimals: 6) : "",
        r.count > 0 ? CSV.number(r.observed, decimals: 6) : "",
      ])
  }.joined()
}

/// The score columns shared by `evaluation.csv` and `evaluation_overall.csv`.
enum ScoreColumn: String, CaseIterable {
  case testOpens = "test_opens"
  case testHours = "test_h"
  case logLikPerHour = "loglik_nats_per_h"
  case points
  case positives
  case brier
  case auc
  case logLoss = "log_loss_nats"
  case meanPredicted = "mean_predicted"
  case observedRate = "observed_rate"

  func value(_ s: PredictionScore) -> String {
    switch self {
    case .testOpens: String(s.opens)
    case .testHours: CSV.number(s.hours, decimals: 4)
    case .logLikPerHour: CSV.number(s.logLikelihoodPerHour, decimals: 6)
    case .points: String(s.points)
    case .positives: String(s.positives)
    case .brier: CSV.number(s.brier, decimals: 6)
    case .auc: CSV.number(s.auc, decimals: 6)
    case .logLoss: CSV.number(s.logLoss, decimals: 6)
    case .meanPredicted: CSV.number(s.meanPredicted, decimals: 6)
    case .observedRate: CSV.number(s.observedRate, decimals: 6)
    }
  }

  static func values(_ s: PredictionScore) -> [String] { allCases.map { $0.value(s) } }
}

/// Columns of `evaluation.csv`: one row per (user, app, predictor, subset).
enum EvaluationColumn {
  static let names = ["user", "app", "predictor", "subset", "train_opens"] + ScoreColumn.allCases.map(\.rawValue)

  static func row(
    user: String, app: String, predictor: String, subset: FitSubset, trainOpens: Int, score s: PredictionScore
  ) -> String {
    ([CSV.field(user), CSV.field(app), predictor, subset.rawValue, String(trainOpens)] + ScoreColumn.values(s))
      .joined(separator: ",") + "\n"
  }
}

/// Columns of `evaluation_overall.csv`: one row per (predictor, subset), all
/// test points pooled (AUC from the histogram, ±0.001), and the pairs where
/// the habit model beats the predictor on Brier and on AUC.
enum OverallColumn {
  static let names =
    ["predictor", "subset", "pairs"] + ScoreColumn.allCases.map(\.rawValue)
    + ["habit_wins_brier", "pairs_brier", "habit_wins_auc", "pairs_auc"]

  static func row(predictor: String, subset: FitSubset, pairs: Int, score s: PredictionScore, wins w: Wins) -> String {
    ([predictor, subset.rawValue, String(pairs)] + ScoreColumn.values(s)
      + [String(w.brierWins), String(w.brierCompared), String(w.aucWins), String(w.aucCompared)])
      .joined(separator: ",") + "\n"
  }
}

/// The order device scores are written and printed in: the test points
/// the logger covered first, then all of them.
let deviceSubsets: [FitSubset] = [.outsideGaps, .all]

/// Columns of `device_evaluation.csv` (one row per user, subset, target
/// and predictor; binary targets fill the probability scores, the level
/// target the error columns).
enum DeviceEvaluationColumn {
  static let scoreNames = [
    "points", "positives", "brier", "auc", "log_loss_nats", "mean_predicted", "observed_rate", "mae", "rmse", "bias",
  ]
  static let names = ["user", "subset", "target", "predictor"] + scoreNames

  static func values(_ s: PredictionScore) -> [String] {
    [
      String(s.points), String(s.positives), CSV.number(s.brier, decimals: 6), CSV.number(s.auc, decimals: 6),
      CSV.number(s.logLoss, decimals: 6), CSV.number(s.meanPredicted, decimals: 6),
      CSV.number(s.observedRate, decimals: 6), "", "", "",
    ]
  }

  static func values(_ e: ErrorScore) -> [String] {
    [
      String(e.count), "", "", "", "", "", "", CSV.number(e.mae, decimals: 6), CSV.number(e.rmse, decimals: 6),
      CSV.number(e.bias, decimals: 6),
    ]
  }

  /// One user's rows; `e` has one evaluation per ``FitSubset`` (by index).
  static func rows(user: String, _ e: [DeviceEvaluation]) -> String {
    var out = ""
    for subset in deviceSubsets {
      let d = e[subset.index]
      for target in DeviceTarget.allCases {
        let key = [CSV.field(user), subset.rawValue, target.rawValue]
        if let scores = d.binary[target] {
          for (i, s) in scores.enumerated() { out += CSV.line(key + [DevicePredictor.allCases[i].rawValue] + values(s)) }
        } else if target == .level, let l = d.level {
          for (i, x) in l.enumerated() { out += CSV.line(key + [DevicePredictor.allCases[i].rawValue] + values(x)) }
        }
      }
    }
    return out
  }
}

/// Columns of `device_evaluation_overall.csv`: pooled scores per (subset,
/// target, predictor) and the users where the user model beats the
/// predictor (Brier and AUC; level target: mean absolute error in the
/// Brier columns).
enum DeviceOverallColumn {
  static let names =
    ["subset", "target", "predictor", "users"] + DeviceEvaluationColumn.scoreNames
    + ["model_wins_brier_or_mae", "users_brier_or_mae", "model_wins_auc", "users_auc"]

  static func rows(_ totals: DeviceTotals) -> String {
    var out = ""
    for subset in deviceSubsets {
      let t = totals.subsets[subset.index]
      for target in DeviceTarget.allCases {
        if let scores = t.binary[target], let wins = t.binaryWins[target] {
          for (i, s) in scores.enumerated() {
            out += CSV.line(
              [subset.rawValue, target.rawValue, DevicePredictor.allCases[i].rawValue, String(t.binaryUsers[target] ?? 0)]
                + DeviceEvaluationColumn.values(s) + winValues(wins[i]))
          }
        } else if target == .level, let l = t.level {
          for (i, e) in l.enumerated() {
            out += CSV.line(
              [subset.rawValue, target.rawValue, DevicePredictor.allCases[i].rawValue, String(t.levelUsers)]
                + DeviceEvaluationColumn.values(e) + winValues(t.levelWins[i]))
          }
        }
      }
    }
    return out
  }

  /// The calibration rows of every binary target, subset and predictor.
  static func calibration(_ totals: DeviceTotals) -> String {
    var out = ""
    for subset in deviceSubsets {
      for target in DeviceTarget.allCases where target.isBinary {
        guard let scores = totals.subsets[subset.index].binary[target] else { continue }
        for (i, s) in scores.enumerated() {
          out += calibrationRows([subset.rawValue, target.rawValue, DevicePredictor.allCases[i].rawValue], s)
        }
      }
    }
    return out
  }

  static func winValues(_ w: Wins) -> [String] {
    [String(w.brierWins), String(w.brierCompared), String(w.aucWins), String(w.aucCompared)]
  }
}

/// The overall comparison printed by `fit`.
enum FitTable {
  static func render(_ totals: HabitTotals, pairs: Int) -> String {
    let header = [
      "predictor", "subset", "pairs", "test h", "opens", "loglik/h", "Brier", "AUC", "log loss", "habit wins Brier",
      "habit wins AUC",
    ]
    var rows: [[String]] = []
    for subset in FitSubset.allCases {
      let k = subset.index
      for (i, s) in totals.overall[k].enumerated() {
        let w = totals.wins[k][i]
        let isHabit = FitPredictor.allCases[i] == .habit
        rows.append([
          FitPredictor.allCases[i].rawValue, subset.rawValue, String(pairs), fixed(s.hours, 0), String(s.opens),
          fixed(s.logLikelihoodPerHour, 4), fixed(s.brier, 4), fixed(s.auc, 4), fixed(s.logLoss, 4),
          isHabit ? "" : "\(w.brierWins)/\(w.brierCompared)", isHabit ? "" : "\(w.aucWins)/\(w.aucCompared)",
        ])
      }
    }
    var out = table(header, rows)
    let habit = totals.overall[0][FitPredictor.allCases.firstIndex(of: .habit)!]
    let hod = totals.overall[0][FitPredictor.allCases.firstIndex(of: .hourOfDay)!]
    let dLL = habit.logLikelihoodPerHour - hod.logLikelihoodPerHour
    func pct(_ x: Double) -> String { (x >= 0 ? "+" : "") + fixed(100 * x, 1) + " %" }
    out += "habit vs hour_of_day: log-lik \(dLL >= 0 ? "+" : "")\(fixed(dLL, 4)) nats/h (\(pct(dLL / abs(hod.logLikelihoodPerHour))))"
    out += ", Brier \(pct(habit.brier / hod.brier - 1)), log loss \(pct(habit.logLoss / hod.logLoss - 1))"
    out += ", AUC \(habit.auc - hod.auc >= 0 ? "+" : "")\(fixed(habit.auc - hod.auc, 4))\n"
    let outside = totals.overall[1][0]
    if habit.points > 0 {
      out += "outside logging gaps (≥ 24 h without any row): \(outside.points) of \(habit.points) test points\n"
    }
    return out
  }

  /// Right-aligned columns (the first left-aligned).
  static func table(_ header: [String], _ rows: [[String]]) -> String {
    let widths = header.indices.map { c in ([header[c]] + rows.map { $0[c] }).map(\.count).max() ?? 0 }
    func line(_ cells: [String]) -> String {
      cells.enumerated().map { c, s in
        let pad = String(repeating: " ", count: widths[c] - s.count)
        return c == 0 ? s + pad : pad + s
      }.joined(separator: "  ") + "\n"
    }
    return line(header) + rows.map(line).joined()
  }

  /// `x` with exactly `d` decimals (d ≤ 4), locale-independent.
  static func fixed(_ x: Double, _ d: Int) -> String {
    guard x.isFinite else { return CSV.number(x) }
    var p = 1.0
    for _ in 0..<d { p *= 10 }
    let scaled = (abs(x) * p).rounded()
    let negative = x < 0 && scaled > 0
    var digits = String(Int64(scaled))
    if d > 0 {
      if digits.count <= d { digits = String(repeating: "0", count: d - digits.count + 1) + digits }
      digits.insert(".", at: digits.index(digits.endIndex, offsetBy: -d))
    }
    return (negative ? "-" : "") + digits
  }
}

/// The device-model comparison printed by `fit`.
enum DeviceTable {
  static func render(_ totals: DeviceTotals) -> String {
    guard totals.users > 0 else {
      return "device models: no user has charging, network or battery rows in both windows\n"
    }
    let header = [
      "target", "predictor", "subset", "users", "points", "Brier|MAE", "AUC", "log loss", "model wins Brier|MAE",
      "model wins AUC",
    ]
    var rows: [[String]] = []
    for target in DeviceTarget.allCases {
      for subset in deviceSubsets { rows += self.rows(target, subset, totals.subsets[subset.index]) }
    }
    var out = "device models (level_change: mean absolute error, percentage points):\n" + FitTable.table(header, rows)
    let points = { (k: FitSubset) in
      totals.subsets[k.index].binary.values.reduce(0) { $0 + ($1.first?.points ?? 0) }
    }
    out += "outside logging gaps (≥ 24 h without any row): \(points(.outsideGaps)) of \(points(.all)) binary test points\n"
    return out
  }

  /// The table rows of one target and subset.
  static func rows(_ target: DeviceTarget, _ subset: FitSubset, _ t: DeviceSubsetTotals) -> [[String]] {
    var rows: [[String]] = []
    if let scores = t.binary[target], let wins = t.binaryWins[target] {
      for (i, s) in scores.enumerated() {
        let isModel = i == 0
        rows.append([
          target.rawValue, DevicePredictor.allCases[i].rawValue, subset.rawValue, String(t.binaryUsers[target] ?? 0),
          String(s.points), FitTable.fixed(s.brier, 4), FitTable.fixed(s.auc, 4), FitTable.fixed(s.logLoss, 4),
          isModel ? "" : "\(wins[i].brierWins)/\(wins[i].brierCompared)",
          isModel ? "" : "\(wins[i].aucWins)/\(wins[i].aucCompared)",
        ])
      }
    } else if target == .level, let l = t.level {
      for (i, e) in l.enumerated() {
        let w = t.levelWins[i]
        rows.append([
          target.rawValue, DevicePredictor.allCases[i].rawValue, subset.rawValue, String(t.levelUsers), String(e.count),
          FitTable.fixed(e.mae, 4), "", "", i == 0 ? "" : "\(w.brierWins)/\(w.brierCompared)", "",
        ])
      }
    }
    return rows
  }
}
