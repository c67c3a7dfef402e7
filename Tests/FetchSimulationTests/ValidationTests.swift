import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld
import Testing

@testable import FetchSimulation

/// The rows of docs/validation.md, each recomputed: published per-transfer
/// energies, an LTE keepalive against its closed form, the 5G profiles
/// against the artifact's timers and powers, and TailEnder's batching
/// against "send now" and a lower bound on the offline optimum.
@Suite("Validation against published measurements")
struct ValidationTests {
  // MARK: - Per-transfer energies (Huang et al., MobiSys 2012; AT&T ARO)

  @Test("100 kB at 5 Mbps from idle on LTE: 11.275 J with ARO's 10.12 s tail, 12.833 J with the paper's 11.576 s tail and β")
  func lteTransfer() {
    var w = ReplayEnergyTests.workedExampleWorld(.lte)
    let aro = ReplayEnergyTests.fetchEnergies(w, at: [100])[0]
    let aroForm: Double = 0.26 * 1.21 + 0.16 * (1.2 + 0.05197 * 5) + 10.12 * 1.06
    #expect(abs(aro - aroForm) < 1e-9)
    #expect(abs(aro - 11.275) < 5e-4, "\(aro)")
    w.radios.lte.tail[0].durationS = 11.576
    w.radios.lte.connectedPowerW = 1.28804
    let paper = ReplayEnergyTests.fetchEnergies(w, at: [100])[0]
    let paperForm: Double = 0.26 * 1.21 + 0.16 * (1.28804 + 0.05197 * 5) + 11.576 * 1.06
    #expect(abs(paper - paperForm) < 1e-9)
    #expect(abs(paper - 12.833) < 5e-4, "\(paper)")
  }

  @Test("100 kB from idle on 3G (1 Mbps): 9.068 J; on WiFi (5 Mbps): 0.169 J")
  func umtsAndWiFiTransfers() {
    let umts = ReplayEnergyTests.fetchEnergies(ReplayEnergyTests.workedExampleWorld(.umts3g), at: [100])[0]
    // Promotion 2 s × 0.475 W, 0.8 s at DCH 0.57 W, DCH tail 5 s × 0.57 W, FACH tail 12 s × 0.401 W.
    let umtsForm: Double = 2 * 0.475 + 0.8 * 0.57 + 5 * 0.57 + 12 * 0.401
    #expect(abs(umts - umtsForm) < 1e-9)
    #expect(abs(umts - 9.068) < 5e-4, "\(umts)")
    let wifi = ReplayEnergyTests.fetchEnergies(ReplayEnergyTests.workedExampleWorld(.wifi), at: [100])[0]
    let wifiForm: Double = 0.0791 * 0.1244 + 0.16 * (0.13286 + 0.13701 * 5) + 0.2381 * 0.1193
    #expect(abs(wifi - wifiForm) < 1e-9)
    #expect(abs(wifi - 0.169) < 5e-4, "\(wifi)")
  }

  // MARK: - LTE keepalive

  /// A world where a keepalive holds the radio connected for 0.05 s (no
  /// bytes, 0.05 s server time) and the CPU costs nothing: radio energy only.
  static var keepaliveWorld: WorldParameters {
    var w = WorldParameters()
    w.radios.defaultNetwork = .lte
    w.content.source = .trace
    w.fetch.serverLatencyS = 0.05
    w.fetch.requestBytes = 0
    w.fetch.noDataBytes = 0
    w.device.cpuWakeEnergyJ = 0
    w.device.cpuActivePowerW = 0
    w.replay.shareUserRadio = false
    return w
  }

  /// Radio energy of keepalives every `n` s in the second hour of a
  /// replay (steady state), J/h, and the energy of the first (from idle).
  static func keepalive(every n: Double) -> (perHour: Double, first: Double) {
    let w = keepaliveWorld
    let t = UserTrace(user: "k", start: 0, end: 3 * 3600, apps: ["a"], events: [])
    var p = ScriptedPolicy(times: Array(stride(from: n, to: 3 * 3600 - 1, by: n)))
    let r = replay(&p, user: PreparedUser(trace: t, world: w), app: 0, content: ContentTimeline(updates: [], world: w))
    let hour = r.fetches.filter { $0.start >= 3600 && $0.start < 7200 }
    return (hour.reduce(0) { $0 + $1.energyJ }, r.fetches[0].energyJ)
  }

