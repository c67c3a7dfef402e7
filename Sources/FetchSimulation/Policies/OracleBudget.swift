import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld

/// The budget of ``OracleBudgetPolicy``, per day of the replay window.
///
/// Spec strings: `oracle-budget:4` (fetches per day) and `oracle-budget:50J`
/// (joules per day).
package enum OracleBudgetLimit: Sendable, Hashable, CustomStringConvertible {
  /// At most this many fetches per day of the window, on average.
  case fetchesPerDay(Double)
  /// At most this much fetch energy (CPU and marginal radio) drawn from
  /// the battery, J per day of the window, on average: a fetch that starts
  /// on the charger costs the budget nothing (``FetchOutcome/batteryEnergyJ``).
  case joulesPerDay(Double)

  /// Parses `4` or `2.5` (fetches per day, at most ``SettingBound/count``)
  /// and `50J` (joules per day, at most ``SettingBound/number``); `nil` for
  /// anything else, negative or non-finite values.
  package init?(argument s: String) {
    let joules = s.hasSuffix("J")
    guard let x = settingNumber(joules ? String(s.dropLast()) : s), x.isFinite, x >= 0,
      x <= (joules ? SettingBound.number : SettingBound.count)
    else { return nil }
    self = joules ? .joulesPerDay(x) : .fetchesPerDay(x)
  }

  /// The canonical argument: `4`, `50J`.
  package var description: String {
    switch self {
    case .fetchesPerDay(let n): CSV.number(n)
    case .joulesPerDay(let j): CSV.number(j) + "J"
    }
  }

  /// The budget over a whole window of `days` days: fetches (rounded down,
  /// so the count never exceeds it) or joules.
  package func total(days: Double) -> Double {
    switch self {
    case .fetchesPerDay(let n): (n * days + 1e-9).rounded(.down)
    case .joulesPerDay(let j): j * days
    }
  }
}

/// Knobs of ``OracleBudgetPolicy`` (`oracle-budget:<budget>[,key=value]`).
package struct OracleBudgetParameters: SettingTable {
  /// Largest dynamic program (budget × candidates², cells) solved exactly
  /// for a count budget without foreground refresh; beyond it (or at 0) the
  /// greedy is used. 10^7 cells take about 0.5 s in a debug build.
  package var exactWorkLimit = 1e7
  /// What the oracle knows of the future (`know=`, ``OracleKnowledge``).
  package var knowledge = OracleKnowledge.opensAndContent

  package init() {}

  /// Names accepted in `oracle-budget:<budget>,key=value`.
  package static let keys: [SettingKey<OracleBudgetParameters>] = [.init("exact_limit", \.exactWorkLimit, max: 1e8, help: "largest dynamic program (cells) solved exactly for a count budget; beyond it, greedy")]
}

