import FetchSupport
import FetchTraces
import Foundation
import Testing

@testable import FetchModels

/// 2026-01-01 00:00 UTC, a Thursday.
let simStart = 1_767_225_600.0

/// Opens of app 0 from an inhomogeneous Poisson process with the given
/// opens per hour for each local (UTC) hour of day, by thinning.
func simulatedTrace(ratesPerHour: [Double], days: Int, seed: UInt64, start: Double = simStart) -> UserTrace {
  var rng = SplitMix64(seed: seed)
  let end = start + Double(days) * 86_400
  let top = ratesPerHour.max()! / 3600
  var t = start
  var events: [TraceEvent] = []
  while true {
    t += rng.exponential(rate: top)
    if t >= end { break }
    let h = Int((t - start).truncatingRemainder(dividingBy: 86_400) / 3600)
    if rng.uniform() * top < ratesPerHour[h] / 3600 {
      events.append(TraceEvent(time: t, kind: .open, app: 0, value: 30))
    }
  }
  return UserTrace(user: "sim", timeZone: .utc, start: start, end: end, apps: ["app"], events: events)
}

/// A diurnal profile between 0.3 and 3 opens per hour.
let diurnalPerHour: [Double] = (0..<24).map { 1.65 - 1.35 * cos(2 * Double.pi * (Double($0) - 2) / 24) }

@Suite("Prediction evaluation and baselines")
struct PredictionEvaluationTests {
  @Test("AUC: 1 for a perfect ranking, 0.5 for a constant one, ties averaged, NaN with one class")
  func aucBasics() {
    #expect(PredictionEvaluation.auc(predictions: [0.1, 0.2, 0.8, 0.9], outcomes: [false, false, true, true]) == 1)
    #expect(PredictionEvaluation.auc(predictions: [0.9, 0.8, 0.2, 0.1], outcomes: [false, false, true, true]) == 0)
    #expect(PredictionEvaluation.auc(predictions: [0.3, 0.3, 0.3, 0.3], outcomes: [false, true, false, true]) == 0.5)
    // One tie between a positive and a negative: (1 + 1 + 0.5 + 1) / 4.
    #expect(PredictionEvaluation.auc(predictions: [0.1, 0.5, 0.5, 0.9], outcomes: [false, false, true, true]) == 0.875)
    #expect(PredictionEvaluation.auc(predictions: [0.1, 0.2], outcomes: [true, true]).isNaN)
    #expect(PredictionEvaluation.auc(predictions: [], outcomes: []).isNaN)

    var perfect = PredictionScore(), constant = PredictionScore()
    for i in 0..<1000 {
      let y = i % 3 == 0
      perfect.addPoint(probability: y ? 0.8 : 0.2, outcome: y)
      constant.addPoint(probability: 0.37, outcome: y)
    }
    #expect(perfect.histogramAUC == 1)
    #expect(constant.histogramAUC == 0.5)
    #expect(PredictionScore().auc.isNaN)
    #expect(PredictionScore().brier.isNaN && PredictionScore().logLikelihoodPerHour.isNaN)
  }

  @Test("histogram AUC agrees with the exact rank AUC to 0.001")
  func histogramAUC() {
    var rng = SplitMix64(seed: 7)
    var score = PredictionScore()
    var ps: [Double] = [], ys: [Bool] = []
    for _ in 0..<20_000 {
      let p = rng.uniform()
      let y = rng.uniform() < p * p
      score.addPoint(probability: p, outcome: y)
      ps.append(p)
      ys.append(y)
    }
    let exact = PredictionEvaluation.auc(predictions: ps, outcomes: ys)
    #expect(abs(score.histogramAUC - exact) < 0.001)
  }

  @Test("Brier of the true probability on Bernoulli data ≈ p(1 − p); log loss ≈ entropy", arguments: [0.05, 0.3, 0.5])
  func brierOfTruth(p: Double) {
    var rng = SplitMix64(seed: 11)
    var score = PredictionScore()
    for _ in 0..<200_000 { score.addPoint(probability: p, outcome: rng.uniform() < p) }
    #expect(abs(score.brier - p * (1 - p)) < 0.004)
    let entropy = -(p * log(p) + (1 - p) * log(1 - p))
    #expect(abs(score.logLoss - entropy) < 0.01)
    #expect(abs(score.meanPredicted - p) < 1e-9)
  }

  @Test("calibration of a well-specified model lies near the diagonal")
  func calibration() {
    let trace = simulatedTrace(ratesPerHour: diurnalPerHour, days: 400, seed: 3)
    let truth = HourOfDayBaseline(ratesPerSecond: diurnalPerHour.map { $0 / 3600 })
    let score = PredictionEvaluation.evaluate(truth, trace: trace, app: 0, from: trace.start, to: trace.end)
    let rows = score.calibration
    #expect(rows.count == 10)
    #expect(rows.map(\.count).reduce(0, +) == score.points)
    for r in rows where r.count > 0 {
      #expect(r.count > score.points / 20, "deciles should be roughly equal: \(rows)")
      #expect(abs(r.observed - r.meanPredicted) < 0.06, "decile \(r.decile): \(r)")
    }
    #expect(abs(score.observedRate - score.meanPredicted) < 0.02)
    #expect(rows.first!.meanPredicted < 0.4 && rows.last!.meanPredicted > 0.85)
  }

