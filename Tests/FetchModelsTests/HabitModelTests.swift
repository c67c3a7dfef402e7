import FetchSupport
import FetchTraces
import Foundation
import Testing

@testable import FetchModels

/// Monday 2026-01-05 00:00 UTC.
private let monday = 1_767_571_200.0

/// A trace whose app 0 ("habit") is opened as an inhomogeneous Poisson process
/// with `opensPerDay · profile(h) / profileMean` per day at local hour h (by
/// thinning), and app 1 ("other") at a constant `otherPerDay`.
private func habitTrace(
  user: String, days: Double, timeZone: TraceTimeZone = .fixed(7200), seed: UInt64,
  opensPerDay: Double, profile: (Double) -> Double, profileMax: Double, profileMean: Double,
  otherPerDay: Double = 10
) -> UserTrace {
  var rng = SplitMix64(seed: seed, keys: "habit-test", user)
  var clock = LocalClock(timeZone)
  let end = monday + days * 86_400
  var events: [TraceEvent] = []
  let peakRate = opensPerDay / 86_400 * profileMax / profileMean
  var t = monday + rng.exponential(rate: peakRate)
  while t < end {
    let rate = opensPerDay / 86_400 * profile(clock.hourOfDay(t)) / profileMean
    if rng.uniform() * peakRate < rate { events.append(TraceEvent(time: t, kind: .open, app: 0, value: 30)) }
    t += rng.exponential(rate: peakRate)
  }
  if otherPerDay > 0 {
    t = monday + rng.exponential(rate: otherPerDay / 86_400)
    while t < end {
      events.append(TraceEvent(time: t, kind: .open, app: 1, value: 30))
      t += rng.exponential(rate: otherPerDay / 86_400)
    }
  }
  events.sort { $0.time < $1.time }
  let trace = UserTrace(
    user: user, timeZone: timeZone, start: monday, end: end, apps: ["habit", "other"], events: events)
  trace._checkInvariants()
  return trace
}

/// exp(a · cos(2π(h − peak)/24)): a log-linear profile the model can represent.
private func vonMises(peak: Double, a: Double = 1) -> (Double) -> Double {
  { h in exp(a * cos(2 * Double.pi * (h - peak) / 24)) }
}

/// Mean of exp(a cos θ) over a period: the modified Bessel function I₀(a).
private func besselI0(_ a: Double) -> Double {
  let n = 10_000
  var sum = 0.0
  for k in 0..<n {
    let theta = 2 * Double.pi * (Double(k) + 0.5) / Double(n)
    sum += exp(a * cos(theta))
  }
  return sum / Double(n)
}

/// The hour-of-day coefficients (sin1, cos1) of a von Mises profile peaking at `peak`.
private func vonMisesCoefficients(peak: Double, a: Double = 1) -> (Double, Double) {
  (a * sin(2 * Double.pi * peak / 24), a * cos(2 * Double.pi * peak / 24))
}

private func pearson(_ a: [Double], _ b: [Double]) -> Double {
  let ma = a.reduce(0, +) / Double(a.count), mb = b.reduce(0, +) / Double(b.count)
  var sab = 0.0, saa = 0.0, sbb = 0.0
  for (x, y) in zip(a, b) {
    sab += (x - ma) * (y - mb)
    saa += (x - ma) * (x - ma)
    sbb += (y - mb) * (y - mb)
  }
  return sab / (saa * sbb).squareRoot()
}

/// Euclidean distance over the hour-of-day coefficients (indices 1...6).
private func hourDistance(_ a: [Double], _ b: [Double]) -> Double {
  (1...6).reduce(0.0) { $0 + ($1 < a.count ? (a[$1] - b[$1]) * (a[$1] - b[$1]) : 0) }.squareRoot()
}

