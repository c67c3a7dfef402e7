import FetchSupport
import FetchTraces
import Foundation
import Testing

@testable import FetchModels

/// A phone by hand (times in s from `simStart`): unplugged from 0, plugged at
/// 10 000 (a repeated plug-in row at 11 000), unplugged at 20 000; WiFi from
/// 0, LTE from 100, 3G from 200 (still cellular), offline from 300, WiFi
/// from 30 000; battery 80 % at 0, 70 % at 9 000, 90 % at 13 600.
func handDevice() -> UserTrace {
  let s = simStart
  let events = [
    TraceEvent(time: s, kind: .chargeEnd),
    TraceEvent(time: s, kind: .network, value: Double(NetworkKind.wifi.rawValue)),
    TraceEvent(time: s, kind: .battery, value: 80),
    TraceEvent(time: s + 100, kind: .network, value: Double(NetworkKind.lte.rawValue)),
    TraceEvent(time: s + 200, kind: .network, value: Double(NetworkKind.umts3g.rawValue)),
    TraceEvent(time: s + 300, kind: .network, value: Double(NetworkKind.offline.rawValue)),
    TraceEvent(time: s + 9_000, kind: .battery, value: 70),
    TraceEvent(time: s + 10_000, kind: .chargeStart),
    TraceEvent(time: s + 11_000, kind: .chargeStart),
    TraceEvent(time: s + 13_600, kind: .battery, value: 90),
    TraceEvent(time: s + 20_000, kind: .chargeEnd),
    TraceEvent(time: s + 30_000, kind: .network, value: Double(NetworkKind.wifi.rawValue)),
  ]
  return UserTrace(user: "hand", timeZone: .utc, start: s, end: s + 86_400, apps: [], events: events)
}

@Suite("State-aware device models, logging gaps and calibrated baselines")
struct StateModelTests {
  @Test("Gaussian GLM: the ridge estimate toward a prior equals the closed form (XᵀX + λI)⁻¹(Xᵀy + λβ₀)")
  func gaussianClosedForm() throws {
    let rows: [[Double]] = [[1, 0], [1, 1], [1, 2]]
    let y = [1.0, 3, 5]
    // XᵀX + I = [[4, 3], [3, 6]], Xᵀy = [9, 13]: β = [15, 25] / 15.
    let toZero = try StateGLM.fit(rows: rows, y: y, family: .gaussian, ridge: 1)
    #expect(abs(toZero.coefficients[0] - 1) < 1e-12 && abs(toZero.coefficients[1] - 5.0 / 3) < 1e-12)
    // Toward the exact fit [1, 2]: rhs [10, 15], β = [1, 2], no residual.
    let toTruth = try StateGLM.fit(rows: rows, y: y, family: .gaussian, prior: [1, 2], ridge: 1)
    #expect(abs(toTruth.coefficients[0] - 1) < 1e-12 && abs(toTruth.coefficients[1] - 2) < 1e-12)
    #expect(toTruth.residualSD < 1e-12 && toTruth.rows == 3)
    #expect(toTruth.predict([1, 10]) == toTruth.coefficients[0] + 10 * toTruth.coefficients[1])
  }

