import FetchSupport
import Foundation

/// A generator of synthetic phone-usage traces for a population of users,
/// calibrated to statistics of the UbiqLog and ExtraSensory datasets.
///
/// User `index` is a pure function of `(seed, index, days, parameters)`:
/// users can be generated in any order, in parallel or streamed, with
/// identical results. Every random draw comes from a ``SplitMix64`` keyed by
/// the seed, the user index and the component (`traits`, `opens`, `network`,
/// `charging`, `wakes`, `updates`), so changing one component's knobs leaves
/// the other components' draws alone.
///
///     let pop = SyntheticPopulation(seed: 42, days: 28)
///     let u = pop.user(0)                        // "u00001"
///     try pop.write(to: "synth.csv", users: 1_000)
///
/// Each user gets a fixed-offset time zone and a window from local midnight
/// of ``Parameters/startDate`` for `days` days, and, inside it:
///
/// - `open` rows: device pickups as a non-homogeneous Poisson process
///   following the UbiqLog hourly curve (shifted by the user's chronotype,
///   later on weekend mornings), each opening a geometric number of apps
///   chosen by a Zipf popularity and an app-specific time-of-day preference;
///   pickups cluster (re-pickups a few minutes after the previous session).
///   Sessions never overlap: an open starts after the previous one ended.
/// - `wake` rows: other apps' background network use, Poisson.
/// - `network` rows on every change (the first at the window start): home
///   WiFi, commutes and outings on cellular, work WiFi for some, rare
///   offline periods (tunnels, flights).
/// - `battery`, `charge_start`, `charge_end` rows from a simulated battery
///   with an overnight charge habit, daytime top-ups and low-battery charges.
///   A device already plugged in at the window start gets a `charge_start`
///   row at the start.
/// - `location` rows (with ``Parameters/locationWakes``): leaving and
///   entering the `home` and `work` regions around commutes and outings,
///   and significant location changes on the move, at most one every
///   ``Parameters/significantChangeMinMinutes``.
/// - `update` rows for the user's top apps: per-user independent Poisson
///   processes in the user's local time. Content is not shared between users:
///   two users' `news` apps change at independent times, which keeps users
///   independent of each other (and of generation order).
///
/// Times are UTC Unix seconds at millisecond resolution (network and
/// charging rows at whole seconds), durations are milliseconds, battery
/// levels have one decimal, so every value round-trips exactly through
/// ``TraceWriter`` and ``TraceReader``. Determinism is per machine: the
/// generator uses Foundation's `log`, `exp` and `cos`, whose last bits may
/// differ between C libraries.
public struct SyntheticPopulation: Sendable {
  /// The master seed.
  public let seed: UInt64
  /// Length of every user's window, in days.
  public let days: Int
  /// The calibration knobs.
  public let parameters: Parameters

  /// Bumped whenever the same seed and parameters start to give different
  /// traces; recorded in the file's comments. 2: `location` rows.
  package static let generatorVersion = 2

  // Derived once from the parameters.
  let startCivilDay: Int
  let startWeekday: Int  // 0 = Monday
  let zoneOffsets: [Int]
  let openCurve: [Double]  // normalised to sum 1
  let updateShape: [Double]  // normalised to mean 1
  let plugShape: [Double]  // normalised to sum 1
  /// Median opens of a normal day, so the pooled median with light days is
  /// ``Parameters/opensPerDayMedian``.
  let normalDayMedian: Double

  /// A generator for `days` days per user.
  ///
  /// - Precondition: `days ≥ 1` and `parameters.validate()` does not throw.
  public init(seed: UInt64, days: Int, parameters: Parameters = Parameters()) {
    precondition(days >= 1, "SyntheticPopulation needs days >= 1")
    precondition(
      days <= 36_500, "SyntheticPopulation: days is implausibly large")
    do {
      try parameters.validate()
    } catch {
      preconditionFailure("SyntheticPopulation: invalid parameters: \(error)")
    }
    self.seed = seed
    self.days = days
    self.parameters = parameters
    let civil = Self.civilDay(parameters.startDate) ?? 0
    startCivilDay = civil
    startWeekday = ((civil + 3) % 7 + 7) % 7  // 1970-01-01 was a Thursday
    zoneOffsets = parameters.timeZones.map { z in
      if case .fixed(let off) = TraceTimeZone(parsing: z) { return off }
      return 0
    }
    let os = parameters.openHourlyShare.reduce(0, +)
    openCurve = parameters.openHourlyShare.map { $0 / os }
    let us = parameters.updateHourlyShape.reduce(0, +)
    updateShape = parameters.updateHourlyShape.map { $0 * 24 / us }
    let ps = parameters.plugInHourlyShape.reduce(0, +)
    plugShape = parameters.plugInHourlyShape.map { $0 / ps }
    normalDayMedian = Self.normalDayMedian(parameters)
  }

