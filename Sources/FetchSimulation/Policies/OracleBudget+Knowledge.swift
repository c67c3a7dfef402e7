import FetchSupport
import FetchTraces
import FetchWorld

/// What ``OracleBudgetPolicy`` knows of the future (`know=`); each is a
/// reference for a scheduler that knows less.
///
/// - ``opensAndContent``: the times of the app's opens and of its content
///   updates (and the network and background radio activity, as every
///   knowledge level): each chosen fetch ends at an open and brings new
///   data. No scheduler can know the updates, so this is an upper reference.
/// - ``opens``: the opens, not the updates (content-blind). It ranks each
///   open's fetch by the gain it expects under the content model's mean
///   update rate λ (`content.rate_per_hour`, per app where set): the
///   planner's utility `U(d) = e^(−λd) − E[age](d)/1 h` at the default
///   weights (``PlannerMath/utility(sinceSync:lambda:fresh:agePerHour:)``),
///   `U(0) − U(g)` for an open `g` s after the previous one (after the
///   window start for the first), i.e. the opens most likely to be stale
///   and oldest, per joule estimated as for ``opensAndContent``. Without
///   foreground refresh the same ranking is a heuristic (the gap counts
///   from the previous open, not from the last sync). The price of not
///   knowing the future is a learner's distance to this.
/// - ``none``: neither: a timer that knows only the budget, the best fixed
///   period (5 min to 1 d, from ``fixedPeriods``) and phase (eighths of the
///   period) in hindsight, the one whose realised utility at the opens
///   (fresh opens less the total age in hours) is largest among those whose
///   estimated energy (or tick count) fits the budget. A floor: any learner
///   should beat it.
package enum OracleKnowledge: String, CaseIterable, Sendable, Hashable {
  case opensAndContent = "opens+content"
  case opens
  case none
}

extension OracleBudgetPlanner {
  /// The periods ``OracleKnowledge/none`` chooses among, s.
  static let fixedPeriods: [Double] = [300, 600, 900, 1200, 1800, 2700, 3600, 5400, 7200, 10_800, 14_400, 21_600, 28_800, 43_200, 86_400]
  /// The phases tried per period, as eighths of it.
  static let fixedPhases = 8

  /// The content-blind gain of each candidate: `U(0) − U(g)` with `g` the
  /// time since the previous open (the window start for the first).
  func contentBlindGains(rate: Double) -> [Double] {
    candidates.map { c in
      let g = opens[c.open] - (c.open == 0 ? origin : opens[c.open - 1])
      let u0 = PlannerMath.utility(sinceSync: 0, lambda: rate, fresh: 1, agePerHour: 1)
      return u0 - PlannerMath.utility(sinceSync: g, lambda: rate, fresh: 1, agePerHour: 1)
    }
  }

  /// The content-blind choice: the candidates with the largest expected
  /// gain (count budget) or gain per estimated joule (energy budget), in
  /// that order while they fit; ties to the earlier candidate.
  func selectContentBlind(budget: OracleBudgetLimit, total: Double, rate: Double) -> [Int] {
    guard total > 0, rate > 0 else { return [] }
    let gains = contentBlindGains(rate: rate)
    let costs: [Double]
    switch budget {
    case .fetchesPerDay: costs = [Double](repeating: 1, count: candidates.count)
    case .joulesPerDay: costs = candidates.map { max($0.energyJ, 1e-9) }
    }
    let order = candidates.indices.filter { gains[$0] > 0 }.sorted {
      let a = gains[$0] / costs[$0], b = gains[$1] / costs[$1]
      return a > b || (a == b && $0 < $1)
    }
    var chosen: [Int] = []
    var left = total
    for j in order where costs[j] <= left + 1e-9 {
      chosen.append(j)
      left -= costs[j]
    }
    return chosen
  }

  /// A timer's plan: its period and phase, tick times, estimated energy and
  /// total age at the opens.
  struct FixedSchedule {
    var period: Double
    var phase: Double
    var ticks: [Double]
    var energyJ: Double
    var totalAgeS: Double
    var utility: Double
  }

  /// The best fixed schedule in hindsight (``OracleKnowledge/none``) within
  /// `total` (fetches or J over the window); no ticks when none fits.
  func bestFixedSchedule(budget: OracleBudgetLimit, total: Double) -> FixedSchedule {
    let none = evaluate(ticks: [], period: 0, phase: 0)
    var best = none
    let start = user.trace.start, end = user.trace.end
    for period in Self.fixedPeriods {
      for i in 1...Self.fixedPhases {
        let phase = period * Double(i) / Double(Self.fixedPhases)
        let ticks = Array(stride(from: start + phase, to: end, by: period))
        if case .fetchesPerDay = budget, Double(ticks.count) > total + 1e-9 { continue }
        var s = evaluate(ticks: ticks, period: period, phase: phase)
        if case .joulesPerDay = budget, s.energyJ > total + 1e-9 { continue }
        if s.utility > best.utility + 1e-9 {
          s.ticks = ticks
          best = s
        }
      }
    }
    return best
  }

  /// The completion time, version and estimated budget energy (nothing on
  /// the charger) of a fetch started at `t` (nil offline), from the
  /// background radio activity alone.
  func tickFetch(at t: Double) -> (end: Double, version: Int, energyJ: Double)? {
    let net = user.network(at: t)
    guard let k = PreparedUser.interface(net), let radio = launch.radios.radio(for: net) else { return nil }
    let promotion = radio.promotion(afterGap: backgroundQuietGap(k, at: t)).timeS
    let guess = radio.transferTime(downBytes: responseBytes(version: serverVersion(at: t)), upBytes: launch.fetch.requestBytes)
    let e = t + promotion + guess.up + launch.fetch.serverLatencyS + guess.down
    let v = serverVersion(at: e)
    return (e, v, budgetEnergy(start: t, end: e, version: v))
  }

  /// The realised utility, total age and energy of fetches started at
  /// `ticks` (sorted), each bringing the content as of its completion.
  func evaluate(ticks: [Double], period: Double, phase: Double) -> FixedSchedule {
    var energyJ = 0.0, totalAge = 0.0, fresh = 0.0
    var held = 0
    var i = 0
    var pending: [(end: Double, version: Int)] = []
    pending.reserveCapacity(4)
    var p = 0
    for m in opens.indices {
      if refresh { held = max(held, baseVersion(open: m)) }
      while i < ticks.count && ticks[i] < opens[m] {
        if let f = tickFetch(at: ticks[i]) {
          energyJ += f.energyJ
          pending.append((f.end, f.version))
        }
        i += 1
      }
      while p < pending.count && pending[p].end <= opens[m] {
        held = max(held, pending[p].version)
        p += 1
      }
      let a = age(open: m, version: held)
      totalAge += a
      if a == 0 { fresh += 1 }
    }
    for t in ticks[i...] { energyJ += tickFetch(at: t)?.energyJ ?? 0 }
    return FixedSchedule(period: period, phase: phase, ticks: [], energyJ: energyJ, totalAgeS: totalAge, utility: fresh - totalAge / 3600)
  }
}
