import FetchModels
import FetchTraces
import FetchWorld
import Testing

@testable import FetchSimulation

/// Energy checks against worked examples of the energy model
/// E = P_pro·T_pro + P_xfer·T_xfer + P_tail·T_tail (Huang et al., MobiSys 2012): one
/// isolated 100 KB download at 5 Mbps.
@Suite("Radio energy")
struct ReplayEnergyTests {
  /// A world where one fetch moves exactly 100 KB down at 5 Mbps with no
  /// request, latency or CPU cost, on `network`.
  static func workedExampleWorld(_ network: NetworkKind) -> WorldParameters {
    var w = WorldParameters()
    w.radios.defaultNetwork = network
    w.fetch.serverLatencyS = 0
    w.fetch.requestBytes = 0
    w.fetch.newDataMedianBytes = 100_000
    w.fetch.newDataSigma = 0
    w.fetch.noDataBytes = 100_000
    w.device.cpuWakeEnergyJ = 0
    w.device.cpuActivePowerW = 0
    w.radios.lte.downlinkMbps = 5
    w.radios.wifi.downlinkMbps = 5
    w.content.source = .trace
    return w
  }

  static func fetchEnergies(_ world: WorldParameters, at times: [Double], trace: UserTrace? = nil) -> [Double] {
    let t = trace ?? UserTrace(user: "x", start: 0, end: 10_000, apps: ["a"], events: [])
    let user = PreparedUser(trace: t, world: world)
    var p = ScriptedPolicy(times: times)
    let content = ContentTimeline(updates: [], world: world)
    return replay(&p, user: user, app: 0, content: content).fetches.map(\.energyJ)
  }

  @Test("isolated LTE fetch: ≈ 11.3 J with ARO's 10.12 s tail, ≈ 12.8 J with the paper's 11.576 s tail and β")
  func isolatedLTE() {
    var w = Self.workedExampleWorld(.lte)
    let aro = Self.fetchEnergies(w, at: [100])
    #expect(aro.count == 1)
    #expect(abs(aro[0] - 11.3) < 0.05, "ARO: \(aro[0]) J")
    // Closed form: 0.26·1.21 + 0.16·(1.2 + 0.05197·5) + 10.12·1.06
    #expect(abs(aro[0] - (0.26 * 1.21 + 0.16 * (1.2 + 0.05197 * 5) + 10.12 * 1.06)) < 1e-9)
    w.radios.lte.tail[0].durationS = 11.576
    w.radios.lte.connectedPowerW = 1.28804
    let paper = Self.fetchEnergies(w, at: [100])
    #expect(abs(paper[0] - 12.8) < 0.05, "paper: \(paper[0]) J")
    // 1 % of an iPhone 15 battery is ≈ 467 J (12.981 Wh, iPhone 15 regulatory listing).
    #expect(abs(w.device.batteryCapacityJ / 100 - 467) < 1)
  }

  @Test("isolated WiFi fetch ≈ 0.17 J; 3G promotion + tails = 2 s × 0.475 W + 5 s × 0.57 W + 12 s × 0.401 W = 8.612 J")
  func isolatedWiFiAnd3G() {
    let wifi = Self.fetchEnergies(Self.workedExampleWorld(.wifi), at: [100])
    #expect(abs(wifi[0] - 0.17) < 0.01, "WiFi: \(wifi[0]) J")
    let w = WorldParameters()
    let umts = w.radios.umts3g.promotionTimeS * w.radios.umts3g.promotionPowerW + w.radios.umts3g.tailEnergy(gap: .infinity)
    #expect(abs(umts - 8.612) < 1e-9, "3G: \(umts) J")
  }

  @Test("the engine's isolated fetch equals RadioProfile.isolatedTransferEnergy")
  func engineMatchesProfile() {
    let w = Self.workedExampleWorld(.lte)
    let e = Self.fetchEnergies(w, at: [100])[0]
    #expect(abs(e - w.radios.lte.isolatedTransferEnergy(downBytes: 100_000)) < 1e-9)
  }

