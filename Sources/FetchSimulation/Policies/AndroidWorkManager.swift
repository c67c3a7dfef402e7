import FetchModels
import FetchTraces
import FetchWorld

// MARK: - WorkManager

/// Knobs of Android's WorkManager / JobScheduler periodic work (AndroidX
/// documentation) and of the Doze model that defers it (AOSP DeviceIdleController). Flags are 0 (off) or
/// any other value (on); durations are seconds.
package struct AndroidWorkManagerParameters: SettingTable {
  /// Flex window, s: each period's run may happen in its last `flex`
  /// seconds (V: minimum 5 min, which is the default here; clamped to
  /// [5 min, period]).
  package var flexS = 300.0
  /// Run in the flex window at the first moment the device's radio is
  /// already up (a user session or another app's wake in progress), else at
  /// the window's end (1, NV: a modelling choice that gives the system the
  /// batching freedom flex exists for). 0: run as soon as the window opens.
  package var opportunistic = 1.0
  /// Constraint: unmetered network (WiFi) (V; off by default).
  package var requiresUnmetered = 0.0
  /// Constraint: any network; without it a job may run offline and fail
  /// (V; off by default).
  package var requiresConnected = 0.0
  /// Constraint: charging (V; off by default).
  package var requiresCharging = 0.0
  /// Constraint: battery not low, i.e. charging, unknown, or at least
  /// ``batteryLowPct`` (V; off by default).
  package var requiresBatteryNotLow = 0.0
  /// Battery level below which the battery is "low", % (NV: Android's
  /// low-battery warning level is 15 %, M).
  package var batteryLowPct = 15.0
  /// Defer by deep Doze (1) or ignore Doze (0).
  package var dozeEnabled = 1.0
  /// Deep-Doze timing (AOSP defaults, V).
  package var doze = DozeParameters()

  package init() {}

  /// Names accepted in `android-workmanager:<interval>,key=value`.
  package static let keys: [SettingKey<AndroidWorkManagerParameters>] = [
    .init("flex", \.flexS, min: 300, duration: true, help: "flex window: each period's run may happen in its last <flex>"),
    .init("opportunistic", \.opportunistic, max: 1, help: "1: run in the flex window when the radio is already up, else at its end; 0: as soon as it opens"),
    .init("unmetered", \.requiresUnmetered, max: 1, help: "constraint: unmetered network (WiFi), 0 or 1"),
    .init("connected", \.requiresConnected, max: 1, help: "constraint: any network, 0 or 1"),
    .init("charging", \.requiresCharging, max: 1, help: "constraint: charging, 0 or 1"),
    .init("battery_not_low", \.requiresBatteryNotLow, max: 1, help: "constraint: battery not low, 0 or 1"),
    .init("battery_low_pct", \.batteryLowPct, max: SettingBound.percent, help: "battery %, below which the battery is \"low\""), .init("doze", \.dozeEnabled, max: 1, help: "1: deep Doze defers work; 0: ignore Doze"),
  ] + DozeParameters.keys(at: \.doze)
}

/// A periodic job under JobScheduler's rules: flex window, constraints and
/// deep Doze; shared by ``AndroidWorkManagerPolicy`` and ``AndroidStandbyPolicy``.
struct AndroidPeriodicJob: Sendable {
  let period: Double
  let flex: Double
  let params: AndroidWorkManagerParameters
  var doze: DozeState?
  /// The flex window of the next run: [eligibleAt, dueAt].
  var eligibleAt = Double.infinity
  var dueAt = Double.infinity

  /// Where the first period ends, as a fraction of the period after the
  /// window start (``TimerPhase``).
  let phase: Double
  /// The trace before the window, for Doze's clock at its start.
  var history: DozeHistory?

  init(period: Double, params: AndroidWorkManagerParameters, phase: Double = 1) {
    self.phase = phase
    self.period = max(period, AndroidWorkManagerPolicy.minimumPeriodS)
    flex = min(max(params.flexS, AndroidWorkManagerPolicy.minimumFlexS), self.period)
    self.params = params
  }

  /// Starts the replay with the work enqueued `(1 − phase)` periods before
  /// `ctx.now` (the app's own enqueue time, ``TimerPhase``; phase 1: at
  /// `ctx.now`): the first run falls in the flex window at the end of the
  /// current period.
  mutating func start(_ ctx: inout PolicyContext) {
    if params.dozeEnabled != 0 {
      doze = DozeState(params: params.doze, start: ctx.now, history: history, isCharging: ctx.isCharging)
    }
    dueAt = ctx.now + period * phase
    eligibleAt = max(ctx.now, dueAt - flex)
  }

  mutating func observe(_ e: TraceEvent) {
    doze?.observe(e)
  }

  /// Whether the radio is up now (transferring or in its tail: some
  /// session burst, wake or fetch ended less than a tail ago). A session
  /// is not enough: an offline app's session, or the quiet stretch between
  /// a networked session's bursts, leaves the radio idle.
  static func radioUp(_ ctx: PolicyContext) -> Bool {
    ctx.network != .offline && ctx.radioQuietGapS < ctx.radioTailS
  }

  func constraintsMet(_ ctx: PolicyContext) -> Bool {
    let p = params
    if p.requiresUnmetered != 0 && ctx.network != .wifi { return false }
    if p.requiresConnected != 0 && ctx.network == .offline { return false }
    if p.requiresCharging != 0 && !ctx.isCharging { return false }
    if p.requiresBatteryNotLow != 0, !ctx.isCharging, let b = ctx.batteryPct, b < p.batteryLowPct { return false }
    return true
  }

