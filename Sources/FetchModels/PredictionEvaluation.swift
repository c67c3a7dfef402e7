import FetchTraces
import Foundation

/// How a held-out window is scored (see ``PredictionEvaluation``).
package struct EvaluationOptions: Sendable, Equatable, Codable {
  /// Bin width and grid step, s (default 900: the habit model's bins).
  package var binSeconds: Double
  /// Horizon of the "will the user open the app soon" event, s (default 3600).
  package var horizonSeconds: Double
  /// Midpoint-rule piece for integrating the intensity, s (default 300, as
  /// ``OpenPredictor/probabilityOfOpen(within:from:clock:recency:step:)``).
  package var integrationStepSeconds: Double

  package init(binSeconds: Double = 900, horizonSeconds: Double = 3600, integrationStepSeconds: Double = 300) {
    precondition(binSeconds > 0 && binSeconds.isFinite, "binSeconds must be finite and > 0")
    precondition(horizonSeconds > 0 && horizonSeconds.isFinite, "horizonSeconds must be finite and > 0")
    precondition(integrationStepSeconds > 0 && integrationStepSeconds.isFinite, "integrationStepSeconds must be finite and > 0")
    self.binSeconds = binSeconds
    self.horizonSeconds = horizonSeconds
    self.integrationStepSeconds = integrationStepSeconds
  }

  enum CodingKeys: String, CodingKey {
    case binSeconds = "bin_s", horizonSeconds = "horizon_s", integrationStepSeconds = "integration_step_s"
  }
}

/// One row of a calibration table: the test points whose predicted
/// probability fell in one decile group.
package struct CalibrationRow: Sendable, Equatable {
  /// 0...9, lowest predictions first.
  package var decile: Int
  /// Test points in the group.
  package var count: Int
  /// Mean predicted probability (NaN when `count == 0`).
  package var meanPredicted: Double
  /// Observed frequency of the event (NaN when `count == 0`).
  package var observed: Double
}

