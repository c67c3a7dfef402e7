import FetchSupport
import FetchTraces
import Foundation
import Testing

@testable import FetchModels

/// The app indices of `trace`'s `k` most opened apps.
private func topApps(_ trace: UserTrace, _ k: Int) -> [Int32] {
  var counts: [Int32: Int] = [:]
  for e in trace.events where e.kind == .open { counts[e.app, default: 0] += 1 }
  return counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(k).map(\.key)
}

/// Poisson log-likelihood of table rows `rows` under `model` (with log y!).
private func logLikelihood(_ model: HabitModel, _ table: HabitDesignTable, _ rows: Range<Int>) -> Double {
  let n = table.bins.count
  var ll = 0.0
  for i in rows {
    var eta = log(table.exposure[i])
    for j in 0..<HabitModel.featureCount { eta += model.coefficients[j] * table.x[i + j * n] }
    let mu = exp(HabitModel.clampEta(eta))
    let y = table.y[i]
    ll += y * log(mu) - mu - lgamma(y + 1)
  }
  return ll
}

/// Held-out log-likelihoods of the nightly habit refits of a synthetic
/// population: full refits, the fast refits, and no refit.
struct RefitEvaluation {
  var full = 0.0
  var fast = 0.0
  var none = 0.0
  var refits = 0

  /// `users` synthetic users (seed 20260601, 28 days), their top 3 apps:
  /// trained on the first 21 days, refitted at 03:00 local of each later
  /// night on everything before it, each refit scored on the 24 h after it.
  static func run(users: Int) -> RefitEvaluation {
    let pop = SyntheticPopulation(seed: 20_260_601, days: 28)
    let traces = (0..<users).map { pop.user($0) }
    let fitter = HabitFitter()
    let samples = traces.flatMap { t in
      topApps(t, 3).map { HabitSample(trace: t, app: $0, from: t.start, to: t.start + 21 * 86_400) }
    }
    let prior = try? fitter.fitPopulation(samples)
    var r = RefitEvaluation()
    for trace in traces {
      let cache = HabitFitCache(trace: trace)
      let base = trace.start + 21 * 86_400
      for app in topApps(trace, 3) {
        let table = HabitDesignTable(trace: trace, app: app, binSeconds: fitter.binSeconds)
        let trained = cache.refit(
          HabitSample(trace: trace, app: app, from: trace.start, to: base), base: base, prior: prior, fitter: fitter)
        for night in 0..<6 {
          // Synthetic days start at local midnight: 03:00 is bin 12 of the day.
          let to = base + Double(night) * 86_400 + 3 * 3600
          var seen = trace
          seen.events = trace.events.filter { $0.time < to }
          let sample = HabitSample(trace: seen, app: app, from: trace.start, to: to)
          let full = fitter.fit(sample, prior: prior)
          let fast = cache.refit(sample, base: base, prior: prior, fitter: fitter)
          let first = Int(((to - trace.start) / fitter.binSeconds).rounded())
          let rows = first..<min(first + 96, table.bins.count)
          r.full += logLikelihood(full, table, rows)
          r.fast += logLikelihood(fast, table, rows)
          r.none += logLikelihood(trained, table, rows)
          r.refits += 1
        }
      }
    }
    return r
  }
}

@Suite("Fast habit refits (grouped IRLS, frozen training rows)")
struct HabitRefitTests {
  @Test("the grouped training fit reaches the row-wise fit's optimum (within the IRLS tolerance)", arguments: 0..<4)
  func trainingFit(user: Int) throws {
    let trace = SyntheticPopulation(seed: 7, days: 14).user(user)
    let fitter = HabitFitter()
    let prior = user % 2 == 0 ? nil : fitter.fit(HabitSample(trace: trace, app: topApps(trace, 1)[0]), prior: nil)
    let cache = HabitFitCache(trace: trace)
    for app in topApps(trace, 3) {
      // A window end mid-bin, and one on a bin boundary.
      for to in [trace.start + 10 * 86_400 + 1234.5, trace.start + 9 * 86_400] {
        let sample = HabitSample(trace: trace, app: app, from: trace.start, to: to)
        let exact = fitter.fit(sample, prior: prior)
        let fast = cache.refit(sample, base: to, prior: prior, fitter: fitter)
        #expect(fast.diagnostics.converged && exact.diagnostics.converged)
        #expect(fast.diagnostics.bins == exact.diagnostics.bins)
        #expect(fast.diagnostics.trainingOpens == exact.diagnostics.trainingOpens)
        #expect(abs(fast.diagnostics.deviance / exact.diagnostics.deviance - 1) < 1e-4, "\(fast.diagnostics) \(exact.diagnostics)")
        for (a, b) in zip(fast.coefficients, exact.coefficients) {
          #expect(abs(a - b) < 2e-3, "app \(app): \(fast.coefficients) vs \(exact.coefficients)")
        }
      }
    }
  }

