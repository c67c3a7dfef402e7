import FetchModels
import FetchTraces

// MARK: - WorkManager

/// Knobs of Android's WorkManager / JobScheduler periodic work (reference
/// §2.6) and of the Doze model that defers it (§2.5). Flags are 0 (off) or
/// any other value (on); durations are seconds.
public struct WorkManagerParameters: Sendable, Hashable {
  /// Flex window, s: a run may happen in [period − flex, period] after the
  /// previous one (V: minimum 5 min, which is the default here; clamped to
  /// [5 min, period]).
  public var flexS = 300.0
  /// Run in the flex window at the first moment the device's radio is
  /// already up (a user session or another app's wake in progress), else at
  /// the window's end (1, NV: a modelling choice that gives the system the
  /// batching freedom flex exists for). 0: run as soon as the window opens.
  public var opportunistic = 1.0
  /// Constraint: unmetered network (WiFi) (V; off by default).
  public var requiresUnmetered = 0.0
  /// Constraint: any network; without it a job may run offline and fail
  /// (V; off by default).
  public var requiresConnected = 0.0
  /// Constraint: charging (V; off by default).
  public var requiresCharging = 0.0
  /// Constraint: battery not low, i.e. charging, unknown, or at least
  /// ``batteryLowPct`` (V; off by default).
  public var requiresBatteryNotLow = 0.0
  /// Battery level below which the battery is "low", % (NV: Android's
  /// low-battery warning level is 15 %, M).
  public var batteryLowPct = 15.0
  /// Defer by deep Doze (1) or ignore Doze (0).
  public var dozeEnabled = 1.0
  /// Deep-Doze timing (AOSP defaults, V).
  public var doze = DozeParameters()

  public init() {}

  /// Names accepted in `android-workmanager:<interval>,key=value`.
  static let keys: [SettingKey<WorkManagerParameters>] = [
    .init("flex", \.flexS, min: 300, duration: true), .init("opportunistic", \.opportunistic),
    .init("unmetered", \.requiresUnmetered), .init("connected", \.requiresConnected),
    .init("charging", \.requiresCharging), .init("battery_not_low", \.requiresBatteryNotLow),
    .init("battery_low_pct", \.batteryLowPct), .init("doze", \.dozeEnabled),
  ] + DozeParameters.keys(\.doze)
}

/// A periodic job under JobScheduler's rules: flex window, constraints and
/// deep Doze; shared by ``WorkManagerPolicy`` and ``StandbyPolicy``.
struct AndroidPeriodicJob: Sendable {
  let period: Double
  let flex: Double
  let params: WorkManagerParameters
  var doze: DozeState?
  /// The flex window of the next run: [eligibleAt, dueAt].
  var eligibleAt = Double.infinity
  var dueAt = Double.infinity
  /// End of the latest observed radio activity (sessions, wakes).
  var activeUntil = -Double.infinity

  init(period: Double, params: WorkManagerParameters) {
    self.period = max(period, WorkManagerPolicy.minimumPeriodS)
    flex = min(max(params.flexS, WorkManagerPolicy.minimumFlexS), self.period)
    self.params = params
  }

  /// Enqueues the work at `ctx.now`: the first run falls in the first
  /// period's flex window (as AndroidX `WorkSpec.calculateNextRunTime`).
  mutating func start(_ ctx: inout PolicyContext) {
    if params.dozeEnabled != 0 { doze = DozeState(params: params.doze, start: ctx.now, isCharging: ctx.isCharging) }
    eligibleAt = ctx.now + period - flex
    dueAt = ctx.now + period
  }

  mutating func observe(_ e: TraceEvent) {
    doze?.observe(e)
    if e.kind == .open || e.kind == .wake {
      activeUntil = max(activeUntil, e.time + max(e.value, PreparedUser.minimumActivityS))
    }
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
    if params.opportunistic != 0 && t < dueAt && t >= activeUntil && !inWindow {
      wake = dueAt
      return false
    }
    ctx.requestFetch()
    eligibleAt = t + period - flex
    dueAt = t + period
    wake = eligibleAt
    return true
  }
}

