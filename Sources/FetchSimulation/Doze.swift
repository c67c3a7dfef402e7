import FetchTraces

/// Timing of Android's deep Doze, from AOSP `DeviceIdleController` defaults
/// (V). All durations in seconds.
///
/// Only **deep** Doze is modelled. Light Doze (idle after 1 min inactive +
/// 3 min pre-idle, light idle periods of 5 → 15 min with 1–5 min
/// maintenance budgets) is omitted: it restricts network access only in short
/// slices and never holds a job for long, so a policy that runs a job at most
/// every 15 min is barely affected by it.
package struct DozeParameters: SettingTable {
  /// Screen off and unplugged for this long before deep Doze starts, s
  /// (V: 30 min; 15 min on small-battery devices).
  package var inactiveS = 1800.0
  /// Motion sensing and locating after the inactive timeout, before the
  /// first idle period, s (V: motion 4 min + locating 30 s). Traces carry no
  /// motion, so the device is assumed stationary whenever its screen is off:
  /// sensing always succeeds and only adds its duration. 0 skips it.
  package var sensingS = 270.0
  /// First deep idle period, s (V: 60 min).
  package var idleS = 3600.0
  /// Growth of each following idle period (V: ×2).
  package var idleFactor = 2.0
  /// Longest idle period, s (V: 6 h; so 1, 2, 4, 6, 6, … h).
  package var maxIdleS = 21_600.0
  /// First maintenance window, s (V: 5 min).
  package var maintenanceS = 300.0
  /// Growth of each following maintenance window (×2, AOSP's pending
  /// factor, M; `DeviceIdleController` gives 5 → 10 min, V).
  package var maintenanceFactor = 2.0
  /// Longest maintenance window, s (V: 10 min).
  package var maxMaintenanceS = 600.0

  package init() {}

  /// The `doze_*` settings (a family embeds them with ``SettingTable/keys(at:)``).
  package static let keys: [SettingKey<DozeParameters>] = [
    .init("doze_inactive", \.inactiveS, duration: true, help: "screen off and unplugged this long before deep Doze starts sensing"),
    .init("doze_sensing", \.sensingS, duration: true, help: "motion sensing before the first idle period"),
    .init("doze_idle", \.idleS, min: 1, duration: true, help: "the first deep-Doze idle period"),
    .init("doze_idle_factor", \.idleFactor, min: 1, help: "each idle period is this times the previous one"),
    .init("doze_idle_max", \.maxIdleS, min: 1, duration: true, help: "longest idle period"),
    .init("doze_maintenance", \.maintenanceS, min: 1, duration: true, help: "the first maintenance window"),
    .init("doze_maintenance_factor", \.maintenanceFactor, min: 1, help: "each maintenance window is this times the previous one"),
    .init("doze_maintenance_max", \.maxMaintenanceS, min: 1, duration: true, help: "longest maintenance window"),
  ]
}

