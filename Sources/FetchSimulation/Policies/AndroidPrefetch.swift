import FetchModels
import FetchTraces
import FetchWorld

/// Knobs of the Android prefetch-job model (AndroidX WorkManager documentation; AOSP PrefetchController).
/// Durations in seconds.
package struct AndroidPrefetchParameters: SettingTable {
  /// The prefetch gate: the job is eligible only when the estimated next
  /// launch of the app is within this of now, s (V: `PrefetchController`,
  /// default 7 h, clamped to 1–24 h).
  package var thresholdS = 7 * 3600.0
  /// The estimated next launch is the median of the learned time to the
  /// next open: it is within the threshold when P(open within threshold) ≥
  /// this (NV: Android's estimate is a point value; 0.5 makes it the median).
  package var confidence = 0.5
  /// Period of the job, s (V: WorkManager's periodic minimum is 15 min,
  /// AndroidX documentation; NV default 1 h).
  package var periodS = 3600.0
  /// "Battery not low" constraint: below this level, and not charging,
  /// the job waits, % (M: Android's low-battery level, 15 %).
  package var lowBatteryPct = 15.0
  /// Defer by deep Doze (1) or ignore Doze (0): a prefetch job is a
  /// JobScheduler job, and jobs wait for Doze's maintenance windows (V,
  /// AOSP DeviceIdleController / JobScheduler).
  package var dozeEnabled = 1.0
  /// Deep-Doze timing (AOSP defaults, V).
  package var doze = DozeParameters()
  /// Throttle the job by the app's standby bucket (1) or not (0): a
  /// prefetch job is a JobScheduler job, and `QuotaController` limits every
  /// job of an app by its bucket (V, AOSP QuotaController).
  package var standbyEnabled = 1.0
  /// Buckets and quotas, as `android-standby`'s.
  package var quota = StandbyQuotaParameters()

  package init() {}

  /// Names accepted in `android-prefetch:key=value,...`.
  package static let keys: [SettingKey<AndroidPrefetchParameters>] = [
    .init("threshold", \.thresholdS, min: 3600, max: 86_400, duration: true, help: "eligible only when the estimated next launch is within this (1h...24h, as AOSP clamps it)"),
    .init("confidence", \.confidence, min: 0.01, max: 0.99, help: "the estimated launch is within the threshold when P(open within it) reaches this (0.5: the median)"),
    .init("period", \.periodS, min: 900, duration: true, help: "period of the job (WorkManager's minimum: 15m)"),
    .init("low_battery_pct", \.lowBatteryPct, max: 100, help: "battery-not-low constraint: battery %, below which the job waits unless charging"),
    .init("doze", \.dozeEnabled, max: 1, help: "1: deep Doze defers the job to its maintenance windows; 0: ignore Doze"),
    .init("standby", \.standbyEnabled, max: 1, help: "1: the app's standby bucket quotas limit the job (as android-standby); 0: no quotas"),
  ] + DozeParameters.keys(at: \.doze) + StandbyQuotaParameters.keys(at: \.quota)
}

