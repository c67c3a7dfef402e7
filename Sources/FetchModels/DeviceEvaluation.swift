import FetchTraces
import Foundation

/// The predictors a device target is scored with, in output order.
package enum DevicePredictor: String, CaseIterable, Sendable {
  /// The user's GLM (the population's when the user has no training points).
  case model
  /// The population GLM alone.
  case population
  /// The current state persists: P = 1 if the state now is the target
  /// state, else 0 (level: no change).
  case persistence
  /// The training frequency of the target given the current state
  /// (level: mean change given the state).
  case stateFrequency = "state_frequency"
  /// The training frequency of the target by local hour of day of `t`.
  case hourOfDay = "hour_of_day"
  /// The training frequency of the target (level: mean change).
  case constant
}

/// The empirical baselines of one target, fitted on a user's training
/// points. Frequencies are Beta-smoothed toward the user's overall
/// frequency with ``pseudoPoints`` pseudo-points (means likewise toward the
/// overall mean); the overall frequency is `(Σy + ½)/(n + 1)`.
package struct DeviceBaselines: Sendable, Equatable {
  /// Pseudo-points of the smoothing (default 4: one hour of a 15-min grid).
  package static let pseudoPoints = 4.0

  package let target: DeviceTarget
  package private(set) var overall: Double
  package private(set) var byHour: [Double]
  package private(set) var byState: [Double]

  package init(target: DeviceTarget, training: [DevicePoint]) {
    self.target = target
    let n = Double(training.count), sum = training.reduce(0) { $0 + $1.outcome }
    overall = target.isBinary ? (sum + 0.5) / (n + 1) : (n > 0 ? sum / n : 0)
    var hs = [Double](repeating: 0, count: 24), hn = [Double](repeating: 0, count: 24)
    var ss = [Double](repeating: 0, count: 3), sn = [Double](repeating: 0, count: 3)
    for p in training {
      hs[p.hour] += p.outcome
      hn[p.hour] += 1
      ss[min(2, p.state)] += p.outcome
      sn[min(2, p.state)] += 1
    }
    let k = Self.pseudoPoints, o = overall
    byHour = (0..<24).map { (hs[$0] + k * o) / (hn[$0] + k) }
    byState = (0..<3).map { (ss[$0] + k * o) / (sn[$0] + k) }
  }

  /// The prediction of a baseline `predictor` (not `model`/`population`) for `p`.
  package func predict(_ predictor: DevicePredictor, _ p: DevicePoint) -> Double {
    switch predictor {
    case .persistence:
      switch target {
      case .plugged: p.state == 1 ? 1 : 0
      case .wifi: p.state == DeviceTimeline.NetworkClass.wifi.rawValue ? 1 : 0
      case .offline: p.state == DeviceTimeline.NetworkClass.offline.rawValue ? 1 : 0
      case .level: 0
      }
    case .stateFrequency: byState[min(2, p.state)]
    case .hourOfDay: byHour[p.hour]
    case .constant, .model, .population: overall
    }
  }
}

/// Errors of a real-valued prediction: count, Σ|e|, Σe², Σe with
/// e = predicted − observed.
package struct ErrorScore: Sendable, Equatable {
  package private(set) var count = 0
  package private(set) var absSum = 0.0
  package private(set) var squareSum = 0.0
  package private(set) var sum = 0.0

  package init() {}

  package mutating func add(predicted: Double, observed: Double) {
    let e = predicted - observed
    count += 1
    absSum += abs(e)
    squareSum += e * e
    sum += e
  }

  package mutating func merge(_ o: ErrorScore) {
    count += o.count
    absSum += o.absSum
    squareSum += o.squareSum
    sum += o.sum
  }

  /// Mean absolute error; NaN when empty.
  package var mae: Double { count > 0 ? absSum / Double(count) : .nan }
  /// Root mean squared error; NaN when empty.
  package var rmse: Double { count > 0 ? (squareSum / Double(count)).squareRoot() : .nan }
  /// Mean error (bias); NaN when empty.
  package var bias: Double { count > 0 ? sum / Double(count) : .nan }
}

/// One user's device-model scores on the test window.
package struct DeviceEvaluation: Sendable {
  /// Per binary target, one score per ``DevicePredictor`` (in order), each
  /// with its exact rank AUC; absent when the target had no test point or
  /// no model.
  package var binary: [DeviceTarget: [PredictionScore]] = [:]
  /// Level-change errors, one per ``DevicePredictor``; nil as above.
  package var level: [ErrorScore]?

  package init() {}

  /// Scores `user` (falling back to `population`) and the baselines fitted
  /// on `training` on the `test` points of each target.
  ///
  /// - Complexity: O(points · features + points log points).
  package static func evaluate(
    training: [DeviceTarget: [DevicePoint]], test: [DeviceTarget: [DevicePoint]], user: DeviceModels,
    population: DeviceModels
  ) -> DeviceEvaluation {
    var out = DeviceEvaluation()
    for target in DeviceTarget.allCases {
      guard let points = test[target], !points.isEmpty, let pop = population[target] else { continue }
      let mine = user[target] ?? pop
      let base = DeviceBaselines(target: target, training: training[target] ?? [])
      func predict(_ k: DevicePredictor, _ p: DevicePoint) -> Double {
        switch k {
        case .model: mine.predict(p.features)
        case .population: pop.predict(p.features)
        default: base.predict(k, p)
        }
      }
      if target.isBinary {
        var scores: [PredictionScore] = []
        let outcomes = points.map { $0.outcome > 0.5 }
        for k in DevicePredictor.allCases {
          var s = PredictionScore()
          var predictions: [Double] = []
          predictions.reserveCapacity(points.count)
          for (p, y) in zip(points, outcomes) {
            let q = predict(k, p)
            s.addPoint(probability: q, outcome: y)
            predictions.append(s.histogramClamp(q))
          }
          s.exactAUC = PredictionEvaluation.auc(predictions: predictions, outcomes: outcomes)
          scores.append(s)
        }
        out.binary[target] = scores
      } else {
        out.level = DevicePredictor.allCases.map { k in
          var e = ErrorScore()
          for p in points { e.add(predicted: predict(k, p), observed: p.outcome) }
          return e
        }
      }
    }
    return out
  }
}