/// Every prediction of `model` is finite, ≥ 0, and its open probabilities in [0, 1].
private func expectSane(_ model: HabitModel, _ label: String) {
  #expect(model.coefficients.count == HabitModel.featureNames.count, "\(label)")
  #expect(model.coefficients.allSatisfy { $0.isFinite }, "\(label): \(model.coefficients)")
  #expect(model.diagnostics.deviance.isFinite, "\(label)")
  var clock = LocalClock(.fixed(7200))
  for (k, r) in [
    Recency(sinceAppOpenS: .infinity, sinceAnyOpenS: .infinity), Recency(sinceAppOpenS: 0, sinceAnyOpenS: 0),
    Recency(sinceAppOpenS: 600, sinceAnyOpenS: .nan),
  ].enumerated() {
    let t = monday + Double(k) * 40_000
    let l = model.intensity(at: t, clock: &clock, recency: r)
    #expect(l.isFinite && l >= 0, "\(label): intensity \(l)")
    let p = model.probabilityOfOpen(within: 3600, from: t, clock: &clock, recency: r)
    #expect(p >= 0 && p <= 1, "\(label): probability \(p)")
  }
}

@Suite("Habit model (Poisson GLM, IRLS, shrinkage)")
struct HabitModelTests {
  @Test("features: stable names, local time, weekend, capped recency")
  func features() {
    #expect(HabitModel.featureNames.count == 12)
    #expect(Set(HabitModel.featureNames).count == 12)
    // Friday 22:00 UTC is Saturday 00:00 at +02:00.
    let t = monday + 4 * 86_400 + 22 * 3600
    var clock = LocalClock(.fixed(7200))
    let never = Recency(sinceAppOpenS: .infinity, sinceAnyOpenS: .infinity)
    let x = HabitModel.features(at: t, clock: &clock, recency: never)
    #expect(x.count == 12)
    #expect(x[0] == 1)
    #expect(abs(x[1]) < 1e-12 && abs(x[2] - 1) < 1e-12)  // h = 0
    #expect(abs(x[5]) < 1e-12 && abs(x[6] - 1) < 1e-12)
    #expect(x[7] == 1 && abs(x[9] - 1) < 1e-12)  // weekend
    #expect(abs(x[10] - log1p(168)) < 1e-12 && abs(x[11] - log1p(1440)) < 1e-12)
    // Friday 21:59 UTC is still Friday locally; 6 h later the hour is 6.
    let friday = HabitModel.features(at: t - 60, clock: &clock, recency: never)
    #expect(friday[7] == 0 && friday[8] == 0 && friday[9] == 0)
    let six = HabitModel.features(at: t + 6 * 3600, clock: &clock, recency: Recency(sinceAppOpenS: 3600, sinceAnyOpenS: -5))
    #expect(abs(six[1] - 1) < 1e-12 && abs(six[2]) < 1e-12)  // sin, cos(π/2)
    #expect(abs(six[3]) < 1e-12 && abs(six[4] + 1) < 1e-12)  // sin, cos(π)
    #expect(abs(six[5] + 1) < 1e-12 && abs(six[6]) < 1e-12)  // sin, cos(3π/2)
    #expect(abs(six[10] - log1p(1)) < 1e-12 && six[11] == 0)
  }

  @Test("design: counts per bin, recency from opens strictly before the bin start")
  func design() {
    let trace = UserTrace(
      user: "u", start: monday, end: monday + 3600, apps: ["a", "b"],
      events: [
        TraceEvent(time: monday - 600, kind: .open, app: 1),
        TraceEvent(time: monday + 900, kind: .open, app: 0),
        TraceEvent(time: monday + 1000, kind: .open, app: 0),
        TraceEvent(time: monday + 3500, kind: .open, app: 0),
      ])
    let bins = HabitBins(from: monday, to: monday + 3000, binSeconds: 900)
    #expect(bins.total == 4 && bins.count == 4)
    #expect(abs(bins.exposure(3) - 300.0 / 900) < 1e-12)
    var x = [Double](repeating: 0, count: 4 * 12), y = [Double](repeating: 0, count: 4), e = y
    let sample = HabitSample(trace: trace, app: 0, from: monday, to: monday + 3000)
    let opens = HabitModel.fillDesign(sample, bins: bins, x: &x, y: &y, exposure: &e, rowOffset: 0, totalRows: 4)
    #expect(opens == 2)  // the open at +3500 s is outside [from, to)
    #expect(y == [0, 2, 0, 0])
    #expect(e[0] == 1 && abs(e[3] - 1.0 / 3) < 1e-12)
    let app = (0..<4).map { x[$0 + 10 * 4] }, any = (0..<4).map { x[$0 + 11 * 4] }
    #expect(app[0] == log1p(168) && app[1] == log1p(168))  // the open at the bin start is not "before"
    #expect(abs(app[2] - log1p(800.0 / 3600)) < 1e-12)
    #expect(abs(any[0] - log1p(10)) < 1e-12 && abs(any[1] - log1p(25)) < 1e-12)
    // Only the last bins when capped.
    #expect(HabitBins(from: monday, to: monday + 3000, binSeconds: 900, lastBins: 2).first == 2)
    #expect(HabitBins(from: monday, to: monday, binSeconds: 900).count == 0)
  }

