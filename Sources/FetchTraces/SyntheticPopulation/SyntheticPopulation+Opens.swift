import FetchSupport
import Foundation

extension SyntheticPopulation {
  /// A session: the open's start and end, UTC seconds.
  struct Session {
    var start: Double
    var end: Double
  }

  /// Appends the user's `open` rows (app = pool index) and returns the
  /// sessions, sorted and non-overlapping.
  ///
  /// - Rhythm: pickups arrive as a non-homogeneous Poisson process over
  ///   15-minute bins whose rates follow ``Parameters/openHourlyShare``
  ///   (shifted by the chronotype, delayed on weekend mornings) and scale
  ///   with the day's drawn open count (log-normal per user and per day,
  ///   light days mixed in).
  /// - Clustering: after a pickup, with probability
  ///   ``Parameters/repickupProbability``, another pickup follows after a
  ///   log-normal delay; the rhythm's rate is scaled by (1 − that
  ///   probability) so the expected count is unchanged.
  /// - No overlap: a pickup due while the user is still in a session waits
  ///   until the session ended (+ 1 s), so no pickup is lost.
  /// - Apps: each pickup opens a geometric number of apps, the first drawn
  ///   from the hour's app shares (or, with
  ///   ``Parameters/appRepeatProbability``, one of the last apps opened),
  ///   the next ones never repeating the app just closed. The weights are balanced so that every app keeps its
  ///   Zipf popularity as its share of the user's opens.
  /// - Complexity: O(days · 96 + opens · apps) time.
  func generateOpens(
    _ tr: Traits, into events: inout [TraceEvent],
    using rng: inout SplitMix64
  ) -> [Session] {
    let p = parameters
    let userMedian =
      normalDayMedian * exp(p.opensPerDayUserSigma * rng.normal())
    let sessionScale = exp(p.sessionUserSigma * rng.normal())
    let pickupsPerOpen = (1 - p.repickupProbability) / p.appsPerPickupMean
    let rate = pickupRates(
      tr, userMedian: userMedian, pickupsPerOpen: pickupsPerOpen, using: &rng)
    let chooser = AppChooser(self, tr)
    let arrivals = rhythmArrivals(tr, rate: rate, using: &rng)

    var state = PickupState(
      cursor: tr.start,
      recent: [Int](repeating: -1, count: max(1, p.appRepeatMemory)))
    state.sessions.reserveCapacity(days * 100)
    while let due = state.nextDue(arrivals) {
      let t = Self.ms(max(due, state.cursor))
      if t >= tr.end { break }
      pickup(
        at: t, tr, chooser: chooser, sessionScale: sessionScale,
        state: &state, into: &events, using: &rng)
      state.cursor += 1
      if rng.uniform() < p.repickupProbability {
        let r =
          state.cursor
          + rng.logNormal(
            median: p.repickupDelayMedianSeconds, sigma: p.repickupDelaySigma)
        let at = state.repickups.firstIndex { $0 > r } ?? state.repickups.count
        state.repickups.insert(r, at: at)
      }
    }
    return state.sessions
  }

  /// Length of the rhythm's bins, s, and bins per day.
  static let binSeconds = 900.0
  static let binsPerDay = 96

  /// The pickup rate per second for every 15-minute bin of the window:
  /// the day's open curve (shifted by the chronotype, delayed on weekend
  /// mornings) scaled to the day's drawn open count.
  func pickupRates(
    _ tr: Traits, userMedian: Double, pickupsPerOpen: Double,
    using rng: inout SplitMix64
  ) -> [Double] {
    let p = parameters
    let binSeconds = Self.binSeconds
    let binsPerDay = Self.binsPerDay
    var rate = [Double](repeating: 0, count: days * binsPerDay)
    var shape = [Double](repeating: 0, count: binsPerDay)
    for d in 0..<days {
      let weekend = isWeekend(d)
      var sum = 0.0
      for b in 0..<binsPerDay {
        let x = (Double(b) + 0.5) / 4
        var xe = x
        if weekend {
          let ramp = x < 12 ? 1 : (x < 20 ? (20 - x) / 8 : 0)
          xe -= p.weekendMorningDelayHours * ramp
        }
        let v = Self.curve(openCurve, at: xe - tr.chrono)
        shape[b] = v
        sum += v
      }
      let light = rng.uniform() < p.lightDayProbability
      let opens =
        userMedian * (weekend ? p.weekendOpensFactor : 1)
        * (light ? p.lightDayFactor : 1)
        * exp(p.opensPerDayDaySigma * rng.normal())
      let k = sum > 0 ? opens * pickupsPerOpen / (sum * binSeconds) : 0
      for b in 0..<binsPerDay { rate[d * binsPerDay + b] = shape[b] * k }
    }
    return rate
  }