  @Test("tail sharing: two LTE fetches 1 s apart cost far less than twice one")
  func tailSharing() {
    let w = Self.workedExampleWorld(.lte)
    let one = Self.fetchEnergies(w, at: [100])[0]
    let two = Self.fetchEnergies(w, at: [100, 101])
    #expect(two.count == 2)
    let total = two.reduce(0, +)
    #expect(total < 1.3 * one, "two fetches \(total) J vs one \(one) J")
    // The second pays ~1 s of tail it cut short plus its own transfer: E_xfer + Δ·P_tail.
    #expect(two[1] < 2.0, "second fetch \(two[1]) J")
  }

  @Test("a fetch inside a tail paid for by the user's session pays only the increment")
  func backgroundTailIsShared() {
    var w = Self.workedExampleWorld(.lte)
    w.sessions.model = .whole  // the session's whole length is busy
    var t = UserTrace(user: "x", start: 0, end: 10_000)
    let other = t.appIndex("other")
    _ = t.appIndex("a")
    t.events = [TraceEvent(time: 95, kind: .open, app: other, value: 3)]  // promotion 95...95.26, busy to 98.26
    // Study app "a" (index 1): swap so index 0 is "a"? Use index 1 below.
    let user = PreparedUser(trace: t, world: w)
    var p = ScriptedPolicy(times: [100])
    let r = replay(&p, user: user, app: 1, content: ContentTimeline(updates: [], world: w))
    let shared = r.fetches[0].energyJ
    let alone = w.radios.lte.isolatedTransferEnergy(downBytes: 100_000)
    #expect(shared < 0.35 * alone, "in-tail fetch \(shared) J vs isolated \(alone) J")
    // Exactly: the 1.74 s of tail before it (the session's 3 s ran after its
    // 0.26 s promotion), no promotion, 0.16 s connected, then the tail
    // restarts (the old one's remainder is what the session paid).
    let exact: Double = (100 - 98.26) * 1.06 + 0.16 * 1.2 + 0.16 * 0.05197 * 5
    #expect(abs(shared - exact) < 1e-9)
    #expect(abs(r.fetches[0].end - r.fetches[0].start - 0.16) < 1e-9)
  }

  @Test("a fetch during the user's session costs only the throughput increment")
  func insideSession() {
    var w = Self.workedExampleWorld(.lte)
    w.sessions.model = .whole  // the session's whole length is busy
    var t = UserTrace(user: "x", start: 0, end: 10_000)
    _ = t.appIndex("a")
    t.events = [TraceEvent(time: 90, kind: .open, app: 0, value: 60)]
    let user = PreparedUser(trace: t, world: w)
    var p = ScriptedPolicy(times: [100])
    let r = replay(&p, user: user, app: 0, content: ContentTimeline(updates: [], world: w))
    #expect(abs(r.fetches[0].energyJ - 0.16 * 0.05197 * 5) < 1e-9)
  }

  @Test("energy of a set of fetches is the same whatever order they are attributed in")
  func marginalsTelescope() {
    let w = Self.workedExampleWorld(.lte)
    let times: [Double] = [100, 103, 109, 125, 126, 400]
    let t = UserTrace(user: "x", start: 0, end: 10_000, apps: ["a"], events: [])
    var p = ScriptedPolicy(times: times)
    let r = replay(&p, user: PreparedUser(trace: t, world: w), app: 0, content: ContentTimeline(updates: [], world: w))
    #expect(r.fetches.count == times.count)
    let intervals = r.fetches.map { BusyInterval(start: $0.start, end: $0.end) }
    let direct = w.radios.lte.energy(ofSorted: intervals) + Double(times.count) * 0.16 * 0.05197 * 5
    #expect(abs(r.fetches.map(\.energyJ).reduce(0, +) - direct) < 1e-9)
    // Fetches inside the 10.12 s tail of the previous one skip the promotion.
    #expect(r.fetches.map { ($0.end - $0.start) > 0.3 } == [true, false, false, true, false, true])
  }
}