/// Android WorkManager periodic work, `android-workmanager:<interval>`
/// (reference §2.6, baselines A1 and A3): the app enqueues a periodic fetch.
///
/// - **Period** clamped to ≥ 15 min (V).
/// - **Flex**: each run may happen in [period − flex, period] after the
///   previous one (V; flex ≥ 5 min, default 5 min). The first run falls in
///   the first period's flex window. AndroidX itself enqueues later runs at
///   exactly previous + period, handing JobScheduler no slack; this model
///   gives the system the whole flex window: it runs the job at the first
///   moment in the window when the radio is already up (a session or
///   another app's wake) and at the window's end otherwise
///   (``WorkManagerParameters/opportunistic``; 0 runs at the window start).
/// - **Constraints** (V; each off by default): unmetered network (WiFi),
///   connected, charging, battery not low. A job whose period has passed
///   waits for its constraints, then runs at once.
/// - **Doze**: deep Doze (``DozeState``) inferred from sessions and
///   charging; while the device is in an idle period the job waits for the
///   next maintenance window and runs at its start. An open or plugging in
///   exits Doze and a waiting job runs at once. Light Doze is not modelled.
/// - No backoff: a failed fetch is not retried before the next period.
public struct WorkManagerPolicy: FetchPolicy {
  /// The shortest period of periodic work, s (V: 15 min; shorter is clamped).
  public static let minimumPeriodS = 900.0
  /// The shortest flex window, s (V: 5 min).
  public static let minimumFlexS = 300.0
  /// The period after clamping, s.
  public var period: Double { job.period }
  /// The flex window after clamping, s.
  public var flex: Double { job.flex }
  public let params: WorkManagerParameters
  var job: AndroidPeriodicJob

  /// - Parameters:
  ///   - interval: the requested period, s (clamped to ≥ 15 min).
  public init(interval: Double, params: WorkManagerParameters = WorkManagerParameters()) {
    precondition(interval > 0, "WorkManager interval must be positive")
    self.params = params
    job = AndroidPeriodicJob(period: interval, params: params)
  }

  /// The Doze state as inferred so far (nil with `doze=0`).
  public var doze: DozeState? { job.doze }

  public mutating func start(_ ctx: inout PolicyContext) {
    job.start(&ctx)
    _ = job.step(&ctx)
  }

  public mutating func observe(_ event: TraceEvent, _ ctx: inout PolicyContext) {
    job.observe(event)
    _ = job.step(&ctx)
  }

  public mutating func timerFired(_ ctx: inout PolicyContext) {
    _ = job.step(&ctx)
  }

  public mutating func fetchFinished(_ outcome: FetchOutcome, _ ctx: inout PolicyContext) {
    _ = job.step(&ctx)
  }
}

// MARK: - App Standby Buckets

/// Android's App Standby Buckets (Android 9+, reference §2.4).
public enum StandbyBucket: Int, Sendable, CaseIterable, CustomStringConvertible {
  case active, workingSet, frequent, rare, restricted

  public var description: String {
    switch self {
    case .active: "active"
    case .workingSet: "working_set"
    case .frequent: "frequent"
    case .rare: "rare"
    case .restricted: "restricted"
    }
  }
}

/// Knobs of the App Standby Bucket model: bucket thresholds (NV) and the
/// AOSP `QuotaController` job quotas (V, reference §2.4), plus the periodic
/// job the app runs (as ``WorkManagerParameters``).
public struct StandbyParameters: Sendable, Hashable {
  /// Period of the app's job, s (clamped to ≥ 15 min, V).
  public var jobIntervalS = 900.0
  /// The job's flex, constraints and Doze.
  public var job = WorkManagerParameters()

  /// Bucket thresholds on the time since the user last opened the app, s.
  /// The platform derives buckets from usage with its own (remotely tuned)
  /// timeouts; these are NV placeholders in the ranges the Android docs
  /// describe: Active if used within 1 h, Working set within 24 h ("used
  /// most days"), Frequent within 3 days ("regularly, not every day"), Rare
  /// after that. (AOSP's `AppStandbyController` uses elapsed thresholds of
  /// 12 h / 24 h / 48 h with a 1 h active timeout, M.)
  public var activeS = 3600.0
  public var workingSetS = 86_400.0
  public var frequentS = 3 * 86_400.0
  /// Restricted after this long without use (V: 8 days, Android 13). Set it
  /// very large to disable the Restricted bucket.
  public var restrictedS = 8 * 86_400.0