/// The best fetch schedule under a budget, given full knowledge of the
/// future opens, content updates, network and background radio activity.
///
/// **Budget.** The budget is a total over the replay window: N × days
/// fetches (rounded down) or X × days joules, to spend whenever it helps
/// most. A policy held to the same or a smaller *average* per-day budget
/// spends no more in total, so it cannot beat this one (exactly so when
/// the selection below is exact).
///
/// **Candidates.** As for the unbudgeted ``OraclePolicy``, a useful fetch
/// completes exactly at an open of the app (or, when the device is offline
/// or the network changes just before, at the latest moment a fetch can
/// complete before it), bringing the content as of its completion. The
/// candidate for open k must start after open k − 1, so candidates never
/// overlap (an open less than one fetch duration after the previous one
/// gets no candidate).
///
/// **Selection.**
/// - *Count budget, foreground refresh on* (the default): each open's age
///   depends only on the fetch before it, because the previous open
///   refreshed the content. Taking the B opens with the largest age-if-not-
///   fetched minus age-if-fetched minimises the total (hence mean) age at
///   opens: **exact**.
/// - *Count budget, refresh off*: a fetch helps every open up to the next
///   fetch. Solved **exactly** by dynamic programming over the candidates
///   (O(B·m²) for m candidates, each dominated candidate removed), or by the
///   greedy below when that exceeds ``OracleBudgetParameters/exactWorkLimit``.
/// - *Energy budget*: a knapsack. Each candidate's cost is its estimated
///   energy given the background radio activity alone (``PreparedUser``'s
///   busy intervals, ``RadioModel/marginalEnergy(of:background:from:own:from:lo:hi:)``, the fetch's expected
///   duration, CPU). Greedy by benefit/cost, skipping what no longer fits,
///   and compared with the best single fetch. With refresh on, benefits add
///   up and costs are fixed, so this is the classic knapsack greedy: at
///   least half the optimal age reduction, and at most one fetch's benefit
///   short of it (near-optimal, not exact); and its age is non-increasing
///   in the budget (a larger budget can only take an item earlier in the
///   benefit/cost order, worth more than whatever the smaller budget fits
///   instead). With refresh off, benefits are re-evaluated after each pick
///   (diminishing returns). Only fetches completing at opens are
///   candidates: one slipped into another app's session a little earlier
///   can be cheaper, so under an energy budget this is a strong reference
///   schedule, not a proven bound.
///
/// Planned energy uses background-only costs; the engine charges each fetch
/// its marginal energy given the background *and* this policy's earlier
/// fetches, which is the same or less when fetches share tails, so the
/// energy spent stays within the budget up to the rounding of the radio
/// model (tested: within 1 % + 1 J).
///
/// The guarantees are exact with server failures off: random failures are
/// not foreseen.
package struct OracleBudgetPolicy: FetchPolicy {
  package let budget: OracleBudgetLimit
  /// The budget over the whole window (fetches or J).
  package let totalBudget: Double
  /// The opens the plan fetches for, Unix s, in time order.
  package let plannedOpens: [Double]
  /// Planned total of the ages at all opens of the app, s.
  package let plannedTotalAgeS: Double
  /// Planned energy of the chosen fetches from background-only costs, J.
  package let plannedEnergyJ: Double
  /// Whether the selection is provably optimal (count budgets, except when
  /// the greedy replaced the dynamic program).
  package let isExact: Bool
  /// What it knows of the future.
  package let knowledge: OracleKnowledge
  /// With ``OracleKnowledge/none``, the chosen timer: period and offset of
  /// its first fetch from the window start, s.
  package let fixedSchedule: (period: Double, phase: Double)?
  /// When to wake for each planned fetch (at or before its start; with
  /// ``OracleKnowledge/none``, the timer's ticks, each a fetch now).
  let wakeTimes: [Double]
  var next = 0

  /// - Parameters:
  ///   - budget: fetches or joules per day of the window.
  ///   - user: the prepared trace (its future is what the oracle knows).
  ///   - app: the app whose content is fetched.
  ///   - content: the app's update times.
  package init(
    budget: OracleBudgetLimit, user: PreparedUser, app: Int32, content: ContentTimeline,
    params: OracleBudgetParameters = OracleBudgetParameters()
  ) {
    self.budget = budget
    knowledge = params.knowledge
    let planner = OracleBudgetPlanner(user: user, app: app, content: content, knowsContent: params.knowledge == .opensAndContent)
    totalBudget = budget.total(days: user.trace.days)
    if params.knowledge == .none {
      let s = planner.bestFixedSchedule(budget: budget, total: totalBudget)
      (plannedOpens, wakeTimes, plannedEnergyJ, plannedTotalAgeS, isExact) = ([], s.ticks, s.energyJ, s.totalAgeS, false)
      fixedSchedule = (s.period, s.phase)
      return
    }
    var chosen: [Int]
    switch (budget, params.knowledge) {
    case (.fetchesPerDay, .opensAndContent):
      // More fetches than candidates is the same as unlimited.
      let n = Int(min(totalBudget, Double(planner.candidates.count)))
      (chosen, isExact) = planner.selectCount(n, exactWorkLimit: params.exactWorkLimit)
    case (.joulesPerDay, .opensAndContent):
      chosen = planner.selectEnergy(totalBudget)
      isExact = false
    default:
      chosen = planner.selectContentBlind(budget: budget, total: totalBudget, rate: user.world.content.updateRate(app: user.trace.apps[Int(app)]))
      isExact = false
    }
    chosen.sort()
    plannedOpens = chosen.map { planner.opens[planner.candidates[$0].open] }
    plannedTotalAgeS = planner.totalAge(chosen: chosen)
    plannedEnergyJ = chosen.reduce(0) { $0 + planner.candidates[$1].energyJ }
    wakeTimes = chosen.map { planner.candidates[$0].wake }
    fixedSchedule = nil
  }

  package mutating func start(_ ctx: inout PolicyContext) { arm(&ctx) }

  mutating func arm(_ ctx: inout PolicyContext) {
    if next < wakeTimes.count { ctx.setTimer(at: wakeTimes[next]) } else { ctx.cancelTimer() }
  }

  package mutating func timerFired(_ ctx: inout PolicyContext) {
    if fixedSchedule != nil {
      // A timer: a fetch at each tick, whatever the device is doing.
      if next < wakeTimes.count { ctx.requestFetch() }
      next += 1
      arm(&ctx)
      return
    }
    guard next < plannedOpens.count else { return }
    // The engine times the start so that the fetch completes exactly at the
    // open (or at the latest feasible moment before it).
    ctx.requestFetch(completingBy: plannedOpens[next])
    next += 1
  }

  package mutating func fetchFinished(_ outcome: FetchOutcome, _ ctx: inout PolicyContext) {
    arm(&ctx)
  }
}