/// Running scores of one predictor over any number of (user, app) test
/// windows, in constant memory: sums, plus a 1000-bin histogram of predicted
/// probabilities for the AUC and the calibration table.
///
/// Two families of scores:
///
/// - **Counts in bins.** For each bin with `k` opens and predicted mean
///   `μ = ∫ λ`, the Poisson log-likelihood `k·log μ − μ − log k!`; reported
///   per hour of test time (Σ log-lik / hours). Higher is better; the
///   difference between two predictors is a log-likelihood ratio per hour.
/// - **The event "≥ 1 open within the horizon".** For each test point with
///   predicted probability `p` and outcome `y ∈ {0, 1}`: the Brier score
///   `mean (p − y)²` (lower is better), the log loss
///   `mean −[y log p + (1 − y) log(1 − p)]` with `p` clipped to
///   [1e−12, 1 − 1e−12], the AUC, and a calibration table.
///
/// The AUC from the histogram treats predictions in the same 0.001-wide bin
/// as ties, so it is approximate to about 0.001; ``PredictionEvaluation``
/// also stores the exact rank AUC of a single window (``exactAUC``), which
/// ``merge(_:)`` drops.
package struct PredictionScore: Sendable, Equatable {
  /// Histogram resolution for the AUC and calibration.
  package static let histogramBins = 1000

  /// Bins scored for the Poisson log-likelihood.
  package private(set) var bins = 0
  /// Test time covered by those bins, s.
  package private(set) var binSeconds = 0.0
  /// Σ Poisson log-likelihood over bins, nats.
  package private(set) var logLikelihood = 0.0
  /// Opens counted in the bins.
  package private(set) var opens = 0
  /// Test points scored for the horizon event.
  package private(set) var points = 0
  /// Points whose outcome was 1.
  package private(set) var positives = 0
  /// Σ (p − y)².
  package private(set) var brierSum = 0.0
  /// Σ −log-probability of the outcome.
  package private(set) var logLossSum = 0.0
  /// Σ p.
  package private(set) var predictedSum = 0.0
  /// Exact rank AUC of one window, when known (see the type's docs).
  package internal(set) var exactAUC: Double?
  var histCount: [Int]
  var histPositives: [Int]
  var histPredicted: [Double]

  package init() {
    histCount = Array(repeating: 0, count: Self.histogramBins)
    histPositives = Array(repeating: 0, count: Self.histogramBins)
    histPredicted = Array(repeating: 0, count: Self.histogramBins)
  }

  /// Scores one bin with `count` opens against the predicted mean `mean`.
  /// A mean below 1e−12 (or NaN) counts as 1e−12, so a predictor that rules
  /// an open out pays a large but finite penalty.
  package mutating func addBin(count: Int, mean: Double, seconds: Double) {
    precondition(count >= 0, "a bin count is ≥ 0")
    let mu = mean.isNaN ? 1e-12 : max(mean, 1e-12)
    bins += 1
    binSeconds += seconds
    opens += count
    logLikelihood += PredictionScore.poissonLogPMF(count, mean: mu)
  }

  /// Scores one prediction `probability` of the horizon event against its
  /// outcome. The probability is clamped to [0, 1]; NaN counts as 0.5.
  package mutating func addPoint(probability: Double, outcome: Bool) {
    let p = probability.isNaN ? 0.5 : min(1, max(0, probability))
    let y = outcome ? 1.0 : 0.0
    points += 1
    if outcome { positives += 1 }
    brierSum += (p - y) * (p - y)
    let clipped = min(1 - 1e-12, max(1e-12, p))
    logLossSum -= outcome ? log(clipped) : log1p(-clipped)
    predictedSum += p
    let b = min(Self.histogramBins - 1, Int(p * Double(Self.histogramBins)))
    histCount[b] += 1
    if outcome { histPositives[b] += 1 }
    histPredicted[b] += p
    exactAUC = nil
  }

  /// Adds `other`'s sums and histogram; the exact AUC is dropped.
  package mutating func merge(_ other: PredictionScore) {
    bins += other.bins
    binSeconds += other.binSeconds
    logLikelihood += other.logLikelihood
    opens += other.opens
    points += other.points
    positives += other.positives
    brierSum += other.brierSum
    logLossSum += other.logLossSum
    predictedSum += other.predictedSum
    for i in 0..<Self.histogramBins {
      histCount[i] += other.histCount[i]
      histPositives[i] += other.histPositives[i]
      histPredicted[i] += other.histPredicted[i]
    }
    exactAUC = nil
  }

  /// Hours of test time scored.
  package var hours: Double { binSeconds / 3600 }

  /// Σ log-likelihood / hours (nats per hour); NaN with no bins.
  package var logLikelihoodPerHour: Double { binSeconds > 0 ? logLikelihood / hours : .nan }

  /// Mean (p − y)²; NaN with no points.
  package var brier: Double { points > 0 ? brierSum / Double(points) : .nan }

  /// Mean log loss, nats; NaN with no points.
  package var logLoss: Double { points > 0 ? logLossSum / Double(points) : .nan }

  /// Mean predicted probability; NaN with no points.
  package var meanPredicted: Double { points > 0 ? predictedSum / Double(points) : .nan }

  /// Share of points with outcome 1; NaN with no points.
  package var observedRate: Double { points > 0 ? Double(positives) / Double(points) : .nan }

  /// The exact AUC when known, else the histogram AUC (±0.001); NaN when
  /// only one class occurred.
  package var auc: Double { exactAUC ?? histogramAUC }

  /// AUC from the histogram, ties within a bin averaged: P(p₊ > p₋) + ½ P(tie).
  package var histogramAUC: Double {
    let pos = positives, neg = points - positives
    guard pos > 0, neg > 0 else { return .nan }
    var negBelow = 0.0, sum = 0.0
    for i in 0..<Self.histogramBins {
      let p = Double(histPositives[i]), n = Double(histCount[i] - histPositives[i])
      sum += p * (negBelow + n / 2)
      negBelow += n
    }
    return sum / (Double(pos) * Double(neg))
  }

  /// Calibration by deciles of the predicted probability: the histogram's
  /// bins, in increasing order, are grouped into 10 groups of about equal
  /// count (a bin goes to decile ⌊10 · (points below it + half its own) /
  /// points⌋), so predictions within 0.001 of each other stay together and
  /// a constant predictor fills one decile. Always 10 rows.
  package var calibration: [CalibrationRow] {
    var n = [Int](repeating: 0, count: 10)
    var pos = [Int](repeating: 0, count: 10)
    var sp = [Double](repeating: 0, count: 10)
    var below = 0
    for i in 0..<Self.histogramBins where histCount[i] > 0 {
      let mid = Double(below) + Double(histCount[i]) / 2
      let d = min(9, Int(10 * mid / Double(points)))
      n[d] += histCount[i]
      pos[d] += histPositives[i]
      sp[d] += histPredicted[i]
      below += histCount[i]
    }
    return (0..<10).map {
      CalibrationRow(
        decile: $0, count: n[$0], meanPredicted: n[$0] > 0 ? sp[$0] / Double(n[$0]) : .nan,
        observed: n[$0] > 0 ? Double(pos[$0]) / Double(n[$0]) : .nan)
    }
  }

  /// log P(K = k) for K ~ Poisson(mean).
  static func poissonLogPMF(_ k: Int, mean: Double) -> Double {
    let kd = Double(k)
    return (k == 0 ? 0 : kd * log(mean)) - mean - lgamma(kd + 1)
  }
}