  @Test("the hour-of-day baseline recovers a known hourly profile")
  func hourOfDayRecovers() {
    let trace = simulatedTrace(ratesPerHour: diurnalPerHour, days: 300, seed: 5)
    let fitted = HourOfDayBaseline(fitting: trace, app: 0, from: trace.start, to: trace.end)
    for h in 0..<24 {
      let perHour = fitted.ratesPerSecond[h] * 3600
      #expect(abs(perHour - diurnalPerHour[h]) / diurnalPerHour[h] < 0.25, "hour \(h): \(perHour) vs \(diurnalPerHour[h])")
    }
    // The total rate is preserved by the smoothing over whole days.
    let opens = Double(trace.events.count)
    let total = fitted.ratesPerSecond.reduce(0, +) * 3600 * 300
    #expect(abs(total - opens) / opens < 0.01)
    // The constant baseline is the mean rate.
    let constant = ConstantBaseline(fitting: trace, app: 0, from: trace.start, to: trace.end)
    #expect(abs(constant.ratePerSecond * (trace.end - trace.start) - opens) < 1e-6 * opens)
  }

  @Test("Laplace smoothing keeps empty hours positive and a pair without opens finite")
  func smoothing() {
    // Opens only at 08:xx on 10 days.
    var events: [TraceEvent] = []
    for d in 0..<10 { events.append(TraceEvent(time: simStart + Double(d) * 86_400 + 8.5 * 3600, kind: .open, app: 0, value: 5)) }
    let trace = UserTrace(user: "u", start: simStart, end: simStart + 10 * 86_400, apps: ["a", "b"], events: events)
    let a = HourOfDayBaseline(fitting: trace, app: 0, from: trace.start, to: trace.end)
    #expect(a.ratesPerSecond[8] > 5 * a.ratesPerSecond[3])
    #expect(a.ratesPerSecond[3] > 0)
    // Laplace over whole days: p_h = (n_h + 1) / (N + 24), rate = p_h · N / days.
    #expect(a.ratesPerSecond[8].nearlyEquals((11.0 / 34) * 1 / 3600, relativeTolerance: 1e-9))
    let b = HourOfDayBaseline(fitting: trace, app: 1, from: trace.start, to: trace.end)
    #expect(b.ratesPerSecond.allSatisfy { $0 > 0 && $0.isFinite })
    let score = PredictionEvaluation.evaluate(b, trace: trace, app: 1, from: trace.start, to: trace.end)
    #expect(score.logLikelihoodPerHour.isFinite)
    #expect(score.positives == 0 && score.auc.isNaN)
  }

  @Test("last-seen-hour: a daily habit gives a high near rate and a low elsewhere rate")
  func lastSeenHour() {
    var events: [TraceEvent] = []
    for d in 0..<30 { events.append(TraceEvent(time: simStart + Double(d) * 86_400 + 7.9 * 3600, kind: .open, app: 0, value: 5)) }
    let trace = UserTrace(user: "u", start: simStart, end: simStart + 30 * 86_400, apps: ["a"], events: events)
    let m = LastSeenHourBaseline(fitting: trace, app: 0, from: trace.start, to: trace.end)
    // 29 of the 30 opens are near the previous open's hour; near time ≈ 2 h a
    // day: (29 + 1) / (58 h + 24 h of pseudo-exposure at the overall 1/day).
    #expect(abs(m.nearRatePerSecond * 3600 - 30.0 / 82) < 0.01)
    #expect(m.elsewhereRatePerSecond * 3600 < 0.01)
    var clock = LocalClock(.utc)
    let t = simStart + 40 * 86_400 + 8 * 3600
    let near = m.intensity(at: t, clock: &clock, recency: Recency(sinceAppOpenS: 86_400, sinceAnyOpenS: 60))
    let far = m.intensity(at: t + 6 * 3600, clock: &clock, recency: Recency(sinceAppOpenS: 86_400 + 6 * 3600, sinceAnyOpenS: 60))
    let never = m.intensity(at: t, clock: &clock, recency: Recency(sinceAppOpenS: .infinity, sinceAnyOpenS: .infinity))
    #expect(near == m.nearRatePerSecond && far == m.elsewhereRatePerSecond && never == m.elsewhereRatePerSecond)
    // Wrap-around midnight: 23:30 is within 1 h of 00:10.
    #expect(LastSeenHourBaseline.circularHours(23.5, 0.2).nearlyEquals(0.7, relativeTolerance: 1e-12))
    // It beats the constant rate on a held-out month of the same habit.
    var test: [TraceEvent] = events
    for d in 30..<60 { test.append(TraceEvent(time: simStart + Double(d) * 86_400 + 7.9 * 3600, kind: .open, app: 0, value: 5)) }
    let full = UserTrace(user: "u", start: simStart, end: simStart + 60 * 86_400, apps: ["a"], events: test)
    let c = ConstantBaseline(fitting: trace, app: 0, from: trace.start, to: trace.end)
    let sm = PredictionEvaluation.evaluate(m, trace: full, app: 0, from: trace.end, to: full.end)
    let sc = PredictionEvaluation.evaluate(c, trace: full, app: 0, from: trace.end, to: full.end)
    #expect(sm.logLikelihoodPerHour > sc.logLikelihoodPerHour)
    #expect(sm.auc > 0.9 && sc.auc == 0.5)
  }

