import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld
import Testing

@testable import FetchSimulation

/// Doze, WorkManager and App Standby Bucket policies.
@Suite("Android policies")
struct AndroidPolicyTests {
  static let day = 86_400.0
  /// 2026-01-05 00:00 UTC.
  static let s0 = 1_767_571_200.0
  static let wifi = Double(NetworkKind.wifi.rawValue)
  static let lte = Double(NetworkKind.lte.rawValue)

  static func run<P: FetchPolicy>(_ policy: inout P, _ trace: UserTrace, app: Int32 = 0) -> AppReplay {
    let world = WorldParameters()
    let user = PreparedUser(trace: trace, world: world)
    let content = ContentTimeline(trace: trace, app: app, world: world, seed: 5)
    return replay(&policy, user: user, app: app, content: content, options: ReplayOptions(seed: 5, policyKey: "android"))
  }

  // MARK: Doze

  @Test("deep Doze: 34.5 min to enter, idle 1, 2, 4, 6, 6 h, windows 5 then 10 min")
  func dozeSchedule() {
    var d = DozeState(start: 0)
    #expect(!d.isDozing(at: 2069.9) && d.isDozing(at: 2070))
    #expect(d.nextMaintenanceWindow(after: 0) == 5670..<5970)
    var starts: [Double] = [], lengths: [Double] = []
    var t = 0.0
    for _ in 0..<8 {
      let w = d.nextMaintenanceWindow(after: t)!
      starts.append(w.lowerBound)
      lengths.append(w.upperBound - w.lowerBound)
      #expect(!d.isDozing(at: w.lowerBound) && d.isInMaintenanceWindow(at: w.lowerBound))
      #expect(d.isDozing(at: w.upperBound) && d.isDozing(at: w.lowerBound - 1))
      #expect(d.nextRunnable(at: w.lowerBound - 1) == w.lowerBound)
      t = w.upperBound
    }
    let gaps = zip(starts.dropFirst(), starts).map { $0 - $1 }
    let expectedGaps: [Double] = [7500, 15_000, 22_200, 22_200, 22_200, 22_200, 22_200]
    #expect(gaps == expectedGaps)
    let expectedLengths: [Double] = [300, 600, 600, 600, 600, 600, 600, 600]
    #expect(lengths == expectedLengths)
    // Far in the steady state the O(1) jump agrees with stepping.
    let far = d.nextMaintenanceWindow(after: 1e7)!
    #expect((far.lowerBound - starts[3]).truncatingRemainder(dividingBy: 22_200) == 0)
    #expect(far.lowerBound > 1e7 - 600 && far.lowerBound <= 1e7 + 22_200)
    // An open exits Doze and restarts the sequence; charging suspends it.
    d.screenOn(at: 10_000, for: 60)
    #expect(!d.isDozing(at: 10_060 + 2069) && d.isDozing(at: 10_060 + 2070))
    let restarted: Range<Double> = (10_060 + 5670)..<(10_060 + 5970)
    #expect(d.nextMaintenanceWindow(after: 10_000) == restarted)
    d.setCharging(true, at: 20_000)
    #expect(!d.isDozing(at: 30_000) && d.nextMaintenanceWindow(after: 30_000) == nil)
    d.setCharging(false, at: 40_000)
    #expect(d.isDozing(at: 42_070) && !d.isDozing(at: 42_069))
  }

