import FetchTraces
import Foundation

/// A battery level reading: when, and how full.
package struct BatteryReading: Codable, Sendable, Equatable {
  /// Unix time, s.
  package var time: Double
  /// Level, % (0...100).
  package var levelPct: Double

  package init(time: Double, levelPct: Double) {
    self.time = time
    self.levelPct = levelPct
  }

  enum CodingKeys: String, CodingKey {
    case time = "time_s", levelPct = "level_pct"
  }
}

/// A user's charging habits and battery drain, fitted from a training
/// window, for policies that must guess whether iOS will let background work
/// run (Apple, WWDC20 session 10063: work is gated by critically low battery, < 20 %, and
/// Low Power Mode, offered at 20 %).
///
/// - **P(on the charger)** by local hour of the week (168 bins, Monday 00:00
///   first), from the trace's `charge_start` / `charge_end` rows, smoothed in
///   two levels: the user's hour-of-day share is shrunk toward a prior
///   curve p₀ — the population's P(plugged) by hour of day, fitted on the
///   training windows of other users (``hourOfDayShares(charging:total:)``;
///   `fetchlab fit` passes it), never a curve built into the code — with a
///   Beta prior of ``priorHours`` pseudo-hours, and each hour-of-week share
///   toward the user's hour-of-day share with another ``priorHours``:
///
///       p_d  = (C_d + κ·p₀_d) / (T_d + κ)        (hour of day d)
///       p_hw = (C_hw + κ·p_d) / (T_hw + κ)       (hour of week, d = hw mod 24)
///
///   with C the charging hours and T the observed hours in the bin. A trace
///   without charging rows (UbiqLog) gets p₀ itself; without a prior curve,
///   p₀ is the uninformed ``uninformedPluggedShare`` (½).
/// - **Discharge rate**, %/h while unplugged: Σ drop / Σ hours over pairs of
///   successive battery samples at most 12 h apart with the device unplugged
///   in between, shrunk toward ``priorDischargePctPerHour`` (4 %/h, an
///   awake-average placeholder, **NV**) with ``priorHours`` pseudo-hours.
/// - **Charge rate**, %/h while plugged, likewise toward
///   ``priorChargePctPerHour`` (40 %/h, **NV**), from pairs starting below 95 %.
///
/// Without charging rows, a pair of samples whose level did not rise counts
/// as unplugged and one whose level rose as plugged.
package struct BatteryModel: Codable, Sendable, Equatable {
  /// P(plugged) when nothing is known: ½ (no information either way).
  package static let uninformedPluggedShare = 0.5
  /// Prior discharge rate while unplugged, %/h: a placeholder for an awake
  /// phone's average drain (**NV**; sweep it).
  package static let priorDischargePctPerHour = 4.0
  /// Prior charge rate while plugged, %/h (**NV**; 0→100 % in 2.5 h).
  package static let priorChargePctPerHour = 40.0
  /// Share of unplugged time below 20 % when no level is known (**NV**
  /// placeholder; scaled linearly for other gates).
  package static let priorLowBatteryShare = 0.05

  /// P(on the charger) by local hour of week, 168 values in [0, 1].
  package private(set) var chargingProbability: [Double]
  /// Battery drain while unplugged, %/h, ≥ 0.
  package private(set) var dischargePctPerHour: Double
  /// Battery gain while plugged, %/h, ≥ 0.
  package private(set) var chargePctPerHour: Double
  /// Training hours with a known charging state (0: the prior curve).
  package private(set) var observedChargingHours: Double
  /// Battery samples in the training window.
  package private(set) var batterySamples: Int
  /// Standard deviation of the level around ``expectedLevel(at:lastSample:clock:)``
  /// after one hour, % per √h (**NV**); grows with √(hours since the sample).
  package var levelSDPerSqrtHour: Double
  /// Pseudo-hours of the priors (κ).
  package private(set) var priorHours: Double

  /// The prior model: `prior` (24 values by local hour of day; nil: the
  /// uninformed ½) for every day of the week, the prior rates.
  package init(priorHours: Double = 2, levelSDPerSqrtHour: Double = 5, prior: [Double]? = nil) {
    let p0 = Self.checkedPrior(prior)
    chargingProbability = (0..<168).map { p0[$0 % 24] }
    dischargePctPerHour = Self.priorDischargePctPerHour
    chargePctPerHour = Self.priorChargePctPerHour
    observedChargingHours = 0
    batterySamples = 0
    self.levelSDPerSqrtHour = levelSDPerSqrtHour
    self.priorHours = priorHours
  }

  /// `prior`, checked, or the uninformed curve.
  static func checkedPrior(_ prior: [Double]?) -> [Double] {
    guard let prior else { return Array(repeating: uninformedPluggedShare, count: 24) }
    precondition(prior.count == 24 && prior.allSatisfy { $0 >= 0 && $0 <= 1 }, "a prior needs 24 probabilities in [0, 1]")
    return prior
  }

  /// Fits the model to the window [`from`, `to`) of `trace` (see the type's
  /// docs), shrunk toward `prior` (24 values by local hour of day, e.g. the
  /// population's ``hourOfDayShares(charging:total:)``; nil: ½). The
  /// charging state at `from` comes from the trace's history.
  ///
  /// - Complexity: O(events + window hours).
  package init(
    fitting trace: UserTrace, from: Double, to: Double, priorHours: Double = 2, levelSDPerSqrtHour: Double = 5,
    prior: [Double]? = nil
  ) {
    precondition(from.isFinite && to.isFinite && to > from, "training window [\(from), \(to)) is empty")
    precondition(priorHours > 0, "priorHours must be > 0")
    self.init(priorHours: priorHours, levelSDPerSqrtHour: levelSDPerSqrtHour, prior: prior)
    let chargeRows = trace.events.filter { ($0.kind == .chargeStart || $0.kind == .chargeEnd) && $0.time < to }
    if !chargeRows.isEmpty {
      let (charging, total) = Self.chargingSeconds(trace, from: from, to: to)
      observedChargingHours = total.reduce(0, +) / 3600
      chargingProbability = Self.smooth(
        charging: charging, total: total, prior: Self.checkedPrior(prior), kappa: priorHours)
    }

    // Rates from successive battery samples.
    var dropPct = 0.0, dropH = 0.0, gainPct = 0.0, gainH = 0.0
    var plugged = chargeRows.first?.kind == .chargeEnd
    var previous: TraceEvent?
    var changedSincePrevious = false
    for e in trace.events where e.time < to {
      switch e.kind {
      case .chargeStart, .chargeEnd:
        plugged = e.kind == .chargeStart
        changedSincePrevious = true
      case .battery:
        if e.time >= from {
          batterySamples += 1
          if let p = previous, p.time >= from, e.time > p.time, e.time - p.time <= 12 * 3600, !changedSincePrevious {
            let h = (e.time - p.time) / 3600
            let d = e.value - p.value
            let unplugged = chargeRows.isEmpty ? d <= 0 : !plugged
            if unplugged {
              dropPct -= d
              dropH += h
            } else if p.value < 95 {
              gainPct += d
              gainH += h
            }
          }
        }
        previous = e
        changedSincePrevious = false
      default: break
      }
    }
    dischargePctPerHour = max(0, (dropPct + priorHours * Self.priorDischargePctPerHour) / (dropH + priorHours))
    chargePctPerHour = max(0, (gainPct + priorHours * Self.priorChargePctPerHour) / (gainH + priorHours))
  }

  /// Seconds on the charger and seconds with a known charging state, per
  /// local hour of week, over [`from`, `to`) of `trace`; the state before
  /// the first charge row is that row's opposite. All zero without rows.
  ///
  /// - Complexity: O(events + window hours).
  package static func chargingSeconds(_ trace: UserTrace, from: Double, to: Double) -> (charging: [Double], total: [Double]) {
    var clock = LocalClock(trace.timeZone)
    let chargeRows = trace.events.filter { ($0.kind == .chargeStart || $0.kind == .chargeEnd) && $0.time < to }
    var total = [Double](repeating: 0, count: 168), charging = [Double](repeating: 0, count: 168)
    guard let first = chargeRows.first else { return (charging, total) }
    var state = first.kind == .chargeEnd  // before the first row: its opposite
    var t = from
    for e in chargeRows {
      if e.time > t {
        let on = state
        LocalHours.forEachPiece(from: t, to: e.time, clock: &clock) { how, s in
          total[how] += s
          if on { charging[how] += s }
        }
        t = e.time
      }
      state = e.kind == .chargeStart
    }
    let on = state
    LocalHours.forEachPiece(from: max(t, from), to: to, clock: &clock) { how, s in
      total[how] += s
      if on { charging[how] += s }
    }
    return (charging, total)
  }

  /// P(plugged) by local hour of day from summed ``chargingSeconds(_:from:to:)``
  /// (e.g. over the population's training windows), or nil when some hour
  /// has no observed time.
  package static func hourOfDayShares(charging: [Double], total: [Double]) -> [Double]? {
    precondition(charging.count == 168 && total.count == 168, "need 168 hour-of-week bins")
    var c = [Double](repeating: 0, count: 24), n = [Double](repeating: 0, count: 24)
    for how in 0..<168 {
      c[how % 24] += charging[how]
      n[how % 24] += total[how]
    }
    guard n.allSatisfy({ $0 > 0 }) else { return nil }
    return (0..<24).map { min(1, max(0, c[$0] / n[$0])) }
  }

  /// Two-level Beta smoothing of per-hour-of-week shares (see the type's docs).
  static func smooth(charging: [Double], total: [Double], prior: [Double], kappa: Double) -> [Double] {
    var dayC = [Double](repeating: 0, count: 24), dayT = [Double](repeating: 0, count: 24)
    for how in 0..<168 {
      dayC[how % 24] += charging[how] / 3600
      dayT[how % 24] += total[how] / 3600
    }
    let pd = (0..<24).map { (dayC[$0] + kappa * prior[$0]) / (dayT[$0] + kappa) }
    return (0..<168).map { (charging[$0] / 3600 + kappa * pd[$0 % 24]) / (total[$0] / 3600 + kappa) }
  }

  /// P(on the charger) at Unix time `t`.
  package func probabilityCharging(at t: Double, clock: inout LocalClock) -> Double {
    chargingProbability[min(167, max(0, Int(clock.hourOfWeek(t))))]
  }

  /// The expected battery level at `t`, %, starting from `lastSample`:
  /// the level follows `dL/dt = p(t)·charge − (1 − p(t))·discharge` with
  /// p = P(on the charger) by hour of week, clamped to [0, 100] after each
  /// local-hour piece (a mean-field approximation). Before the sample: the
  /// sample's level.
  ///
  /// - Complexity: O(hours between the sample and `t`).
  package func expectedLevel(at t: Double, lastSample: BatteryReading, clock: inout LocalClock) -> Double {
    var level = min(100, max(0, lastSample.levelPct))
    guard t > lastSample.time else { return level }
    LocalHours.forEachPiece(from: lastSample.time, to: t, clock: &clock) { how, s in
      let p = chargingProbability[how]
      level += (p * chargePctPerHour - (1 - p) * dischargePctPerHour) * s / 3600
      level = min(100, max(0, level))
    }
    return level
  }

  /// The chance that low battery gates background work at `t`: the device
  /// is unplugged and below `gatePct` (iOS: critically low battery < 20 %,
  /// and Low Power Mode, offered at 20 %; a user switching LPM on at a higher
  /// level is not modelled).
  ///
  ///     P = (1 − P(charging at t)) · P(level(t) < gate)
  ///
  /// With a `lastSample`, level(t) is normal around
  /// ``expectedLevel(at:lastSample:clock:)`` with SD
  /// ``levelSDPerSqrtHour``·√(hours since the sample); without one,
  /// P(level < gate) = ``priorLowBatteryShare`` × gate / 20 (capped at 1).
  package func probabilityGated(
    at t: Double, clock: inout LocalClock, lastSample: BatteryReading?, gatePct: Double = 20
  ) -> Double {
    precondition(gatePct >= 0 && gatePct <= 100, "gatePct must be in 0...100")
    let unplugged = 1 - probabilityCharging(at: t, clock: &clock)
    guard let s = lastSample else {
      return unplugged * min(1, Self.priorLowBatteryShare * gatePct / 20)
    }
    let mean = expectedLevel(at: t, lastSample: s, clock: &clock)
    let sd = levelSDPerSqrtHour * (max(0, t - s.time) / 3600).squareRoot()
    let low: Double
    if sd > 0 {
      low = 0.5 * erfc(-(gatePct - mean) / (sd * 2.0.squareRoot()))
    } else {
      low = mean < gatePct ? 1 : 0
    }
    return unplugged * low
  }

  enum CodingKeys: String, CodingKey {
    case chargingProbability = "charging_probability_by_hour_of_week"
    case dischargePctPerHour = "discharge_pct_per_h"
    case chargePctPerHour = "charge_pct_per_h"
    case observedChargingHours = "observed_charging_h"
    case batterySamples = "battery_samples"
    case levelSDPerSqrtHour = "level_sd_pct_per_sqrt_h"
    case priorHours = "prior_h"
  }

  package init(from decoder: any Decoder) throws {
    let c = try decoder.container(keyedBy: CodingKeys.self)
    chargingProbability = try c.decodeHourOfWeekProbabilities(forKey: .chargingProbability)
    dischargePctPerHour = try c.decodeNonNegative(forKey: .dischargePctPerHour)
    chargePctPerHour = try c.decodeNonNegative(forKey: .chargePctPerHour)
    observedChargingHours = try c.decodeNonNegative(forKey: .observedChargingHours)
    batterySamples = try c.decode(Int.self, forKey: .batterySamples)
    levelSDPerSqrtHour = try c.decodeNonNegative(forKey: .levelSDPerSqrtHour)
    priorHours = try c.decodeNonNegative(forKey: .priorHours)
  }
}