/// The candidates and selection algorithms of ``OracleBudgetPolicy``.
struct OracleBudgetPlanner {
  /// One possible fetch: completing at (or just before) open `open`.
  struct Candidate {
    var open: Int
    var start: Double
    var end: Double
    /// Content version it brings (number of updates at or before `end`).
    var version: Int
    /// Estimated battery energy (CPU, marginal radio given the background;
    /// 0 when it starts on the charger), J.
    var energyJ: Double
    /// When the policy's timer should fire for it.
    var wake: Double
  }

  let user: PreparedUser
  /// The radios, the exchange and the CPU a launch is priced on.
  let launch: LaunchPricing
  let content: ContentTimeline
  let updates: [Double]
  let refresh: Bool
  /// Open times of the app, Unix s.
  let opens: [Double]
  /// Prefix sums of open times relative to the window start.
  let prefix: [Double]
  let origin: Double
  /// Candidates in time order (at most one per open).
  var candidates: [Candidate] = []

  /// - Parameter knowsContent: whether the candidates skip opens before the
  ///   first update (a content-blind oracle cannot tell them apart).
  init(user: PreparedUser, app: Int32, content: ContentTimeline, knowsContent: Bool = true) {
    self.user = user
    launch = LaunchPricing(user.world)
    self.content = content
    updates = content.updates
    refresh = user.world.refreshesAtOpen
    opens = user.trace.events.filter { $0.kind == .open && $0.app == app }.map(\.time)
    origin = user.trace.start
    var p = [0.0]
    p.reserveCapacity(opens.count + 1)
    for t in opens { p.append(p[p.count - 1] + (t - origin)) }
    prefix = p
    for k in opens.indices {
      let notBefore = k == 0 ? user.trace.start : opens[k - 1]
      guard let (s, c) = latestCompletion(by: opens[k], notBefore: notBefore) else { continue }
      let v = serverVersion(at: c)
      guard v > 0 || !knowsContent else { continue }
      candidates.append(Candidate(
        open: k, start: s, end: c, version: v,
        energyJ: budgetEnergy(start: s, end: c, version: v),
        wake: max(notBefore, s - 1)))
    }
  }

