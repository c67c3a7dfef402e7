import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld
import Testing

@testable import FetchSimulation

/// What the user's sessions do to the radio (`session.network`).
@Suite("Session network model")
struct SessionNetworkTests {
  static func trace(_ opens: [(app: String, time: Double, length: Double)]) -> UserTrace {
    var t = UserTrace(user: "u1", start: 0, end: 86_400)
    t.events = opens.map { o in TraceEvent(time: o.time, kind: .open, app: t.appIndex(o.app), value: o.length) }
    return t
  }

  /// The sessions' activity as drawn, on an LTE radio without promotion
  /// (which would lengthen each burst that starts on a quiet radio).
  static func busy(_ t: UserTrace, _ w: WorldParameters, modelled: [Int32] = [], seed: UInt64 = 1) -> [BusyInterval] {
    var w = w
    w.radios.lte.promotionTimeS = 0
    return PreparedUser(trace: t, world: w, modelled: modelled, seed: seed).backgroundBusy(cellular: true)
  }

  @Test("app categories from package names: offline, networked, other")
  func categories() {
    for n in ["com.android.htcdialer", "com.android.settings", "com.sec.android.app.camera", "com.android.mms", "com.htc.music"] {
      #expect(AppCategory(n) == .offline, "\(n)")
    }
    for n in ["com.whatsapp", "com.android.chrome", "com.google.android.gm", "com.google.android.youtube", "com.soundcloud.android"] {
      #expect(AppCategory(n) == .networked, "\(n)")
    }
    for n in ["com.rovio.gold", "a", "uk.co.aifactory.backgammonfree"] { #expect(AppCategory(n) == .other, "\(n)") }
  }

  @Test("whole: each session is busy for its length (at least 1 s), overlapping ones merged")
  func whole() {
    var w = WorldParameters()
    w.sessions.model = .whole
    let t = Self.trace([("com.android.camera", 100, 60), ("com.whatsapp", 150, 30), ("x", 1000, 0)])
    #expect(Self.busy(t, w) == [BusyInterval(start: 100, end: 180), BusyInterval(start: 1000, end: 1001)])
  }

  @Test("open: one burst per open")
  func openOnly() {
    var w = WorldParameters()
    w.sessions.model = .open
    w.sessions.burstS = 2
    let t = Self.trace([("com.android.camera", 100, 60), ("news", 500, 60)])
    #expect(Self.busy(t, w, modelled: [1]) == [BusyInterval(start: 100, end: 102), BusyInterval(start: 500, end: 502)])
  }

  @Test("category: a camera session adds no radio time; a browser session bursts at the open and at each action")
  func category() {
    var w = WorldParameters()
    w.sessions.burstS = 1
    let camera = Self.trace([("com.android.camera", 100, 600)])
    #expect(Self.busy(camera, w).isEmpty)
    // Actions far apart: only the open's burst.
    w.sessions.actionIntervalS = 1e9
    let browser = Self.trace([("com.android.chrome", 100, 600)])
    #expect(Self.busy(browser, w) == [BusyInterval(start: 100, end: 101)])
    // Actions every 5 s on average through a 10-minute session: the bursts
    // are the exponential draws of the app's stream, all inside the session.
    w.sessions.actionIntervalS = 5
    let b = Self.busy(browser, w)
    var rng = SplitMix64(seed: 1, keys: "session-network", "u1", "com.android.chrome")
    #expect(rng.uniform() < 1)
    var expected = [BusyInterval(start: 100, end: 101)]
    var x = 100 + rng.exponential(rate: 1.0 / 5)
    while x < 700 {
      expected.append(BusyInterval(start: x, end: x + 1))
      x += rng.exponential(rate: 1.0 / 5)
    }
    #expect(b == SessionActivity.merged(expected))
    #expect(b.count > 60 && b.count < 140)
    // Another seed, other actions; the same seed, the same ones.
    #expect(Self.busy(browser, w, seed: 2) != b && Self.busy(browser, w, seed: 1) == b)
  }

  @Test("category: the share decides whether an unknown app's session uses the network; a modelled app's always does")
  func shares() {
    var w = WorldParameters()
    w.sessions.actionIntervalS = 1e9
    let t = Self.trace((0..<200).map { ("game", Double($0) * 1000, 10) })
    w.sessions.otherShare = 0
    #expect(Self.busy(t, w).isEmpty)
    w.sessions.otherShare = 1
    #expect(Self.busy(t, w).count == 200)
    w.sessions.otherShare = 0.5
    let half = Self.busy(t, w).count
    #expect(half > 70 && half < 130)
    // The replayed app talks to its server at every open.
    w.sessions.otherShare = 0
    #expect(Self.busy(t, w, modelled: [0]).count == 200)
  }

  @Test("categories of FetchLab's synthetic app names and of the names the fragments got wrong")
  func syntheticAndMisfiled() {
    for n in ["chat", "messages", "social", "mail", "news", "video", "browser", "weather", "com.zhiliaoapp.musically", "com.google.Gmail", "ph.telegra.Telegraph"] {
      #expect(AppCategory(n) == .networked, "\(n)")
    }
    for n in ["phone", "settings", "camera", "contacts", "clock", "com.google.android.marvin.talkback", "com.apple.mobilephone", "com.apple.Preferences"] {
      #expect(AppCategory(n) == .offline, "\(n)")
    }
    // Every app of the synthetic pool is in a list, except a few whose use
    // of the network is genuinely mixed.
    let other = SyntheticPopulation.App.defaultPool.map(\.name).filter { AppCategory($0) == .other }
    #expect(Set(other).isSubset(of: ["games", "fitness", "health", "translate"]), "\(other)")
  }

  @Test("a modelled app's sessions follow its category: a 3-hour dialer session makes the open's exchange and nothing else")
  func modelledOfflineApp() {
    var w = WorldParameters()
    let t = Self.trace([("com.sec.android.app.dialertab", 1000, 3 * 3600), ("com.android.chrome", 20_000, 600)])
    let b = Self.busy(t, w, modelled: [0])
    #expect(b.first == BusyInterval(start: 1000, end: 1001))
    #expect(b.filter { $0.start < 20_000 }.count == 1)
    // The browser, not modelled, still bursts through its session.
    #expect(b.filter { $0.start >= 20_000 }.count > 5)
    // A modelled networked app keeps its action bursts.
    #expect(Self.busy(t, w, modelled: [1]).filter { $0.start >= 20_000 }.count > 5)
    w.sessions.openExchange = .whenStale
    #expect(Self.busy(t, w, modelled: [0]).filter { $0.start < 20_000 }.isEmpty)
  }

  @Test("open_exchange when_stale and none: a modelled app's opens make no burst of their own; other apps' do; actions stay")
  func openExchange() {
    var w = WorldParameters()
    w.sessions.actionIntervalS = 1e9
    let t = Self.trace([("news", 100, 60), ("com.whatsapp", 500, 60), ("news", 900, 60)])
    #expect(Self.busy(t, w, modelled: [0]).count == 3)
    for x in [OpenExchange.whenStale, .none] {
      w.sessions.openExchange = x
      #expect(Self.busy(t, w, modelled: [0]) == [BusyInterval(start: 500, end: 501)], "\(x)")
      w.sessions.model = .open
      #expect(Self.busy(t, w, modelled: [0]) == [BusyInterval(start: 500, end: 501)], "\(x)")
      w.sessions.model = .category
    }
    // Actions of a modelled app's session are drawn as before.
    w.sessions.actionIntervalS = 5
    w.sessions.openExchange = .whenStale
    let withActions = Self.busy(t, w, modelled: [0])
    w.sessions.openExchange = .always
    let always = Self.busy(t, w, modelled: [0])
    #expect(withActions.count > 10 && withActions.allSatisfy { iv in always.contains { $0.start <= iv.start && iv.end <= $0.end } })
    #expect(w.set("session.open_exchange", to: .word("when_stale")) == nil && w.sessions.openExchange == .whenStale)
    #expect(w.refreshesAtOpen)
    #expect(w.set("session.open_exchange", to: .word("none")) == nil && !w.refreshesAtOpen)
    #expect(w.set("session.open_exchange", to: .word("sometimes"))?.contains("when_stale") == true)
  }

  @Test("background traffic: a Poisson stream of transfers on the network in force, none offline, the same for a seed")
  func backgroundTraffic() {
    var w = WorldParameters()
    let empty = Self.trace([])
    #expect(Self.busy(empty, w).isEmpty)
    w.sessions.backgroundWakesPerHour = 6
    w.sessions.backgroundWakeS = 5
    let b = Self.busy(empty, w)
    // 144 expected in a day; Poisson: within ±5 σ.
    #expect(b.count > 84 && b.count < 204, "\(b.count)")
    #expect(b.allSatisfy { $0.end - $0.start <= 5 + 1e-9 })
    #expect(Self.busy(empty, w, seed: 1) == b && Self.busy(empty, w, seed: 2) != b)
    // Offline for the second half of the day: nothing there.
    var half = empty
    half.events = [TraceEvent(time: 43_200, kind: .network, value: Double(NetworkKind.offline.rawValue))]
    let h = Self.busy(half, w)
    #expect(!h.isEmpty && h.allSatisfy { $0.start < 43_200 })
  }

  @Test("category: each app's share is found once per user, the value share(app:) gives (a modelled app's too), and only for apps opened")
  func sharesByApp() {
    let w = WorldParameters()
    let t = Self.trace([("com.android.camera", 0, 10), ("com.android.chrome", 100, 10), ("game", 200, 10), ("game", 300, 10)])
    var a = SessionActivity(w.sessions, seed: 1, trace: t, modelled: [2])
    #expect(a.shares.count == t.apps.count && a.shares.allSatisfy(\.isNaN), "nothing asked before the first open")
    for e in t.events where e.app != 2 { a.activity(of: e) { _ in } }
    #expect(a.shares[0] == w.sessions.share(app: "com.android.camera"))
    #expect(a.shares[1] == w.sessions.share(app: "com.android.chrome"))
    #expect(a.shares[2].isNaN, "the modelled app not opened yet")
    for e in t.events where e.app == 2 { a.activity(of: e) { _ in } }
    #expect(a.shares[2] == w.sessions.share(app: "game"))
  }

  @Test("session parameters: bad values are refused with a reason")
  func registry() {
    var w = WorldParameters()
    #expect(w.set("session.network", to: .word("sometimes"))?.contains("category") == true)
    #expect(w.set("session.other_share", to: .number(1.5))?.contains("outside") == true)
    #expect(w.set("session.action_interval_s", to: .number(0))?.contains("outside") == true)
    #expect(w.set("session.network", to: .word("whole")) == nil)
    #expect(w.sessions.model == .whole)
  }
}