  /// Runs the job now if allowed, else arms the policy's timer for the next
  /// moment something may change without an event. `notBefore` is an extra
  /// gate (a quota): the job waits until then. Returns whether it launched.
  mutating func step(_ ctx: inout PolicyContext, notBefore: Double = -.infinity) -> Bool {
    var wake = Double.infinity
    defer { if wake.isFinite { ctx.setTimer(at: wake) } else { ctx.cancelTimer() } }
    let t = ctx.now
    // A run in flight: fetchFinished steps again.
    guard !ctx.fetchInFlight else { return false }
    if t < eligibleAt {
      wake = eligibleAt
      return false
    }
    // Unmet constraints: wait for the event that meets them.
    guard constraintsMet(ctx) else { return false }
    if let d = doze, d.isDozing(at: t) {
      wake = d.nextRunnable(at: t)
      return false
    }
    if notBefore > t {
      wake = notBefore
      return false
    }
    let inWindow = doze?.isInMaintenanceWindow(at: t) ?? false
    if params.opportunistic != 0 && t < dueAt && !Self.radioUp(ctx) && !inWindow {
      wake = dueAt
      return false
    }
    ctx.requestFetch()
    // One run per period: the next period starts where this one ends, or
    // at this run when it came late (constraints, Doze, a quota).
    dueAt = max(dueAt, t) + period
    eligibleAt = dueAt - flex
    wake = eligibleAt
    return true
  }
}

/// Android WorkManager periodic work, `android-workmanager:<interval>`
/// (AndroidX WorkManager documentation, baselines A1 and A3): the app enqueues a periodic fetch.
///
/// - **Period** clamped to ≥ 15 min (V).
/// - **One run per period** (V: AndroidX `PeriodicWorkRequest`, "the work
///   runs once during each interval"; its flex window is the end of the
///   interval): periods follow each other, and a period's run may happen in
///   [end − flex, end] (flex ≥ 5 min, default 5 min). A run delayed past
///   its period's end (constraints, Doze, a quota) starts the next period.
///   The first period ends at the app's own phase (``TimerPhase``).
///   AndroidX itself enqueues later runs at exactly the period, handing
///   JobScheduler no slack; this model
///   gives the system the whole flex window: it runs the job at the first
///   event in the window (an open, a wake) that finds the radio already up
///   (transferring or in its tail, ``PolicyContext/radioTailS``; an
///   offline app's session is not enough) and at the window's end otherwise
///   (``AndroidWorkManagerParameters/opportunistic``; 0 runs at the window start).
/// - **Constraints** (V; each off by default): unmetered network (WiFi),
///   connected, charging, battery not low. A job whose period has passed
///   waits for its constraints, then runs at once.
/// - **Doze**: deep Doze (``DozeState``) inferred from sessions and
///   charging; while the device is in an idle period the job waits for the
///   next maintenance window and runs at its start. An open or plugging in
///   exits Doze and a waiting job runs at once. Light Doze is not modelled.
/// - No backoff: a failed fetch is not retried before the next period.
package struct AndroidWorkManagerPolicy: IntervalJobPolicy {
  /// The opportunistic rule reads the radio's state.
  package static var observesRadio: Bool { true }
  /// The family, `android-workmanager:<interval>[,key=value,...]`.
  package static let family = FamilyInfo(
    "android-workmanager", .interval, style: PolicyStyle(color: "#CC3311", marker: .triangleLeft),
    summary:
      "Android WorkManager periodic work (period at least 15 min, flex window, optional constraints), deferred by deep Doze")

  /// The shortest period of periodic work, s (V: 15 min; shorter is clamped).
  package static let minimumPeriodS = 900.0
  /// The shortest flex window, s (V: 5 min).
  package static let minimumFlexS = 300.0
  /// The period after clamping, s.
  package var period: Double { job.period }
  /// The flex window after clamping, s.
  package var flex: Double { job.flex }
  package let params: AndroidWorkManagerParameters
  var job: AndroidPeriodicJob

  /// - Parameters:
  ///   - interval: the requested period, s (clamped to ≥ 15 min).
  ///   - phase: where the first period ends, as a fraction in (0, 1] of
  ///     the period after the window start (1: enqueued at the start).
  package init(interval: Double, params: AndroidWorkManagerParameters = AndroidWorkManagerParameters(), phase: Double = 1) {
    precondition(interval > 0, "WorkManager interval must be positive")
    self.params = params
    job = AndroidPeriodicJob(period: interval, params: params, phase: phase)
  }

  /// The Doze state as inferred so far (nil with `doze=0`).
  package var doze: DozeState? { job.doze }

  package mutating func read(history: DozeHistory) { job.history = history }

  package mutating func start(_ ctx: inout PolicyContext) {
    job.start(&ctx)
    _ = job.step(&ctx)
  }

  package mutating func observe(_ event: TraceEvent, _ ctx: inout PolicyContext) {
    // A location wake goes only to apps registered for it (location-wake).
    job.observe(event)
    _ = job.step(&ctx)
  }

  package mutating func timerFired(_ ctx: inout PolicyContext) {
    _ = job.step(&ctx)
  }

  package mutating func fetchFinished(_ outcome: FetchOutcome, _ ctx: inout PolicyContext) {
    _ = job.step(&ctx)
  }
}

/// `android-workmanager:<interval>[,key=value,...]`.
package typealias AndroidWorkManagerFamily = IntervalJobFamily<AndroidWorkManagerPolicy>