  // MARK: Timing and energy (mirrors the engine, with background-only radio state)

  /// Number of updates at or before `t`.
  func serverVersion(at t: Double) -> Int { content.version(at: t) }

  /// Seconds interface `k` has been quiet at `t` by the background activity
  /// alone (0 while busy, ∞ if never used). At least the engine's gap, which
  /// also counts the policy's own fetches.
  func backgroundQuietGap(_ k: Int, at t: Double) -> Double {
    let b = user.busy[k]
    let i = user.firstBusy(k, endingAtOrAfter: t)
    if i < b.count && b[i].start <= t { return 0 }
    return i > 0 ? t - b[i - 1].end : .infinity
  }

  func responseBytes(version v: Int) -> Double {
    v > 0 ? content.newDataBytes(version: v) : launch.fetch.noDataBytes
  }

  /// The latest start from which a NewData fetch on `net` finishes by `t`.
  /// The promotion comes from the background-only gap, so it is at least the
  /// engine's and this start at most the engine's.
  func startToComplete(by t: Double, on net: NetworkKind) -> Double? {
    guard let k = PreparedUser.interface(net), let radio = launch.radios.radio(for: net) else { return nil }
    let x = radio.transferTime(downBytes: responseBytes(version: serverVersion(at: t)), upBytes: launch.fetch.requestBytes)
    let base = x.up + launch.fetch.serverLatencyS + x.down
    let p0 = radio.promotion(afterGap: backgroundQuietGap(k, at: t - base)).timeS
    var s = t - base - p0
    let p1 = radio.promotion(afterGap: backgroundQuietGap(k, at: s)).timeS
    if p1 > p0 { s = t - base - p1 }
    // Inside a background activity's promotion the fetch would wait for
    // it and end too late: start before that activity, promoting itself.
    let b = user.busy[k]
    let i = user.firstBusy(k, endingAtOrAfter: s)
    if i < b.count && b[i].start <= s {
      let gap = i > 0 ? b[i].start - b[i - 1].end : .infinity
      let connected = b[i].start + radio.promotion(afterGap: gap).timeS
      if s < connected && connected > t - base {
        let before = b[i].start.nextDown
        s = min(before, t - base - radio.promotion(afterGap: backgroundQuietGap(k, at: before)).timeS)
      }
    }
    return s
  }

  /// The latest (start, end) with end ≤ `t` and start ≥ `notBefore` at which
  /// a fetch runs whole inside one online network segment (the engine's
  /// `latestCompletion`).
  func latestCompletion(by t: Double, notBefore: Double) -> (Double, Double)? {
    var d = t
    while d > notBefore {
      var i = user.networkIndex(at: d)
      if i > 0 && user.netTimes[i] == d { i -= 1 }
      let segStart = user.netTimes[i]
      if let s = startToComplete(by: d, on: user.netKinds[i]), s >= max(segStart, notBefore) { return (s, d) }
      guard i > 0 else { return nil }
      d = segStart
    }
    return nil
  }

  /// What a fetch over [s, e] bringing `version` costs the budget, J: its
  /// ``energy(start:end:version:)``, or nothing when it starts on the
  /// charger (the budget is the battery's).
  func budgetEnergy(start s: Double, end e: Double, version v: Int) -> Double {
    user.isCharging(at: s) ? 0 : energy(start: s, end: e, version: v)
  }

