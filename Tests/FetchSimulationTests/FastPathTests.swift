import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld
import Testing

@testable import FetchSimulation

/// The speed-ups must not change results: each is checked against the plain
/// computation it replaces.
@Suite("Fast paths agree with the plain computation")
struct FastPathTests {
  /// `policy`, but shown every event (the engine's general path).
  struct ShownEverything<P: FetchPolicy>: FetchPolicy {
    var policy: P
    static var observesRadio: Bool { P.observesRadio }
    static var observedEvents: ObservedEvents { .all }
    mutating func start(_ ctx: inout PolicyContext) { policy.start(&ctx) }
    mutating func observe(_ event: TraceEvent, _ ctx: inout PolicyContext) {
      guard P.observedEvents == .appOpens, event.kind == .open, event.app == ctx.app else { return }
      policy.observe(event, &ctx)
    }
    mutating func timerFired(_ ctx: inout PolicyContext) { policy.timerFired(&ctx) }
    mutating func fetchFinished(_ outcome: FetchOutcome, _ ctx: inout PolicyContext) {
      policy.fetchFinished(outcome, &ctx)
    }
  }

  static func same<P: FetchPolicy>(_ p: P, user: PreparedUser, content: ContentTimeline) -> Bool {
    var fast = p
    var slow = ShownEverything(policy: p)
    let a = replay(&fast, user: user, app: 0, content: content)
    let b = replay(&slow, user: user, app: 0, content: content)
    return a.summary == b.summary && a.opens == b.opens && a.fetches == b.fetches && a.sortedAges == b.sortedAges
  }

  @Test("replaying only the app's opens gives the same results as replaying every event", arguments: 1...8)
  func appOpensOnly(seed: UInt64) {
    var world = WorldParameters()
    world.fetch.failureProbability = 0.05
    let trace = TestTraces.user(seed: seed, days: 5, opensPerHour: 1.5, networkChangesPerDay: 12)
    let user = PreparedUser(trace: trace, world: world)
    let content = ContentTimeline(trace: trace, app: 0, world: world, seed: seed)
    #expect(Self.same(NeverPolicy(), user: user, content: content))
    #expect(Self.same(PeriodicPolicy(interval: 1800), user: user, content: content))
    #expect(Self.same(PeriodicPolicy(interval: 7 * 60), user: user, content: content))
    #expect(Self.same(OraclePolicy(user: user, app: 0, content: content), user: user, content: content))
  }

  @Test("a search from a hint finds what a binary search finds", arguments: 1...20)
  func hintedSearch(seed: UInt64) {
    var rng = SplitMix64(seed: seed, keys: "search")
    let n = Int(rng.uniform() * 300)
    let xs = (0..<n).map { _ in (rng.uniform() * 100).rounded() }.sorted()
    var hint = Int(rng.uniform() * Double(n + 1))
    for _ in 0..<200 {
      let t = rng.uniform() * 110 - 5
      let expected = xs.firstIndex { $0 > t } ?? n
      let fresh = Int(rng.uniform() * Double(n + 3)) - 1  // also out-of-range hints
      #expect(firstIndex(count: n, from: fresh) { xs[$0] > t } == expected)
      hint = firstIndex(count: n, from: hint) { xs[$0] > t }
      #expect(hint == expected)
    }
  }

  @Test("the sliding update-rate evidence estimates as the whole-window computation does")
  func rateEvidence() {
    var rng = SplitMix64(seed: 9)
    var window: [(gap: Double, new: Bool)] = []
    var evidence = UpdateRateEvidence()
    var estimate = 1.0 / 3600
    for k in 0..<1500 {
      let gap = k % 97 == 0 ? 0 : rng.uniform() * 7200
      let new = rng.uniform() < 0.3
      window.append((gap, new))
      if window.count > UpdateRateEvidence.capacity { window.removeFirst() }
      evidence.append(gap: gap, new: new)
      let slow = UpdateRateEvidence.estimateRate(window, prior: 1.0 / 3600, from: estimate, maxSteps: 1)
      estimate = evidence.estimate(prior: 1.0 / 3600, from: estimate)
      #expect(abs(estimate / slow - 1) < 1e-12, "observation \(k)")
    }
    // One step a time tracks the fully converged mode.
    let mode = UpdateRateEvidence.estimateRate(window, prior: 1.0 / 3600)
    #expect(abs(estimate / mode - 1) < 1e-4)
  }