/// Android deep Doze (`DeviceIdleController`) as a policy can infer it from
/// what it observes: the screen is on during a user session (an open lasts
/// its `value` seconds) and the device is charging between `charge_start`
/// and `charge_end`.
///
/// The device is *inactive* when the screen is off and it is not charging.
/// After ``DozeParameters/inactiveS`` + ``DozeParameters/sensingS`` of
/// inactivity it enters deep Doze: idle periods of 1, 2, 4, 6, 6, … h, each
/// followed by a maintenance window of 5, 10, 10, … min. During an idle
/// period jobs, syncs and network wait; they run inside maintenance windows.
/// Any open (screen on) or plugging in exits Doze, and the sequence restarts
/// from the first idle period the next time. Other apps' wakes do not exit
/// Doze. Light Doze is not modelled (see ``DozeParameters``).
///
/// Feed it every observed event with ``observe(_:)``; the queries answer for
/// any time `t` at or after the last event fed, assuming nothing happens in
/// between. The schedule of idle periods and windows is periodic once both
/// have reached their maxima, so every query is O(1).
package struct DozeState: Sendable, Hashable {
  package let params: DozeParameters
  /// End of the latest screen session, Unix s.
  package private(set) var screenOnUntil: Double
  /// When the device was last unplugged, Unix s.
  var unpluggedAt: Double
  package private(set) var isCharging: Bool

  /// - Parameters:
  ///   - start: the time the device is known to be screen-off and (unless
  ///     `isCharging`) unplugged from, typically the replay window start.
  ///   - history: what the trace before `start` shows (``DozeHistory``):
  ///     the device has been inactive since its last screen-off and
  ///     unplugging there, if before `start`.
  package init(
    params: DozeParameters = DozeParameters(), start: Double, history: DozeHistory? = nil, isCharging: Bool = false
  ) {
    precondition(params.idleS > 0 && params.maintenanceS > 0, "Doze periods must be positive")
    precondition(params.idleFactor >= 1 && params.maintenanceFactor >= 1, "Doze factors must be at least 1")
    self.params = params
    screenOnUntil = min(history?.screenOffAt ?? start, start)
    unpluggedAt = min(history?.unpluggedAt ?? start, start)
    self.isCharging = isCharging
  }

  /// Applies an observed trace event: opens turn the screen on for their
  /// session length, charging events plug and unplug; others are ignored.
  package mutating func observe(_ e: TraceEvent) {
    switch e.kind {
    case .open: screenOn(at: e.time, for: e.value)
    case .chargeStart: setCharging(true, at: e.time)
    case .chargeEnd: setCharging(false, at: e.time)
    default: break
    }
  }

  /// The user turned the screen on at `t` for `seconds`.
  package mutating func screenOn(at t: Double, for seconds: Double) {
    screenOnUntil = max(screenOnUntil, t + max(0, seconds))
  }

  /// Plugged in (`true`) or unplugged at `t`.
  package mutating func setCharging(_ on: Bool, at t: Double) {
    if isCharging && !on { unpluggedAt = t }
    isCharging = on
  }

  /// Since when the device has been inactive (screen off and unplugged), or
  /// `nil` while charging. May lie in the future while a session runs.
  package var inactiveSince: Double? {
    isCharging ? nil : max(screenOnUntil, unpluggedAt)
  }

  /// When the first deep idle period starts (or started), or `nil` while
  /// charging.
  package var deepIdleStart: Double? {
    inactiveSince.map { $0 + params.inactiveS + params.sensingS }
  }

  /// Whether the device is in a deep idle period at `t` (not in a
  /// maintenance window, not before deep Doze starts).
  package func isDozing(at t: Double) -> Bool {
    guard let s = deepIdleStart, t >= s else { return false }
    return t < cycle(at: t, from: s).idle.upperBound
  }

  /// Whether `t` falls inside a deep-Doze maintenance window.
  package func isInMaintenanceWindow(at t: Double) -> Bool {
    guard let s = deepIdleStart, t >= s else { return false }
    return cycle(at: t, from: s).maintenance.contains(t)
  }

  /// The first maintenance window that ends after `t`: the one containing
  /// `t`, or the next one. `nil` while charging. Windows are half-open,
  /// [start, end).
  package func nextMaintenanceWindow(after t: Double) -> Range<Double>? {
    guard let s = deepIdleStart else { return nil }
    return cycle(at: max(t, s), from: s).maintenance
  }

  /// The earliest time ≥ `t` at which deferrable work may run: `t` unless
  /// the device is in an idle period then, else the next window's start.
  package func nextRunnable(at t: Double) -> Double {
    guard isDozing(at: t), let w = nextMaintenanceWindow(after: t) else { return t }
    return w.lowerBound
  }

  /// The idle period and following maintenance window containing `t ≥ s`,
  /// where `s` is the start of the first idle period.
  func cycle(at t: Double, from s: Double) -> (idle: Range<Double>, maintenance: Range<Double>) {
    let p = params
    var start = s
    var idle = p.idleS
    var maint = p.maintenanceS
    var steady = false
    for _ in 0..<128 {
      let idleEnd = start + idle
      let maintEnd = idleEnd + maint
      if t < maintEnd { return (start..<idleEnd, idleEnd..<maintEnd) }
      start = maintEnd
      let nextIdle = max(idle, min(idle * p.idleFactor, p.maxIdleS))
      let nextMaint = max(maint, min(maint * p.maintenanceFactor, p.maxMaintenanceS))
      if !steady && nextIdle == idle && nextMaint == maint {
        // Periodic from here: jump over whole cycles, then step the rest.
        steady = true
        let n = ((t - start) / (idle + maint)).rounded(.down)
        if n > 1 { start += (n - 1) * (idle + maint) }
      }
      idle = nextIdle
      maint = nextMaint
    }
    // Growth too slow to reach the maxima in 128 steps: continue linearly.
    let n = ((t - start) / (idle + maint)).rounded(.down)
    start += max(0, n) * (idle + maint)
    while start + idle + maint <= t { start += idle + maint }
    return (start..<(start + idle), (start + idle)..<(start + idle + maint))
  }
}

/// When the screen last went off and the device was last unplugged in the
/// trace before a replay window (the training part): where Doze's clock
/// stands at the window's start, instead of restarting there.
package struct DozeHistory: Sendable, Hashable {
  /// The end of the last session, at most the history's end, Unix s; the
  /// history's start when it has no open.
  package var screenOffAt: Double
  /// The last `charge_end` (the history's start when there is none), or
  /// the history's end while a `charge_start` is still open there.
  package var unpluggedAt: Double

  /// - Complexity: O(n) in the history's events.
  package init(_ history: UserTrace) {
    var off = history.start
    var unplugged = history.start
    var plugged = false
    for e in history.events {
      switch e.kind {
      case .open: off = max(off, min(e.time + max(0, e.value), history.end))
      case .chargeStart: plugged = true
      case .chargeEnd:
        plugged = false
        unplugged = max(unplugged, e.time)
      default: break
      }
    }
    screenOffAt = off
    unpluggedAt = plugged ? history.end : unplugged
  }
}