  /// Energy of a fetch over [s, e] bringing `version`, given the background
  /// radio activity only: CPU + E(busy ∪ {f}) − E(busy) + throughput term.
  func energy(start s: Double, end e: Double, version v: Int) -> Double {
    let net = user.network(at: s)
    guard let k = PreparedUser.interface(net), let profile = launch.radios.radio(for: net) else { return launch.device.cpuWakeEnergyJ }
    return profile.withModel { radio in
      let d = radio.terms.lookAroundS
      let first = user.firstBusy(k, endingAtOrAfter: s - d)
      let marginal = user.busy[k].withUnsafeBufferPointer { b in
        radio.marginalEnergy(
          of: BusyInterval(start: s, end: e), background: b, from: first, own: UnsafeBufferPointer(start: nil, count: 0),
          from: 0, lo: s - d, hi: e + d)
      }
      let x = radio.transferTime(downBytes: responseBytes(version: v), upBytes: launch.fetch.requestBytes)
      return launch.device.cpuWakeEnergyJ + launch.device.cpuActivePowerW * (e - s) + marginal + radio.throughputEnergy(downS: x.down, upS: x.up)
    }
  }

  // MARK: Ages

  /// Age at open `m` when the device holds content version `v`, s.
  func age(open m: Int, version v: Int) -> Double {
    v < updates.count && updates[v] <= opens[m] ? opens[m] - updates[v] : 0
  }

  /// Index of the first open at or after index `a` whose time is ≥ `u`.
  func firstOpen(from a: Int, atOrAfter u: Double) -> Int {
    firstIndex(in: a..<max(a, opens.count)) { opens[$0] >= u }
  }

  /// Σ of the ages at opens [a, b) holding version `v`, s; O(log n).
  func ageSum(version v: Int, from a: Int, to b: Int) -> Double {
    guard a < b, v < updates.count else { return 0 }
    let u = updates[v]
    let q = firstOpen(from: a, atOrAfter: u)
    guard q < b else { return 0 }
    return (prefix[b] - prefix[q]) - Double(b - q) * (u - origin)
  }

  /// Version on the device before open `m` with no background fetch for it.
  func baseVersion(open m: Int) -> Int {
    m == 0 ? 0 : serverVersion(at: opens[m - 1])
  }

  /// Age reduction of candidate `j` with refresh on (independent of others).
  func independentGain(_ j: Int) -> Double {
    let c = candidates[j]
    let v0 = baseVersion(open: c.open)
    return age(open: c.open, version: v0) - age(open: c.open, version: max(v0, c.version))
  }

  /// Total age at all opens for the chosen candidates (indices, any order), s.
  func totalAge(chosen: [Int]) -> Double {
    var fetchedFor = [Int](repeating: -1, count: opens.count)
    for j in chosen { fetchedFor[candidates[j].open] = candidates[j].version }
    var total = 0.0
    var held = 0
    for m in opens.indices {
      if refresh { held = baseVersion(open: m) }
      if fetchedFor[m] >= 0 { held = max(held, fetchedFor[m]) }
      total += age(open: m, version: held)
    }
    return total
  }

  // MARK: Selection

  /// The best ≤ `budget` candidates for total age; whether provably optimal.
  func selectCount(_ budget: Int, exactWorkLimit: Double) -> ([Int], Bool) {
    guard budget > 0 else { return ([], true) }
    if refresh {
      let gains: [Double] = candidates.indices.map(independentGain)
      let ranked: [Int] = candidates.indices.filter { gains[$0] > 0 }
        .sorted { gains[$0] > gains[$1] || (gains[$0] == gains[$1] && $0 < $1) }
      return (Array(ranked.prefix(budget)), true)
    }
    // Without refresh a candidate that brings no newer version than the
    // previous one is dominated by it (same content, earlier).
    var kept: [Int] = []
    for j in candidates.indices where kept.isEmpty || candidates[j].version > candidates[kept.last!].version {
      kept.append(j)
    }
    if budget >= kept.count { return (kept, true) }
    let m = Double(kept.count)
    if Double(budget) * m * m <= exactWorkLimit { return (dynamicProgram(kept, budget: budget), true) }
    return (greedy(costs: [Double](repeating: 1, count: candidates.count), budget: Double(budget)), false)
  }