  /// QuotaController rolling windows per bucket, s (V: 10 min, 2 h, 8 h,
  /// 24 h, 24 h).
  public var activeWindowS = 600.0
  public var workingSetWindowS = 7200.0
  public var frequentWindowS = 28_800.0
  public var rareWindowS = 86_400.0
  public var restrictedWindowS = 86_400.0
  /// Max job batches per window (V: 75, 10, 8, 3, 1). Each fetch is one job
  /// and one batch, so the max-jobs limits (75, 120, 200, 48, 10) never bind
  /// first and are not modelled separately.
  public var activeBatches = 75.0
  public var workingSetBatches = 10.0
  public var frequentBatches = 8.0
  public var rareBatches = 3.0
  public var restrictedBatches = 1.0
  /// Job execution time per window, s (V: 10 min in every bucket).
  public var jobTimeS = 600.0
  /// No quota while charging, except in Restricted (V); runs while charging
  /// do not count against the quota. 0 turns the exemption off.
  public var chargingExempt = 1.0

  public init() {}

  /// The bucket of an app last used `idle` seconds ago.
  public func bucket(idleFor idle: Double) -> StandbyBucket {
    if idle < activeS { return .active }
    if idle < workingSetS { return .workingSet }
    if idle < frequentS { return .frequent }
    if idle < restrictedS { return .rare }
    return .restricted
  }

  /// The bucket's rolling quota window, s.
  public func windowS(_ b: StandbyBucket) -> Double {
    switch b {
    case .active: activeWindowS
    case .workingSet: workingSetWindowS
    case .frequent: frequentWindowS
    case .rare: rareWindowS
    case .restricted: restrictedWindowS
    }
  }

  /// The bucket's max job batches per window.
  public func maxBatches(_ b: StandbyBucket) -> Int {
    let x: Double
    switch b {
    case .active: x = activeBatches
    case .workingSet: x = workingSetBatches
    case .frequent: x = frequentBatches
    case .rare: x = rareBatches
    case .restricted: x = restrictedBatches
    }
    return Int(x.rounded(.down))
  }

  /// Names accepted in `android-standby:key=value`.
  static let keys: [SettingKey<StandbyParameters>] = [
    .init("interval", \.jobIntervalS, min: 1, duration: true),
    .init("active", \.activeS, duration: true), .init("working_set", \.workingSetS, duration: true),
    .init("frequent", \.frequentS, duration: true), .init("restricted", \.restrictedS, duration: true),
    .init("active_window", \.activeWindowS, min: 1, duration: true),
    .init("working_set_window", \.workingSetWindowS, min: 1, duration: true),
    .init("frequent_window", \.frequentWindowS, min: 1, duration: true),
    .init("rare_window", \.rareWindowS, min: 1, duration: true),
    .init("restricted_window", \.restrictedWindowS, min: 1, duration: true),
    .init("active_batches", \.activeBatches), .init("working_set_batches", \.workingSetBatches),
    .init("frequent_batches", \.frequentBatches), .init("rare_batches", \.rareBatches),
    .init("restricted_batches", \.restrictedBatches), .init("job_time", \.jobTimeS, duration: true),
    .init("charging_exempt", \.chargingExempt),
  ] + WorkManagerParameters.keys.map { k in
    let job: WritableKeyPath<StandbyParameters, WorkManagerParameters> = \.job
    return SettingKey(k.name, job.appending(path: k.path), min: k.minimum, duration: k.isDuration)
  }
}

/// One run of the Standby policy's job, for inspection and tests.
public struct StandbyRun: Sendable, Equatable {
  /// Start of the run, Unix s.
  public var time: Double
  /// The app's bucket then.
  public var bucket: StandbyBucket
  /// Whether it counts against the quota (not exempt by charging).
  public var counted: Bool
}

