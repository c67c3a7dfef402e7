import FetchModels
import FetchSimulation
import FetchTraces
import FetchWorld
import Testing

/// Background activity (a session burst, another app's wake) that starts on
/// a quiet radio waits for its promotion like a fetch does: its radio time
/// runs from its start to the promotion's end plus its own length, and a
/// fetch starting while it promotes moves data only once the radio is
/// connected.
@Suite("Promotion of bursts that start on a quiet radio")
struct BurstPromotionTests {
  static let t0 = 1_767_571_200.0

  /// A WhatsApp session at t0 + 1 h (60 s), the studied app `a` opened at
  /// t0 + 2 h, the window t0 … t0 + 3 h, all on `network`; the content never
  /// changes, so every fetch is a NoData exchange.
  static func user(_ network: NetworkKind) -> (PreparedUser, WorldParameters) {
    var w = WorldParameters()
    w.content.source = .trace
    var t = UserTrace(user: "u1", start: t0, end: t0 + 3 * 3600)
    let whatsapp = t.appIndex("com.whatsapp")
    let a = t.appIndex("a")
    t.events = [
      TraceEvent(time: t0, kind: .network, value: Double(network.rawValue)),
      TraceEvent(time: t0 + 3600, kind: .open, app: whatsapp, value: 60),
      TraceEvent(time: t0 + 7200, kind: .open, app: a, value: 1),
    ]
    return (PreparedUser(trace: t, world: w, apps: [a], modelled: [a], seed: 1), w)
  }

  /// The one fetch of `periodic:1d,phase=3600s` for app `a`: at t0 + 1 h,
  /// the instant the WhatsApp session's first burst starts.
  static func fetch(_ network: NetworkKind) throws -> (FetchRecord, WorldParameters) {
    let (user, w) = Self.user(network)
    let a = Int32(1)
    let r = try PolicySpec(parsing: "periodic:1d,phase=3600s").replay(
      user: user, apps: [a], contents: [ContentTimeline(updates: [], world: w)], scope: .device, seed: 1,
      recordEvents: true)
    let f = try #require(r.apps[0].fetches.first)
    #expect(f.start == t0 + 3600)
    return (f, w)
  }

  @Test("3G: a fetch in the same instant as a burst on an idle radio lasts the 2 s promotion")
  func sameInstant3G() throws {
    let (f, w) = try Self.fetch(.umts3g)
    let r = w.radios.umts3g
    // At Unix times of 1.8e9 s a double resolves 2.4e-7 s: microsecond checks.
    // Promotion 2 s, 1,000 B up at 0.5 Mbps, 0.3 s server, 2,000 B down at 1 Mbps.
    let up: Double = 1000 * 8 / 0.5e6
    let down: Double = 2000 * 8 / 1e6
    let duration: Double = 2 + up + 0.3 + down
    #expect(abs(f.end - f.start - duration) < 1e-6, "\(f.end - f.start) s")
    // The burst holds the radio from t0 + 1 h to the end of its promotion
    // plus its 1 s (3 s), past the fetch's end: the fetch adds no radio
    // time, only its CPU (3G has no throughput term).
    #expect(r.promotionTimeS + w.sessions.burstS > duration)
    let expected: Double = w.device.cpuWakeEnergyJ + w.device.cpuActivePowerW * duration
    #expect(abs(f.energyJ - expected) < 1e-6, "\(f.energyJ) J against \(expected) J")
  }

  @Test("LTE: the same fetch lasts 0.563 s and costs 0.948 J")
  func sameInstantLTE() throws {
    let (f, w) = try Self.fetch(.lte)
    let r = w.radios.lte
    let up: Double = 1000 * 8 / 6e6
    let down: Double = 2000 * 8 / 13e6
    let duration: Double = 0.26 + up + 0.3 + down
    #expect(abs(f.end - f.start - duration) < 1e-6, "\(f.end - f.start) s")
    #expect(abs(duration - 0.563) < 5e-4)
    let throughput: Double = r.downlinkWPerMbps * 13 * down + r.uplinkWPerMbps * 6 * up
    let expected: Double = w.device.cpuWakeEnergyJ + w.device.cpuActivePowerW * duration + throughput
    #expect(abs(f.energyJ - expected) < 1e-6, "\(f.energyJ) J against \(expected) J")
    #expect(abs(f.energyJ - 0.948) < 5e-4)
  }

  @Test("a 1 s burst on an idle 3G radio is busy for the 2 s promotion and then its 1 s, so its tail starts at t + 3 s")
  func burstOutlastsItsPromotion() {
    var w = WorldParameters()
    w.sessions.model = .open
    for (net, promotion) in [(NetworkKind.umts3g, 2.0), (.lte, 0.26), (.wifi, 0.0791)] {
      var t = UserTrace(user: "u1", start: Self.t0, end: Self.t0 + 3600)
      let app = t.appIndex("com.whatsapp")
      t.events = [
        TraceEvent(time: Self.t0, kind: .network, value: Double(net.rawValue)),
        TraceEvent(time: Self.t0 + 100, kind: .open, app: app, value: 30),
        // 8 s after the first burst's end: 3G is in FACH (1.5 s back to DCH),
        // LTE still in its tail, WiFi idle again.
        TraceEvent(time: Self.t0 + 100 + promotion + 1 + 8, kind: .open, app: app, value: 30),
      ]
      let b = PreparedUser(trace: t, world: w).backgroundBusy(cellular: net.isCellular)
      let second = Self.t0 + 100 + promotion + 9
      let again = net == .umts3g ? 1.5 : net == .lte ? 0 : 0.0791
      #expect(b.count == 2)
      #expect(b.first?.start == Self.t0 + 100, "\(net): \(b)")
      #expect(abs((b.first?.end ?? 0) - (Self.t0 + 100 + promotion + 1)) < 1e-6, "\(net): \(b)")
      #expect(abs((b.last?.end ?? 0) - (second + again + 1)) < 1e-6, "\(net): \(b)")
    }
  }

  @Test("bursts overlapping a promotion run after it; one inside a busy radio needs none")
  func overlappingBursts() {
    var w = WorldParameters()
    w.sessions.model = .open
    w.sessions.burstS = 1
    var t = UserTrace(user: "u1", start: Self.t0, end: Self.t0 + 3600)
    let a = t.appIndex("com.whatsapp"), b = t.appIndex("com.facebook.katana")
    t.events = [
      TraceEvent(time: Self.t0, kind: .network, value: Double(NetworkKind.umts3g.rawValue)),
      TraceEvent(time: Self.t0 + 100, kind: .open, app: a, value: 5),
      TraceEvent(time: Self.t0 + 100.5, kind: .open, app: b, value: 5),
      TraceEvent(time: Self.t0 + 102.8, kind: .open, app: a, value: 5),
    ]
    let busy = PreparedUser(trace: t, world: w).backgroundBusy(cellular: true)
    // Promotion 100 … 102; the second burst runs 102 … 103, the third
    // (connected radio) 102.8 … 103.8.
    #expect(busy.count == 1 && busy.first?.start == Self.t0 + 100, "\(busy)")
    #expect(abs((busy.first?.end ?? 0) - (Self.t0 + 103.8)) < 1e-6, "\(busy)")
  }
}