  /// The median m of normal days such that the mixture
  ///
  ///     (1 − w) · LN(ln m, σ) + w · LN(ln(f m), σ),  σ² = σ_user² + σ_day²
  ///
  /// (w, f: light-day chance and factor) has median
  /// ``Parameters/opensPerDayMedian``; bisection on ln m.
  static func normalDayMedian(_ p: Parameters) -> Double {
    let target = p.opensPerDayMedian
    let w = p.lightDayProbability
    let sigma =
      (p.opensPerDayUserSigma * p.opensPerDayUserSigma
      + p.opensPerDayDaySigma * p.opensPerDayDaySigma).squareRoot()
    guard target > 0, w > 0, sigma > 0 else { return target }
    func cdf(_ z: Double) -> Double { 0.5 * erfc(-z / 2.0.squareRoot()) }
    var lo = log(target), hi = log(target) - log(p.lightDayFactor)
    for _ in 0..<60 {
      let m = (lo + hi) / 2
      let f =
        (1 - w) * cdf((log(target) - m) / sigma)
        + w * cdf((log(target) - m - log(p.lightDayFactor)) / sigma)
      if f > 0.5 { lo = m } else { hi = m }
    }
    return exp((lo + hi) / 2)
  }

  /// The id of user `index`: `u00001` for index 0, `u00002`, ...
  package static func userID(_ index: Int) -> String {
    let s = String(index + 1)
    return "u" + String(repeating: "0", count: max(0, 5 - s.count)) + s
  }

  /// Generates user `index` (0-based).
  ///
  /// The result satisfies ``UserTrace/_checkInvariants()``, its apps are
  /// listed in order of first appearance (as ``TraceReader`` builds them) and
  /// its opens do not overlap.
  /// - Complexity: O(events · log events) time and memory for one user.
  public func user(_ index: Int) -> UserTrace {
    precondition(index >= 0, "user index must be ≥ 0")
    let id = Self.userID(index)
    let key = String(index)
    var rng = SplitMix64(seed: seed, keys: "user", key, "traits")
    let tr = traits(id: id, using: &rng)

    var events: [TraceEvent] = []
    events.reserveCapacity(days * 320)
    var orng = SplitMix64(seed: seed, keys: "user", key, "opens")
    let sessions = generateOpens(tr, into: &events, using: &orng)
    var nrng = SplitMix64(seed: seed, keys: "user", key, "network")
    var trips: [Trip] = []
    generateNetwork(tr, into: &events, trips: &trips, using: &nrng)
    var crng = SplitMix64(seed: seed, keys: "user", key, "charging")
    generateCharging(tr, sessions: sessions, into: &events, using: &crng)
    var wrng = SplitMix64(seed: seed, keys: "user", key, "wakes")
    generateWakes(tr, into: &events, using: &wrng)
    var urng = SplitMix64(seed: seed, keys: "user", key, "updates")
    var srng = SplitMix64(seed: seed, keys: "user", key, "content-sizes")
    generateUpdates(tr, into: &events, using: &urng, sizes: &srng)
    // Last, from its own stream: the other rows are the same with or
    // without location rows, and keep their order at equal times.
    var regions: [String] = []
    if parameters.locationWakes {
      var lrng = SplitMix64(seed: seed, keys: "user", key, "location")
      regions = generateLocations(tr, trips: trips, into: &events, using: &lrng)
    }

    // Stable sort by time: ties keep the order the components emitted.
    var order = Array(0..<events.count)
    events.withUnsafeBufferPointer { ev in
      order.sort { a, b in
        let ta = ev[a].time, tb = ev[b].time
        return ta < tb || (ta == tb && a < b)
      }
    }
    // App indices: pool index -> order of first appearance.
    var remap = [Int32](repeating: -1, count: parameters.apps.count)
    var names: [String] = []
    var sorted: [TraceEvent] = []
    sorted.reserveCapacity(events.count)
    for i in order {
      var e = events[i]
      if e.app >= 0 {
        let p = Int(e.app)
        if remap[p] < 0 {
          remap[p] = Int32(names.count)
          names.append(parameters.apps[p].name)
        }
        e.app = remap[p]
      }
      sorted.append(e)
    }
    var trace = UserTrace(
      user: id, timeZone: .fixed(tr.offset), start: tr.start, end: tr.end,
      apps: names, events: sorted)
    trace.regions = regions
    #if DEBUG
      trace._checkInvariants()
    #endif
    return trace
  }

