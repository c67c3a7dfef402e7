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

  static func busy(_ t: UserTrace, _ w: WorldParameters, modelled: [Int32] = [], seed: UInt64 = 1) -> [BusyInterval] {
    PreparedUser(trace: t, world: w, modelled: modelled, seed: seed).backgroundBusy(cellular: true)
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

  @Test("category: each app's share is found once per user, the value share(app:) gives (1 for a modelled app), and only for apps opened")
  func sharesByApp() {
    let w = WorldParameters()
    let t = Self.trace([("com.android.camera", 0, 10), ("com.android.chrome", 100, 10), ("game", 200, 10), ("game", 300, 10)])
    var a = SessionActivity(w, seed: 1, trace: t, modelled: [2])
    #expect(a.shares.count == t.apps.count && a.shares.allSatisfy(\.isNaN), "nothing asked before the first open")
    for e in t.events where e.app != 2 { a.activity(of: e) { _ in } }
    #expect(a.shares[0] == w.sessions.share(app: "com.android.camera"))
    #expect(a.shares[1] == w.sessions.share(app: "com.android.chrome"))
    #expect(a.shares[2].isNaN, "the modelled app not opened yet")
    for e in t.events where e.app == 2 { a.activity(of: e) { _ in } }
    #expect(a.shares[2] == 1)
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
