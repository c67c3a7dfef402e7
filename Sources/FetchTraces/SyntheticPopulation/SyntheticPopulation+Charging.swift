import FetchSupport
import Foundation

extension SyntheticPopulation {
  /// Appends `battery`, `charge_start` and `charge_end` rows from a simulated
  /// battery.
  ///
  /// Plug-ins come from three habits: an overnight charge (chance per night
  /// drawn per user, logit-normal around ``Parameters/overnightChargeMedian``;
  /// bedtime and wake-up times with night-to-night noise), daytime top-ups
  /// (Poisson by ``Parameters/plugInHourlyShape``, log-normal lengths), and
  /// low-battery charges (a hazard below a per-user threshold, certain at
  /// ``Parameters/forcedPlugInLevel``). The level falls at the idle rate, at
  /// the active rate while a session is open, and rises while plugged in at
  /// the charge rate (tapered above 80 %, capped at 100 %).
  /// Rows: a `battery` sample every ``Parameters/batterySampleSeconds`` from
  /// the window start and one just before every `charge_start` and
  /// `charge_end`.
  func generateCharging(
    _ tr: Traits, sessions: [Session], into events: inout [TraceEvent],
    using rng: inout SplitMix64
  ) {
    let p = parameters
    let pNight = Self.logistic(
      Self.logit(p.overnightChargeMedian)
        + p.overnightChargeLogitSD * rng.normal())
    let plugsPerDay =
      p.daytimePlugInsPerDayMedian * exp(p.daytimePlugInsSigma * rng.normal())
    let idle =
      p.idleDrainPercentPerHour * exp(p.drainSigma * rng.normal()) / 3600
    let active =
      p.activeDrainPercentPerHour * exp(p.drainSigma * rng.normal()) / 3600
    let charge = p.chargePercentPerMinute * exp(0.2 * rng.normal()) / 60
    let r = p.lowBatteryThresholdRange
    let threshold = r[0] + (r[1] - r[0]) * rng.uniform()
    let level = 40 + 60 * rng.uniform()

    var plans = overnightCharges(tr, pNight: pNight, using: &rng)
    daytimeCharges(tr, plugsPerDay: plugsPerDay, into: &plans, using: &rng)
    plans.sort { $0.on < $1.on || ($0.on == $1.on && $0.off < $1.off) }

    var battery = Battery(
      sessions: sessions, idle: idle, active: active, charge: charge,
      taper: p.chargeTaperFactor, level: level, now: tr.start)
    sweep(
      tr, plans: plans, battery: &battery, threshold: threshold,
      into: &events, using: &rng)
  }

  /// A planned charge: plug-in and unplug, UTC seconds, and whether it is
  /// the overnight habit.
  private typealias ChargePlan = (on: Double, off: Double, night: Bool)

  /// The overnight charges: one per night with chance `pNight`, from the
  /// noisy bedtime to the noisy wake-up (at least 2 h).
  private func overnightCharges(
    _ tr: Traits, pNight: Double, using rng: inout SplitMix64
  ) -> [ChargePlan] {
    let p = parameters
    var plans: [ChargePlan] = []
    plans.reserveCapacity(days * 4)
    for d in -1..<days {
      guard rng.uniform() < pNight else { continue }
      let day = tr.start + Double(d) * 86_400
      let lateNight = weekday(d) == 4 || weekday(d) == 5  // Fri, Sat
      let bed =
        p.bedtimeHour + tr.chrono + (lateNight ? p.weekendWakeDelayHours : 0)
        + p.bedtimeSDHours * rng.normal()
      let wake =
        24 + p.wakeHour + tr.chrono
        + (isWeekend(d + 1) ? p.weekendWakeDelayHours : 0)
        + p.wakeSDHours * rng.normal()
      let on = (day + bed * 3600).rounded()
      let off = max(on + 2 * 3600, (day + wake * 3600).rounded())
      plans.append((on, off, true))
    }
    return plans
  }

  /// The daytime top-ups: Poisson per hour by the plug-in shape, with
  /// log-normal lengths (5 min to 12 h).
  private func daytimeCharges(
    _ tr: Traits, plugsPerDay: Double, into plans: inout [ChargePlan],
    using rng: inout SplitMix64
  ) {
    let p = parameters
    for d in 0..<days {
      let day = tr.start + Double(d) * 86_400
      for h in 0..<24 {
        let x = Double(h) + 0.5 - tr.chrono
        let mean = plugsPerDay * Self.curve(plugShape, at: x)
        for _ in 0..<rng.poisson(mean: mean) {
          let on = (day + (Double(h) + rng.uniform()) * 3600).rounded()
          let len = min(
            12 * 3600,
            max(
              300,
              p.daytimeChargeMedianHours * 3600
                * exp(p.daytimeChargeSigma * rng.normal())))
          plans.append((on, on + len.rounded(), false))
        }
      }
    }
  }