  @Test("unpenalised IRLS recovers known coefficients within 4 standard errors")
  func irlsRecoversCoefficients() throws {
    var rng = SplitMix64(seed: 20_260_105, keys: "habit", "irls")
    let m = 5_000
    let truth = [0.3, 0.5, -0.4, 0.25]
    var x: [[Double]] = []
    var y = [Double](repeating: 0, count: m), offset = y
    for i in 0..<m {
      let row = [1, 0.7 * rng.normal(), 2 * rng.uniform() - 1, rng.uniform() < 0.3 ? 1 : 0]
      x.append(row)
      offset[i] = log(0.5 + 0.5 * rng.uniform())  // exposure in [0.5, 1)
      let eta = offset[i] + (0..<4).reduce(0.0) { $0 + row[$1] * truth[$1] }
      y[i] = Double(rng.poisson(mean: exp(eta)))
    }
    let zeros = [Double](repeating: 0, count: 4)
    let r = PoissonIRLS.fit(
      rows: x, y: y, offset: offset, penalty: zeros, mean: zeros, start: zeros, maxIterations: 25,
      tolerance: 1e-10, computeStandardErrors: true)
    #expect(r.converged && !r.failed && r.fallback == .none)
    #expect(r.iterations <= 10)
    let se = try #require(r.standardErrors)
    for j in 0..<4 {
      #expect(abs(r.beta[j] - truth[j]) < 4 * se[j], "β\(j) = \(r.beta[j]) vs \(truth[j]) ± \(se[j])")
      #expect(se[j] < 0.05)
    }
  }

  @Test("a time-of-day habit is recovered: hourly intensity correlation > 0.95, peak within 1 h")
  func timeOfDayProfile() {
    // rate ∝ 1 + cos(2π(h − 20)/24), 24 opens a day, 60 days, local time +02:00.
    // (With 8 a day the fitted peak scatters by ±2 h over seeds; with 24 it
    // stays in 19.1...21.0 h over 30 seeds, correlation ≥ 0.98.)
    let trace = habitTrace(
      user: "evening", days: 60, seed: 7, opensPerDay: 24,
      profile: { 1 + cos(2 * Double.pi * ($0 - 20) / 24) }, profileMax: 2, profileMean: 1)
    let model = HabitFitter().fit(HabitSample(trace: trace, app: 0), prior: nil)
    #expect(model.diagnostics.converged)
    #expect(model.diagnostics.fallback == .none)
    #expect(model.diagnostics.bins == 60 * 96)
    #expect(abs(Double(model.diagnostics.trainingOpens) - 1440) < 4 * 1440.0.squareRoot())
    // Wednesday, local hours (UTC = local − 2 h).
    let wednesday = monday + 2 * 86_400 - 7200
    var clock = LocalClock(trace.timeZone)
    let recency = Recency(sinceAppOpenS: 3 * 3600, sinceAnyOpenS: 600)
    func fitted(_ h: Double) -> Double { model.intensity(at: wednesday + h * 3600, clock: &clock, recency: recency) }
    let hours = (0..<24).map { Double($0) + 0.5 }
    let r = pearson(hours.map(fitted), hours.map { 1 + cos(2 * Double.pi * ($0 - 20) / 24) })
    #expect(r > 0.95, "correlation \(r)")
    let grid = (0..<240).map { Double($0) / 10 }
    let peak = grid.max { fitted($0) < fitted($1) } ?? 0
    let off = min(abs(peak - 20), 24 - abs(peak - 20))
    #expect(off <= 1, "peak at \(peak) h")
  }