  @Test("log-likelihood, Brier and AUC of the true model beat a wrong constant model")
  func truthBeatsConstant() {
    let trace = simulatedTrace(ratesPerHour: diurnalPerHour, days: 120, seed: 9)
    let split = trace.start + 60 * 86_400
    let truth = HourOfDayBaseline(ratesPerSecond: diurnalPerHour.map { $0 / 3600 })
    let constant = ConstantBaseline(fitting: trace, app: 0, from: trace.start, to: split)
    let fitted = HourOfDayBaseline(fitting: trace, app: 0, from: trace.start, to: split)
    let st = PredictionEvaluation.evaluate(truth, trace: trace, app: 0, from: split, to: trace.end)
    let sc = PredictionEvaluation.evaluate(constant, trace: trace, app: 0, from: split, to: trace.end)
    let sf = PredictionEvaluation.evaluate(fitted, trace: trace, app: 0, from: split, to: trace.end)
    #expect(st.logLikelihoodPerHour > sc.logLikelihoodPerHour + 0.05)
    #expect(st.brier < sc.brier && st.logLoss < sc.logLoss && st.auc > sc.auc + 0.1)
    #expect(sf.logLikelihoodPerHour > sc.logLikelihoodPerHour && sf.logLikelihoodPerHour <= st.logLikelihoodPerHour + 0.01)
    // 60 days of 15-min bins, and horizon points up to an hour before the end.
    #expect(st.bins == 60 * 96 && st.points == 60 * 96 - 3)
    #expect(st.hours == 60 * 24)
    #expect(st.opens == trace.events.filter { $0.time > split }.count)
  }

  @Test("the grid is aligned, the predictor sees only the past, and merging adds up")
  func gridAndMerge() {
    struct Spy: OpenPredictor {
      let opens: [Double]
      func intensity(at t: Double, clock: inout LocalClock, recency: Recency) -> Double {
        // The last open the predictor is told of is never after t.
        if recency.sinceAppOpenS.isFinite { precondition(recency.sinceAppOpenS >= 0) }
        return 1.0 / 3600
      }
    }
    let events = [simStart + 100, simStart + 900, simStart + 1000].map { TraceEvent(time: $0, kind: .open, app: 0, value: 1) }
    let trace = UserTrace(user: "u", start: simStart + 50, end: simStart + 3 * 3600, apps: ["a"], events: events)
    let s = PredictionEvaluation.evaluate(Spy(opens: []), trace: trace, app: 0, from: trace.start, to: trace.end)
    // Bins start at 900, 1800, …, 9900 (the first whole grid bin after from).
    #expect(s.bins == 11)
    // The open at exactly 900 is history for the bin starting at 900.
    #expect(s.opens == 1)
    #expect(s.points == 8)
    var merged = PredictionScore()
    merged.merge(s)
    merged.merge(s)
    #expect(merged.bins == 22 && merged.points == 16 && merged.exactAUC == nil)
    #expect(merged.logLikelihood.nearlyEquals(2 * s.logLikelihood, relativeTolerance: 1e-12))
    // An empty window scores nothing.
    let e = PredictionEvaluation.evaluate(Spy(opens: []), trace: trace, app: 0, from: trace.start, to: trace.start + 100)
    #expect(e.bins == 0 && e.points == 0 && e.brier.isNaN && e.auc.isNaN)
  }

  @Test("Poisson log-likelihood per bin matches the closed form")
  func poissonLogPMF() {
    #expect(PredictionScore.poissonLogPMF(0, mean: 0.5).nearlyEquals(-0.5, relativeTolerance: 1e-12))
    #expect(PredictionScore.poissonLogPMF(3, mean: 2).nearlyEquals(3 * log(2.0) - 2 - log(6.0), relativeTolerance: 1e-12))
    var s = PredictionScore()
    s.addBin(count: 2, mean: 0, seconds: 900)
    #expect(s.logLikelihood.isFinite && s.logLikelihood < -40)
  }
}

extension Double {
  fileprivate func nearlyEquals(_ other: Double, relativeTolerance: Double) -> Bool {
    self == other || abs(self - other) <= relativeTolerance * Swift.max(abs(self), abs(other))
  }
}