  /// The simulated battery between events: its level, whether it is
  /// plugged in, and the `battery` rows written so far.
  private struct Battery {
    /// The user's sessions (sorted), while which the level falls at the active rate.
    let sessions: [Session]
    /// Drain (idle, active) and charge rates, % per second.
    let idle: Double
    let active: Double
    let charge: Double
    /// The charge rate's factor above 80 %.
    let taper: Double
    var level: Double
    /// The time `level` is at.
    var now: Double
    var charging = false
    var unplugAt = 0.0
    var lastSample = -Double.infinity
    /// The first session that may still overlap `now`.
    var busyIndex = 0

    /// Seconds of [a, b) inside a session.
    mutating func inUse(_ a: Double, _ b: Double) -> Double {
      while busyIndex < sessions.count && sessions[busyIndex].end <= a {
        busyIndex += 1
      }
      var s = 0.0
      var i = busyIndex
      while i < sessions.count && sessions[i].start < b {
        s += max(0, min(b, sessions[i].end) - max(a, sessions[i].start))
        i += 1
      }
      return s
    }

    /// Moves the level from `now` to `t`: charging (tapered above 80 %,
    /// capped at 100 %) or draining (idle and active rates).
    mutating func advance(to t: Double) {
      guard t > now else { return }
      if charging {
        var dt = t - now
        if level < 80 {
          let to80 = (80 - level) / charge
          if dt <= to80 {
            level += charge * dt
            dt = 0
          } else {
            level = 80
            dt -= to80
          }
        }
        if dt > 0 {
          level = min(100, level + charge * taper * dt)
        }
      } else {
        let used = inUse(now, t)
        level -= idle * (t - now - used) + active * used
        level = max(0, level)
      }
      now = t
    }

    /// A `battery` row at `t` (one per time).
    mutating func sample(_ t: Double, into events: inout [TraceEvent]) {
      guard t != lastSample else { return }
      events.append(
        TraceEvent(time: t, kind: .battery, value: (level * 10).rounded() / 10))
      lastSample = t
    }

    mutating func plugIn(_ t: Double, until off: Double, into events: inout [TraceEvent]) {
      sample(t, into: &events)
      events.append(TraceEvent(time: t, kind: .chargeStart))
      charging = true
      unplugAt = max(off, t + 60)
    }
  }

  /// The event sweep over the window: unplugs, planned plug-ins, the
  /// low-battery check every 5 minutes and the battery samples (ties in
  /// that order).
  private func sweep(
    _ tr: Traits, plans: [ChargePlan], battery b: inout Battery,
    threshold: Double, into events: inout [TraceEvent],
    using rng: inout SplitMix64
  ) {
    let p = parameters
    let tick = 300.0
    let hazard = 1 - exp(-tick / (p.lowBatteryPlugInMinutes * 60))
    var planIndex = 0
    var nextTick = tr.start
    var nextSample = tr.start
    while true {
      // The next thing to happen; ties: unplug, plan, tick, sample.
      var t = min(nextTick, nextSample)
      if b.charging { t = min(t, b.unplugAt) }
      if planIndex < plans.count { t = min(t, max(b.now, plans[planIndex].on)) }
      if t > tr.end { break }
      b.advance(to: t)
      if b.charging && b.unplugAt <= t {
        b.sample(t, into: &events)
        events.append(TraceEvent(time: t, kind: .chargeEnd))
        b.charging = false
      }
      while planIndex < plans.count && plans[planIndex].on <= t {
        let plan = plans[planIndex]
        planIndex += 1
        guard plan.off > t else { continue }
        if !b.charging {
          let x = max(0, (100 - b.level) / (100 - p.topUpPivotLevel))
          if plan.night || rng.uniform() < pow(x, p.topUpLevelExponent) {
            b.plugIn(t, until: plan.off, into: &events)
          }
        } else if plan.night {
          b.unplugAt = max(b.unplugAt, plan.off)  // an overnight charge continues
        }
      }
      if t == nextTick {
        if !b.charging
          && (b.level <= p.forcedPlugInLevel
            || (b.level <= threshold && rng.uniform() < hazard))
        {
          let len = min(
            8 * 3600, max(900, 3600 * exp(0.8 * rng.normal())))
          b.plugIn(t, until: t + len.rounded(), into: &events)
        }
        nextTick += tick
      }
      if t == nextSample {
        b.sample(t, into: &events)
        nextSample += p.batterySampleSeconds
      }
    }
  }
}
