import FetchTraces
import Foundation
import Testing

@testable import FetchModels

/// 28 days from 2026-01-01 (UTC times; `tz` only labels the trace): plugged in
/// from 23:00 to 07:00 local, battery sampled every 30 min, falling
/// `drainPerHour` %/h while unplugged and rising 20 %/h while plugged;
/// WiFi from 19:00 to 08:00 local, LTE otherwise.
func deviceTrace(tz: TraceTimeZone = .utc, offset: Double = 0, drainPerHour: Double = 5, withNetwork: Bool = true) -> UserTrace {
  var events: [TraceEvent] = []
  let start = simStart - offset
  var level = 100.0
  for d in 0..<28 {
    let day = start + Double(d) * 86_400
    var rows: [TraceEvent] = []
    rows.append(TraceEvent(time: day + 7 * 3600, kind: .chargeEnd))
    rows.append(TraceEvent(time: day + 23 * 3600, kind: .chargeStart))
    if withNetwork {
      rows.append(TraceEvent(time: day + 8 * 3600, kind: .network, value: Double(NetworkKind.lte.rawValue)))
      rows.append(TraceEvent(time: day + 19 * 3600, kind: .network, value: Double(NetworkKind.wifi.rawValue)))
    }
    for k in 0..<48 {
      let t = day + Double(k) * 1800 + 900
      let hour = Double(k) / 2 + 0.25
      let plugged = hour < 7 || hour >= 23
      level = plugged ? min(100, level + 10) : max(0, level - drainPerHour / 2)
      rows.append(TraceEvent(time: t, kind: .battery, value: level))
    }
    events += rows.sorted { $0.time < $1.time }
  }
  return UserTrace(user: "dev", timeZone: tz, start: start, end: start + 28 * 86_400, apps: [], events: events)
}

@Suite("Battery, network and data-budget models")
struct DeviceModelTests {
  @Test("P(charging) recovers a nightly pattern, in local time")
  func chargingPattern() {
    for (tz, offset) in [(TraceTimeZone.utc, 0.0), (.fixed(2 * 3600), 2 * 3600.0)] {
      let trace = deviceTrace(tz: tz, offset: offset)
      let m = BatteryModel(fitting: trace, from: trace.start, to: trace.end)
      #expect(m.observedChargingHours.isFinite && abs(m.observedChargingHours - 28 * 24) < 1e-6)
      var clock = LocalClock(tz)
      for dow in 0..<7 {
        for h in 0..<24 {
          let p = m.chargingProbability[dow * 24 + h]
          if h < 7 || h == 23 {
            #expect(p > 0.9, "dow \(dow) hour \(h): \(p)")
          } else {
            #expect(p < 0.05, "dow \(dow) hour \(h): \(p)")
          }
        }
      }
      // Monday 2026-01-05, 03:30 local.
      let monday = simStart + 4 * 86_400 - offset
      #expect(m.probabilityCharging(at: monday + 3.5 * 3600, clock: &clock) > 0.9)
      #expect(m.probabilityCharging(at: monday + 13 * 3600, clock: &clock) < 0.05)
    }
  }

  @Test("without charging rows the model is the given population prior, else the uninformed ½")
  func chargingPrior() throws {
    let trace = UserTrace(user: "u", start: simStart, end: simStart + 7 * 86_400)
    let m = BatteryModel(fitting: trace, from: trace.start, to: trace.end)
    #expect(m == BatteryModel())
    #expect(m.observedChargingHours == 0 && m.dischargePctPerHour == BatteryModel.priorDischargePctPerHour)
    #expect(m.chargingProbability.allSatisfy { $0 == 0.5 })
    // A population curve from another user's training window: the nightly trace's shares.
    let other = deviceTrace()
    let (charging, total) = BatteryModel.chargingSeconds(other, from: other.start, to: other.end)
    let prior = try #require(BatteryModel.hourOfDayShares(charging: charging, total: total))
    #expect(prior[3] == 1 && prior[12] == 0 && abs(prior[23] - 1) < 1e-12)
    let withPrior = BatteryModel(fitting: trace, from: trace.start, to: trace.end, prior: prior)
    #expect(withPrior.chargingProbability[24 * 6 + 3] == 1 && withPrior.chargingProbability[24 * 6 + 12] == 0)
    // Nothing observed at some hour: no curve.
    #expect(BatteryModel.hourOfDayShares(charging: charging, total: total.enumerated().map { $0.offset % 24 == 5 ? 0 : $0.element }) == nil)
  }

