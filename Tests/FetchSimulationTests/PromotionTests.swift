import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces
import FetchWorld
import Testing

/// A fetch on a quiet radio waits for its promotion, even when another
/// fetch started it a moment (or no time at all) earlier.
@Suite("Promotion for every fetch that starts on a quiet radio")
struct PromotionTests {
  /// 3G, the defaults but instantaneous server and tiny responses.
  static var world: WorldParameters {
    var w = WorldParameters()
    w.radios.defaultNetwork = .umts3g
    w.content.source = .trace
    w.replay.shareUserRadio = false
    return w
  }

  static func replay(_ spec: String, _ w: WorldParameters, apps: Int, days: Double = 1) throws -> DeviceReplay {
    let names = (0..<apps).map { "a\($0)" }
    let t = UserTrace(user: "u1", start: 1_767_571_200, end: 1_767_571_200 + days * 86_400, apps: names, events: [])
    let user = PreparedUser(trace: t, world: w)
    let contents = names.map { _ in ContentTimeline(updates: [], world: w) }
    return try PolicySpec(parsing: spec).replay(
      user: user, apps: (0..<apps).map(Int32.init), contents: contents, scope: .device, seed: 1, recordEvents: true)
  }

  @Test("two apps fetching at the same instant on 3G: both last the 2 s promotion, and the second pays CPU while it waits")
  func simultaneousStarts() throws {
    let w = Self.world
    let r = try Self.replay("per-app:a0=periodic:1h,phase=30m;*=periodic:1h,phase=30m", w, apps: 2, days: 1.0 / 24)
    let a = try #require(r.apps[0].fetches.first), b = try #require(r.apps[1].fetches.first)
    #expect(a.start == b.start)
    // Promotion 2 s, request 1,000 B up at 0.5 Mbps, 0.3 s server, 2,000 B down at 1 Mbps.
    let up: Double = 1000 * 8 / 0.5e6
    let down: Double = 2000 * 8 / 1e6
    let duration: Double = 2 + up + 0.3 + down
    #expect(abs(a.end - a.start - duration) < 1e-6 && abs(b.end - b.start - duration) < 1e-6, "\(a.end - a.start), \(b.end - b.start)")
    // The second's radio rides the first's (it adds no radio time); its CPU
    // runs for the whole wait: the wake plus active power for the duration.
    let cpu = w.device.cpuWakeEnergyJ + w.device.cpuActivePowerW * duration
    #expect(abs(b.energyJ - cpu) < 1e-6, "\(b.energyJ) J against \(cpu) J")
  }

  @Test("on random aligned timers no fetch that starts on a quiet radio ends before its promotion", arguments: [NetworkKind.umts3g, .lte, .nr5g])
  func noFetchBeatsItsPromotion(network: NetworkKind) throws {
    var w = Self.world
    w.radios.defaultNetwork = network
    w.replay.alignedTimers = true
    let promotion = w.radios.radio(for: network)!.promotionTimeS
    for (apps, spec) in [(2, "periodic:1h"), (3, "periodic:30m"), (4, "per-app:a0=periodic:15m;*=periodic:1h")] {
      let r = try Self.replay(spec, w, apps: apps)
      let fetches = r.apps.flatMap(\.fetches).sorted { $0.start < $1.start }
      #expect(fetches.count > 24)
      // Timers every 15 min or more on a radio whose tail is under 20 s:
      // every fetch starts on a quiet radio or at the same instant as one that did.
      for f in fetches { #expect(f.end - f.start >= promotion - 1e-9, "\(spec): \(f.end - f.start) s") }
    }
  }

  @Test("the oracle still shows every open fresh when another app's fetch is promoting the radio as its own must start")
  func oracleAroundPromotions() throws {
    var w = WorldParameters()
    w.radios.defaultNetwork = .lte
    for seed in UInt64(1)...6 {
      // Two apps opened together: their oracle fetches want the same radio moments.
      var t = UserTrace(user: "u\(seed)", start: 1_767_571_200, end: 1_767_571_200 + 86_400, apps: ["a", "b"], events: [])
      var rng = SplitMix64(seed: seed, keys: "oracle-promotions")
      var x = t.start
      while true {
        x += rng.exponential(rate: 1.0 / 1800)
        guard x < t.end else { break }
        t.events.append(TraceEvent(time: x, kind: .open, app: 0, value: 20))
        t.events.append(TraceEvent(time: x + rng.uniform() * 0.5, kind: .open, app: 1, value: 20))
      }
      t.events.sort { $0.time < $1.time }
      let user = PreparedUser(trace: t, world: w)
      let contents = [Int32(0), 1].map { ContentTimeline(trace: t, app: $0, world: w, seed: seed) }
      let r = PolicySpec.oracle.replay(user: user, apps: [0, 1], contents: contents, scope: .device, seed: seed, recordEvents: true)
      for a in r.apps { #expect(a.opens.allSatisfy { $0.ageS == 0 }, "seed \(seed): \(a.opens.filter { $0.ageS > 0 }.count) stale opens") }
    }
  }
}