  @Test("logistic GLM recovers simulated coefficients; a huge ridge returns the prior; JSON round trip")
  func logisticRecovery() throws {
    var rng = SplitMix64(seed: 7)
    let truth = [-1.0, 2.0, -0.5]
    var rows: [[Double]] = [], y: [Double] = []
    for _ in 0..<20_000 {
      let x = [1, rng.normal(), rng.uniform() < 0.5 ? 1.0 : 0]
      let eta = zip(x, truth).reduce(0) { $0 + $1.0 * $1.1 }
      rows.append(x)
      y.append(rng.uniform() < 1 / (1 + exp(-eta)) ? 1 : 0)
    }
    let m = try StateGLM.fit(rows: rows, y: y, family: .logistic, ridge: 1)
    for (b, t) in zip(m.coefficients, truth) { #expect(abs(b - t) < 0.1, "\(m.coefficients)") }
    let p = m.predict([1, 0.3, 1])
    #expect(p > 0 && p < 1)
    let stuck = try StateGLM.fit(rows: rows, y: y, family: .logistic, prior: [0.5, 0.5, 0.5], ridge: 1e9)
    for b in stuck.coefficients { #expect(abs(b - 0.5) < 1e-3, "\(stuck.coefficients)") }
    // Perfectly separated data stay finite thanks to the ridge.
    let separated = try StateGLM.fit(rows: [[1, -1], [1, -2], [1, 1], [1, 2]], y: [0, 0, 1, 1], family: .logistic, ridge: 1)
    #expect(separated.coefficients.allSatisfy(\.isFinite) && separated.predict([1, 2]) > 0.5)
    #expect(try JSONDecoder().decode(StateGLM.self, from: JSONEncoder().encode(m)) == m)
    #expect(throws: StateGLMError.self) { try StateGLM.fit(rows: [[1, .nan]], y: [1], family: .logistic, ridge: 1) }
  }

  @Test("timeline: state, time in state, plugged-within and the network class, worked by hand")
  func timeline() {
    let d = DeviceTimeline(handDevice())
    let s = simStart
    #expect(d.charging(at: s - 1) == nil && d.network(at: s - 1) == nil)
    #expect(d.charging(at: s + 5_000)! == (false, s))
    // The repeated plug-in row does not restart the state.
    #expect(d.charging(at: s + 12_000)! == (true, s + 10_000))
    #expect(d.pluggedWithin(3600, from: s + 5_000) == false)
    #expect(d.pluggedWithin(3600, from: s + 6_400) == true)  // plug-in exactly at t + h counts
    #expect(d.pluggedWithin(3600, from: s + 6_399) == false)
    #expect(d.pluggedWithin(60, from: s + 15_000) == true)  // plugged now
    #expect(d.pluggedWithin(3600, from: s + 21_000) == false)
    // LTE then 3G: one cellular stretch from 100.
    #expect(d.network(at: s + 250)! == (.cellular, s + 100))
    #expect(d.network(at: s + 400)! == (.offline, s + 300))
    #expect(d.level(at: s + 9_500)! == (70, s + 9_000))
  }

  @Test("features and outcomes of the device targets, worked by hand")
  func features() throws {
    let trace = handDevice(), d = DeviceTimeline(trace)
    var clock = LocalClock(.utc)
    let t = simStart + 9_900  // 02:45 UTC, unplugged since 0, offline since 300, level 70 %
    let p = try #require(DeviceFeatures.point(.plugged, at: t, horizon: 3600, timeline: d, clock: &clock))
    #expect(p.features.count == DeviceFeatures.chargingCount && p.outcome == 1 && p.state == 0 && p.hour == 2)
    #expect(p.features[0] == 1 && p.features[1] == 0 && abs(p.features[2] - log1p(9_900.0 / 3600)) < 1e-12)
    #expect(p.features[4] == 0.7 && p.features[6] == 0 && p.features[7] == 0)
    let a = 2 * Double.pi * 2.75 / 24
    #expect(abs(p.features[8] - sin(a)) < 1e-12 && p.features[12...15].allSatisfy { $0 == 0 })
    #expect(p.features[16] == 0)  // 2026-01-01 is a Thursday
    // Level change 02:45 → 03:45: no sample after t by then (the next is 03:46:40): unknown.
    #expect(DeviceFeatures.point(.level, at: t, horizon: 3600, timeline: d, clock: &clock) == nil)
    // 02:45 → 03:51:40: 70 % (02:30) → 90 % (03:46:40).
    let later = try #require(DeviceFeatures.point(.level, at: t, horizon: 4000, timeline: d, clock: &clock))
    #expect(later.outcome == 20)
    let wifi = try #require(DeviceFeatures.point(.wifi, at: simStart + 29_000, horizon: 1800, timeline: d, clock: &clock))
    #expect(wifi.features.count == DeviceFeatures.networkCount && wifi.outcome == 1 && wifi.state == 2)
    #expect(wifi.features[1] == 0 && wifi.features[2] == 1 && wifi.features[7] == 0)
    let offline = try #require(DeviceFeatures.point(.offline, at: simStart + 29_000, horizon: 1800, timeline: d, clock: &clock))
    #expect(offline.outcome == 0)
    // Grid points never look past `to`.
    let pts = DeviceFeatures.points(.plugged, trace: trace, timeline: d, from: simStart, to: simStart + 7200, options: DeviceModelOptions())
    #expect(pts.map(\.time) == [simStart, simStart + 900, simStart + 1800, simStart + 2700, simStart + 3600])
  }

  @Test("baselines: persistence, P(target | state), hour of day and constant, by hand")
  func baselines() {
    func point(_ state: Int, _ hour: Int, _ y: Double) -> DevicePoint {
      DevicePoint(time: 0, features: [1], outcome: y, state: state, hour: hour)
    }
    let training = [point(1, 3, 1), point(1, 3, 1), point(0, 3, 0), point(0, 12, 1)]
    let b = DeviceBaselines(target: .plugged, training: training)
    let overall = 3.5 / 5
    #expect(b.overall == overall)
    #expect(abs(b.byState[1] - (2 + 4 * overall) / 6) < 1e-12)
    #expect(abs(b.byState[0] - (1 + 4 * overall) / 6) < 1e-12)
    #expect(abs(b.byHour[3] - (2 + 4 * overall) / 7) < 1e-12)
    #expect(b.byHour[5] == overall)
    #expect(b.predict(.persistence, point(1, 0, 0)) == 1 && b.predict(.persistence, point(0, 0, 0)) == 0)
    let wifi = DeviceBaselines(target: .wifi, training: [])
    #expect(wifi.predict(.persistence, point(0, 0, 0)) == 1 && wifi.predict(.persistence, point(1, 0, 0)) == 0)
    #expect(wifi.overall == 0.5)
    let level = DeviceBaselines(target: .level, training: [point(1, 0, 10), point(0, 0, -4)])
    #expect(level.overall == 3 && level.predict(.persistence, point(1, 0, 0)) == 0)
  }

  @Test("device evaluation: on a phone plugged in every night the state-aware model beats persistence and P(target | state)")
  func evaluation() throws {
    // Plugged 23:00–07:00 every night; the hour decides when the state changes.
    let trace = deviceTrace()
    let d = DeviceTimeline(trace)
    let options = DeviceModelOptions()
    let split = trace.start + 21 * 86_400
    var train: [DeviceTarget: [DevicePoint]] = [:], test: [DeviceTarget: [DevicePoint]] = [:]
    for target in DeviceTarget.allCases {
      train[target] = DeviceFeatures.points(target, trace: trace, timeline: d, from: trace.start, to: split, options: options)
      test[target] = DeviceFeatures.points(target, trace: trace, timeline: d, from: split, to: trace.end, options: options)
    }
    let population = try DeviceModels.fitPopulation(train, options: options)
    let user = try DeviceModels.fitUser(train, population: population, options: options)
    let e = DeviceEvaluation.evaluate(training: train, test: test, user: user, population: population)
    let plugged = try #require(e.binary[.plugged])
    let model = plugged[0], persistence = plugged[2], byState = plugged[3]
    #expect(model.brier < persistence.brier && model.brier < byState.brier, "\(model.brier) \(persistence.brier) \(byState.brier)")
    #expect(model.auc > persistence.auc && model.auc > byState.auc)
    // WiFi 19:00–08:00, LTE otherwise: the same for the network.
    let wifi = try #require(e.binary[.wifi])
    #expect(wifi[0].brier < wifi[2].brier && wifi[0].brier < wifi[3].brier)
    // Never offline: one class only, AUC undefined.
    #expect(try #require(e.binary[.offline])[0].auc.isNaN)
    let level = try #require(e.level)
    #expect(level[0].mae < level[2].mae)
  }

  @Test("logging gaps: ≥ 24 h without any row, window edges included; the overlap test")
  func gaps() {
    let h = 3600.0, s = simStart
    let events = [1.0, 2, 60, 70].map { TraceEvent(time: s + $0 * h, kind: .open, app: 0, value: 1) }
    let trace = UserTrace(user: "g", timeZone: .utc, start: s, end: s + 240 * h, apps: ["a"], events: events)
    let g = LoggingGaps(trace)
    #expect(g.intervals == [(s + 2 * h)...(s + 60 * h), (s + 70 * h)...(s + 240 * h)])
    #expect(g.overlaps(s + 1 * h, s + 3 * h) && !g.overlaps(s + 60 * h, s + 61 * h) && !g.overlaps(s, s + 2 * h))
    #expect(g.overlaps(s + 100 * h, s + 101 * h))
    #expect(g.seconds(in: s, s + 240 * h) == (58 + 170) * h)
    // Exactly 24 h is a gap; just under is not.
    let edge = UserTrace(
      user: "e", timeZone: .utc, start: s, end: s + 48 * h, apps: ["a"],
      events: [s, s + 24 * h, s + 48 * h - 1].map { TraceEvent(time: $0, kind: .battery, value: 50) })
    #expect(LoggingGaps(edge).intervals == [s...(s + 24 * h)])
  }

  @Test("calibrated baselines are the smoothed training frequencies of ≥ 1 open in the next hour")
  func calibrated() {
    // One open a day at 08:30 for 14 days.
    let s = simStart, days = 14
    let events = (0..<days).map { TraceEvent(time: s + Double($0) * 86_400 + 8.5 * 3600, kind: .open, app: 0, value: 1) }
    let trace = UserTrace(user: "c", timeZone: .utc, start: s, end: s + Double(days) * 86_400, apps: ["a"], events: events)
    let sample = HabitSample(trace: trace, app: 0, from: trace.start, to: trace.end)
    // Grid points t ≤ end − 1 h: 1341; y = 1 for t in 07:30…08:15 (4 a day).
    let overall = (56 + 0.5) / 1342
    let hod = CalibratedBaseline(.hourOfDay, fitting: sample)
    #expect(abs(hod.probabilities[7] - (28 + 4 * overall) / 60) < 1e-12)
    #expect(abs(hod.probabilities[12] - 4 * overall / 60) < 1e-12)
    let constant = CalibratedBaseline(.constant, fitting: sample)
    #expect(abs(constant.probabilities[0] - overall) < 1e-12)
    var clock = LocalClock(.utc)
    let r = Recency(sinceAppOpenS: 3600, sinceAnyOpenS: 3600)
    let at = s + 86_400 + 7.5 * 3600
    #expect(hod.probabilityOfEvent(within: 3600, from: at, clock: &clock, recency: r, step: 300) == hod.probabilities[7])
    // Another horizon: the Poisson conversion of the rates.
    #expect(
      hod.probabilityOfEvent(within: 1800, from: at, clock: &clock, recency: r, step: 300)
        == hod.probabilityOfOpen(within: 1800, from: at, clock: &clock, recency: r, step: 300))
    // Hour of week is shrunk toward hour of day: with 2 Mondays the Monday 07:00 cell sits between.
    let how = CalibratedBaseline(.hourOfWeek, fitting: sample)
    #expect(abs(how.probabilities[7] - (4 + 4 * hod.probabilities[7]) / 12) < 1e-12)
    // Last seen hour: near the 08:30 habit every day but the first.
    let last = CalibratedBaseline(.lastSeenHour, fitting: sample)
    #expect(last.probabilities[0] > 0.3 && last.probabilities[1] < 0.01)
  }
}

@Suite("Sample paths of a user's future")
struct FuturePathsTests {
  @Test("paths are seeded, sorted, inside the window; device rows only for users with device rows in training")
  func paths() throws {
    let trace = deviceTrace()
    let split = trace.start + 21 * 86_400
    let options = DeviceModelOptions()
    let d = DeviceTimeline(trace)
    var train: [DeviceTarget: [DevicePoint]] = [:]
    for target in DeviceTarget.allCases {
      train[target] = DeviceFeatures.points(target, trace: trace, timeline: d, from: trace.start, to: split, options: options)
    }
    let population = try DeviceModels.fitPopulation(train, options: options)
    // 1.5 opens an hour, whatever the time and recency.
    let habit = HabitModel(coefficients: [log(1.5 * 0.25)] + [Double](repeating: 0, count: 11))
    let um = ModelFile.UserModels(
      user: "dev", timeZone: .utc, splitTime: split, windowEnd: trace.end, lastOpenAny: nil, lastBattery: nil,
      apps: [ModelFile.AppModel(app: "app", habit: habit, lastOpen: nil, trainingOpens: 0)],
      battery: BatteryModel(fitting: trace, from: trace.start, to: split),
      network: NetworkModel(fitting: trace, from: trace.start, to: split),
      device: try DeviceModels.fitUser(train, population: population, options: options))
    func sample(_ u: ModelFile.UserModels, _ seed: UInt64) -> [TraceEvent] {
      FuturePaths.sample(
        u, population: population, options: options, from: split, to: split + 2 * 86_400, lastAppOpens: [-.infinity],
        lastAnyOpen: -.infinity, seed: seed)
    }
    let a = sample(um, 1), b = sample(um, 1), c = sample(um, 2)
    #expect(a == b && a != c)
    #expect(a.allSatisfy { $0.time >= split && $0.time < split + 2 * 86_400 })
    #expect(zip(a, a.dropFirst()).allSatisfy { $0.time <= $1.time })
    let opensA = a.filter { $0.kind == .open }.count
    // Poisson with mean 72 (SD 8.5).
    #expect(opensA > 45 && opensA < 100, "\(opensA)")
    // The nightly charger and evening WiFi show up: mostly plugged at 03:00, on WiFi at 22:00.
    var pluggedAt3 = 0, wifiAt22 = 0
    for seed in 0..<20 {
      let p = DeviceTimeline(UserTrace(user: "p", timeZone: .utc, start: split, end: split + 2 * 86_400, apps: ["app"], events: sample(um, UInt64(seed))))
      if p.charging(at: split + 86_400 + 3 * 3600)?.plugged == true { pluggedAt3 += 1 }
      if p.network(at: split + 86_400 + 22 * 3600)?.kind == .wifi { wifiAt22 += 1 }
    }
    #expect(pluggedAt3 >= 15 && wifiAt22 >= 15, "\(pluggedAt3) \(wifiAt22)")
    // Without device rows in training: opens only.
    var bare = um
    bare.battery = BatteryModel()
    bare.network = NetworkModel()
    #expect(sample(bare, 1).allSatisfy { $0.kind == .open })
  }
}

@Suite("Scores outside logging gaps")
struct GapScoreTests {
  @Test("points whose horizon overlaps a gap are left out of the outside-gaps score only")
  func outsideGaps() {
    // Opens every 2 h on days 0–3 and 8–10 of a 10-day window: a 5-day gap.
    let s = simStart
    let early: [Double] = (0..<48).map { s + Double($0) * 7200 }
    let late: [Double] = (0..<24).map { s + 8 * 86_400 + Double($0) * 7200 }
    let times = early + late
    let trace = UserTrace(
      user: "g", timeZone: .utc, start: s, end: s + 10 * 86_400, apps: ["a"],
      events: times.map { TraceEvent(time: $0, kind: .open, app: 0, value: 1) })
    let gaps = LoggingGaps(trace)
    #expect(gaps.intervals.count == 1)
    let p = ConstantBaseline(ratePerSecond: 1.0 / 7200)
    let split = s + 2 * 86_400
    let both = PredictionEvaluation.evaluate(p, trace: trace, app: 0, from: split, to: trace.end, gaps: gaps)
    let none = PredictionEvaluation.evaluate(p, trace: trace, app: 0, from: split, to: trace.end, gaps: nil)
    #expect(both.all == none.all && none.outsideGaps == none.all)
    #expect(both.all == PredictionEvaluation.evaluate(p, trace: trace, app: 0, from: split, to: trace.end))
    // Gap (s + 3 d − 2 h, s + 8 d): outside it, [t, t + 1 h] must end by its start or begin at its end.
    let gap = gaps.intervals[0]
    var expected = 0
    var t = split
    while t + 3600 <= trace.end {
      if !(gap.lowerBound < t + 3600 && t < gap.upperBound) { expected += 1 }
      t += 900
    }
    #expect(both.outsideGaps.points == expected && expected < both.all.points)
  }
}

@Suite("Device outlook for policies")
struct DeviceOutlookTests {
  @Test("the outlook answers from the rows seen so far, as the models do, and is nil before any state")
  func outlook() throws {
    let trace = deviceTrace()
    let split = trace.start + 21 * 86_400
    let options = DeviceModelOptions()
    let d = DeviceTimeline(trace)
    var train: [DeviceTarget: [DevicePoint]] = [:]
    for target in DeviceTarget.allCases {
      train[target] = DeviceFeatures.points(target, trace: trace, timeline: d, from: trace.start, to: split, options: options)
    }
    let population = try DeviceModels.fitPopulation(train, options: options)
    let um = ModelFile.UserModels(
      user: "dev", timeZone: .utc, splitTime: split, windowEnd: trace.end, lastOpenAny: nil, lastBattery: nil, apps: [],
      battery: BatteryModel(), network: NetworkModel(), device: try DeviceModels.fitUser(train, population: population, options: options))
    let file = ModelFile(
      options: .init(apps: "top:1", seed: 1, populationPairs: 1, binSeconds: 900, shapeRidge: 1, interceptRidge: 1, evaluation: EvaluationOptions()),
      trainFraction: 0.75, trace: .init(path: "t", bytes: 0), population: HabitModel(coefficients: [Double](repeating: 0, count: 12)),
      devicePopulation: population)
    var (history, window) = trace.split(at: split)
    history.events = []
    var o = DeviceOutlook(user: um, file: file, history: history)
    let before = (o.probabilityPlugged(from: split), o.probabilityWiFi(from: split))
    #expect(before.0 == nil && before.1 == nil)
    // Feed the test window's rows up to 22:30 on its first day: unplugged, on WiFi since 19:00.
    let t = split + 22.5 * 3600
    for e in window.events where e.time <= t { o.observe(e) }
    let pluggedAnswer = o.probabilityPlugged(from: t), wifiAnswer = o.probabilityWiFi(from: t)
    let offline = o.probabilityOffline(from: t)
    let plugged = try #require(pluggedAnswer), wifi = try #require(wifiAnswer)
    #expect(plugged > 0.8, "the charger comes at 23:00: \(plugged)")
    #expect(wifi > 0.9 && offline! < 0.05)
    // The same as the models on the full timeline.
    var clock = LocalClock(.utc)
    let direct = um.device.probabilities(at: t, timeline: d, fallback: population, clock: &clock)
    #expect(direct.plugged == plugged && direct.wifi == wifi)
    // At noon on a weekday: unplugged, on LTE, the charger far away.
    let noon = split + 86_400 + 12 * 3600
    for e in window.events where e.time > t && e.time <= noon { o.observe(e) }
    let atNoon = o.probabilityPlugged(from: noon)
    #expect(try #require(atNoon) < 0.1)
  }
}
