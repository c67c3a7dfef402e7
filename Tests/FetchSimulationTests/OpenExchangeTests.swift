import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld
import Testing

@testable import FetchSimulation

/// The open's own exchange with the app's server (`session.open_exchange`),
/// the foreground wait it makes, and what content an open and a fetch see.
@Suite("Open exchange and the content at an open")
struct OpenExchangeTests {
  static let openAt = 40_000.0

  /// LTE all day, trace-driven content, one size for every response.
  static func world(_ exchange: OpenExchange = .always) -> WorldParameters {
    var w = WorldParameters()
    w.radios.defaultNetwork = .lte
    w.content.source = .trace
    w.fetch.newDataSigma = 0
    w.sessions.openExchange = exchange
    return w
  }

  /// Opens of the modelled app "a" (its category: other) at `opens`.
  static func user(_ w: WorldParameters, opens: [Double] = [openAt]) -> PreparedUser {
    var t = UserTrace(user: "u1", start: 0, end: 86_400)
    let a = t.appIndex("a")
    t.events = opens.map { TraceEvent(time: $0, kind: .open, app: a, value: 10) }
    return PreparedUser(trace: t, world: w, modelled: [a])
  }

  static func never(_ w: WorldParameters, updates: [Double]) -> AppReplay {
    var p = NeverPolicy()
    return replay(&p, user: user(w), app: 0, content: ContentTimeline(updates: updates, world: w), options: ReplayOptions(seed: 1))
  }

  static func oracle(_ w: WorldParameters, opens: [Double], updates: [Double]) -> AppReplay {
    let u = user(w, opens: opens)
    let c = ContentTimeline(updates: updates, world: w)
    var p = OraclePolicy(user: u, app: 0, content: c)
    return replay(&p, user: u, app: 0, content: c, options: ReplayOptions(seed: 1))
  }

  @Test("never: a stale open on an idle LTE radio waits promotion + TCP and TLS 1.3 handshakes + request + server + response")
  func foregroundWait() throws {
    let w = Self.world()
    let r = Self.never(w, updates: [Self.openAt - 100])
    let bytes = ContentTimeline(updates: [Self.openAt - 100], world: w).newDataBytes(version: 1)
    // 0.26 s promotion, 2 × 70 ms round trips, 1,000 B up at 6 Mbps,
    // 0.3 s server, the response down at 13 Mbps.
    let expected = 0.26 + 2 * 0.07 + 1000 * 8 / 6e6 + 0.3 + bytes * 8 / 13e6
    #expect(r.summary.foregroundRefreshes == 1)
    #expect(r.summary.meanWaitS.isClose(to: expected), "\(r.summary.meanWaitS) s")
    // No handshakes: the old wait.
    var w0 = w
    w0.fetch.openHandshakeRTTs = 0
    #expect(Self.never(w0, updates: [Self.openAt - 100]).summary.meanWaitS.isClose(to: expected - 0.14))
  }

  @Test("never: an update published at the open's very instant leaves the open stale (age 0), and its refresh fetches it")
  func updateAtTheOpen() {
    let r = Self.never(Self.world(), updates: [Self.openAt])
    #expect(r.summary.freshRatio == 0)
    #expect(r.summary.meanAgeS == 0)
    #expect(r.summary.foregroundRefreshes == 1)
  }

  @Test("oracle: a fetch timed to finish at the open brings the server's content as of its answer, not of its completion")
  func oracleAnswer() throws {
    let w = Self.world()
    // 100 kB down at 13 Mbps takes 61.5 ms: an update 30 ms before the
    // open comes after the server answered.
    let late = Self.openAt - 0.03
    let r = Self.oracle(w, opens: [Self.openAt], updates: [Self.openAt - 600, late])
    let f = try #require(r.fetches.first)
    #expect(f.end == Self.openAt)
    #expect(r.summary.freshRatio == 0)
    #expect(r.summary.meanAgeS.isClose(to: 0.03))
    // An update before the answer is brought.
    let early = Self.oracle(w, opens: [Self.openAt], updates: [Self.openAt - 600, Self.openAt - 0.2])
    #expect(early.summary.freshRatio == 1)
  }

  @Test("when_stale: an open the oracle made fresh makes no exchange, so the oracle pays its own tail; none: no refresh at all")
  func oraclePaysItsTail() throws {
    // Opens an hour apart, each with an update ten minutes before.
    let opens = (1...12).map { Self.openAt + Double($0) * 3600 }
    let updates = opens.map { $0 - 600 }
    let always = Self.oracle(Self.world(.always), opens: opens, updates: updates)
    let stale = Self.oracle(Self.world(.whenStale), opens: opens, updates: updates)
    #expect(always.summary.fetches == 12 && stale.summary.fetches == 12)
    #expect(always.summary.freshRatio == 1 && stale.summary.freshRatio == 1)
    // The LTE tail is 10.12 s at 1.06 W = 10.7 J; riding the open's burst
    // saves most of it.
    let extra = (stale.summary.energyJ - always.summary.energyJ) / 12
    #expect(extra > 8 && extra < 12, "\(extra) J per fetch")
    // never under none: no foreground refresh, so every open after an update is stale.
    var p = NeverPolicy()
    let w = Self.world(.none)
    let u = Self.user(w, opens: opens)
    let n = replay(&p, user: u, app: 0, content: ContentTimeline(updates: updates, world: w), options: ReplayOptions(seed: 1))
    #expect(n.summary.foregroundRefreshes == 0 && n.summary.foregroundEnergyJ == 0 && n.summary.freshRatio == 0)
  }
}

extension Double {
  fileprivate func isClose(to b: Double) -> Bool { abs(self - b) <= 1e-9 * Swift.max(1, abs(b)) }
}