  /// `#` comment lines describing the generator, its seed and parameters
  /// (the parameters as one line of JSON with sorted keys).
  package func commentLines(users: Int) -> [String] {
    let enc = JSONEncoder()
    enc.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let json =
      (try? enc.encode(parameters)).map { String(decoding: $0, as: UTF8.self) }
      ?? "{}"
    return [
      "FetchLab synthetic population, generator version "
        + "\(Self.generatorVersion)",
      "seed: \(seed)",
      "users: \(users)",
      "days: \(days)",
      "parameters: \(json)",
    ]
  }

  /// Streams users `0..<users` into a canonical trace at `path` and returns
  /// the number of events written (without `begin` and `end` rows).
  ///
  /// Users are generated in small parallel batches and written in order,
  /// so memory stays bounded by one batch whatever `users` is. The file is
  /// written atomically (see ``AtomicTextFile``); its `#` comment lines are
  /// ``commentLines(users:)``.
  /// - Parameter progress: called on the calling thread after each batch
  ///   with the users and events written so far.
  @discardableResult
  package func write(
    to path: String, users: Int,
    progress: ((_ users: Int, _ events: Int) -> Void)? = nil
  ) throws -> Int {
    precondition(users >= 0, "users must be ≥ 0")
    let writer = try TraceWriter(
      path: path, comments: commentLines(users: users))
    let batch = max(
      1, min(64, 8 * ProcessInfo.processInfo.activeProcessorCount))
    // Pipeline: batch k+1 is generated while batch k is written.
    var done = 0
    var events = 0
    var current = generate(0..<min(batch, users))
    while !current.isEmpty {
      let nextStart = done + current.count
      let nextRange = nextStart..<min(nextStart + batch, users)
      let box = NextBatch()
      let group = DispatchGroup()
      if !nextRange.isEmpty {
        DispatchQueue.global().async(group: group) { box.users = generate(nextRange) }
      }
      defer { group.wait() }
      for t in current {
        try writer.write(t)
        events += t.events.count
      }
      done += current.count
      progress?(done, events)
      group.wait()
      current = box.users
    }
    try writer.commit()
    return events
  }

  /// Users `range`, generated in parallel, in index order.
  public func generate(_ range: Range<Int>) -> [UserTrace] {
    parallelMap(range.count, jobs: ProcessInfo.processInfo.activeProcessorCount) { user(range.lowerBound + $0) }
  }
}

/// The batch generated in the background while the previous one is written
/// (read only after the group it was filled in has been waited for).
private final class NextBatch: @unchecked Sendable {
  var users: [UserTrace] = []
}

// MARK: - Per-user traits shared by the components

extension SyntheticPopulation {
  /// What every component of one user needs to know.
  struct Traits {
    var id: String
    /// UTC offset, seconds east.
    var offset: Int
    /// Window, UTC Unix seconds; `start` is local midnight.
    var start: Double
    var end: Double
    /// Chronotype shift of the daily rhythm, hours (positive = later).
    var chrono: Double
    /// The user's apps as pool indices, most popular first.
    var apps: [Int]
    /// Open probability per app (same order), Zipf, summing to 1.
    var popularity: [Double]
  }

