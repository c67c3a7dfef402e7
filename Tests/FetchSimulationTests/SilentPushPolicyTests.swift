import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld
import Testing

@testable import FetchSimulation

@Suite("Silent push policy")
struct SilentPushPolicyTests {
  /// Poisson update times in the trace's window.
  static func updates(_ t: UserTrace, perHour: Double, seed: UInt64) -> [Double] {
    var rng = SplitMix64(seed: seed, keys: "push-updates")
    var out: [Double] = []
    var x = t.start
    while true {
      x += rng.exponential(rate: perHour / 3600)
      guard x < t.end else { return out }
      out.append(x)
    }
  }

  struct Run {
    var replay: AppReplay
    var policy: SilentPushPolicy
    var updates: [Double]
  }

  static func run(
    _ trace: UserTrace, updates: [Double], params: SilentPushParameters = SilentPushParameters(),
    world: WorldParameters = WorldParameters()
  ) -> Run {
    let user = PreparedUser(trace: trace, world: world)
    let content = ContentTimeline(updates: updates, world: world)
    var p = SilentPushPolicy(params: params, user: user, content: content)
    let r = replay(&p, user: user, app: 0, content: content, options: ReplayOptions(seed: 1, policyKey: "silent-push"))
    return Run(replay: r, policy: p, updates: updates)
  }

  /// Random traces with network changes (offline included) and a fast
  /// content stream, so the rate cap binds.
  static func randomRuns(rate: Double) -> [Run] {
    (UInt64(1)...6).map { seed in
      let t = TestTraces.user(seed: seed, days: 3, opensPerHour: 1.5, networkChangesPerDay: 16)
      var p = SilentPushParameters()
      p.rateLimit = rate
      return run(t, updates: updates(t, perHour: 8, seed: seed), params: p)
    }
  }

  /// Offline intervals [from, to) of a trace (network rows only; the
  /// default network at the start is online).
  static func offlineIntervals(_ t: UserTrace) -> [Range<Double>] {
    var out: [Range<Double>] = []
    var since: Double?
    for e in t.events where e.kind == .network {
      if e.network == .offline {
        if since == nil { since = e.time }
      } else if let s = since {
        if e.time > s { out.append(s..<e.time) }
        since = nil
      }
    }
    if let s = since, t.end > s { out.append(s..<t.end) }
    return out
  }