/// Scores an ``OpenPredictor`` on a held-out window of one (user, app).
///
/// The grid: bin starts `t` at multiples of ``EvaluationOptions/binSeconds``
/// (Unix time; local quarter-hours for whole-quarter-hour offsets) with
/// `[t, t + bin] ⊆ [from, to]`. At each `t` the predictor sees the true
/// ``Recency`` from the trace's history (opens at times ≤ t, including those
/// before `from`) and, like a policy would, nothing after `t`:
///
/// 1. the bin's count of opens of the app in `(t, t + bin]` is scored against
///    `μ = ∫ λ` over the bin (midpoint rule on `integrationStepSeconds`
///    pieces, recency advanced as if no open happened);
/// 2. when `t + horizon ≤ to`, the event "≥ 1 open of the app in
///    `(t, t + horizon]`" is scored against
///    `p = probabilityOfOpen(within: horizon, …)`.
package enum PredictionEvaluation {
  /// Scores `predictor` on the opens of `app` in [`from`, `to`) of `trace`.
  /// The result's ``PredictionScore/exactAUC`` is the exact rank AUC.
  ///
  /// - Complexity: O(events + (to − from) / bin × horizon / step) intensity
  ///   evaluations, plus O(points log points) for the AUC.
  package static func evaluate<P: OpenPredictor>(
    _ predictor: P, trace: UserTrace, app: Int32, from: Double, to: Double,
    options: EvaluationOptions = EvaluationOptions()
  ) -> PredictionScore {
    evaluate(predictor, trace: trace, app: app, from: from, to: to, options: options, gaps: nil).all
  }

  /// As ``evaluate(_:trace:app:from:to:options:)``, and the same scores
  /// restricted to the bins and points outside logging gaps: a grid time `t`
  /// is dropped there when `(t, t + max(bin, horizon))` overlaps one of
  /// `gaps` (nil: no gaps, both scores equal).
  package static func evaluate<P: OpenPredictor>(
    _ predictor: P, trace: UserTrace, app: Int32, from: Double, to: Double,
    options: EvaluationOptions = EvaluationOptions(), gaps: LoggingGaps?
  ) -> (all: PredictionScore, outsideGaps: PredictionScore) {
    var appOpens: [Double] = [], anyOpens: [Double] = []
    for e in trace.events where e.kind == .open {
      anyOpens.append(e.time)
      if e.app == app { appOpens.append(e.time) }
    }
    var clock = LocalClock(trace.timeZone)
    var score = PredictionScore(), outside = PredictionScore()
    var predictions: [Double] = [], outcomes: [Bool] = []
    var outPredictions: [Double] = [], outOutcomes: [Bool] = []
    let bin = options.binSeconds, horizon = options.horizonSeconds, step = options.integrationStepSeconds
    var ia = 0, iany = 0
    var t = (from / bin).rounded(.up) * bin
    while t + bin <= to {
      while ia < appOpens.count && appOpens[ia] <= t { ia += 1 }
      while iany < anyOpens.count && anyOpens[iany] <= t { iany += 1 }
      let recency = Recency(
        sinceAppOpenS: ia > 0 ? t - appOpens[ia - 1] : .infinity,
        sinceAnyOpenS: iany > 0 ? t - anyOpens[iany - 1] : .infinity)
      let inGap = gaps?.overlaps(t, t + max(bin, horizon)) ?? false
      var j = ia
      while j < appOpens.count && appOpens[j] <= t + bin { j += 1 }
      let mu = integratedIntensity(predictor, from: t, length: bin, step: step, clock: &clock, recency: recency)
      score.addBin(count: j - ia, mean: mu, seconds: bin)
      if !inGap { outside.addBin(count: j - ia, mean: mu, seconds: bin) }
      if t + horizon <= to {
        let y = ia < appOpens.count && appOpens[ia] <= t + horizon
        let p = predictor.probabilityOfEvent(within: horizon, from: t, clock: &clock, recency: recency, step: step)
        score.addPoint(probability: p, outcome: y)
        predictions.append(score.histogramClamp(p))
        outcomes.append(y)
        if !inGap {
          outside.addPoint(probability: p, outcome: y)
          outPredictions.append(score.histogramClamp(p))
          outOutcomes.append(y)
        }
      }
      t += bin
    }
    score.exactAUC = auc(predictions: predictions, outcomes: outcomes)
    outside.exactAUC = auc(predictions: outPredictions, outcomes: outOutcomes)
    return (score, outside)
  }

  /// `∫ λ` over (`from`, `from + length`], midpoint rule on `step` pieces,
  /// recency advanced as if no open happened.
  package static func integratedIntensity<P: OpenPredictor>(
    _ predictor: P, from t: Double, length: Double, step: Double, clock: inout LocalClock, recency: Recency
  ) -> Double {
    var sum = 0.0, x = 0.0
    while x < length {
      let dt = min(step, length - x)
      let mid = x + dt / 2
      sum += predictor.intensity(at: t + mid, clock: &clock, recency: recency.advanced(by: mid)) * dt
      x += dt
    }
    return sum
  }

  /// Exact rank AUC (Mann–Whitney U / (P·N)) with tied predictions given
  /// their average rank; NaN when all outcomes are equal or there are none.
  ///
  /// - Complexity: O(n log n).
  package static func auc(predictions: [Double], outcomes: [Bool]) -> Double {
    precondition(predictions.count == outcomes.count, "one outcome per prediction")
    let n = predictions.count
    let pos = outcomes.reduce(0) { $0 + ($1 ? 1 : 0) }
    let neg = n - pos
    guard pos > 0, neg > 0 else { return .nan }
    let order = predictions.indices.sorted { predictions[$0] < predictions[$1] }
    var rankSumPos = 0.0
    var i = 0
    while i < n {
      var j = i
      while j + 1 < n && predictions[order[j + 1]] == predictions[order[i]] { j += 1 }
      let avgRank = Double(i + j) / 2 + 1
      for k in i...j where outcomes[order[k]] { rankSumPos += avgRank }
      i = j + 1
    }
    let p = Double(pos)
    return (rankSumPos - p * (p + 1) / 2) / (p * Double(neg))
  }
}

extension PredictionScore {
  /// The probability as ``addPoint(probability:outcome:)`` uses it.
  func histogramClamp(_ p: Double) -> Double { p.isNaN ? 0.5 : min(1, max(0, p)) }
}