  func traits(id: String, using rng: inout SplitMix64) -> Traits {
    let p = parameters
    let offset = zoneOffsets[Int(rng.next() % UInt64(zoneOffsets.count))]
    let start = Double(startCivilDay) * 86_400 - Double(offset)
    let end = start + Double(days) * 86_400
    let chrono = p.chronotypeSDHours * max(-2.5, min(2.5, rng.normal()))

    // Apps: weighted sampling without replacement (Efraimidis–Spirakis);
    // the draw order is the popularity rank.
    let n =
      p.appsPerUserMin
      + Int(rng.next() % UInt64(p.appsPerUserMax - p.appsPerUserMin + 1))
    var keyed: [(key: Double, app: Int)] = p.apps.indices.map { i in
      (log(rng.uniformPositive()) / p.apps[i].weight, i)
    }
    keyed.sort { $0.key > $1.key || ($0.key == $1.key && $0.app < $1.app) }
    let apps = keyed.prefix(n).map(\.app)

    // Zipf exponent such that the top app gets the drawn share.
    let logitTop =
      log(p.topAppShareMedian / (1 - p.topAppShareMedian))
      + p.topAppShareLogitSD * rng.normal()
    let target = min(0.95, max(1 / Double(n) + 0.005, 1 / (1 + exp(-logitTop))))
    let alpha = Self.zipfExponent(topShare: target, count: n)
    var pop = (1...n).map { pow(Double($0), -alpha) }
    let total = pop.reduce(0, +)
    for i in pop.indices { pop[i] /= total }
    return Traits(
      id: id, offset: offset, start: start, end: end, chrono: chrono,
      apps: apps, popularity: pop)
  }

  /// The Zipf exponent α ≥ 0 with 1 / Σ_{k=1…n} k^−α = `topShare`
  /// (bisection; the share increases with α).
  static func zipfExponent(topShare: Double, count n: Int) -> Double {
    var lo = 0.0, hi = 8.0
    for _ in 0..<50 {
      let mid = (lo + hi) / 2
      var s = 0.0
      for k in 1...n { s += pow(Double(k), -mid) }
      if 1 / s < topShare { lo = mid } else { hi = mid }
    }
    return (lo + hi) / 2
  }

  /// Day of week of local day `d` of the window, 0 = Monday.
  func weekday(_ d: Int) -> Int { ((startWeekday + d) % 7 + 7) % 7 }

  func isWeekend(_ d: Int) -> Bool { weekday(d) >= 5 }

  /// A 24-value hourly curve at local hour `x`, linearly interpolated
  /// between hour centres, periodic.
  static func curve(_ c: [Double], at x: Double) -> Double {
    let y = x - 0.5
    let f = (y / 24).rounded(.down)
    let h = y - f * 24  // 0..<24
    let i = Int(h)
    let w = h - Double(i)
    return c[i % 24] * (1 - w) + c[(i + 1) % 24] * w
  }

  /// `t` rounded to whole milliseconds (exact decimal round trip).
  @inline(__always)
  static func ms(_ t: Double) -> Double { (t * 1000).rounded() / 1000 }

  /// Logistic function.
  static func logistic(_ x: Double) -> Double { 1 / (1 + exp(-x)) }

  static func logit(_ p: Double) -> Double { log(p / (1 - p)) }

  /// A geometric count ≥ 1 with the given mean.
  static func geometric(mean: Double, using rng: inout SplitMix64) -> Int {
    guard mean > 1 else { return 1 }
    let r = 1 - 1 / mean  // P(another one)
    let k = 1 + Int((log(rng.uniformPositive()) / log(r)).rounded(.down))
    return min(k, 1_000)
  }
}

extension SyntheticPopulation.Parameters {
  /// Why `days` days from ``startDate`` (local midnight in each of
  /// ``timeZones``) fall outside the dates a trace may hold
  /// (``TimeText/plausibleTimes``, which the trace reader enforces), or nil.
  package func windowProblem(days: Int) -> String? {
    guard let day = SyntheticPopulation.civilDay(startDate) else { return nil }
    let offsets = timeZones.compactMap { z -> Int? in
      if case .fixed(let off) = TraceTimeZone(parsing: z) { return off }
      return nil
    }
    let start = Double(day) * 86_400 - Double(offsets.max() ?? 0)
    let end = Double(day + days) * 86_400 - Double(offsets.min() ?? 0)
    guard !TimeText.plausibleTimes.contains(start) || !TimeText.plausibleTimes.contains(end) else { return nil }
    return "startDate \(startDate) with \(days) days runs from \(TimeText.isoUTC(start)) to \(TimeText.isoUTC(end)),"
      + " outside 1970-01-01...2100-01-01, the dates a trace may hold"
  }
}