  @Test("settings parse, and print only what differs from the defaults")
  func settings() throws {
    let keys = SilentPushParameters.keys
    let p = try parseSettings("rate=2,max_delay=5m,low_battery_pct=10", policy: "silent-push", defaults: SilentPushParameters(), keys: keys)
    #expect(p.rateLimit == 2 && p.maxDelayS == 300 && p.lowBatteryPct == 10)
    #expect(settingsSuffix(p, defaults: SilentPushParameters(), keys: keys, separator: ":") == ":rate=2,max_delay=5m,low_battery_pct=10")
    #expect(settingsSuffix(SilentPushParameters(), defaults: SilentPushParameters(), keys: keys, separator: ":") == "")
    #expect(throws: PolicySpecError.self) {
      try parseSettings("burst=1", policy: "silent-push", defaults: SilentPushParameters(), keys: keys)
    }
    #expect(throws: PolicySpecError.self) {
      try parseSettings("rate=-1", policy: "silent-push", defaults: SilentPushParameters(), keys: keys)
    }
  }

  @Test("deliveries never exceed the rate cap in any sliding hour", arguments: [2.0, 3.0])
  func rateCap(rate: Double) {
    var binding = false
    for r in Self.randomRuns(rate: rate) {
      let starts = r.replay.fetches.map(\.start)
      #expect(!starts.isEmpty)
      #expect(r.policy.stats.delivered == starts.count)
      let k = Int(rate)
      for i in starts.indices where i + k < starts.count {
        #expect(starts[i + k] - starts[i] >= 3600, "\(k + 1) deliveries within \(starts[i + k] - starts[i]) s")
        if starts[i + k - 1] - starts[i] < 3600 { binding = true }
      }
    }
    // At 8 updates an hour the cap does bind somewhere.
    #expect(binding)
  }

  @Test("while offline only the newest push survives: at most one delivery on reconnection")
  func storeOne() {
    for seed in UInt64(1)...6 {
      let t = TestTraces.user(seed: seed, days: 3, opensPerHour: 1.5, networkChangesPerDay: 16)
      let ups = Self.updates(t, perHour: 8, seed: seed)
      let r = Self.run(t, updates: ups)
      let offline = Self.offlineIntervals(t)
      #expect(!offline.isEmpty)
      for f in r.replay.fetches {
        #expect(!offline.contains { $0.contains(f.start) }, "fetch at \(f.start) while offline")
      }
      for o in offline {
        // Between reconnection and the next update, at most one delivery.
        let nextUpdate = ups.first { $0 > o.upperBound } ?? .infinity
        let n = r.replay.fetches.filter { $0.start >= o.upperBound && $0.start < nextUpdate }.count
        #expect(n <= 1, "\(n) deliveries after reconnecting at \(o.upperBound)")
      }
    }
  }

  @Test("an offline spell with many updates yields one delivery, at reconnection")
  func offlineSpell() {
    var t = UserTrace(user: "o", start: 0, end: 86_400)
    _ = t.appIndex("a")
    let wifi = Double(NetworkKind.wifi.rawValue), off = Double(NetworkKind.offline.rawValue)
    t.events = [
      TraceEvent(time: 0, kind: .network, value: wifi),
      TraceEvent(time: 10_000, kind: .network, value: off),
      TraceEvent(time: 30_000, kind: .network, value: wifi),
    ]
    let ups = stride(from: 11_000.0, to: 29_000, by: 1000).map { $0 }
    let r = Self.run(t, updates: ups)
    #expect(r.replay.fetches.map(\.start) == [30_000])
    #expect(r.policy.stats.sent == ups.count && r.policy.stats.coalesced == ups.count - 1)
    #expect(r.replay.fetches.first?.result == .newData)
  }

  @Test("priority 5: a push waits for network activity or the maximum delay")
  func batching() {
    var t = UserTrace(user: "b", start: 0, end: 86_400)
    _ = t.appIndex("a")  // the fetching app, index 0
    let b = t.appIndex("b")
    t.events = [
      TraceEvent(time: 0, kind: .network, value: Double(NetworkKind.wifi.rawValue)),
      TraceEvent(time: 20_100, kind: .open, app: b, value: 40),
      TraceEvent(time: 30_200, kind: .wake, value: 5),
    ]
    // Quiet device: delivered after max_delay. Another app's session or a
    // wake: delivered then. An update during a session: at once.
    let r = Self.run(t, updates: [10_000, 20_000, 30_000, 40_000, 40_010, 50_000 + 20])
    #expect(r.replay.fetches.map(\.start) == [10_900, 20_100, 30_200, 40_900, 50_920])
    #expect(r.policy.stats.coalesced == 1)
    var t2 = t
    t2.events.append(TraceEvent(time: 60_000, kind: .open, app: b, value: 100))
    let r2 = Self.run(t2, updates: [60_050])
    #expect(r2.replay.fetches.map(\.start) == [60_050])
  }

  @Test("the app's own open takes a waiting push in the foreground")
  func foreground() {
    var t = UserTrace(user: "f", start: 0, end: 86_400)
    let a = t.appIndex("a")
    t.events = [
      TraceEvent(time: 0, kind: .network, value: Double(NetworkKind.wifi.rawValue)),
      TraceEvent(time: 10_100, kind: .open, app: a, value: 30),
    ]
    let r = Self.run(t, updates: [10_000])
    #expect(r.replay.fetches.isEmpty && r.policy.stats.consumedInForeground == 1)
    var w = WorldParameters()
    w.replay.foregroundRefresh = false
    let r2 = Self.run(t, updates: [10_000], world: w)
    #expect(r2.replay.fetches.map(\.start) == [10_100])
  }

  @Test("under low battery, not charging, pushes are dropped")
  func lowBattery() {
    for seed in UInt64(1)...4 {
      var t = TestTraces.user(seed: seed, days: 3, opensPerHour: 1.5, networkChangesPerDay: 8)
      // Day 2 at 12 %; days 1 and 3 at 70 %; plugged in 12:00–14:00 on day 2.
      for h in stride(from: 0.0, to: 72, by: 0.5) {
        t.events.append(TraceEvent(time: t.start + h * 3600, kind: .battery, value: h >= 24 && h < 48 ? 12 : 70))
      }
      t.events.append(TraceEvent(time: t.start + 36 * 3600, kind: .chargeStart))
      t.events.append(TraceEvent(time: t.start + 38 * 3600, kind: .chargeEnd))
      t.events.sort { $0.time < $1.time }
      let r = Self.run(t, updates: Self.updates(t, perHour: 4, seed: seed))
      let low = (t.start + 24 * 3600)..<(t.start + 48 * 3600)
      let charging = (t.start + 36 * 3600)..<(t.start + 38 * 3600)
      for f in r.replay.fetches where low.contains(f.start) {
        #expect(charging.contains(f.start), "fetch at \(f.start - t.start) s under 20 % battery, not charging")
      }
      #expect(r.policy.stats.droppedLowPower > 0)
      #expect(r.replay.fetches.contains { !low.contains($0.start) })
    }
  }

  @Test("every fetch follows a content update since the previous fetch")
  func noSpontaneousFetches() {
    for seed in UInt64(1)...6 {
      let t = TestTraces.user(seed: seed, days: 3, opensPerHour: 1.5, networkChangesPerDay: 16)
      let ups = Self.updates(t, perHour: Double(seed % 3) + 0.5, seed: seed)
      let r = Self.run(t, updates: ups)
      var previous = -Double.infinity
      for f in r.replay.fetches {
        #expect(ups.contains { $0 > previous && $0 <= f.start }, "fetch at \(f.start) with no update since \(previous)")
        previous = f.start
      }
      #expect(r.replay.fetches.count <= ups.count)
    }
    // No updates: no fetches, no cost.
    let t = TestTraces.user(seed: 9, days: 2, opensPerHour: 2, networkChangesPerDay: 8)
    let r = Self.run(t, updates: [])
    #expect(r.replay.fetches.isEmpty && r.replay.summary.energyJ == 0)
  }
}