  @Test("shared habit fits equal separate fits, and are computed once")
  func fitCache() {
    let trace = IOSMinimumPolicyTests.user()
    let cache = HabitFitCache()
    let fitter = HabitFitter()
    let sample = HabitSample(trace: trace, app: 0, from: trace.start, to: trace.start + 7 * 86_400)
    let direct = fitter.fit(sample, prior: nil)
    #expect(cache.fit(sample, prior: nil, fitter: fitter) == direct)
    #expect(cache.fit(sample, prior: nil, fitter: fitter) == direct)
    #expect(cache.computed == 1 && cache.reused == 1)
    let later = HabitSample(trace: trace, app: 0, from: trace.start, to: trace.start + 8 * 86_400)
    let warm = cache.fit(later, prior: nil, fitter: fitter, start: direct.coefficients)
    #expect(cache.computed == 2)
    // The optimum does not depend on the start, up to the IRLS tolerance.
    let cold = fitter.fit(later, prior: nil)
    for (a, b) in zip(warm.coefficients, cold.coefficients) { #expect(abs(a - b) < 1e-3) }
  }
}

@Suite("Design tables")
struct DesignTableTests {
  @Test("fits from the whole-window design table equal fits built from the window's own trace, bit for bit", arguments: 1...6)
  func tableFits(seed: UInt64) {
    var rng = SplitMix64(seed: seed, keys: "tables")
    let trace = TestTraces.user(seed: seed, days: 9, opensPerHour: 0.8)
    let fitter = HabitFitter()
    let population = seed % 2 == 0 ? nil : fitter.fit(HabitSample(trace: trace, app: 1), prior: nil)
    let cache = HabitFitCache(trace: trace)
    var start: [Double]?
    for k in 0..<12 {
      // Window ends anywhere: mid-bin, on a bin boundary, a hair past one, at the trace end.
      var to = trace.start + rng.uniform() * (trace.end - trace.start)
      if k == 1 { to = trace.start + 900 * 100 }
      if k == 2 { to = trace.start + 900 * 100 + 1e-4 }
      if k == 3 { to = trace.end }
      // The policies' view: the opens before the window end only.
      var seen = trace
      seen.events = trace.events.filter { $0.kind == .open && $0.time < to }
      seen.end = seen.events.last?.time ?? trace.start
      let sample = HabitSample(trace: seen, app: 0, from: trace.start, to: to)
      let direct = fitter.fit(sample, prior: population, start: start)
      let cached = cache.fit(sample, prior: population, fitter: fitter, start: start)
      #expect(cached == direct, "window end \(to - trace.start) s")
      start = k % 3 == 0 ? nil : direct.coefficients
    }
    #expect(cache.computed == 12)
  }

  /// `RadioProfile.energy(ofSorted:)` as it was written before the running
  /// sum: the reference for ``RadioEnergySum``.
  static func referenceEnergy(_ radio: RadioProfile, _ intervals: [BusyInterval]) -> Double {
    var e = 0.0
    var cur: BusyInterval?
    var prevEnd = -Double.infinity
    func cost(_ c: BusyInterval, after prevEnd: Double) -> Double {
      let gap = c.start - prevEnd
      let promo = radio.promotion(afterGap: gap)
      let lead = prevEnd == -.infinity ? 0 : radio.tailEnergy(gap: gap)
      return lead + promo.energyJ - radio.connectedPowerW * min(promo.timeS, c.end - c.start)
        + radio.connectedPowerW * (c.end - c.start)
    }
    for iv in intervals {
      if let c = cur, iv.start <= c.end {
        cur!.end = max(c.end, iv.end)
        continue
      }
      if let c = cur {
        e += cost(c, after: prevEnd)
        prevEnd = c.end
      }
      cur = iv
    }
    guard let c = cur else { return 0 }
    e += cost(c, after: prevEnd)
    return e + radio.tailEnergy(gap: .infinity)
  }

  @Test("the running energy sum, forked where a fetch falls, prices a set with and without it to the bit", arguments: 1...12)
  func forkedEnergySum(seed: UInt64) {
    var rng = SplitMix64(seed: seed, keys: "energy-sum")
    let w = WorldParameters()
    for profile in [w.radios.lte, w.radios.umts3g, w.radios.nr5g, w.radios.wifi] {
      profile.withModel { radio in forkedEnergySum(radio, profile, &rng) }
    }
  }