  @Test("an LTE keepalive every N s: (N − 0.05) × 1.06 + 0.06 J inside the tail, 11.10 J beyond it; 3,821.0 / 2,664.4 / 666.1 / 66.6 J/h at N = 5 / 15 / 60 / 600 s")
  func lteKeepalive() {
    let isolated: Double = 0.26 * 1.21 + 0.05 * 1.2 + 10.12 * 1.06
    #expect(abs(isolated - 11.10) < 5e-3)
    for (n, quoted) in [(5.0, 3821.0), (15, 2664.4), (60, 666.1), (600, 66.6)] {
      let k = Self.keepalive(every: n)
      #expect(abs(k.first - isolated) < 1e-9, "first keepalive \(k.first) J")
      let inside: Double = (n - 0.05) * 1.06 + 0.06
      let each: Double = n - 0.05 < 10.12 ? inside : isolated
      #expect(abs(k.perHour - 3600 / n * each) < 1e-6, "N = \(n): \(k.perHour) J/h against \(3600 / n * each)")
      #expect(abs(k.perHour - quoted) < 0.05, "N = \(n): \(k.perHour) J/h, quoted \(quoted)")
    }
  }

  // MARK: - 5G (Narayanan et al., SIGCOMM 2021, artifact SIGCOMM21-5G/artifact)

  /// The device baseline of the artifact's power model, W.
  static let baselineW = 2.357

  @Test("5G timers: NSA low-band 10.2 s, NSA mmWave 11.2 s, SA 10.2 s CONNECTED then RRC_INACTIVE until 15 s; idle → LTE anchor 0.32 s")
  func fiveGTimers() {
    let w = WorldParameters()
    #expect(w.radios.nr5gNSALowBand.tailDurationS == 10.2)
    #expect(w.radios.nr5gNSAmmWave.tailDurationS == 11.2)
    #expect(w.radios.nr5gSA.tail.map(\.durationS) == [10.2, 4.8])
    #expect(abs(w.radios.nr5gSA.tailDurationS - 15) < 1e-12)
    // The mean of RRC-Power's three idle → 4G promotions.
    let promotion: Double = (0.36 + 0.32 + 0.29) / 3
    for r in [w.radios.nr5gNSALowBand, w.radios.nr5gNSAmmWave, w.radios.nr5gSA] {
      #expect(abs(r.promotionTimeS - promotion) < 0.005)
      #expect(r.promotion(afterGap: 1).timeS == 0, "no promotion inside CONNECTED")
      #expect(r.promotion(afterGap: 20).timeS == r.promotionTimeS)
    }
    // SA: a fetch 12 s after the last resumes from INACTIVE in 0.02 s; NSA
    // low-band, idle by then, promotes in 0.32 s.
    #expect(w.radios.nr5gSA.promotion(afterGap: 12).timeS == 0.02)
    #expect(w.radios.nr5gNSALowBand.promotion(afterGap: 12).timeS == w.radios.nr5gNSALowBand.promotionTimeS)
    // The `5g` network is NSA low-band unless network.5g says otherwise.
    #expect(w.radios.radio(for: .nr5g) == w.radios.nr5gNSALowBand)
    var sa = w
    #expect(sa.set("network.5g", to: .word("sa")) == nil)
    #expect(sa.radio(for: .nr5g) == w.radios.nr5gSA)
  }

  @Test("5G powers: whole-device downlink LTE 2.754 W + 14.55 mW/Mbps, NSA low-band 2.925 + 13.52, mmWave 5.136 + 1.81, over a 2.357 W baseline")
  func fiveGPowers() {
    let w = WorldParameters()
    // The artifact's fits (intercept W, slope W/Mbps), as the profiles give
    // them back with the baseline added.
    for (r, intercept, slope) in [(w.radios.nr5gNSALowBand, 2.925, 0.01352), (w.radios.nr5gNSAmmWave, 5.136, 0.00181)] {
      #expect(abs(r.connectedPowerW + Self.baselineW - intercept) < 5e-4)
      #expect(abs(r.downlinkWPerMbps - slope) < 5e-6)
      for mbps in [10.0, 100, 1000] {
        let device: Double = Self.baselineW + r.connectedPowerW + r.downlinkWPerMbps * mbps
        let fit: Double = intercept + slope * mbps
        #expect(abs(device - fit) < 0.006, "\(mbps) Mbps: \(device) W")
      }
    }
    // mmWave's radio draws about five times low-band's; low-band's is about
    // 1.4 times the artifact's own LTE (2.754 − 2.357 = 0.397 W).
    #expect(abs(w.radios.nr5gNSAmmWave.connectedPowerW / w.radios.nr5gNSALowBand.connectedPowerW - 4.89) < 0.01)
    #expect(abs(w.radios.nr5gNSALowBand.connectedPowerW / (2.754 - Self.baselineW) - 1.43) < 0.01)
    // 100 kB from idle on each (down at the profile's rate): the energies quoted in docs/validation.md.
    let quoted: [(RadioProfile, Double)] = [(w.radios.nr5gNSALowBand, 5.991), (w.radios.nr5gNSAmmWave, 32.018), (w.radios.nr5gSA, 5.991)]
    for (r, e) in quoted {
      let x = r.isolatedTransferEnergy(downBytes: 100_000)
      #expect(abs(x - e) < 5e-4, "\(x) J")
    }
  }