  @Test("refits are a pure function of the window and the base: order of requests and sharing do not matter")
  func pure() {
    let trace = SyntheticPopulation(seed: 3, days: 14).user(1)
    let fitter = HabitFitter()
    let app = topApps(trace, 1)[0]
    let base = trace.start + 10 * 86_400
    let ends = (0..<4).map { base + Double($0) * 86_400 + 3 * 3600 }
    func sample(_ to: Double) -> HabitSample { HabitSample(trace: trace, app: app, from: trace.start, to: to) }
    let forward = HabitFitCache(trace: trace)
    let a = ends.map { forward.refit(sample($0), base: base, prior: nil, fitter: fitter) }
    let backward = HabitFitCache(trace: trace)
    let b = ends.reversed().map { backward.refit(sample($0), base: base, prior: nil, fitter: fitter) }
    #expect(a == Array(b.reversed()))
    // A second policy asking for the same windows reuses them.
    _ = ends.map { forward.refit(sample($0), base: base, prior: nil, fitter: fitter) }
    #expect(forward.computed == 4 && forward.reused == 4)
    // The refits move away from the training fit as data accrues.
    let trained = forward.refit(sample(base), base: base, prior: nil, fitter: fitter)
    #expect(trained.coefficients != a[0].coefficients)
  }

  @Test("fast nightly refits: held-out log-likelihood within 1 % of full refits on the synthetic population")
  func heldOut() {
    let r = RefitEvaluation.run(users: 12)
    let gap = abs(r.fast - r.full) / abs(r.full)
    print(
      "habit refits: \(r.refits) refits, held-out log-likelihood full \(r.full), fast \(r.fast) "
        + "(relative difference \(gap)), no refit \(r.none)")
    #expect(r.refits == 12 * 3 * 6)
    #expect(r.full.isFinite && r.fast.isFinite && r.full < 0)
    #expect(gap < 0.01)
    // Refitting gains little log-likelihood over the training fit in a week
    // (so the 1 % criterion alone cannot tell a broken refit): the fast
    // refits must also keep at least 90 % of that gain.
    #expect(abs(r.fast - r.full) < 0.1 * abs(r.full - r.none), "\(r)")
    #expect(r.full > r.none)
  }

  @Test("design rows are the features at each bin start, bit for bit (the memoised hour angles included)", arguments: [0, 19_800, -16_200])
  func designRows(offset: Int) {
    // Windows starting off the quarter hour, in a zone with a half-hour offset.
    var trace = SyntheticPopulation(seed: 5, days: 9).user(2)
    trace.timeZone = .fixed(offset)
    let app = topApps(trace, 1)[0]
    let from = trace.start + 437.25
    let bins = HabitBins(from: from, to: trace.end, binSeconds: 900)
    let n = bins.count
    var x = [Double](repeating: 0, count: n * 12), y = [Double](repeating: 0, count: n), e = y
    _ = HabitModel.fillDesign(
      HabitSample(trace: trace, app: app, from: from, to: trace.end), bins: bins, x: &x, y: &y, exposure: &e,
      rowOffset: 0, totalRows: n)
    var clock = LocalClock(trace.timeZone)
    var lastApp = -Double.infinity, lastAny = -Double.infinity
    var p = 0
    var mismatches = 0
    for i in 0..<n {
      let t0 = bins.start(i)
      while p < trace.events.count && trace.events[p].time < t0 {
        if trace.events[p].kind == .open {
          lastAny = trace.events[p].time
          if trace.events[p].app == app { lastApp = trace.events[p].time }
        }
        p += 1
      }
      let f = HabitModel.features(
        at: t0, clock: &clock, recency: Recency(sinceAppOpenS: t0 - lastApp, sinceAnyOpenS: t0 - lastAny))
      for j in 0..<12 where x[i + j * n].bitPattern != f[j].bitPattern { mismatches += 1 }
    }
    #expect(n > 800 && mismatches == 0)
  }

  @Test("an app's table from the user's shared columns equals the table built alone, bit for bit", arguments: [0, 19_800])
  func sharedColumns(offset: Int) {
    var trace = SyntheticPopulation(seed: 6, days: 8).user(3)
    trace.timeZone = .fixed(offset)
    trace.end -= 437.25  // a partial last bin
    // Opens exactly at bin starts (not "before" them).
    for k in [50, 51, 400] {
      trace.events.append(TraceEvent(time: trace.start + 900 * Double(k), kind: .open, app: topApps(trace, 1)[0], value: 30))
    }
    trace.events.sort { $0.time < $1.time }
    let shared = HabitUserDesign(trace: trace, binSeconds: 900)
    for app in topApps(trace, 3) + [Int32(trace.apps.count)] {
      let alone = HabitDesignTable(trace: trace, app: app, binSeconds: 900)
      let built = HabitDesignTable(shared: shared, trace: trace, app: app)
      #expect(alone.x.map(\.bitPattern) == built.x.map(\.bitPattern), "app \(app)")
      #expect(alone.y == built.y && alone.exposure == built.exposure && alone.opens == built.opens, "app \(app)")
    }
  }