  /// A day of opens of another app every 10 min, 08:00–23:00, a quiet
  /// night until 16:00 the next day, then opens again till 22:00; on WiFi.
  static func nightTrace(chargingNight: Bool = false) -> UserTrace {
    var t = UserTrace(user: "night", start: s0, end: s0 + 2 * day)
    _ = t.appIndex("a")  // the fetching app, index 0; never opened
    let b = t.appIndex("b")
    var ev = [TraceEvent(time: s0, kind: .network, value: wifi)]
    for m in stride(from: 8 * 60.0, through: 23 * 60, by: 10) { ev.append(TraceEvent(time: s0 + m * 60, kind: .open, app: b, value: 30)) }
    for m in stride(from: 40 * 60.0, through: 46 * 60, by: 10) { ev.append(TraceEvent(time: s0 + m * 60, kind: .open, app: b, value: 30)) }
    if chargingNight {
      ev.append(TraceEvent(time: s0 + 23 * 3600 + 600, kind: .chargeStart))
      ev.append(TraceEvent(time: s0 + 39 * 3600, kind: .chargeEnd))
    }
    ev.sort { $0.time < $1.time }
    t.events = ev
    return t
  }

  @Test("Doze defers WorkManager jobs to maintenance windows 1, 2, 4, 6 h apart")
  func dozeDefersWork() {
    var p = AndroidWorkManagerPolicy(interval: 900)
    let r = Self.run(&p, Self.nightTrace())
    // From the DeviceIdleController defaults: the screen goes off at 23:00:30; deep Doze
    // after 30 min + 4.5 min; idle 1 h, window 5 min, idle 2 h, window
    // 10 min, idle 4 h, window 10 min, idle 6 h, window 10 min, …
    let idleStart = (Self.s0 + 23 * 3600 + 30) + 1800 + 270
    let w1 = idleStart + 3600
    let w2 = w1 + 300 + 7200
    let w3 = w2 + 600 + 14_400
    let w4 = w3 + 600 + 21_600
    let windows = [w1..<(w1 + 300), w2..<(w2 + 600), w3..<(w3 + 600), w4..<(w4 + 600)]
    let wake = Self.s0 + 40 * 3600
    let night = r.fetches.map(\.start).filter { $0 >= idleStart && $0 < wake }
    for f in night {
      #expect(windows.contains { $0.contains(f) }, "fetch at \(f - idleStart) s into Doze, outside every window")
    }
    // The job is overdue at every window, so it runs once at each start.
    #expect(night == [w1, w2, w3, w4])
    // Spacing: idle 1 h to the first window, then 5 min + 2 h, 10 min + 4 h, 10 min + 6 h.
    #expect(night.first.map { $0 - idleStart } == 3600)
    let gaps = zip(night.dropFirst(), night).map { $0 - $1 }
    let expected: [Double] = [300 + 7200, 600 + 14_400, 600 + 21_600]
    #expect(gaps == expected)
    // Before Doze the job keeps its period; the morning open runs it at once.
    let evening = r.fetches.map(\.start).filter { $0 > Self.s0 + 23 * 3600 && $0 < idleStart }
    #expect(!evening.isEmpty)
    #expect(r.fetches.contains { $0.start == wake })
    #expect(p.doze != nil)
  }