  @Test("shrinkage: 2 days stay near the prior's shape, 60 days reach the truth")
  func shrinkage() {
    let (ps, pc) = vonMisesCoefficients(peak: 8)
    let (ts, tc) = vonMisesCoefficients(peak: 20)
    let prior = HabitModel(coefficients: [log(6.0 / 96 / besselI0(1)), ps, pc, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    let truth = [0, ts, tc, 0, 0, 0, 0]
    let full = hourDistance(prior.coefficients, truth)  // 2
    // 8 opens a day: over 30 seeds the 2-day fit stays ≤ 0.36 full from the
    // prior and the 60-day fit ≤ 0.23 full from the truth.
    let trace = habitTrace(
      user: "shrink", days: 60, seed: 11, opensPerDay: 8, profile: vonMises(peak: 20), profileMax: exp(1),
      profileMean: besselI0(1))
    let fitter = HabitFitter()
    let short = fitter.fit(HabitSample(trace: trace, app: 0, from: monday, to: monday + 2 * 86_400), prior: prior)
    let long = fitter.fit(HabitSample(trace: trace, app: 0), prior: prior)
    #expect(short.diagnostics.converged && long.diagnostics.converged)
    let shortToPrior = hourDistance(short.coefficients, prior.coefficients)
    let longToTruth = hourDistance(long.coefficients, truth)
    #expect(shortToPrior < 0.4 * full, "2 days: \(shortToPrior) from the prior")
    #expect(shortToPrior < hourDistance(short.coefficients, truth))
    #expect(longToTruth < 0.25 * full, "60 days: \(longToTruth) from the truth")
    #expect(longToTruth < hourDistance(long.coefficients, prior.coefficients))
    // Without a prior, 2 days are shrunk toward a flat profile instead.
    let flat = fitter.fit(HabitSample(trace: trace, app: 0, from: monday, to: monday + 2 * 86_400), prior: nil)
    #expect(hourDistance(flat.coefficients, [Double](repeating: 0, count: 12)) < 0.5 * full)
  }

  @Test("population fit: pooled shape across volumes and time zones, order-independent caps")
  func population() throws {
    let (ts, tc) = vonMisesCoefficients(peak: 8)
    var samples: [HabitSample] = []
    for u in 0..<12 {
      let trace = habitTrace(
        user: "p\(u)", days: 28, timeZone: .fixed((u % 5 - 2) * 3600), seed: UInt64(100 + u),
        opensPerDay: 2 + 3 * Double(u), profile: vonMises(peak: 8), profileMax: exp(1), profileMean: besselI0(1))
      samples.append(HabitSample(trace: trace, app: 0))
    }
    let population = try HabitFitter().fitPopulation(samples)
    #expect(population.diagnostics.converged && population.diagnostics.bins == 12 * 28 * 96)
    // Over 10 replicate populations the largest error of these is ≤ 0.1.
    #expect(abs(population.coefficients[1] - ts) < 0.15 && abs(population.coefficients[2] - tc) < 0.15)
    for j in [3, 4, 5, 6, 7, 8, 9] { #expect(abs(population.coefficients[j]) < 0.15, "β\(j)") }
    // Recency effects are absent from the simulated habit.
    #expect(abs(population.coefficients[10]) < 0.15 && abs(population.coefficients[11]) < 0.15)
    // The returned intercept describes a pair of geometric-mean volume (≈ 14 opens a day).
    var clock = LocalClock(.utc)
    var daily = 0.0
    for k in 0..<96 {
      let t = monday + 2 * 86_400 + Double(k) * 900
      daily += population.intensity(at: t, clock: &clock, recency: .init(sinceAppOpenS: 7200, sinceAnyOpenS: 600)) * 900
    }
    #expect(daily > 5 && daily < 30, "\(daily) opens a day")

    // Caps: the same pairs (by stable hash) whatever the input order.
    var capped = HabitFitter()
    capped.maxPopulationPairs = 5
    capped.maxPopulationBinsPerPair = 14 * 96
    var shuffled = samples
    var rng = SplitMix64(seed: 3)
    shuffled.shuffle(using: &rng)
    let a = try capped.fitPopulation(samples), b = try capped.fitPopulation(shuffled)
    #expect(a.diagnostics.bins == 5 * 14 * 96)
    #expect(a.coefficients.count == b.coefficients.count)
    for j in 0..<12 { #expect(abs(a.coefficients[j] - b.coefficients[j]) < 1e-9) }

    // A 2-day user with the population prior gets the population's shape.
    let newcomer = habitTrace(
      user: "new", days: 2, seed: 999, opensPerDay: 4, profile: vonMises(peak: 8), profileMax: exp(1),
      profileMean: besselI0(1))
    let fitted = HabitFitter().fit(HabitSample(trace: newcomer, app: 0), prior: population)
    #expect(hourDistance(fitted.coefficients, population.coefficients) < 0.3)
  }

  @Test("degenerate inputs give finite coefficients and never crash")
  func degenerate() throws {
    let fitter = HabitFitter()
    let prior = HabitModel(coefficients: [-3, 0.5, -0.5, 0.1, 0, 0, 0, 0.2, 0, 0, -0.1, -0.2])
    let day = monday + 86_400
    let none = UserTrace(
      user: "none", start: monday, end: day, apps: ["a", "b"],
      events: [TraceEvent(time: monday + 100, kind: .open, app: 1)])
    let one = UserTrace(
      user: "one", start: monday, end: day, apps: ["a"], events: [TraceEvent(time: monday + 5000, kind: .open, app: 0)])
    let burst = UserTrace(
      user: "burst", start: monday, end: day, apps: ["a"],
      events: [TraceEvent](repeating: TraceEvent(time: monday + 40_000, kind: .open, app: 0), count: 50))
    let empty = UserTrace(user: "empty", start: monday, end: day)
    let samples: [(String, HabitSample)] = [
      ("no opens", HabitSample(trace: none, app: 0)),
      ("one open", HabitSample(trace: one, app: 0)),
      ("one bin", HabitSample(trace: one, app: 0, from: monday + 4500, to: monday + 5400)),
      ("partial bin", HabitSample(trace: one, app: 0, from: monday + 4990, to: monday + 5010)),
      ("all in one bin", HabitSample(trace: burst, app: 0)),
      ("empty window", HabitSample(trace: one, app: 0, from: monday + 5000, to: monday + 5000)),
      ("no events", HabitSample(trace: empty, app: 0)),
      ("unknown app", HabitSample(trace: one, app: 7)),
    ]
    for (label, s) in samples {
      for p in [nil, prior] {
        let m = fitter.fit(s, prior: p)
        expectSane(m, "\(label), prior \(p == nil ? "none" : "given")")
      }
    }
    let emptyWindow = fitter.fit(samples[5].1, prior: prior)
    #expect(emptyWindow.coefficients == prior.coefficients && emptyWindow.diagnostics.fallback == .prior)
    #expect(fitter.fit(samples[5].1, prior: nil).diagnostics.fallback == .constantRate)
    // No opens: a small expected count, far below one open a day.
    let zero = fitter.fit(samples[0].1, prior: nil)
    #expect(zero.diagnostics.trainingOpens == 0)
    var clock = LocalClock(.utc)
    #expect(zero.intensity(at: monday, clock: &clock, recency: .init(sinceAppOpenS: .infinity, sinceAnyOpenS: 60)) * 86_400 < 0.1)

    // Constant and collinear columns without a penalty: the solver falls back.
    // Columns: intercept, a duplicate of it, constant zero, a regressor.
    let x = (0..<50).map { [1, 1, 0, Double($0 % 5)] }
    let y = (0..<50).map { Double($0 % 3) }
    let zeros = [Double](repeating: 0, count: 4)
    let r = PoissonIRLS.fit(
      rows: x, y: y, offset: [Double](repeating: 0, count: 50), penalty: zeros, mean: zeros, start: zeros,
      maxIterations: 25, tolerance: 1e-8)
    #expect(!r.failed && r.fallback != .none)
    #expect(r.beta.allSatisfy { $0.isFinite })
    // The intercept's score equation: fitted total = observed total (49).
    let fittedTotal = x.reduce(0.0) { s, row in s + exp((0..<4).reduce(0.0) { $0 + row[$1] * r.beta[$1] }) }
    #expect(abs(fittedTotal - 49) < 0.5, "fitted total \(fittedTotal)")
    // All-zero responses without a penalty: η runs to the clamp, β stays finite.
    let allZero = PoissonIRLS.fit(
      rows: [[Double]](repeating: [1], count: 10), y: [Double](repeating: 0, count: 10),
      offset: [Double](repeating: 0, count: 10), penalty: [0], mean: [0], start: [0], maxIterations: 25,
      tolerance: 1e-6)
    #expect(allZero.beta.allSatisfy { $0.isFinite })

    // The population fit throws, it does not crash.
    #expect(throws: HabitFitError.self) { try fitter.fitPopulation([]) }
    #expect(throws: HabitFitError.self) { try fitter.fitPopulation([samples[0].1, samples[6].1]) }
    #expect(throws: HabitFitError.self) { try fitter.fitPopulation([samples[5].1]) }
    expectSane(try fitter.fitPopulation([samples[1].1]), "population of one open")
  }

  @Test("Codable round-trips exactly and rejects another feature set")
  func codable() throws {
    let trace = habitTrace(
      user: "json", days: 14, seed: 5, opensPerDay: 9, profile: vonMises(peak: 13), profileMax: exp(1),
      profileMean: besselI0(1))
    let model = HabitFitter().fit(HabitSample(trace: trace, app: 0), prior: nil)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    let data = try encoder.encode(model)
    let back = try JSONDecoder().decode(HabitModel.self, from: data)
    #expect(back == model)
    #expect(try encoder.encode(back) == data)
    let text = try #require(String(data: data, encoding: .utf8))
    #expect(text.contains("\"feature_names\":[\"intercept\""))
    #expect(text.contains("\"training_opens\":"))
    let renamed = Data(text.replacingOccurrences(of: "\"recency_any\"", with: "\"recency_other\"").utf8)
    #expect(throws: DecodingError.self) { try JSONDecoder().decode(HabitModel.self, from: renamed) }
    let short = Data(text.replacingOccurrences(of: "\"coefficients\":[", with: "\"coefficients\":[1,").utf8)
    #expect(throws: DecodingError.self) { try JSONDecoder().decode(HabitModel.self, from: short) }
  }

  @Test("probabilityOfOpen is in [0, 1], 0 at h = 0, increasing with the horizon")
  func probability() {
    let trace = habitTrace(
      user: "prob", days: 28, seed: 9, opensPerDay: 12, profile: vonMises(peak: 9), profileMax: exp(1),
      profileMean: besselI0(1))
    let model = HabitFitter().fit(HabitSample(trace: trace, app: 0), prior: nil)
    var clock = LocalClock(trace.timeZone)
    let now = Recency(sinceAppOpenS: 1800, sinceAnyOpenS: 120)
    for start in [monday + 3 * 3600, monday + 15 * 3600] {
      var last = 0.0
      #expect(model.probabilityOfOpen(within: 0, from: start, clock: &clock, recency: now) == 0)
      for h: Double in [60, 900, 3600, 14_400, 86_400, 604_800] {
        let p = model.probabilityOfOpen(within: h, from: start, clock: &clock, recency: now)
        #expect(p >= 0 && p <= 1)
        #expect(p > last, "P(open within \(h) s) = \(p) ≤ \(last)")
        last = p
      }
    }
  }
}