  func forkedEnergySum(_ radio: RadioModel, _ profile: RadioProfile, _ rng: inout SplitMix64) {
      for _ in 0..<50 {
        // Clustered intervals (touching, nested, in tails and beyond).
        var set: [BusyInterval] = []
        var x = rng.uniform() * 10
        for _ in 0..<Int(rng.uniform() * 8) {
          x += rng.uniform() < 0.3 ? 0 : rng.uniform() * 30
          set.append(BusyInterval(start: x, end: x + (rng.uniform() < 0.2 ? 0 : rng.uniform() * 5)))
        }
        set.sort { $0.start < $1.start }
        let fs = rng.uniform() * (x + 20)
        let f = BusyInterval(start: fs, end: fs + rng.uniform() * 3)
        var without = RadioEnergySum()
        var with = RadioEnergySum()
        var forked = false
        for iv in set {
          if !forked && iv.start > f.start {
            with = without
            with.add(f, radio)
            forked = true
          }
          without.add(iv, radio)
          if forked { with.add(iv, radio) }
        }
        if !forked {
          with = without
          with.add(f, radio)
        }
        var all = set
        all.insert(f, at: set.firstIndex { $0.start > f.start } ?? set.count)
        #expect(without.total(radio) == Self.referenceEnergy(profile, set))
        #expect(with.total(radio) == Self.referenceEnergy(profile, all))
        #expect(profile.energy(ofSorted: all) == Self.referenceEnergy(profile, all))
        let marginal = set.withUnsafeBufferPointer { b in
          radio.marginalEnergy(
            of: f, background: b, from: 0, own: UnsafeBufferPointer(start: nil, count: 0), from: 0, lo: -.infinity,
            hi: .infinity)
        }
        #expect(marginal == max(0, Self.referenceEnergy(profile, all) - Self.referenceEnergy(profile, set)))
      }
  }

  @Test("prepared open contexts equal searches over the user's activity", arguments: 1...8)
  func openContexts(seed: UInt64) {
    let trace = TestTraces.user(seed: seed, days: 4, opensPerHour: 3, networkChangesPerDay: 30, sessionS: 40)
    let user = PreparedUser(trace: trace, world: WorldParameters())
    var checked = 0
    for app in trace.apps.indices.map(Int32.init) {
      let opens = user.opens(of: app)
      let contexts = user.openContexts(of: app)
      #expect(opens.count == contexts.count)
      for (e, c) in zip(opens, contexts) {
        let t = e.time
        #expect(c.time == t)
        // Linear scans: the network in force, then the interface's activity.
        let net = user.netTimes.lastIndex { $0 <= t } ?? 0
        #expect(c.network == net)
        guard let k = PreparedUser.interface(user.netKinds[net]) else {
          #expect(c.quietSince == -.infinity && c.coverEnd == -.infinity)
          continue
        }
        let b = user.busy[k]
        let before = t.nextDown
        let quiet = b.contains { $0.start <= before && $0.end >= before } ? before : (b.last { $0.end < before }?.end ?? -.infinity)
        #expect(c.quietSince == quiet)
        let cover = b.first { $0.start <= t && $0.end >= t }?.end ?? -.infinity
        #expect(c.coverEnd == cover)
        checked += 1
      }
    }
    #expect(checked > 50)
  }

  @Test("merging sorted lists keeps every element and the earlier list first at ties", arguments: 1...10)
  func mergeSortedLists(seed: UInt64) {
    var rng = SplitMix64(seed: seed, keys: "merge")
    let lists = (0..<Int(rng.uniform() * 4)).map { l in
      (0..<Int(rng.uniform() * 20)).map { _ in (value: (rng.uniform() * 10).rounded(), list: l) }.sorted { $0.value < $1.value }
    }
    let merged = mergeSorted(lists) { $0.value < $1.value }
    let expected = lists.flatMap { $0 }.enumerated().sorted {
      ($0.element.value, $0.element.list, $0.offset) < ($1.element.value, $1.element.list, $1.offset)
    }.map(\.element)
    #expect(merged.map(\.value) == expected.map(\.value))
    #expect(merged.map(\.list) == expected.map(\.list))
  }
}