  /// Candidates within `budget` J by the benefit/cost greedy.
  func selectEnergy(_ budget: Double) -> [Int] {
    // A candidate on the charger costs 0 J: any budget, 0 included, buys it
    // (its gain per joule is +∞, so it comes first).
    let costs = candidates.map(\.energyJ)
    if !refresh { return greedy(costs: costs, budget: budget) }
    let gains = candidates.indices.map(independentGain)
    let order = candidates.indices.filter { gains[$0] > 0 }.sorted {
      let a = gains[$0] / costs[$0], b = gains[$1] / costs[$1]
      return a > b || (a == b && $0 < $1)
    }
    var chosen: [Int] = []
    var left = budget, total = 0.0
    for j in order where costs[j] <= left {
      chosen.append(j)
      left -= costs[j]
      total += gains[j]
    }
    // The best single fetch that fits (the ½-approximation's other half).
    if let best = order.filter({ costs[$0] <= budget }).max(by: { gains[$0] < gains[$1] || (gains[$0] == gains[$1] && $0 > $1) }),
      gains[best] > total
    {
      return [best]
    }
    return chosen
  }

  /// Repeatedly adds the candidate with the largest age reduction per unit
  /// cost given those already chosen (refresh off: a fetch helps every open
  /// up to the next chosen fetch), while it fits in `budget`.
  ///
  /// - Complexity: O(k · m log n) for k picks among m candidates.
  func greedy(costs: [Double], budget: Double) -> [Int] {
    let m = candidates.count
    var chosen = [Bool](repeating: false, count: m)
    var left = budget
    var nextChosen = [Int](repeating: m, count: m)
    while true {
      var nx = m
      for j in stride(from: m - 1, through: 0, by: -1) {
        nextChosen[j] = nx
        if chosen[j] { nx = j }
      }
      var best = -1
      var bestRatio = 0.0
      var prevVersion = 0
      for j in 0..<m {
        if chosen[j] {
          prevVersion = candidates[j].version
          continue
        }
        guard costs[j] <= left else { continue }
        let c = candidates[j]
        let end = nextChosen[j] < m ? candidates[nextChosen[j]].open : opens.count
        let gain: Double
        if refresh {
          gain = independentGain(j)
        } else {
          gain = ageSum(version: prevVersion, from: c.open, to: end)
            - ageSum(version: max(prevVersion, c.version), from: c.open, to: end)
        }
        let ratio = gain / costs[j]
        if gain > 0 && ratio > bestRatio {
          best = j
          bestRatio = ratio
        }
      }
      guard best >= 0 else { break }
      chosen[best] = true
      left -= costs[best]
    }
    return chosen.indices.filter { chosen[$0] }
  }

  /// The exact optimum for at most `budget` fetches among `kept`
  /// (strictly increasing versions), refresh off:
  ///
  ///     A_1(j) = S(0; 0, o_j),  A_b(j) = min_{i<j} A_{b−1}(i) + S(W_i; o_i, o_j)
  ///     best   = min(S(0; 0, n), min_{b,j} A_b(j) + S(W_j; o_j, n))
  ///
  /// where S(W; a, b) is the total age at opens [a, b) holding version W.
  ///
  /// - Complexity: O(budget · m²) time, O(budget · m) space.
  func dynamicProgram(_ kept: [Int], budget: Int) -> [Int] {
    let m = kept.count
    let n = opens.count
    let o: [Int] = kept.map { candidates[$0].open }
    let ver: [Int] = kept.map { candidates[$0].version }
    // S(W_i; o_i, x) = (P[x] − P[q_i]) − (x − q_i)·U_i for x > q_i.
    var u = [Double](repeating: .infinity, count: m)
    var q = [Int](repeating: n, count: m)
    for i in 0..<m where ver[i] < updates.count {
      u[i] = updates[ver[i]] - origin
      q[i] = firstOpen(from: o[i], atOrAfter: updates[ver[i]])
    }
    func seg(_ i: Int, _ x: Int) -> Double {
      x > q[i] ? (prefix[x] - prefix[q[i]]) - Double(x - q[i]) * u[i] : 0
    }
    var bestTotal = ageSum(version: 0, from: 0, to: n)
    var bestB = 0, bestJ = -1
    var a = (0..<m).map { ageSum(version: 0, from: 0, to: o[$0]) }
    var arg = [[Int32]](repeating: [], count: budget + 1)
    for b in 1...budget {
      if b > 1 {
        var next = [Double](repeating: .infinity, count: m)
        var from = [Int32](repeating: -1, count: m)
        for j in 0..<m {
          for i in 0..<j where a[i] < .infinity {
            let v = a[i] + seg(i, o[j])
            if v < next[j] {
              next[j] = v
              from[j] = Int32(i)
            }
          }
        }
        a = next
        arg[b] = from
      }
      for j in 0..<m where a[j] < .infinity {
        let total = a[j] + seg(j, n)
        if total < bestTotal - 1e-9 {
          bestTotal = total
          bestB = b
          bestJ = j
        }
      }
    }
    var out: [Int] = []
    var b = bestB, j = bestJ
    while b >= 1 && j >= 0 {
      out.append(kept[j])
      j = b > 1 ? Int(arg[b][j]) : -1
      b -= 1
    }
    return out.reversed()
  }
}