  @Test("remembered intensities give the same open probabilities, bit for bit, and are reused at periodic checks")
  func openMemo() {
    let trace = SyntheticPopulation(seed: 8, days: 10).user(0)
    let app = topApps(trace, 1)[0]
    let model = HabitFitter().fit(HabitSample(trace: trace, app: app, from: trace.start, to: trace.start + 7 * 86_400), prior: nil)
    var rng = SplitMix64(seed: 11)
    var memo = HabitOpenMemo()
    var clockA = LocalClock(trace.timeZone), clockB = LocalClock(trace.timeZone)
    var lastApp = trace.start - 5000.125, lastAny = trace.start - 100.5
    var t = trace.start + 7 * 86_400 + 0.375
    var differ = 0
    for k in 0..<3000 {
      // Periodic checks, an opportunity in between now and then, opens now and then.
      let now = k % 5 == 4 ? t + rng.uniform() * 300 : t
      if rng.uniform() < 0.05 { lastAny = now - rng.uniform() * 60 }
      if rng.uniform() < 0.02 { lastApp = lastAny }
      let r = Recency(sinceAppOpenS: now - lastApp, sinceAnyOpenS: now - lastAny)
      let horizon = k % 7 == 0 ? 1200.0 : 900
      let a = memo.probabilityOfOpen(model, within: horizon, from: now, clock: &clockA, recency: r)
      let b = model.probabilityOfOpen(within: horizon, from: now, clock: &clockB, recency: r)
      if a.bitPattern != b.bitPattern { differ += 1 }
      if k % 5 != 4 { t += 300 }
    }
    #expect(differ == 0)
    #expect(memo.hits > memo.misses / 2)  // about 2 of 3 points at undisturbed checks
    memo.reset()
    let r = Recency(sinceAppOpenS: 10, sinceAnyOpenS: 10)
    let other = HabitModel(coefficients: model.coefficients.map { $0 * 0.5 })
    let a = memo.probabilityOfOpen(other, within: 900, from: t, clock: &clockA, recency: r)
    #expect(a.bitPattern == other.probabilityOfOpen(within: 900, from: t, clock: &clockB, recency: r).bitPattern)
  }

  @Test("a planner-sized memo (24 points, two-way sets, remembered time parts and recency features) gives the model's intensities bit for bit")
  func openMemoLookAhead() {
    let trace = SyntheticPopulation(seed: 9, days: 10).user(0)
    let app = topApps(trace, 1)[0]
    let model = HabitFitter().fit(HabitSample(trace: trace, app: app, from: trace.start, to: trace.start + 7 * 86_400), prior: nil)
    var rng = SplitMix64(seed: 12)
    var memo = HabitOpenMemo(slots: 48, quantum: 300)
    var clockA = LocalClock(trace.timeZone), clockB = LocalClock(trace.timeZone)
    var lastApp = -Double.infinity, lastAny = trace.start - 100.5
    var t = trace.start + 7 * 86_400 + 0.375
    var differ = 0
    var current = model
    for k in 0..<2000 {
      // Periodic checks, opportunities off the grid, opens of this and other apps.
      let now = k % 4 == 3 ? t + rng.uniform() * 300 : t
      if rng.uniform() < 0.08 { lastAny = now - rng.uniform() * 60 }
      if rng.uniform() < 0.02 { lastApp = lastAny }
      if k % 500 == 499 {
        // A refit: a new model, the memo forgotten.
        current = HabitModel(coefficients: current.coefficients.map { $0 * 0.9 })
        memo.reset()
      }
      let r = Recency(sinceAppOpenS: now - lastApp, sinceAnyOpenS: now - lastAny)
      for j in 0..<24 {
        let mid = (Double(j) + 0.5) * 300
        let a = memo.intensity(current, at: now + mid, clock: &clockA, recency: r.advanced(by: mid))
        let b = current.intensity(at: now + mid, clock: &clockB, recency: r.advanced(by: mid))
        if a.bitPattern != b.bitPattern { differ += 1 }
      }
      if k % 4 != 3 { t += 300 }
    }
    #expect(differ == 0)
    // 23 of the 24 points of an undisturbed check are the check before's;
    // opens and checks off the grid (a third of the checks here) miss.
    #expect(memo.hits > memo.misses)
  }
}