/// Android App Standby Buckets, `android-standby` (reference §2.4, baseline
/// A2, with Doze, A3): the app runs a periodic job (default every 15 min,
/// WorkManager rules: ``WorkManagerPolicy``) whose runs the system limits
/// by the app's standby bucket.
///
/// - **Bucket** from the time since the user last opened the app (in the
///   training trace, then as observed): Active < 1 h, Working set < 24 h,
///   Frequent < 3 days, Rare, Restricted after 8 days (thresholds NV except
///   the 8 days, V; see ``StandbyParameters``). With no open on record the
///   app counts as used at the start of the training trace (an install).
/// - **Quota** (AOSP `QuotaController`, V): in a rolling window of 10 min /
///   2 h / 8 h / 24 h / 24 h the app may start at most 75 / 10 / 8 / 3 / 1
///   job batches (each fetch is one batch) and use 10 min of job time.
///   A job out of quota waits until the oldest counted run leaves the
///   window of the app's current bucket, then runs.
/// - **Charging** lifts the quota except in Restricted; runs while charging
///   are not counted.
/// - **Doze** defers the job to maintenance windows (``DozeState``).
/// - Not modelled: alarms, FCM quotas, Rare's network cut outside windows,
///   the 4 h daily execution cap (a fetch lasts at most 30 s), expedited
///   jobs.
public struct StandbyPolicy: FetchPolicy {
  public let params: StandbyParameters
  var job: AndroidPeriodicJob
  /// Time of the user's last open of the app.
  public private(set) var lastUse: Double
  /// Counted runs in the last 24 h or more: (start, duration so far).
  var counted: [(start: Double, duration: Double)] = []
  var pendingCounted = false
  /// Every run, when `logRuns` is on.
  public private(set) var runs: [StandbyRun] = []
  public var logRuns = false

  /// - Parameters:
  ///   - training: the user's trace before the replay window (may be
  ///     empty); the app's last open in it sets the starting bucket.
  ///   - app: the app index (the same in `training` and the replayed trace).
  public init(params: StandbyParameters = StandbyParameters(), training: UserTrace, app: Int32) {
    self.params = params
    job = AndroidPeriodicJob(period: params.jobIntervalS, params: params.job)
    var last = training.start
    for e in training.events where e.kind == .open && e.app == app { last = e.time }
    lastUse = last
  }

  /// The period of the job after clamping, s.
  public var period: Double { job.period }

  /// The app's bucket at `t` if it is not opened before then.
  public func bucket(at t: Double) -> StandbyBucket {
    params.bucket(idleFor: t - lastUse)
  }

  /// The earliest time ≥ `t` at which the app is within its bucket's quota
  /// (assuming its bucket stays as at `t`).
  func quotaFree(at t: Double, _ ctx: PolicyContext) -> Double {
    let b = bucket(at: t)
    if ctx.isCharging && params.chargingExempt != 0 && b != .restricted { return t }
    let w = params.windowS(b)
    let maxB = params.maxBatches(b)
    guard maxB > 0 else { return .infinity }
    let first = counted.firstIndex { $0.start > t - w } ?? counted.count
    let inWindow = counted[first...]
    var free = t
    if inWindow.count >= maxB {
      free = max(free, counted[counted.count - maxB].start + w)
    }
    var time = inWindow.reduce(0) { $0 + $1.duration }
    var i = first
    while time >= params.jobTimeS && i < counted.count {
      time -= counted[i].duration
      free = max(free, counted[i].start + w)
      i += 1
    }
    return free
  }

  mutating func step(_ ctx: inout PolicyContext) {
    let t = ctx.now
    let q = quotaFree(at: t, ctx)
    guard job.step(&ctx, notBefore: q) else { return }
    let b = bucket(at: t)
    let isCounted = !(ctx.isCharging && params.chargingExempt != 0 && b != .restricted)
    if isCounted {
      counted.append((t, 0))
      let horizon = t - max(params.activeWindowS, params.workingSetWindowS, params.frequentWindowS,
        params.rareWindowS, params.restrictedWindowS)
      if let k = counted.firstIndex(where: { $0.start > horizon }), k > 64 { counted.removeFirst(k) }
    }
    pendingCounted = isCounted
    if logRuns { runs.append(StandbyRun(time: t, bucket: b, counted: isCounted)) }
  }

  public mutating func start(_ ctx: inout PolicyContext) {
    lastUse = min(lastUse, ctx.now)
    job.start(&ctx)
    step(&ctx)
  }

  public mutating func observe(_ event: TraceEvent, _ ctx: inout PolicyContext) {
    if event.kind == .open && event.app == ctx.app { lastUse = event.time }
    job.observe(event)
    step(&ctx)
  }

  public mutating func timerFired(_ ctx: inout PolicyContext) {
    step(&ctx)
  }

  public mutating func fetchFinished(_ outcome: FetchOutcome, _ ctx: inout PolicyContext) {
    if pendingCounted, !counted.isEmpty {
      counted[counted.count - 1].duration = outcome.end - outcome.start
    }
    pendingCounted = false
    step(&ctx)
  }
}