/// `oracle-budget:<N>` / `oracle-budget:<X>J`: the best schedule under a
/// budget, given the future.
package enum OracleBudgetFamily: PolicyFamily {
  package struct Configuration: Sendable, Hashable {
    package var budget: OracleBudgetLimit
    package var parameters: OracleBudgetParameters
  }

  package static let info = FamilyInfo(
    "oracle-budget", .other(":<N per day>|<X>J[,know=opens+content|opens|none]"),
    example: "oracle-budget:4", style: PolicyStyle(color: "#999933", marker: .triangleDown),
    summary:
      "the best schedule with N fetches or X J of battery energy a day (charger energy free) given the future (exact for counts, greedy by benefit per joule for energy); know= says how much of the future: the opens and the content updates (the default), the opens only, or neither (the best fixed timer in hindsight)")

  /// `know=opens+content|opens|none`, among the table's settings.
  static let know = ChoiceSetting(
    name: "know", path: \OracleBudgetParameters.knowledge,
    help: "what it knows of the future: opens+content (when the app is opened and when its content changes), opens (the opens only: content-blind, the content model's rate), none (a timer: the best fixed period and phase in hindsight)")

  package static var settings: [PolicySettingInfo] { [know.info] + OracleBudgetParameters.settingInfos }

  package static func parse(_ argument: String?, spec: String) throws -> Configuration {
    guard let a = argument else { throw PolicySpecError(.missingArgument, "policy 'oracle-budget' needs an argument, e.g. oracle-budget:4") }
    let (budget, rest) = splitArgumentAndSettings(a)
    guard let b = OracleBudgetLimit(argument: budget) else {
      throw PolicySpecError(
        .badValue,
        "policy '\(spec)': bad budget '\(budget)' (fetches per day up to 86400, e.g. oracle-budget:4, or joules per day, e.g. oracle-budget:50J)"
      )
    }
    let p = try know.parse(rest, policy: spec)
    return Configuration(budget: b, parameters: p)
  }

  package static func describe(_ c: Configuration) -> String {
    let k = c.parameters.knowledge
    return "oracle-budget:\(c.budget)" + (k == .opensAndContent ? "" : ",know=\(k.rawValue)")
      + c.parameters.settingsSuffix(separator: ",")
  }
  package static func fetchSpacingBound(_ c: Configuration) -> Double? { nil }
  package static func makePolicies(_ c: Configuration, _ device: DeviceReplayInput) -> (Int32, ContentTimeline) -> OracleBudgetPolicy {
    { OracleBudgetPolicy(budget: c.budget, user: device.user, app: $0, content: $1, params: c.parameters) }
  }

}
