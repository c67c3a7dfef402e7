import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces
import FetchWorld

/// Small random traces for tests, from a seeded generator.
enum TestTraces {
  /// One user with Poisson opens of app "a" (and of "b" at the same rate),
  /// optional random network changes (including offline periods), and
  /// battery samples.
  static func user(
    seed: UInt64, days: Double, opensPerHour: Double, networkChangesPerDay: Double = 0,
    sessionS: Double = 30, start: Double = 1_700_000_000
  ) -> UserTrace {
    var rng = SplitMix64(seed: seed, keys: "test-trace")
    var t = UserTrace(user: "u\(seed)", timeZone: .utc, start: start, end: start + days * 86_400)
    let a = t.appIndex("a"), b = t.appIndex("b")
    var events: [TraceEvent] = []
    var x = start
    while true {
      x += rng.exponential(rate: 2 * opensPerHour / 3600)
      guard x < t.end else { break }
      events.append(TraceEvent(time: x, kind: .open, app: rng.uniform() < 0.5 ? a : b, value: sessionS))
    }
    if networkChangesPerDay > 0 {
      let nets: [NetworkKind] = [.wifi, .lte, .offline, .wifi, .umts3g]
      var y = start
      while true {
        y += rng.exponential(rate: networkChangesPerDay / 86_400)
        guard y < t.end else { break }
        let n = nets[Int(rng.uniform() * Double(nets.count))]
        events.append(TraceEvent(time: y, kind: .network, value: Double(n.rawValue)))
      }
    }
    events.sort { $0.time < $1.time }
    t.events = events
    t._checkInvariants()
    return t
  }

  /// A world with no promotion, latency or request cost on WiFi: fetches are
  /// near-instant, for closed-form checks.
  static var instantWorld: WorldParameters {
    var w = WorldParameters()
    w.radios.defaultNetwork = .wifi
    w.fetch.serverLatencyS = 0
    w.fetch.requestBytes = 0
    w.fetch.noDataBytes = 0
    w.fetch.newDataSigma = 0
    w.fetch.newDataMedianBytes = 1000
    w.radios.wifi.promotionTimeS = 0
    w.content.source = .model
    return w
  }
}

/// A policy that fetches at fixed times (tests).
struct ScriptedPolicy: FetchPolicy {
  var times: [Double]
  var i = 0

  init(times: [Double]) { self.times = times }

  mutating func start(_ ctx: inout PolicyContext) { arm(&ctx) }

  mutating func arm(_ ctx: inout PolicyContext) {
    if i < times.count { ctx.setTimer(at: times[i]) }
  }

  mutating func timerFired(_ ctx: inout PolicyContext) {
    ctx.requestFetch()
    i += 1
    arm(&ctx)
  }
}