  /// Rhythm arrivals for the whole window, sampled by inversion over the
  /// bins of `rate`.
  private func rhythmArrivals(
    _ tr: Traits, rate: [Double], using rng: inout SplitMix64
  ) -> [Double] {
    let binSeconds = Self.binSeconds
    var arrivals: [Double] = []
    arrivals.reserveCapacity(days * 60)
    var e = -log(rng.uniformPositive())
    for b in 0..<rate.count where rate[b] > 0 {
      let binStart = tr.start + Double(b) * binSeconds
      var now = binStart
      while true {
        let mass = rate[b] * (binStart + binSeconds - now)
        if mass < e {
          e -= mass
          break
        }
        now += e / rate[b]
        arrivals.append(now)
        e = -log(rng.uniformPositive())
      }
    }
    return arrivals
  }

  /// The pickup loop's state. A rhythm arrival while the user is busy
  /// waits until the previous session ended (`cursor`), so no pickup is
  /// lost.
  private struct PickupState {
    /// When the user is free again.
    var cursor: Double
    /// The next rhythm arrival not yet taken.
    var nextArrival = 0
    /// Pending re-pickups, sorted.
    var repickups: [Double] = []
    /// The last apps opened (a ring of `recent.count`).
    var recent: [Int]
    var recentCount = 0
    var sessions: [Session] = []

    /// The next pickup's due time (the earlier of the next re-pickup and
    /// the next rhythm arrival, re-pickups first on ties), or nil when
    /// both are used up.
    mutating func nextDue(_ arrivals: [Double]) -> Double? {
      if let r = repickups.first,
        nextArrival >= arrivals.count || r <= arrivals[nextArrival]
      {
        repickups.removeFirst()
        return r
      } else if nextArrival < arrivals.count {
        nextArrival += 1
        return arrivals[nextArrival - 1]
      }
      return nil
    }
  }

  /// One pickup at `start`: a geometric number of apps, each a session
  /// (`open` row), with log-normal switch gaps between them.
  private func pickup(
    at start: Double, _ tr: Traits, chooser: AppChooser, sessionScale: Double,
    state s: inout PickupState, into events: inout [TraceEvent],
    using rng: inout SplitMix64
  ) {
    let p = parameters
    let switchSigma = 0.7
    var t = start
    let count = Self.geometric(mean: p.appsPerPickupMean, using: &rng)
    var last = -1
    for i in 0..<count {
      let k: Int
      if i == 0 && s.recentCount > 0 && rng.uniform() < p.appRepeatProbability {
        let m = min(s.recentCount, s.recent.count)
        k = s.recent[Int(rng.next() % UInt64(m))]
      } else {
        k = chooser.choose(at: t, excluding: last, using: &rng)
      }
      last = k
      s.recent[s.recentCount % s.recent.count] = k
      s.recentCount += 1
      let a = tr.apps[k]
      let raw =
        p.sessionMedianSeconds * sessionScale * p.apps[a].sessionScale
        * exp(p.sessionSigma * rng.normal())
      let length = Self.ms(min(p.sessionMaxSeconds, max(1, raw)))
      events.append(
        TraceEvent(time: t, kind: .open, app: Int32(a), value: length))
      s.sessions.append(Session(start: t, end: t + length))
      s.cursor = t + length
      if i + 1 < count {
        let gap = max(
          1,
          rng.logNormal(median: p.appSwitchMedianSeconds, sigma: switchSigma))
        t = Self.ms(s.cursor + gap)
        if t >= tr.end { break }
      }
    }
  }