  // MARK: - TailEnder (Balasubramanian et al., IMC 2009)

  /// An app's own requests, each arriving at a time of `arrivals` and
  /// tolerating `deadline` seconds of delay. `sendNow` sends each at its
  /// arrival (one fetch; a request arriving while one runs goes when it
  /// ends). Otherwise TailEnder's rule: a request goes at once if the radio
  /// is busy or in its tail (quiet for less than `tailS`), else waits;
  /// every waiting request goes with the first that is sent, at the latest
  /// when the oldest reaches its deadline.
  struct QueuedRequests: FetchPolicy {
    static var observesRadio: Bool { true }
    let arrivals: [Double]
    let deadline: Double
    let sendNow: Bool
    let tailS: Double
    var next = 0
    /// The arrival times of the requests waiting.
    var waiting: [Double] = []
    /// The arrival times of the requests each fetch carried, in fetch order.
    var sent: [[Double]] = []
    var carrying: [Double] = []

    init(arrivals: [Double], deadline: Double, sendNow: Bool, tailS: Double) {
      self.arrivals = arrivals
      self.deadline = deadline
      self.sendNow = sendNow
      self.tailS = tailS
    }

    mutating func start(_ ctx: inout PolicyContext) { arm(&ctx) }

    mutating func arm(_ ctx: inout PolicyContext) {
      let arrival = next < arrivals.count ? arrivals[next] : .infinity
      let due = waiting.first.map { $0 + deadline } ?? .infinity
      let t = min(arrival, due)
      if t.isFinite { ctx.setTimer(at: max(t, ctx.now)) }
    }

    mutating func send(_ ctx: inout PolicyContext) {
      carrying = waiting
      waiting = []
      ctx.requestFetch()
    }

    mutating func timerFired(_ ctx: inout PolicyContext) {
      while next < arrivals.count && arrivals[next] <= ctx.now {
        waiting.append(arrivals[next])
        next += 1
      }
      if !waiting.isEmpty && !ctx.fetchInFlight {
        let warm = ctx.radioQuietGapS < tailS
        if sendNow || warm || ctx.now >= waiting[0] + deadline { send(&ctx) }
      }
      arm(&ctx)
    }

    mutating func fetchFinished(_ outcome: FetchOutcome, _ ctx: inout PolicyContext) {
      sent.append(carrying)
      carrying = []
      // The radio is connected now: anything that arrived meanwhile goes.
      if !waiting.isEmpty { send(&ctx) }
      arm(&ctx)
    }
  }

  /// 3G, radio energy only (no CPU), the app's own traffic only, each
  /// exchange `bytes` down.
  static func tailEnderWorld(bytes: Double) -> WorldParameters {
    var w = WorldParameters()
    w.radios.defaultNetwork = .umts3g
    w.content.source = .trace
    w.device.cpuWakeEnergyJ = 0
    w.device.cpuActivePowerW = 0
    w.replay.shareUserRadio = false
    w.fetch.noDataBytes = bytes
    return w
  }

  /// A lower bound on the radio energy of any schedule that sends every
  /// request in [arrival, arrival + deadline], J, where one exchange may
  /// carry any number of requests. The radio's busy periods separated by
  /// idle ("episodes") serve consecutive requests (exchanging two sends
  /// never costs more); an episode costs at least the idle promotion, one
  /// exchange at connected power, the whole tail, and the lowest tail
  /// power for the time its first send must precede its last. So the bound
  /// is the cheapest partition into consecutive groups, by dynamic
  /// programming.
  ///
  /// - Complexity: O(n²).
  static func offlineLowerBound(arrivals a: [Double], deadline: Double, world w: WorldParameters) -> Double {
    let r = w.radios.umts3g
    let x = r.transferTime(downBytes: w.fetch.noDataBytes, upBytes: w.fetch.requestBytes)
    let exchange = x.up + w.fetch.serverLatencyS + x.down
    let episode: Double = r.promotionTimeS * r.promotionPowerW + r.connectedPowerW * exchange + r.tailEnergy(gap: .infinity)
    let lowest = r.tail.map(\.powerW).min() ?? 0
    var best = [0.0] + [Double](repeating: .infinity, count: a.count)
    for j in 1...a.count {
      for i in 1...j {
        let span = max(0, a[j - 1] - (a[i - 1] + deadline))
        best[j] = min(best[j], best[i - 1] + episode + lowest * span)
      }
    }
    return best[a.count]
  }