/// Android prefetch jobs, `android-prefetch` (AOSP PrefetchController, `JobInfo.Builder.setPrefetch`):
/// `JobInfo.Builder.setPrefetch(true)`; Android 13+'s `PrefetchController`
/// runs a prefetch job only when the system's estimated next launch of the
/// app is within a threshold (7 h by default) of now: the OS's own
/// "predict the next open" gate.
///
/// The job is periodic (every ``AndroidPrefetchParameters/periodS``) with
/// a network constraint (it waits offline, and runs when the device is back
/// online) and a battery-not-low constraint. When due and the constraints
/// hold, it runs (one fetch) only if the prefetch gate holds: the estimated
/// next launch, the median of the time to the next open under the app's
/// learned habit model (the `HabitModel` of `ios-minimum` and the open
/// predictors, fitted on the training part and shrunk toward the
/// population), is within ``AndroidPrefetchParameters/thresholdS``, i.e.
/// P(open within the threshold) ≥ ``AndroidPrefetchParameters/confidence``.
/// Otherwise it waits for its next period. Like every JobScheduler job it
/// waits out deep Doze (`Doze.swift`): a job due while the device dozes
/// runs at the next maintenance window, and, like every job of the app,
/// within its App Standby bucket's quota (``StandbyQuota``, as
/// `android-standby`): a due job out of quota waits until the quota frees,
/// then checks the gate. Simplified: the model is fitted once (no nightly
/// refits), and the ~20 min allowance of later builds is not modelled.
package struct AndroidPrefetchPolicy: FetchPolicy {
  package let params: AndroidPrefetchParameters
  let habit: HabitModel
  var clock: LocalClock
  var memo = HabitOpenMemo()
  var lastAppOpen: Double
  var lastAnyOpen: Double
  /// Whether the job is due and waits for its constraints.
  var due = false
  /// Checks the gate refused, and runs.
  package private(set) var gated = 0
  package private(set) var runs = 0
  /// Where the job's first period ends, as a fraction in (0, 1] of the
  /// period after the window start (``TimerPhase``; 1: at one period).
  package var phase = 1.0
  /// Deep Doze as inferred from the trace (nil with `doze=0`).
  package private(set) var dozeState: DozeState?
  /// The app's bucket and counted runs (nil with `standby=0`).
  package private(set) var quota: StandbyQuota?
  /// When the job's next period starts, Unix s.
  var nextPeriod = Double.infinity
  /// The trace before the window, for Doze's clock at its start.
  var history: DozeHistory?

  /// - Parameter lastUse: the app's last use before the window for its
  ///   standby bucket (``StandbyQuota/lastUse(in:app:)``).
  package init(
    params: AndroidPrefetchParameters, habit: HabitModel, timeZone: TraceTimeZone, lastAppOpen: Double,
    lastAnyOpen: Double, lastUse: Double
  ) {
    self.params = params
    if params.standbyEnabled != 0 { quota = StandbyQuota(params: params.quota, lastUse: lastUse) }
    self.habit = habit
    clock = LocalClock(timeZone)
    self.lastAppOpen = lastAppOpen
    self.lastAnyOpen = lastAnyOpen
  }

  /// P(an open of the app within the threshold from `t`).
  package mutating func launchProbability(at t: Double) -> Double {
    memo.probabilityOfOpen(
      habit, within: params.thresholdS, from: t, clock: &clock,
      recency: Recency(sinceAppOpenS: t - lastAppOpen, sinceAnyOpenS: t - lastAnyOpen))
  }

  package mutating func start(_ ctx: inout PolicyContext) {
    if params.dozeEnabled != 0 {
      dozeState = DozeState(params: params.doze, start: ctx.now, history: history, isCharging: ctx.isCharging)
    }
    if let u = quota?.lastUse { quota?.lastUse = min(u, ctx.now) }
    nextPeriod = ctx.now + params.periodS * phase
    ctx.setTimer(at: nextPeriod)
  }

  package mutating func observe(_ event: TraceEvent, _ ctx: inout PolicyContext) {
    dozeState?.observe(event)
    switch event.kind {
    case .open:
      lastAnyOpen = event.time
      if event.app == ctx.app {
        lastAppOpen = event.time
        quota?.lastUse = event.time
      }
      // An open ends Doze: a job it held back runs now.
      if due { run(&ctx) }
    case .network, .chargeStart, .battery:
      if due { run(&ctx) }
    default:
      break
    }
  }

  package mutating func timerFired(_ ctx: inout PolicyContext) {
    if ctx.now >= nextPeriod {
      due = true
      nextPeriod = ctx.now + params.periodS
    }
    run(&ctx)
    arm(&ctx)
  }

  package mutating func fetchFinished(_ outcome: FetchOutcome, _ ctx: inout PolicyContext) {
    quota?.finishRun(outcome)
  }

  /// The next period's start, or earlier the next maintenance window when
  /// a due job waits out Doze, or the time its quota frees.
  mutating func arm(_ ctx: inout PolicyContext) {
    var t = nextPeriod
    if due, let d = dozeState, d.isDozing(at: ctx.now) { t = min(t, d.nextRunnable(at: ctx.now)) }
    if due, let free = quota?.freeAt(ctx.now, charging: ctx.isCharging), free > ctx.now { t = min(t, free) }
    ctx.setTimer(at: t)
  }

  /// Runs the due job if its constraints, Doze and the prefetch gate allow.
  mutating func run(_ ctx: inout PolicyContext) {
    guard !ctx.fetchInFlight, ctx.network != .offline else { return }
    if let b = ctx.batteryPct, b < params.lowBatteryPct, !ctx.isCharging { return }
    if let d = dozeState, d.isDozing(at: ctx.now) {
      arm(&ctx)
      return
    }
    if let q = quota, q.freeAt(ctx.now, charging: ctx.isCharging) > ctx.now {
      arm(&ctx)
      return
    }
    due = false
    guard launchProbability(at: ctx.now) >= params.confidence else {
      gated += 1
      return
    }
    runs += 1
    _ = quota?.recordRun(at: ctx.now, charging: ctx.isCharging)
    ctx.requestFetch()
  }
}

/// `android-prefetch[:threshold=<interval>,key=value,...]`.
package enum AndroidPrefetchFamily: PolicyFamily {
  package static let info = FamilyInfo(
    "android-prefetch", .settingsAfter("threshold=<interval>"), example: "android-prefetch:threshold=2h",
    learning: .habitModel, style: PolicyStyle(color: "#AA4499", marker: .asterisk),
    summary:
      "Android prefetch job: a periodic job that runs only when the learned estimate of the app's next launch is within the threshold (7h)")

  package static func expectedFetchesPerDay(_ p: AndroidPrefetchParameters) -> Double { timerFetchesPerDay(p.periodS) }
  package static func fetchSpacingBound(_ p: AndroidPrefetchParameters) -> Double? { p.periodS }
  package static func makePolicies(_ p: AndroidPrefetchParameters, _ device: DeviceReplayInput) -> (Int32, ContentTimeline) -> AndroidPrefetchPolicy {
    let training = device.training
    let learning = device.learning
    let tz = device.user.trace.timeZone
    let history = DozeHistory(training)
    return { app, _ in
      let habit = HabitFitter().fit(training, app: app, population: learning?.population, fits: learning?.fits)
      let last = OpenHistory.lastOpens(training, app: app)
      var policy = AndroidPrefetchPolicy(
        params: p, habit: habit, timeZone: tz, lastAppOpen: last.app, lastAnyOpen: last.any,
        lastUse: StandbyQuota.lastUse(lastOpen: last.app, training: training))
      policy.phase = device.timerPhase(app: app)
      policy.history = history
      return policy
    }
  }
}