  /// App choice per local hour: popularity × time-of-day preference, as
  /// cumulative weights. Each app's preference is normalised to mean 1
  /// over the user's opens, so the popularity stays the app's share.
  ///
  /// Two tables per hour: `first` draws the first app of a pickup with the
  /// hour's shares p(k | h); `next` draws the following apps, never the
  /// one just closed, with weights q solved so that this exclusion chain
  /// still visits each app with share p(k | h) (see `exclusionWeights`).
  /// p(k | h) ∝ popularity × time-of-day preference, balanced (Sinkhorn)
  /// so that over the user's day each app keeps its popularity as share.
  struct AppChooser {
    /// Apps of the user.
    let n: Int
    /// The user's window start (hours are counted from it).
    let start: Double
    /// Cumulative weights, 24 rows of `n`.
    var first: [Double]
    var next: [Double]

    init(_ population: SyntheticPopulation, _ tr: Traits) {
      n = tr.apps.count
      start = tr.start
      let hourShare = Self.hourShares(population.openCurve, tr)
      first = Self.preferences(population.parameters, tr)
      next = [Double](repeating: 0, count: 24 * n)
      Self.balance(&first, hourShare: hourShare, popularity: tr.popularity, n: n)
      Self.cumulate(&first, &next, popularity: tr.popularity, n: n)
    }

    /// The open curve's value at each local hour (flat when it is 0 all day).
    static func hourShares(_ openCurve: [Double], _ tr: Traits) -> [Double] {
      var hourShare = [Double](repeating: 0, count: 24)
      for h in 0..<24 {
        hourShare[h] = SyntheticPopulation.curve(openCurve, at: Double(h) + 0.5 - tr.chrono)
      }
      if hourShare.reduce(0, +) <= 0 {
        hourShare = [Double](repeating: 1, count: 24)
      }
      return hourShare
    }

    /// Popularity × time-of-day preference, per hour and app.
    static func preferences(_ p: Parameters, _ tr: Traits) -> [Double] {
      let n = tr.apps.count
      var first = [Double](repeating: 0, count: 24 * n)
      for (k, a) in tr.apps.enumerated() {
        let app = p.apps[a]
        for h in 0..<24 {
          let x = Double(h) + 0.5 - tr.chrono
          let pref = exp(
            app.concentration
              * (cos(2 * Double.pi * (x - app.peakHour) / 24) - 1))
          first[h * n + k] = tr.popularity[k] * pref
        }
      }
      return first
    }

    /// Sinkhorn balancing of `first`: rows to the hour's share of opens,
    /// columns to the app's popularity.
    static func balance(_ first: inout [Double], hourShare: [Double], popularity: [Double], n: Int) {
      let hourTotal = hourShare.reduce(0, +)
      var colSum = [Double](repeating: 0, count: n)
      for _ in 0..<20 {
        for h in 0..<24 {  // rows: the hour's share of opens
          // An app above half of an hour's opens cannot be reached by the
          // exclusion chain: cap it there and let the columns move its share
          // to other hours.
          var r = 0.0, top = 0.0, topK = 0
          for k in 0..<n {
            let v = first[h * n + k]
            r += v
            if v > top { (top, topK) = (v, k) }
          }
          if n > 2 && top > 0.48 * r {
            first[h * n + topK] = 0.48 / 0.52 * (r - top)
            r = 0.48 / 0.52 * (r - top) + (r - top)
          }
          let f = r > 0 ? hourShare[h] / hourTotal / r : 0
          for k in 0..<n { first[h * n + k] *= f }
        }
        for k in 0..<n { colSum[k] = 0 }
        for h in 0..<24 {
          for k in 0..<n { colSum[k] += first[h * n + k] }
        }
        for h in 0..<24 {  // columns: the app's popularity
          for k in 0..<n where colSum[k] > 0 {
            first[h * n + k] *= popularity[k] / colSum[k]
          }
        }
      }
    }

