import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld
import Testing

@testable import FetchSimulation

/// What WorkManager's opportunistic rule and Doze read of the device: the
/// radio's state, not the screen's, and the trace before the window.
@Suite("Android jobs: the radio's state and Doze's clock")
struct WorkManagerRadioTests {
  static let day = 86_400.0
  /// 2026-01-05 00:00 UTC.
  static let s0 = 1_767_571_200.0

  static func run<P: FetchPolicy>(_ policy: inout P, _ trace: UserTrace) -> AppReplay {
    let world = WorldParameters()
    let user = PreparedUser(trace: trace, world: world, modelled: [0])
    let content = ContentTimeline(updates: [], world: world)
    return replay(&policy, user: user, app: 0, content: content, options: ReplayOptions(seed: 5, policyKey: "android"))
  }

  @Test("a 3-hour dialer session does not hold the radio up: the runs in it wait for their windows' ends; a WhatsApp open does")
  func sessionIsNotRadio() {
    var t = UserTrace(user: "u1", start: Self.s0, end: Self.s0 + Self.day)
    _ = t.appIndex("a")
    let dialer = t.appIndex("com.sec.android.app.dialertab"), chat = t.appIndex("com.whatsapp")
    let open = Self.s0 + 3600 + 100
    // WhatsApp is opened 200 s before a period's end, inside its flex window.
    let chatAt = Self.s0 + 6 * 3600 - 200
    t.events = [
      TraceEvent(time: Self.s0, kind: .network, value: Double(NetworkKind.lte.rawValue)),
      TraceEvent(time: open, kind: .open, app: dialer, value: 3 * 3600),
      TraceEvent(time: chatAt, kind: .open, app: chat, value: 60),
    ]
    var q = AndroidWorkManagerParameters()
    q.dozeEnabled = 0
    var p = AndroidWorkManagerPolicy(interval: 900, params: q)
    let r = Self.run(&p, t)
    let inSession = r.fetches.filter { $0.start > open && $0.start < open + 3 * 3600 }
    #expect(inSession.count == 12)
    for f in inSession {
      #expect((f.start - Self.s0).truncatingRemainder(dividingBy: 900) == 0, "run at \(f.start - Self.s0) s, before its window's end")
    }
    #expect(r.fetches.contains { $0.start == chatAt })
  }

  @Test("Doze's clock starts at the last screen-off before the window: first maintenance window about 21:36, not 01:34")
  func dozeFromHistory() {
    var h = UserTrace(user: "u1", start: Self.s0 - Self.day, end: Self.s0)
    let a = h.appIndex("a")
    // The last session of the evening: 20:00 for 2 min.
    h.events = [TraceEvent(time: Self.s0 - 4 * 3600, kind: .open, app: a, value: 120)]
    let history = DozeHistory(h)
    #expect(history.screenOffAt == Self.s0 - 14_280 && history.unpluggedAt == h.start)
    let off = Self.s0 - 14_280
    let d = DozeState(start: Self.s0, history: history)
    // 30 min inactive + 4.5 min sensing + 1 h idle: 21:36:30.
    #expect(d.nextMaintenanceWindow(after: off)?.lowerBound == off + 5670)
    #expect(DozeState(start: Self.s0).nextMaintenanceWindow(after: Self.s0)?.lowerBound == Self.s0 + 5670)
    // A quiet night on LTE: the job is due at 00:15, but the device has
    // dozed since 21:04; windows at 21:36:30, 23:46:30, then 03:51:30.
    var t = UserTrace(user: "u1", start: Self.s0, end: Self.s0 + Self.day)
    _ = t.appIndex("a")
    t.events = [TraceEvent(time: Self.s0, kind: .network, value: Double(NetworkKind.lte.rawValue))]
    var p = AndroidWorkManagerPolicy(interval: 900)
    p.read(history: history)
    #expect(Self.run(&p, t).fetches.first?.start == Self.s0 + 13_890)
    var fresh = AndroidWorkManagerPolicy(interval: 900)
    #expect(Self.run(&fresh, t).fetches.first.map { $0.start <= Self.s0 + 900 } == true)
    // A history that ends on the charger: unplugged only at the window start.
    h.events.append(TraceEvent(time: Self.s0 - 3600, kind: .chargeStart))
    #expect(DozeHistory(h).unpluggedAt == Self.s0)
  }
}