  @Test("the discharge rate is fitted and the expected level declines at it")
  func expectedLevel() {
    let trace = deviceTrace(drainPerHour: 6)
    let m = BatteryModel(fitting: trace, from: trace.start, to: trace.end)
    #expect(abs(m.dischargePctPerHour - 6) < 0.05, "\(m.dischargePctPerHour)")
    #expect(abs(m.chargePctPerHour - 20) < 1, "\(m.chargePctPerHour)")
    var clock = LocalClock(.utc)
    let ten = simStart + 30 * 86_400 + 10 * 3600
    let sample = BatteryReading(time: ten, levelPct: 90)
    var last = 90.0
    for h in 1...8 {
      let level = m.expectedLevel(at: ten + Double(h) * 3600, lastSample: sample, clock: &clock)
      // (1 − p)·discharge − p·charge with p = P(charging) ≈ 0.01 by day.
      #expect(abs((last - level) - m.dischargePctPerHour) < 0.06 * m.dischargePctPerHour, "hour \(h): \(last) -> \(level)")
      last = level
    }
    #expect(m.expectedLevel(at: ten - 3600, lastSample: sample, clock: &clock) == 90)
    // Never below 0 and recharged at night.
    let low = BatteryReading(time: ten, levelPct: 10)
    #expect(m.expectedLevel(at: ten + 8 * 3600, lastSample: low, clock: &clock) == 0)
    #expect(m.expectedLevel(at: ten + 20 * 3600, lastSample: low, clock: &clock) > 50)
  }

  @Test("the gating probability: high when low and unplugged, ~0 when plugged or full")
  func gated() {
    let trace = deviceTrace()
    let m = BatteryModel(fitting: trace, from: trace.start, to: trace.end)
    var clock = LocalClock(.utc)
    let ten = simStart + 30 * 86_400 + 10 * 3600
    let p = m.probabilityGated(at: ten + 2 * 3600, clock: &clock, lastSample: BatteryReading(time: ten, levelPct: 22))
    #expect(p > 0.8, "\(p)")
    let full = m.probabilityGated(at: ten + 2 * 3600, clock: &clock, lastSample: BatteryReading(time: ten, levelPct: 95))
    #expect(full < 1e-6)
    let night = m.probabilityGated(at: ten + 17 * 3600, clock: &clock, lastSample: BatteryReading(time: ten + 16.9 * 3600, levelPct: 5))
    #expect(night < 0.05)
    let now = m.probabilityGated(at: ten, clock: &clock, lastSample: BatteryReading(time: ten, levelPct: 15))
    #expect(abs(now - (1 - m.probabilityCharging(at: ten, clock: &clock))) < 1e-12)
    let unknown = BatteryModel().probabilityGated(at: ten, clock: &clock, lastSample: nil)
    #expect(abs(unknown - (1 - 0.5) * BatteryModel.priorLowBatteryShare) < 1e-12)
    let higherGate = m.probabilityGated(at: ten + 2 * 3600, clock: &clock, lastSample: BatteryReading(time: ten, levelPct: 22), gatePct: 30)
    #expect(higherGate >= p)
  }

  @Test("P(WiFi) recovers a known schedule; no network rows give the population prior, else ⅓")
  func network() throws {
    let trace = deviceTrace()
    let m = NetworkModel(fitting: trace, from: trace.start, to: trace.end)
    var clock = LocalClock(.utc)
    let monday = simStart + 4 * 86_400
    #expect(m.probabilityWiFi(at: monday + 12 * 3600, clock: &clock) < 0.05)
    #expect(m.probabilityCellular(at: monday + 12 * 3600, clock: &clock) > 0.9)
    #expect(m.probabilityWiFi(at: monday + 21 * 3600, clock: &clock) > 0.95)
    for how in 0..<168 {
      #expect(m.wifiProbability[how] + m.offlineProbability[how] <= 1 + 1e-12)
      #expect(m.offlineProbability[how] < 0.01)
    }
    // Before the first network row (08:00 on day 1) the state is unknown.
    #expect(abs(m.observedHours - (28 * 24 - 8)) < 1e-6)

    let none = NetworkModel(fitting: deviceTrace(withNetwork: false), from: simStart, to: simStart + 28 * 86_400)
    #expect(none == NetworkModel())
    #expect(none.probabilityWiFi(at: monday, clock: &clock) == 1.0 / 3)
    #expect(none.probabilityOffline(at: monday, clock: &clock) == 1.0 / 3)
    let prior = try #require(NetworkModel.hourOfDayShares(NetworkModel.classSeconds(trace, from: trace.start, to: trace.end)))
    // WiFi 19:00–08:00, LTE otherwise, never offline.
    #expect(prior[0][21] == 1 && prior[1][12] == 1 && prior[2].allSatisfy { $0 == 0 })
    let shrunk = NetworkModel(
      fitting: deviceTrace(withNetwork: false), from: simStart, to: simStart + 28 * 86_400, prior: prior)
    #expect(shrunk.probabilityWiFi(at: monday + 21 * 3600, clock: &clock) == 1)
    #expect(shrunk.probabilityCellular(at: monday + 12 * 3600, clock: &clock) == 1)
  }