    /// Turns each hour's row of `first` into cumulative shares, and `next`
    /// into the cumulative exclusion weights of the same shares.
    static func cumulate(_ first: inout [Double], _ next: inout [Double], popularity: [Double], n: Int) {
      var row = [Double](repeating: 0, count: n)
      for h in 0..<24 {
        // An hour without opens in the rhythm can still get a delayed or
        // repeated pickup: it uses the plain popularity.
        let total = first[(h * n)..<(h * n + n)].reduce(0, +)
        for k in 0..<n {
          row[k] = total > 0 ? first[h * n + k] / total : popularity[k]
        }
        let q = SyntheticPopulation.exclusionWeights(row)
        var acc = 0.0, accQ = 0.0
        for k in 0..<n {
          acc += row[k]
          accQ += q[k]
          first[h * n + k] = acc
          next[h * n + k] = accQ
        }
      }
    }

    /// An app rank drawn for time `t`: from `first` when `excluded` < 0,
    /// else from `next` without `excluded`.
    func choose(at t: Double, excluding excluded: Int, using rng: inout SplitMix64) -> Int {
      let rel = t - start
      let h = Int((rel - (rel / 86_400).rounded(.down) * 86_400) / 3600) % 24
      let row = h * n
      if excluded < 0 || n == 1 {
        let u = rng.uniform() * first[row + n - 1]
        for k in 0..<n where first[row + k] > u { return k }
        return n - 1
      }
      let lostLo = excluded > 0 ? next[row + excluded - 1] : 0
      let lost = next[row + excluded] - lostLo
      var u = rng.uniform() * (next[row + n - 1] - lost)
      if u >= lostLo { u += lost }
      for k in 0..<n where next[row + k] > u && k != excluded { return k }
      return excluded == n - 1 ? n - 2 : n - 1
    }
  }

  /// Weights q for drawing "any app but the previous one" such that the
  /// resulting chain visits app i with share `p[i]`.
  ///
  /// The chain P(i → j) = q_j / (1 − q_i), j ≠ i, is reversible with
  /// stationary π_i ∝ q_i (1 − q_i). So every app but the most popular one
  /// takes q_i = (1 − √(1 − 4λ p_i)) / 2, the top app takes the rest,
  /// q_top = 1 − Σ others (above 1/2 when p_top is above about 1/3), and λ
  /// is found by bisection so that q_top (1 − q_top) = λ p_top. No chain
  /// reaches p_top ≥ 1/2 (an app cannot follow itself); such a p_top is
  /// treated as 0.49.
  static func exclusionWeights(_ p: [Double]) -> [Double] {
    guard p.count > 2, let pt0 = p.max(), pt0 > 0 else { return p }
    let top = p.firstIndex(of: pt0) ?? 0
    let total = p.reduce(0, +)
    var pt = pt0 / total
    var scale = 1 / total
    if pt > 0.49 {
      scale = 0.51 / (1 - pt) / total
      pt = 0.49
    }
    var second = 0.0
    for (i, x) in p.enumerated() where i != top {
      second = max(second, x * scale)
    }
    guard second > 0 else { return p }
    func others(_ lambda: Double) -> Double {
      var s = 0.0
      for (i, x) in p.enumerated() where i != top {
        s += (1 - max(0, 1 - 4 * lambda * x * scale).squareRoot()) / 2
      }
      return s
    }
    var lo = 0.0
    var hi = 1 / (4 * second)
    let sHi = others(hi)
    if sHi * (1 - sHi) - hi * pt < 0 {
      for _ in 0..<100 {
        let mid = (lo + hi) / 2
        let s = others(mid)
        if s * (1 - s) - mid * pt > 0 { lo = mid } else { hi = mid }
      }
    }
    let lambda = (lo + hi) / 2
    var q = p.map { (1 - max(0, 1 - 4 * lambda * $0 * scale).squareRoot()) / 2 }
    q[top] = 0
    q[top] = max(0, 1 - q.reduce(0, +))
    return q
  }
}
