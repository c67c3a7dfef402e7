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
    var level = 40 + 60 * rng.uniform()

    // Planned charges (plug-in, unplug), UTC seconds.
    var plans: [(on: Double, off: Double, night: Bool)] = []
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
    plans.sort { $0.on < $1.on || ($0.on == $1.on && $0.off < $1.off) }

    // Event sweep.
    let tick = 300.0
    let hazard = 1 - exp(-tick / (p.lowBatteryPlugInMinutes * 60))
    var charging = false
    var unplugAt = 0.0
    var planIndex = 0
    var now = tr.start
    var nextTick = tr.start
    var nextSample = tr.start
    var lastSample = -Double.infinity
    var busyIndex = 0

    func inUse(_ a: Double, _ b: Double) -> Double {
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
    func advance(to t: Double) {
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
          level = min(100, level + charge * p.chargeTaperFactor * dt)
        }
      } else {
        let used = inUse(now, t)
        level -= idle * (t - now - used) + active * used
        level = max(0, level)
      }
      now = t
    }
    func sample(_ t: Double) {
      guard t != lastSample else { return }
      events.append(
        TraceEvent(time: t, kind: .battery, value: (level * 10).rounded() / 10))
      lastSample = t
    }
    func plugIn(_ t: Double, until off: Double) {
      sample(t)
      events.append(TraceEvent(time: t, kind: .chargeStart))
      charging = true
      unplugAt = max(off, t + 60)
    }

    while true {
      // The next thing to happen; ties: unplug, plan, tick, sample.
      var t = min(nextTick, nextSample)
      if charging { t = min(t, unplugAt) }
      if planIndex < plans.count { t = min(t, max(now, plans[planIndex].on)) }
      if t > tr.end { break }
      advance(to: t)
      if charging && unplugAt <= t {
        sample(t)
        events.append(TraceEvent(time: t, kind: .chargeEnd))
        charging = false
      }
      while planIndex < plans.count && plans[planIndex].on <= t {
        let plan = plans[planIndex]
        planIndex += 1
        guard plan.off > t else { continue }
        if !charging {
          let x = max(0, (100 - level) / (100 - p.topUpPivotLevel))
          if plan.night || rng.uniform() < pow(x, p.topUpLevelExponent) {
            plugIn(t, until: plan.off)
          }
        } else if plan.night {
          unplugAt = max(unplugAt, plan.off)  // an overnight charge continues
        }
      }
      if t == nextTick {
        if !charging
          && (level <= p.forcedPlugInLevel
            || (level <= threshold && rng.uniform() < hazard))
        {
          let len = min(
            8 * 3600, max(900, 3600 * exp(0.8 * rng.normal())))
          plugIn(t, until: t + len.rounded())
        }
        nextTick += tick
      }
      if t == nextSample {
        sample(t)
        nextSample += p.batterySampleSeconds
      }
    }
  }
}
