import FetchModels
import FetchTraces
import FetchWorld

// MARK: - App Standby Buckets

/// Android's App Standby Buckets (Android 9+; developer.android.com power details, AOSP QuotaController).
package enum StandbyBucket: Int, Sendable, CaseIterable, CustomStringConvertible {
  case active, workingSet, frequent, rare, restricted

  package var description: String {
    switch self {
    case .active: "active"
    case .workingSet: "working_set"
    case .frequent: "frequent"
    case .rare: "rare"
    case .restricted: "restricted"
    }
  }
}

/// The App Standby Bucket model of one app's jobs: bucket thresholds (NV)
/// and the AOSP `QuotaController` job quotas (V). Shared by every job
/// family the system throttles by bucket (`android-standby`,
/// `android-prefetch`).
package struct StandbyQuotaParameters: SettingTable {
  /// Bucket thresholds on the time since the user last opened the app, s.
  /// The platform derives buckets from usage with its own (remotely tuned)
  /// timeouts; these are NV placeholders in the ranges the Android docs
  /// describe: Active if used within 1 h, Working set within 24 h ("used
  /// most days"), Frequent within 3 days ("regularly, not every day"), Rare
  /// after that. (AOSP's `AppStandbyController` uses elapsed thresholds of
  /// 12 h / 24 h / 48 h with a 1 h active timeout, M.)
  package var activeS = 3600.0
  package var workingSetS = 86_400.0
  package var frequentS = 3 * 86_400.0
  /// Restricted after this long without use (V: 8 days, Android 13). Set it
  /// very large to disable the Restricted bucket.
  package var restrictedS = 8 * 86_400.0

  /// QuotaController rolling windows per bucket, s (V: 10 min, 2 h, 8 h,
  /// 24 h, 24 h).
  package var activeWindowS = 600.0
  package var workingSetWindowS = 7200.0
  package var frequentWindowS = 28_800.0
  package var rareWindowS = 86_400.0
  package var restrictedWindowS = 86_400.0
  /// Max job batches per window (V: 75, 10, 8, 3, 1). Each fetch is one job
  /// and one batch, so the max-jobs limits (75, 120, 200, 48, 10) never bind
  /// first and are not modelled separately.
  package var activeBatches = 75.0
  package var workingSetBatches = 10.0
  package var frequentBatches = 8.0
  package var rareBatches = 3.0
  package var restrictedBatches = 1.0
  /// Job execution time per window, s (V: 10 min in every bucket).
  package var jobTimeS = 600.0
  /// No quota while charging, except in Restricted (V); runs while charging
  /// do not count against the quota. 0 turns the exemption off.
  package var chargingExempt = 1.0

  package init() {}

  /// The bucket of an app last used `idle` seconds ago.
  package func bucket(idleFor idle: Double) -> StandbyBucket {
    if idle < activeS { return .active }
    if idle < workingSetS { return .workingSet }
    if idle < frequentS { return .frequent }
    if idle < restrictedS { return .rare }
    return .restricted
  }

  /// The bucket's rolling quota window, s.
  package func windowS(_ b: StandbyBucket) -> Double {
    switch b {
    case .active: activeWindowS
    case .workingSet: workingSetWindowS
    case .frequent: frequentWindowS
    case .rare: rareWindowS
    case .restricted: restrictedWindowS
    }
  }

  /// The bucket's max job batches per window.
  package func maxBatches(_ b: StandbyBucket) -> Int {
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

  /// The longest window of any bucket, s.
  var longestWindowS: Double { max(activeWindowS, workingSetWindowS, frequentWindowS, rareWindowS, restrictedWindowS) }

  /// The bucket model's settings (a family embeds them with ``SettingTable/keys(at:)``).
  package static let keys: [SettingKey<StandbyQuotaParameters>] = [
    .init("active", \.activeS, duration: true, help: "Active bucket while the app was used within this"),
    .init("working_set", \.workingSetS, duration: true, help: "Working set bucket while the app was used within this"),
    .init("frequent", \.frequentS, duration: true, help: "Frequent bucket while the app was used within this (Rare after)"),
    .init("restricted", \.restrictedS, duration: true, help: "Restricted bucket after this long without use"),
    .init("active_window", \.activeWindowS, min: 1, duration: true, help: "QuotaController window of the Active bucket"),
    .init("working_set_window", \.workingSetWindowS, min: 1, duration: true, help: "QuotaController window of the Working set bucket"),
    .init("frequent_window", \.frequentWindowS, min: 1, duration: true, help: "QuotaController window of the Frequent bucket"),
    .init("rare_window", \.rareWindowS, min: 1, duration: true, help: "QuotaController window of the Rare bucket"),
    .init("restricted_window", \.restrictedWindowS, min: 1, duration: true, help: "QuotaController window of the Restricted bucket"),
    .init("active_batches", \.activeBatches, max: SettingBound.count, help: "job batches per window, Active"),
    .init("working_set_batches", \.workingSetBatches, max: SettingBound.count, help: "job batches per window, Working set"),
    .init("frequent_batches", \.frequentBatches, max: SettingBound.count, help: "job batches per window, Frequent"),
    .init("rare_batches", \.rareBatches, max: SettingBound.count, help: "job batches per window, Rare"),
    .init("restricted_batches", \.restrictedBatches, max: SettingBound.count, help: "job batches per window, Restricted"),
    .init("job_time", \.jobTimeS, duration: true, help: "job execution time per window"),
    .init("charging_exempt", \.chargingExempt, max: 1, help: "1: no quota while charging (except Restricted); 0: quota always"),
  ]
}

/// One app's standby bucket and the job runs counted against its quota
/// (AOSP `QuotaController`, V): in a rolling window of the bucket's length
/// the app may start at most the bucket's job batches (each fetch is one
/// batch) and use ``StandbyQuotaParameters/jobTimeS`` of job time.
/// Charging lifts the quota except in Restricted; runs while charging are
/// not counted.
package struct StandbyQuota: Sendable {
  package let params: StandbyQuotaParameters
  /// Time of the user's last open of the app, Unix s.
  package var lastUse: Double
  /// Counted runs in the last longest window or more: (start, duration so far).
  var counted: [(start: Double, duration: Double)] = []
  /// Whether the run in flight is counted (its duration is still open).
  var pendingCounted = false

  /// - Parameter lastUse: the app's last open before the replay (with
  ///   none on record, the start of the training trace: an install).
  package init(params: StandbyQuotaParameters, lastUse: Double) {
    self.params = params
    self.lastUse = lastUse
  }

  /// The app's last open before the window of `training`, or the training
  /// trace's start when it has none.
  package static func lastUse(in training: UserTrace, app: Int32) -> Double {
    lastUse(lastOpen: OpenHistory.lastOpens(training, app: app).app, training: training)
  }

  /// The last use given the app's last open in `training` (−∞: none).
  package static func lastUse(lastOpen: Double, training: UserTrace) -> Double {
    lastOpen.isFinite ? lastOpen : training.start
  }

  /// The app's bucket at `t` if it is not opened before then.
  @inline(__always)  // called from the policies' step, a call copied the whole policy
  package func bucket(at t: Double) -> StandbyBucket {
    params.bucket(idleFor: t - lastUse)
  }

  /// Whether a run at `t` is exempt from the quota (charging, not Restricted).
  @inline(__always)
  func exempt(at t: Double, charging: Bool) -> Bool {
    charging && params.chargingExempt != 0 && bucket(at: t) != .restricted
  }

  /// The earliest time ≥ `t` at which the app is within its bucket's quota
  /// (assuming its bucket stays as at `t`); ∞ when the bucket allows none.
  ///
  /// - Complexity: O(counted runs in the window).
  @inline(__always)  // as bucket(at:)
  package func freeAt(_ t: Double, charging: Bool) -> Double {
    if exempt(at: t, charging: charging) { return t }
    let b = bucket(at: t)
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

  /// Records a run starting at `t`; returns its bucket and whether it counts.
  package mutating func recordRun(at t: Double, charging: Bool) -> (bucket: StandbyBucket, counted: Bool) {
    let b = bucket(at: t)
    let isCounted = !exempt(at: t, charging: charging)
    if isCounted {
      counted.append((t, 0))
      let horizon = t - params.longestWindowS
      if let k = counted.firstIndex(where: { $0.start > horizon }), k > 64 { counted.removeFirst(k) }
    }
    pendingCounted = isCounted
    return (b, isCounted)
  }

  /// Closes the run in flight: its job time counts from now on.
  package mutating func finishRun(_ outcome: FetchOutcome) {
    if pendingCounted, !counted.isEmpty {
      counted[counted.count - 1].duration = outcome.end - outcome.start
    }
    pendingCounted = false
  }
}

/// Knobs of the `android-standby` policy: the periodic job the app runs
/// (as ``AndroidWorkManagerParameters``) and the bucket model that throttles it.
package struct AndroidStandbyParameters: SettingTable {
  /// Period of the app's job, s (clamped to ≥ 15 min, V).
  package var jobIntervalS = 900.0
  /// The job's flex, constraints and Doze.
  package var job = AndroidWorkManagerParameters()
  /// Buckets and quotas.
  package var quota = StandbyQuotaParameters()

  package init() {}

  /// Names accepted in `android-standby:key=value`.
  package static let keys: [SettingKey<AndroidStandbyParameters>] =
    [.init("interval", \.jobIntervalS, min: 1, duration: true, help: "period of the app's job")]
    + StandbyQuotaParameters.keys(at: \.quota)
    + AndroidWorkManagerParameters.keys.map { k in
      let job: WritableKeyPath<AndroidStandbyParameters, AndroidWorkManagerParameters> = \.job
      return SettingKey(
        k.name, job.appending(path: k.path), min: k.minimum, max: k.maximum, duration: k.isDuration, help: k.help)
    }
}

/// One run of the Standby policy's job, for inspection and tests.
package struct AndroidStandbyRun: Sendable, Equatable {
  /// Start of the run, Unix s.
  package var time: Double
  /// The app's bucket then.
  package var bucket: StandbyBucket
  /// Whether it counts against the quota (not exempt by charging).
  package var counted: Bool
}

/// Android App Standby Buckets, `android-standby` (Android App Standby Buckets, baseline
/// A2, with Doze, A3): the app runs a periodic job (default every 15 min,
/// WorkManager rules: ``AndroidWorkManagerPolicy``) whose runs the system limits
/// by the app's standby bucket.
///
/// - **Bucket** from the time since the user last opened the app (in the
///   training trace, then as observed): Active < 1 h, Working set < 24 h,
///   Frequent < 3 days, Rare, Restricted after 8 days (thresholds NV except
///   the 8 days, V; see ``StandbyQuotaParameters``). With no open on record the
///   app counts as used at the start of the training trace (an install).
/// - **Quota** (AOSP `QuotaController`, V; ``StandbyQuota``): in a rolling
///   window of 10 min / 2 h / 8 h / 24 h / 24 h the app may start at most
///   75 / 10 / 8 / 3 / 1 job batches (each fetch is one batch) and use
///   10 min of job time. A job out of quota waits until the oldest counted
///   run leaves the window of the app's current bucket, then runs.
/// - **Charging** lifts the quota except in Restricted; runs while charging
///   are not counted.
/// - **Doze** defers the job to maintenance windows (``DozeState``).
/// - Not modelled: alarms, FCM quotas, Rare's network cut outside windows,
///   the 4 h daily execution cap (a fetch lasts at most 30 s), expedited
///   jobs.
package struct AndroidStandbyPolicy: FetchPolicy {
  /// The job's opportunistic rule reads the radio's state.
  package static var observesRadio: Bool { true }
  package let params: AndroidStandbyParameters
  var job: AndroidPeriodicJob
  package private(set) var quota: StandbyQuota
  /// Every run, when `logRuns` is on.
  package private(set) var runs: [AndroidStandbyRun] = []
  package var logRuns = false

  /// - Parameters:
  ///   - training: the user's trace before the replay window (may be
  ///     empty); the app's last open in it sets the starting bucket.
  ///   - app: the app index (the same in `training` and the replayed trace).
  /// - Parameter phase: where the job's first period ends, as a fraction
  ///   in (0, 1] of the period after the window start (``TimerPhase``).
  package init(params: AndroidStandbyParameters = AndroidStandbyParameters(), training: UserTrace, app: Int32, phase: Double = 1) {
    self.params = params
    job = AndroidPeriodicJob(period: params.jobIntervalS, params: params.job, phase: phase)
    job.history = DozeHistory(training)
    quota = StandbyQuota(params: params.quota, lastUse: StandbyQuota.lastUse(in: training, app: app))
  }

  /// The period of the job after clamping, s.
  package var period: Double { job.period }

  /// The app's bucket at `t` if it is not opened before then.
  package func bucket(at t: Double) -> StandbyBucket { quota.bucket(at: t) }

  mutating func step(_ ctx: inout PolicyContext) {
    let t = ctx.now
    let q = quota.freeAt(t, charging: ctx.isCharging)
    guard job.step(&ctx, notBefore: q) else { return }
    let run = quota.recordRun(at: t, charging: ctx.isCharging)
    if logRuns { runs.append(AndroidStandbyRun(time: t, bucket: run.bucket, counted: run.counted)) }
  }

  package mutating func start(_ ctx: inout PolicyContext) {
    quota.lastUse = min(quota.lastUse, ctx.now)
    job.start(&ctx)
    step(&ctx)
  }

  package mutating func observe(_ event: TraceEvent, _ ctx: inout PolicyContext) {
    // A location wake goes only to apps registered for it (location-wake).
    if event.kind == .open && event.app == ctx.app { quota.lastUse = event.time }
    job.observe(event)
    step(&ctx)
  }

  package mutating func timerFired(_ ctx: inout PolicyContext) {
    step(&ctx)
  }

  package mutating func fetchFinished(_ outcome: FetchOutcome, _ ctx: inout PolicyContext) {
    quota.finishRun(outcome)
    step(&ctx)
  }
}

/// `android-standby[:key=value,...]`.
package enum AndroidStandbyFamily: PolicyFamily {
  package static let info = FamilyInfo(
    "android-standby", .settings, learning: .usage, style: PolicyStyle(color: "#661100", marker: .cross),
    summary:
      "a 15 min job throttled by the App Standby bucket that follows the app's recent use, with QuotaController windows and batch quotas")

  package static func makePolicies(_ p: AndroidStandbyParameters, _ device: DeviceReplayInput) -> (Int32, ContentTimeline) -> AndroidStandbyPolicy {
    let training = device.training
    return { app, _ in AndroidStandbyPolicy(params: p, training: training, app: app, phase: device.timerPhase(app: app)) }
  }
}