  @Test("charging through the night: jobs keep their period")
  func chargingNight() {
    var p = AndroidWorkManagerPolicy(interval: 900)
    let r = Self.run(&p, Self.nightTrace(chargingNight: true))
    let from = Self.s0 + 23 * 3600 + 1800, to = Self.s0 + 39 * 3600
    let night = r.fetches.map(\.start).filter { $0 >= from && $0 < to }
    #expect(night.count >= 60)
    for (x, y) in zip(night, night.dropFirst()) { #expect(y - x == 900) }
  }

  // MARK: WorkManager

  @Test("the period is clamped to 15 min and the flex to [5 min, period]")
  func clamping() {
    #expect(AndroidWorkManagerPolicy(interval: 60).period == 900)
    #expect(AndroidWorkManagerPolicy(interval: 3600).period == 3600)
    var q = AndroidWorkManagerParameters()
    q.flexS = 10
    #expect(AndroidWorkManagerPolicy(interval: 3600, params: q).flex == 300)
    q.flexS = 10_000
    #expect(AndroidWorkManagerPolicy(interval: 900, params: q).flex == 900)
  }

  @Test("unconstrained and awake, one run in each period's flex window", arguments: [60.0, 900, 1800])
  func spacing(interval: Double) {
    let period = max(900, interval)
    for seed in UInt64(1)...4 {
      let t = TestTraces.user(seed: seed, days: 2, opensPerHour: 3)
      for opportunistic in [0.0, 1.0] {
        var q = AndroidWorkManagerParameters()
        q.dozeEnabled = 0
        q.opportunistic = opportunistic
        var p = AndroidWorkManagerPolicy(interval: interval, params: q)
        let starts = Self.run(&p, t).fetches.map(\.start)
        // Period k ends at start + (k + 1) · period; its run falls in its last 300 s.
        #expect(Double(starts.count) >= 2 * Self.day / period - 1 && Double(starts.count) <= 2 * Self.day / period)
        for (k, x) in starts.enumerated() {
          let end = t.start + Double(k + 1) * period
          #expect(x >= end - 300 && x <= end, "run \(k) at \(x - t.start) s")
        }
        if opportunistic == 0 {
          for (x, y) in zip(starts, starts.dropFirst()) { #expect(y - x == period) }
        }
      }
      // With Doze the spacing only grows.
      var p = AndroidWorkManagerPolicy(interval: interval)
      let starts = Self.run(&p, t).fetches.map(\.start)
      for (x, y) in zip(starts, starts.dropFirst()) { #expect(y - x >= period - 300) }
    }
  }

  @Test("at most one run per period: one LTE day with one open at noon gives 96 runs at 15 min and 24 at 1 h")
  func oneRunPerPeriod() {
    var t = UserTrace(user: "u1", start: Self.s0, end: Self.s0 + Self.day)
    let a = t.appIndex("a")
    t.events = [
      TraceEvent(time: Self.s0, kind: .network, value: Self.lte),
      TraceEvent(time: Self.s0 + 12 * 3600, kind: .open, app: a, value: 1),
    ]
    var q = AndroidWorkManagerParameters()
    q.dozeEnabled = 0
    q.opportunistic = 0
    for (period, count) in [(900.0, 96), (3600.0, 24)] {
      var p = AndroidWorkManagerPolicy(interval: period, params: q)
      let starts = Self.run(&p, t).fetches.map(\.start)
      #expect(starts.count == count)
      // Each period [k·P, (k+1)·P) holds exactly one run.
      #expect(Set(starts.map { Int((($0 - t.start) / period).rounded(.down)) }).count == starts.count)
    }
  }

  @Test("with unmetered=1 no fetch happens on cellular; a due job waits for WiFi")
  func unmetered() throws {
    var q = try parseSettings("unmetered=1", policy: "android-workmanager:15m", defaults: AndroidWorkManagerParameters(), keys: AndroidWorkManagerParameters.keys)
    #expect(q.requiresUnmetered == 1)
    for seed in UInt64(1)...4 {
      let t = TestTraces.user(seed: seed, days: 3, opensPerHour: 2, networkChangesPerDay: 12)
      var p = AndroidWorkManagerPolicy(interval: 900, params: q)
      let r = Self.run(&p, t)
      #expect(!r.fetches.isEmpty)
      for f in r.fetches { #expect(f.network == .wifi) }
      var free = AndroidWorkManagerPolicy(interval: 900)
      #expect(Self.run(&free, t).fetches.contains { $0.network.isCellular })
    }
    // Due at 15 min on LTE; WiFi arrives at 2 h: it runs then, at once.
    var t = UserTrace(user: "w", start: Self.s0, end: Self.s0 + Self.day)
    _ = t.appIndex("a")
    t.events = [
      TraceEvent(time: Self.s0, kind: .network, value: Self.lte),
      TraceEvent(time: Self.s0 + 7200, kind: .network, value: Self.wifi),
    ]
    q.dozeEnabled = 0
    var p = AndroidWorkManagerPolicy(interval: 900, params: q)
    #expect(Self.run(&p, t).fetches.first?.start == Self.s0 + 7200)
  }

  @Test("with charging=1 jobs run only on the charger")
  func chargingConstraint() throws {
    let q = try parseSettings("charging=1,flex=10m", policy: "android-workmanager:30m", defaults: AndroidWorkManagerParameters(), keys: AndroidWorkManagerParameters.keys)
    #expect(q.flexS == 600)
    var t = TestTraces.user(seed: 3, days: 3, opensPerHour: 2)
    var plugged: [Range<Double>] = []
    for d in 0..<3 {
      let a = t.start + Double(d) * Self.day + 1 * 3600, b = a + 6 * 3600
      plugged.append(a..<b)
      t.events += [TraceEvent(time: a, kind: .chargeStart), TraceEvent(time: b, kind: .chargeEnd)]
    }
    t.events.sort { $0.time < $1.time }
    var p = AndroidWorkManagerPolicy(interval: 1800, params: q)
    let r = Self.run(&p, t)
    #expect(r.fetches.count >= 3 * 6 * 2 - 3)
    for f in r.fetches { #expect(plugged.contains { $0.contains(f.start) }) }
  }

  @Test("settings: doze keys and nested standby keys")
  func settings() throws {
    let w = try parseSettings("doze_idle=30m,doze=0,battery_not_low=1", policy: "x", defaults: AndroidWorkManagerParameters(), keys: AndroidWorkManagerParameters.keys)
    #expect(w.doze.idleS == 1800 && w.dozeEnabled == 0 && w.requiresBatteryNotLow == 1)
    #expect(settingsSuffix(w, defaults: AndroidWorkManagerParameters(), keys: AndroidWorkManagerParameters.keys, separator: ",") == ",battery_not_low=1,doze=0,doze_idle=30m")
    let s = try parseSettings("interval=1h,rare_batches=5,flex=10m,unmetered=1", policy: "android-standby", defaults: AndroidStandbyParameters(), keys: AndroidStandbyParameters.keys)
    #expect(s.jobIntervalS == 3600 && s.quota.rareBatches == 5 && s.job.flexS == 600 && s.job.requiresUnmetered == 1)
    #expect(throws: PolicySpecError.self) {
      try parseSettings("flex=1m", policy: "x", defaults: AndroidWorkManagerParameters(), keys: AndroidWorkManagerParameters.keys)
    }
    let names = AndroidStandbyParameters.keys.map(\.name)
    #expect(Set(names).count == names.count)
  }

  // MARK: App Standby Buckets

  /// Two weeks on WiFi: app "h" opened every 20–40 min 08:00–23:00, app
  /// "m" every 9 h, app "r" once, on day 2. Split at day 7.
  static func standbyTrace() -> (train: UserTrace, test: UserTrace) {
    var rng = SplitMix64(seed: 17)
    var t = UserTrace(user: "sb", start: s0, end: s0 + 14 * day)
    let h = t.appIndex("h"), m = t.appIndex("m"), r = t.appIndex("r")
    var ev = [TraceEvent(time: s0, kind: .network, value: wifi)]
    for d in 0..<14 {
      var x = s0 + Double(d) * day + 8 * 3600
      while x < s0 + Double(d) * day + 23 * 3600 {
        ev.append(TraceEvent(time: x, kind: .open, app: h, value: 60))
        x += 1200 + rng.uniform() * 1200
      }
    }
    for x in stride(from: s0 + 3600, to: t.end, by: 9 * 3600) { ev.append(TraceEvent(time: x, kind: .open, app: m, value: 20)) }
    ev.append(TraceEvent(time: s0 + 2 * day + 12 * 3600, kind: .open, app: r, value: 20))
    ev.sort { $0.time < $1.time }
    t.events = ev
    return t.split(at: s0 + 7 * day)
  }

  static func standby(_ app: String, charging: Bool = false, params: AndroidStandbyParameters = AndroidStandbyParameters()) -> (AppReplay, AndroidStandbyPolicy, UserTrace, UserTrace) {
    var (train, test) = standbyTrace()
    if charging {
      test.events.insert(TraceEvent(time: test.start, kind: .chargeStart), at: 0)
    }
    let a = Int32(train.apps.firstIndex(of: app)!)
    var p = AndroidStandbyPolicy(params: params, training: train, app: a)
    p.logRuns = true
    let r = run(&p, test, app: a)
    return (r, p, train, test)
  }

  @Test("a rarely used app gets far fewer fetches a day than a heavily used one")
  func rareVersusHeavy() {
    let (heavy, hp, _, _) = Self.standby("h")
    let (rare, rp, _, _) = Self.standby("r")
    let perDay = { (r: AppReplay) in Double(r.fetches.count) / r.summary.days }
    #expect(perDay(heavy) >= 40, "heavy \(perDay(heavy))/day")
    #expect(perDay(rare) <= 3, "rare \(perDay(rare))/day")
    #expect(perDay(heavy) >= 10 * perDay(rare))
    #expect(Set(hp.runs.map(\.bucket)).isSubset(of: [.active, .workingSet]))
    #expect(Set(rp.runs.map(\.bucket)) == [.rare, .restricted])
  }

  @Test("job batches per rolling window never exceed the bucket's quota", arguments: ["h", "m", "r"])
  func quotas(app: String) {
    let (r, p, train, test) = Self.standby(app)
    let a = Int32(train.apps.firstIndex(of: app)!)
    let opens = (train.events + test.events).filter { $0.kind == .open && $0.app == a }.map(\.time)
    // AOSP QuotaController windows and max batches; NV bucket
    // thresholds 1 h, 24 h, 3 days, 8 days on time since last use.
    let window: [Double] = [600, 7200, 28_800, 86_400, 86_400]
    let maxBatches = [75, 10, 8, 3, 1]
    let thresholds: [Double] = [3600, 86_400, 3 * 86_400, 8 * 86_400]
    #expect(r.fetches.count == p.runs.count)
    for (f, run) in zip(r.fetches, p.runs) {
      let last = opens.last { $0 <= f.start } ?? train.start
      let b = thresholds.firstIndex { f.start - last < $0 } ?? 4
      #expect(run.bucket.rawValue == b && run.time == f.start && run.counted)
      let inWindow = r.fetches.filter { $0.start > f.start - window[b] && $0.start <= f.start }
      #expect(inWindow.count <= maxBatches[b], "\(inWindow.count) runs in the \(run.bucket) window ending \(f.start)")
      let jobTime = inWindow.dropLast().map { $0.end - $0.start }.reduce(0, +)
      #expect(jobTime < 600)
    }
    #expect(!r.fetches.isEmpty)
  }

  @Test("charging lifts the quota, except in Restricted")
  func chargingLiftsQuota() {
    let (plain, _, _, test) = Self.standby("r")
    let (charged, cp, _, _) = Self.standby("r", charging: true)
    // Rare until day 10 12:00 (8 days after the last use), Restricted after.
    let restrictedFrom = Self.s0 + 10 * Self.day + 12 * 3600
    let rare = test.start..<restrictedFrom
    let inRare = { (r: AppReplay) in r.fetches.filter { rare.contains($0.start) }.count }
    #expect(inRare(plain) <= 3 * 4)
    #expect(inRare(charged) >= 300, "\(inRare(charged)) charged runs in 3.5 days")
    #expect(cp.runs.filter { rare.contains($0.time) }.allSatisfy { !$0.counted })
    let restricted = charged.fetches.map(\.start).filter { $0 >= restrictedFrom }
    #expect(!restricted.isEmpty)
    for (x, y) in zip(restricted, restricted.dropFirst()) { #expect(y - x >= Self.day) }
  }
}