  /// Poisson arrivals at `perHour` over `hours`, from the seed.
  static func arrivals(perHour: Double, hours: Double, seed: UInt64) -> [Double] {
    var rng = SplitMix64(seed: seed, keys: "tailender-validation")
    var out: [Double] = []
    var t = 60.0
    while true {
      t += rng.exponential(rate: perHour / 3600)
      guard t < hours * 3600 else { return out }
      out.append(t)
    }
  }

  /// (send now J, TailEnder J, lower bound J) for one workload.
  static func tailEnder(perHour: Double, deadline: Double, bytes: Double, seed: UInt64) -> (now: Double, te: Double, bound: Double) {
    let w = tailEnderWorld(bytes: bytes)
    let hours = 24.0
    let a = arrivals(perHour: perHour, hours: hours, seed: seed)
    let t = UserTrace(user: "te", start: 0, end: hours * 3600 + 3600, apps: ["a"], events: [])
    let user = PreparedUser(trace: t, world: w)
    var energies: [Double] = []
    for sendNow in [true, false] {
      var p = QueuedRequests(arrivals: a, deadline: deadline, sendNow: sendNow, tailS: w.radios.umts3g.tailDurationS)
      let r = replay(&p, user: user, app: 0, content: ContentTimeline(updates: [], world: w))
      // Every request went, once, within its deadline (plus a running exchange).
      let carried = p.sent.flatMap { $0 }
      #expect(carried == a, "every request is sent once, in order")
      for (f, batch) in zip(r.fetches, p.sent) {
        for arrival in batch { #expect(f.start >= arrival && f.start <= arrival + deadline + 30) }
      }
      energies.append(r.summary.energyJ)
    }
    return (energies[0], energies[1], offlineLowerBound(arrivals: a, deadline: deadline, world: w))
  }

  /// The TailEnder rows of docs/validation.md: (workload, requests per
  /// hour, deadline s, bytes per exchange, saving against send now %,
  /// TailEnder over the offline lower bound).
  static let tailEnderRows: [(String, Double, Double, Double, Double, Double)] = [
    ("email", 12, 60, 10_000, 12.3, 1.01),
    ("email", 12, 120, 10_000, 23.6, 1.01),
    ("email", 12, 300, 10_000, 45.3, 1.02),
    ("email", 12, 600, 10_000, 64.2, 1.01),
    ("news", 30, 30, 50_000, 16.7, 1.02),
    ("news", 30, 60, 50_000, 28.8, 1.02),
    ("news", 30, 300, 50_000, 67.4, 1.04),
    ("news", 30, 1800, 50_000, 92.5, 1.06),
  ]

  @Test("TailEnder on 3G: an app's own queued requests batched against send now, within 2× of the offline optimum", arguments: tailEnderRows)
  func tailEnder(row: (String, Double, Double, Double, Double, Double)) {
    let (name, rate, deadline, bytes, saving, ratio) = row
    let r = Self.tailEnder(perHour: rate, deadline: deadline, bytes: bytes, seed: 1)
    let s = 100 * (1 - r.te / r.now)
    #expect(r.bound <= r.te && r.bound <= r.now)
    #expect(r.te <= 2 * r.bound, "\(name): TailEnder \(r.te) J against the bound \(r.bound) J")
    #expect(abs(s - saving) < 0.05, "\(name): saving \(s) %")
    #expect(abs(r.te / r.bound - ratio) < 0.005, "\(name): ratio \(r.te / r.bound)")
  }

  @Test("the offline bound is exact on small cases: one request, two far apart, two within one deadline")
  func offlineBoundSmallCases() {
    let w = Self.tailEnderWorld(bytes: 10_000)
    let r = w.radios.umts3g
    let x = r.transferTime(downBytes: 10_000, upBytes: w.fetch.requestBytes)
    let exchange: Double = x.up + w.fetch.serverLatencyS + x.down
    let one: Double = r.promotionTimeS * r.promotionPowerW + r.connectedPowerW * exchange + r.tailEnergy(gap: .infinity)
    #expect(abs(Self.offlineLowerBound(arrivals: [100], deadline: 600, world: w) - one) < 1e-9)
    #expect(abs(Self.offlineLowerBound(arrivals: [100, 5000], deadline: 600, world: w) - 2 * one) < 1e-9)
    #expect(abs(Self.offlineLowerBound(arrivals: [100, 500], deadline: 600, world: w) - one) < 1e-9)
    // And TailEnder meets it there: the two go together at the first's deadline.
    let t = UserTrace(user: "te", start: 0, end: 3600, apps: ["a"], events: [])
    var p = QueuedRequests(arrivals: [100, 500], deadline: 600, sendNow: false, tailS: r.tailDurationS)
    let rep = replay(&p, user: PreparedUser(trace: t, world: w), app: 0, content: ContentTimeline(updates: [], world: w))
    #expect(rep.fetches.count == 1 && rep.fetches[0].start == 700)
    #expect(abs(rep.summary.energyJ - one) < 1e-9)
  }
}