  @Test("models round-trip through JSON exactly")
  func codable() throws {
    let trace = deviceTrace()
    let b = BatteryModel(fitting: trace, from: trace.start, to: trace.end)
    let n = NetworkModel(fitting: trace, from: trace.start, to: trace.end)
    let d = DataBudget(monthlyBytes: 1e9, appShare: 0.1)
    let e = JSONEncoder()
    #expect(try JSONDecoder().decode(BatteryModel.self, from: e.encode(b)) == b)
    #expect(try JSONDecoder().decode(NetworkModel.self, from: e.encode(n)) == n)
    #expect(try JSONDecoder().decode(DataBudget.self, from: e.encode(d)) == d)
  }

  @Test("the data budget paces linearly through the month and is never negative")
  func dataBudget() {
    let budget = DataBudget()
    #expect(budget.appMonthlyBytes == 1e8)
    var clock = LocalClock(.utc)
    // January 2026: 31 days; noon of each day.
    var previous = -1.0
    for d in 0..<31 {
      let t = simStart + Double(d) * 86_400 + 43_200
      let a = budget.allowance(at: t, clock: &clock, spentThisMonth: 0)
      let expected = 1e8 * (Double(d) + 0.5) / 31
      #expect(abs(a - expected) < 1e-3, "day \(d + 1): \(a) vs \(expected)")
      if previous >= 0 { #expect(abs((a - previous) - 1e8 / 31) < 1e-3) }
      previous = a
      #expect(budget.allowance(at: t, clock: &clock, spentThisMonth: 5e7) >= 0)
      #expect(budget.allowance(at: t, clock: &clock, spentThisMonth: 2e8) == 0)
    }
    // The counter restarts in February (28 days in 2026).
    let feb = simStart + 31 * 86_400
    #expect(DataBudget.monthIndex(at: feb - 1, clock: &clock) + 1 == DataBudget.monthIndex(at: feb, clock: &clock))
    #expect(budget.allowance(at: feb + 14 * 86_400, clock: &clock, spentThisMonth: 0) == 5e7)
    #expect(budget.remainingShare(spentThisMonth: 3e7) == 7e7)
    #expect(budget.permits(bytes: 1e6, at: feb + 86_400, clock: &clock, spentThisMonth: 0))
    #expect(!budget.permits(bytes: 1e6, at: feb + 86_400, clock: &clock, spentThisMonth: 3e6))
    // Local time: at 23:30 UTC on Jan 31, Tokyo (+09:00) is already in February.
    var tokyo = LocalClock(.fixed(9 * 3600))
    #expect(DataBudget.monthFraction(at: feb - 1800, clock: &tokyo) < 0.02)
    // Calendar arithmetic round-trips over four centuries.
    for day in stride(from: -200_000, through: 200_000, by: 97) {
      let (y, m, dd) = CivilDate.civil(fromDays: day)
      #expect(CivilDate.isValid(year: y, month: m, day: dd))
      #expect(CivilDate.days(year: y, month: m, day: dd) == day)
    }
    #expect(CivilDate.civil(fromDays: 0) == (1970, 1, 1))
    #expect(CivilDate.days(year: 2000, month: 3, day: 1) == 11_017)
    #expect(CivilDate.isValid(year: 2000, month: 2, day: 29) && !CivilDate.isValid(year: 1900, month: 2, day: 29))
  }
}
