import FetchModels
import FetchTraces
import FetchWorld
import Foundation

/// Knobs of the planning scheduler (`planner[:budget=<J/day>,key=value,...]`).
///
/// The value weights and the price controller have no published values
/// (IMP, FALCON and PALOMA publish the form of the
/// utility, not these numbers; NV); the defaults were fixed before the
/// evaluation in `docs/planner.md` and are the same for every dataset.
package struct PlannerParameters: Sendable, Hashable {
  /// Energy budget of the app, J per budget day (CPU and marginal radio,
  /// including energy drawn while charging, as the results report it; the
  /// day starts at ``dayStartHour``), released through the day in step with
  /// the user's opens of the app by hour (weighted by the time since the
  /// previous open with ``paceByGap``), ``paceSlack`` of it up front.
  package var budgetJPerDay = 10.0
  /// Look-ahead horizon of the plan, s.
  package var horizonS = 7200.0
  /// Width of the look-ahead bins (and spacing of the candidate fetch
  /// times), s.
  package var stepS = 300.0
  /// Seconds between the periodic decision points.
  package var checkIntervalS = 300.0
  /// Least time between two launches of the app, s (1 min: a fetch at
  /// another app's open just before this app's may follow a periodic one).
  package var minSpacingS = 60.0
  /// Value of one more fresh open (dimensionless unit of the utility).
  package var freshWeight = 1.0
  /// Value of one hour of age avoided at an open, per hour.
  package var ageWeightPerHour = 1.0
  /// Initial price of a joule, utility per J (the controller adapts it).
  package var initialPrice = 0.05
  /// Integral gain of the price controller, per local day.
  package var gain = 0.5
  /// Proportional gain of the price controller.
  package var damping = 3.0
  /// The price stays within [initial / range, initial · range].
  package var priceRange = 1000.0
  /// Launches per budget day (paced like the energy budget).
  package var launchesPerDay = 288.0
  /// Share of the daily budgets released up front.
  package var paceSlack = 0.2
  /// Local hour at which the budget day starts, 0–23; negative: the hour
  /// with the fewest of the user's opens of the app in training
  /// (``PlannerPolicy/quietHour(_:)``), so that a night's and the next
  /// morning's fetches draw on one day's budget.
  package var dayStartHour = -1.0
  /// 1: release the budget in step with the user's opens weighted by the
  /// time since the app's previous open (``PlannerPolicy/gapPacing(_:app:)``),
  /// so that the first open of a morning, which would see the night's age,
  /// releases the energy of the fetch it needs; 0: with the count of opens
  /// (``MinimumPolicy/pacing(training:app:)``).
  package var paceByGap = 1.0
  /// Cost multiplier while charging.
  package var chargingCostFactor = 0.1
  /// Battery %, below which nothing runs unless charging (the OS gate).
  package var lowBatteryPct = 20.0
  /// Within this many points above the gate (and not charging), later
  /// candidates count only if the phone is likely to be plugged in by then.
  package var gateMarginPct = 3.0
  /// Whether the plan uses the device models (WiFi, charging, offline) fitted
  /// on the training window: 1 on, 0 off (then it assumes the current
  /// network and charging state persist).
  package var useDeviceModels = 1.0
  /// Whether an open is credited to a fetch only with the probability that
  /// no other radio activity of the user (a cheaper, later chance) falls
  /// between them: 1 on, 0 off.
  package var sessionCredit = 1.0
  /// Window of the app-transition model, s (0: off): at another app's open
  /// the chance that this app is opened within the window is the training
  /// share for that other app (shrunk toward the user's share over all
  /// other apps), replacing the habit model's mass in the window.
  package var pairWindowS = 600.0
  /// Whether the plan may fetch now *and* at the better later candidate
  /// (when the fetch now pays for itself with the opens before it): 1
  /// always, 2 only while the budget is slack (the fetch now leaves the
  /// up-front share `paceSlack` of the day's budget unspent in the released
  /// part), 0 never (now or later, the choice that caps spending when the
  /// budget is large).
  package var planBoth = 2.0
  /// Local hour of the nightly habit-model refit (24 or more: never).
  package var refitHour = 3.0
  /// Prior of the content-update rate, per hour (Gamma mean).
  package var priorUpdatesPerHour = 1.0

  package init() {}

  /// Names accepted in `planner:key=value`.
  static let keys: [SettingKey<PlannerParameters>] = [
    .init("budget", \.budgetJPerDay, help: "energy budget of the app, J per budget day (from day_start; paced by the user's opens by hour)"),
    .init("horizon", \.horizonS, min: 300, max: SettingBound.horizon, duration: true, help: "look-ahead horizon of the plan"),
    .init("step", \.stepS, min: 60, max: SettingBound.period, duration: true, help: "width of the look-ahead bins and spacing of the candidate fetch times"),
    .init("check", \.checkIntervalS, min: 60, max: SettingBound.period, duration: true, help: "time between the periodic decision points"),
    .init("spacing", \.minSpacingS, duration: true, help: "least time between two launches of the app"),
    .init("fresh_weight", \.freshWeight, help: "utility of one more fresh open"),
    .init("age_weight", \.ageWeightPerHour, help: "utility of one hour of age avoided at an open"),
    .init("price", \.initialPrice, min: 1e-9, help: "initial price of a joule, utility per J (adapted to the budget)"),
    .init("gain", \.gain, help: "integral gain of the price controller, per local day"),
    .init("damping", \.damping, help: "proportional gain of the price controller"),
    .init("price_range", \.priceRange, min: 1, help: "the price stays within [initial / range, initial × range]"),
    .init("launches", \.launchesPerDay, max: SettingBound.count, help: "launches per budget day (paced like the energy budget)"),
    .init("pace_slack", \.paceSlack, help: "share of the daily budgets released up front"),
    .init("pace_by_gap", \.paceByGap, max: 1, help: "1: release the budget with the opens weighted by the time since the app's previous open; 0: by the count of opens"),
    .init("day_start", \.dayStartHour, min: -1, max: 23, help: "local hour at which the budget day starts (-1: the hour with the fewest of the user's opens of the app)"),
    .init("charging_cost", \.chargingCostFactor, help: "cost multiplier while charging"),
    .init("low_battery_pct", \.lowBatteryPct, max: SettingBound.percent, help: "battery %, below which nothing runs unless charging"),
    .init("gate_margin_pct", \.gateMarginPct, max: SettingBound.percent, help: "battery points above the gate within which later candidates need the charger"),
    .init("device_models", \.useDeviceModels, max: 1, help: "1: weigh WiFi, charging and offline odds from the device models; 0: assume the state persists"),
    .init("session_credit", \.sessionCredit, max: 1, help: "1: credit an open to a fetch only if no other radio activity of the user is expected between them; 0: always"),
    .init("pair_window", \.pairWindowS, max: SettingBound.horizon, duration: true, help: "window of the app-transition model (0s: off): P(this app within it \\| another app just opened), from training"),
    .init("plan_both", \.planBoth, max: 2, help: "fetch now as well as at a better later moment when the opens before it pay for the fetch now: 1 always, 2 while the budget is slack (the paced budget less its up-front share not yet spent), 0 never (now or later)"),
    .init("refit_hour", \.refitHour, max: 24, help: "local hour of the nightly habit-model refit (24: never)"),
    .init("prior_updates_per_hour", \.priorUpdatesPerHour, min: 1e-6, help: "prior of the content-update rate, per hour (Gamma mean)"),
  ]
}

/// Why the planner did or did not launch the app at a decision point.
package enum PlannerFactor: String, Sendable, CaseIterable {
  case offline = "offline"
  case lowBattery = "low_battery"
  case rateLimit = "rate_limit"
  case energyBudget = "energy_budget"
  case launchBudget = "launch_budget"
  case notWorthIt = "utility_below_price"
  case deferred = "cheaper_later"
  case launched = "launched"
}

/// One decision of the planner (for tests and `fetchlab predict`).
package struct PlannerDecision: Sendable, Equatable {
  package var time: Double
  package var launched: Bool
  /// Expected utility of fetching now (fresh opens and age-hours gained
  /// at the predicted opens of the horizon).
  package var valueNow: Double
  /// Estimated marginal energy of fetching now, J.
  package var costNowJ: Double
  /// The price of a joule at this decision, utility per J.
  package var price: Double
  /// The best later candidate: its delay (s, 0 if none beats now), its
  /// expected utility and expected energy, J.
  package var bestLaterDelayS: Double
  package var bestLaterValue: Double
  package var bestLaterCostJ: Double
  /// The device models' odds used for the later candidates (nil: unknown).
  package var pWiFi: Double?
  package var pPlugged: Double?
  package var factor: PlannerFactor
}

/// The plan's arithmetic, free of the replay (so tests can check it by hand).
package enum PlannerMath {
  /// Utility of showing content synced `dt` seconds before an open, for a
  /// content-update rate `lambda` per second: `fresh · e^(−λ·dt) −
  /// age/h · E[age]/3600`, with E[age] = dt − (1 − e^(−λ·dt))/λ (the
  /// expected time since the first update after the sync; Cho and
  /// Garcia-Molina's age under Poisson updates).
  package static func utility(sinceSync dt: Double, lambda: Double, fresh: Double, agePerHour: Double) -> Double {
    let x = max(0, dt)
    let pf = exp(-lambda * x)
    let age = max(0, x - (-expm1(-lambda * x)) / lambda)
    return fresh * pf - agePerHour * age / 3600
  }

  /// Expected utility gained by fetching at the start of each candidate bin
  /// `k` (delay `k · step`): `Σ_{j≥k} p[j] · (U((j − k + ½)·step) −
  /// base[j])`, where `p[j]` is the probability that the next open falls in
  /// bin j and `base[j]` the utility at bin j's midpoint without a fetch.
  /// Opens before the candidate gain nothing from it (conservative).
  ///
  /// With `activity` (the expected number of the user's other radio
  /// activities, other apps' opens and wakes, in each bin), the gain at
  /// bin j is credited to the candidate at k only with the probability
  /// `e^(−A)` that none falls between them (A: the expected count from the
  /// candidate to bin j's midpoint): such a moment is a cheaper and later
  /// chance to fetch for that open, so the open is not this fetch's to serve.
  ///
  /// - Complexity: O(K²) for K bins.
  package static func candidateValues(
    openProbability p: [Double], baseline base: [Double], step: Double, lambda: Double, fresh: Double,
    agePerHour: Double, activity: [Double]? = nil
  ) -> [Double] {
    let after = utilitiesAfter(bins: p.count, step: step, lambda: lambda, fresh: fresh, agePerHour: agePerHour)
    return candidateValues(openProbability: p, baseline: base, after: after, activity: ActivityTerms(activity, bins: p.count))
  }

  /// U((d + ½)·step) for d in 0..<`bins`: the utility at each bin's
  /// midpoint after a fetch at the start of the first (the `after` of
  /// ``candidateValues(openProbability:baseline:after:activity:)``); it
  /// depends on the update rate only, so the planner keeps it between
  /// fetches.
  ///
  /// - Complexity: O(bins).
  static func utilitiesAfter(bins K: Int, step: Double, lambda: Double, fresh: Double, agePerHour: Double) -> [Double] {
    var after = [Double](repeating: 0, count: K)
    for d in 0..<K {
      after[d] = utility(sinceSync: (Double(d) + 0.5) * step, lambda: lambda, fresh: fresh, agePerHour: agePerHour)
    }
    return after
  }

  /// ``candidateValues(openProbability:baseline:step:lambda:fresh:agePerHour:activity:)``
  /// from its parts: the utilities `after` a fetch
  /// (``utilitiesAfter(bins:step:lambda:fresh:agePerHour:)``) and the
  /// activity's credit factors; the same bits.
  ///
  /// - Complexity: O(K²) for K bins.
  static func candidateValues(
    openProbability p: [Double], baseline base: [Double], after: [Double], activity terms: ActivityTerms
  ) -> [Double] {
    var v = [Double](repeating: 0, count: p.count)
    candidateValues(&v, candidates: 0..<p.count, openProbability: p, baseline: base, after: after, activity: terms)
    return v
  }

  /// Fills `v[k]` for the candidates `ks` as
  /// ``candidateValues(openProbability:baseline:after:activity:)`` does (the
  /// same bits), so that a decision can stop after candidate 0.
  ///
  /// - Complexity: O(K) per candidate.
  static func candidateValues(
    _ v: inout [Double], candidates ks: Range<Int>, openProbability p: [Double], baseline base: [Double],
    after: [Double], activity terms: ActivityTerms
  ) {
    let K = p.count
    p.withUnsafeBufferPointer { p in
      base.withUnsafeBufferPointer { base in
        after.withUnsafeBufferPointer { after in
          terms.toMid.withUnsafeBufferPointer { toMid in
            for k in ks {
              var s = 0.0
              for j in k..<K { s += p[j] * (after[j - k] - base[j]) * toMid[j] }
              v[k] = s * terms.fromEdge[k]
            }
          }
        }
      }
    }
  }

  /// The part of candidate 0's value (``candidateValues(openProbability:baseline:step:lambda:fresh:agePerHour:activity:)``)
  /// from the opens before each candidate: `before[k] = Σ_{j<k} (candidate 0's term j)`,
  /// what a fetch now adds when another follows at candidate k.
  ///
  /// - Complexity: O(K).
  package static func nowValueBefore(
    openProbability p: [Double], baseline base: [Double], step: Double, lambda: Double, fresh: Double,
    agePerHour: Double, activity: [Double]? = nil
  ) -> [Double] {
    let after = utilitiesAfter(bins: p.count, step: step, lambda: lambda, fresh: fresh, agePerHour: agePerHour)
    return nowValueBefore(openProbability: p, baseline: base, after: after, activity: ActivityTerms(activity, bins: p.count))
  }

  /// ``nowValueBefore(openProbability:baseline:step:lambda:fresh:agePerHour:activity:)``
  /// from its parts (as ``candidateValues(openProbability:baseline:after:activity:)``);
  /// the same bits.
  ///
  /// - Complexity: O(K).
  static func nowValueBefore(
    openProbability p: [Double], baseline base: [Double], after: [Double], activity terms: ActivityTerms
  ) -> [Double] {
    var before = [Double](repeating: 0, count: p.count)
    var acc = 0.0
    for j in 0..<p.count {
      before[j] = acc
      acc += p[j] * (after[j] - base[j]) * terms.credit[j]
    }
    return before
  }

  /// Probability of the next open in each bin from per-bin intensities
  /// (opens per second): `p[j] = S_j (1 − e^(−ρ_j·step))`, `S_{j+1} = S_j e^(−ρ_j·step)`.
  ///
  /// - Complexity: O(K).
  package static func nextOpenProbabilities(intensities rho: [Double], step: Double) -> [Double] {
    nextOpenProbabilities(survivals: rho.map { exp(-max(0, $0) * step) })
  }

  /// ``nextOpenProbabilities(intensities:step:)`` from each bin's survival
  /// `q_j = e^(−max(0, ρ_j)·step)`: the same bits.
  ///
  /// - Complexity: O(K).
  static func nextOpenProbabilities(survivals: [Double]) -> [Double] {
    var s = 1.0
    return survivals.map { q in
      defer { s *= q }
      return s * (1 - q)
    }
  }

  /// Rescales a next-open distribution so that the mass of the bins whose
  /// midpoints fall within the first `w` seconds is `q` (the rest keeps its
  /// shape, scaled to the remaining mass of the original).
  ///
  /// - Complexity: O(K).
  package static func condition(_ p: inout [Double], firstSeconds w: Double, step: Double, on q: Double) {
    let n = min(p.count, max(1, Int((w / step).rounded(.up))))
    let inside = p[..<n].reduce(0, +)
    let total = p.reduce(0, +)
    let outside = total - inside
    let a = inside > 0 ? q / inside : 0
    let b = outside > 0 ? max(0, min(total, 1) - q) / outside : 0
    for j in 0..<p.count { p[j] *= j < n ? a : b }
    if inside <= 0 && n > 0 { for j in 0..<n { p[j] = q / Double(n) } }
  }

  /// The odds of a state `u` seconds ahead, ramping linearly from `now`
  /// (0 or 1: the current state) to the model's answer `atHorizon` at the
  /// model's horizon `h`, then holding it.
  package static func ramp(now: Double, atHorizon: Double, after u: Double, horizon h: Double) -> Double {
    let w = min(1, max(0, u / h))
    return now + (atHorizon - now) * w
  }
}

/// The factors of the plan that depend only on the user's expected other
/// radio activity in each look-ahead bin (``PlannerMath``'s `activity`):
/// with `edge_k` the cumulative activity before bin k,
///
///     fromEdge[k] = e^(min(edge_k, 600)),   toMid[j] = e^(−min(edge_j + a_j/2, 1200)),
///     credit[j]   = e^(−(edge_j + a_j/2)),  busy[k]  = 1 − e^(−edge_k).
///
/// Without activity (nil) every factor is 1 and `busy` 0. The activity
/// bins repeat from one decision to the next (they follow the local hour),
/// so ``PlannerPolicy`` keeps these by bins instead of taking 4 exponentials
/// per bin at every decision.
struct ActivityTerms {
  let fromEdge: [Double]
  let toMid: [Double]
  let credit: [Double]
  let busy: [Double]

  /// - Complexity: O(bins): four exponentials per bin.
  init(_ activity: [Double]?, bins K: Int) {
    var fromEdge = [Double](repeating: 1, count: K)
    var toMid = [Double](repeating: 1, count: K)
    var credit = [Double](repeating: 1, count: K)
    var busy = [Double](repeating: 0, count: K)
    if let a = activity {
      var edge = 0.0
      for j in 0..<K {
        busy[j] = -expm1(-edge)
        fromEdge[j] = exp(min(edge, 600))
        toMid[j] = exp(-min(edge + a[j] / 2, 1200))
        credit[j] = exp(-(edge + a[j] / 2))
        edge += a[j]
      }
    }
    self.fromEdge = fromEdge
    self.toMid = toMid
    self.credit = credit
    self.busy = busy
  }
}

/// ``PlannerMath/utility(sinceSync:lambda:fresh:agePerHour:)`` remembered
/// by the bits of its arguments: a decision's baselines at `since + mid`
/// are, but for one, the baselines of the check a step before (the same
/// sums of multiples of 2⁻²² s, hence the same bits; see
/// ``HabitOpenMemo``). Direct-mapped, one slot per `quantum` seconds of
/// `sinceSync`.
struct UtilityMemo {
  private let mask: Int
  private let quantum: Double
  /// The rate and weights (bits) the values are for.
  private var parameters: (lambda: UInt64, fresh: UInt64, age: UInt64) = (0, 0, 0)
  /// Two-way sets: keys (the bits of `sinceSync`), values (NaN: empty),
  /// and per set whether way 1 was used last.
  private var keys: [UInt64]
  private var values: [Double]
  private var recent: [Bool]

  /// A memo of about 2 × `slots` values (`slots` rounded up to a power of
  /// two, at least 2), in two-way sets as ``HabitOpenMemo``'s.
  init(slots: Int, quantum: Double) {
    var n = 2
    while n < slots { n *= 2 }
    mask = n - 1
    self.quantum = quantum > 0 && quantum.isFinite ? quantum : 1
    keys = Array(repeating: 0, count: 2 * n)
    values = Array(repeating: .nan, count: 2 * n)
    recent = Array(repeating: false, count: n)
  }

  /// `PlannerMath.utility(sinceSync: x, lambda:, fresh:, agePerHour:)`, the same bits.
  ///
  /// - Complexity: O(1); O(slots) when the rate or the weights changed.
  mutating func utility(sinceSync x: Double, lambda: Double, fresh: Double, agePerHour: Double) -> Double {
    let p = (lambda: lambda.bitPattern, fresh: fresh.bitPattern, age: agePerHour.bitPattern)
    if p != parameters {
      parameters = p
      for k in values.indices { values[k] = .nan }
    }
    let q = (x / quantum).rounded(.down)
    let set = abs(q) < 1e15 ? Int(q) & mask : 0
    let key = x.bitPattern
    let i = 2 * set
    if keys[i] == key && !values[i].isNaN {
      recent[set] = false
      return values[i]
    }
    if keys[i + 1] == key && !values[i + 1].isNaN {
      recent[set] = true
      return values[i + 1]
    }
    let v = PlannerMath.utility(sinceSync: x, lambda: lambda, fresh: fresh, agePerHour: agePerHour)
    let way = recent[set] ? 0 : 1
    keys[i + way] = key
    values[i + way] = v
    recent[set] = way == 1
    return v
  }
}

/// `e^(−max(0, ρ)·step)` remembered by the bits of ρ (direct-mapped, by a
/// hash): the look-ahead intensities repeat from one decision to the next
/// (``HabitOpenMemo``), and so do their survivals.
struct SurvivalMemo {
  private static let slots = 128
  private var keys = [UInt64](repeating: 0, count: slots)
  private var steps = [UInt64](repeating: 0, count: slots)
  private var values = [Double](repeating: .nan, count: slots)

  /// `exp(-max(0, rho) * step)`, the same bits.
  ///
  /// - Complexity: O(1).
  mutating func survival(_ rho: Double, step: Double) -> Double {
    let k = rho.bitPattern
    let slot = Int(truncatingIfNeeded: (k &* 0x9E37_79B9_7F4A_7C15) >> 57)
    if keys[slot] == k && steps[slot] == step.bitPattern && !values[slot].isNaN { return values[slot] }
    let v = exp(-max(0, rho) * step)
    keys[slot] = k
    steps[slot] = step.bitPattern
    values[slot] = v
    return v
  }
}

/// P(the app is opened within a window after another app's open), per
/// other app, learned from the training window: among the other apps'
/// opens at least ``staleAfterS`` after the app's last open (the moments
/// where the app's content is likely stale), the share followed by an open
/// of the app within the window. Each other app's share is shrunk toward
/// the share over all other apps with ``prior`` pseudo-opens.
package struct TransitionModel: Sendable {
  /// Pseudo-opens of the shrinkage toward the user's overall share.
  package static let prior = 5.0
  /// Least time since the app's own last open for an other-app open to count, s.
  package static let staleAfterS = 1800.0
  /// Per other app: (opens counted, followed by the app within the window).
  var counts: [Int32: (n: Double, hits: Double)] = [:]
  var overall = (n: 0.0, hits: 0.0)

  /// Counts on `training` for `app` and the window `w` (s; 0: an empty model).
  ///
  /// - Complexity: O(events).
  package init(_ training: UserTrace, app: Int32, window w: Double) {
    guard w > 0 else { return }
    let opens = training.events.filter { $0.kind == .open }
    let own = opens.filter { $0.app == app }.map(\.time)
    var next = 0
    var lastOwn = -Double.infinity
    for e in opens {
      if e.app == app {
        lastOwn = e.time
        continue
      }
      while next < own.count && own[next] <= e.time { next += 1 }
      guard e.time - lastOwn >= Self.staleAfterS else { continue }
      let hit = next < own.count && own[next] - e.time <= w ? 1.0 : 0
      counts[e.app, default: (0, 0)].n += 1
      counts[e.app, default: (0, 0)].hits += hit
      overall.n += 1
      overall.hits += hit
    }
  }

  /// The shrunk share for `other`; nil when training counted no other-app open.
  package func probability(after other: Int32) -> Double? {
    guard overall.n > 0 else { return nil }
    let base = overall.hits / overall.n
    let c = counts[other] ?? (0, 0)
    return (c.hits + Self.prior * base) / (c.n + Self.prior)
  }
}

/// A scheduler that plans with the learned models: the learned counterpart
/// of the budgeted oracle (``BudgetOraclePolicy``).
///
/// At each decision point (every ``PlannerParameters/checkIntervalS`` and at
/// the opportunities of ``MinimumPolicy``: another app's open, a wake,
/// plugging in, joining WiFi) it looks ahead over the horizon in bins:
///
/// 1. **When will the app be opened?** The habit model (ios-minimum's: the
///    same fit, shrunk toward the population, refitted nightly; kept in a
///    ``MinimumPolicy`` value) gives the intensity in each bin assuming no
///    open before it, hence the distribution of the next open.
/// 2. **What is a fetch worth?** For a fetch at candidate time s and an
///    open at o ≥ s, the gain is U(o − s) − U(o − last sync), with U the
///    expected `fresh · P(fresh) − age weight · E[age]` under the learned
///    update rate (``PlannerMath/utility(sinceSync:lambda:fresh:agePerHour:)``).
/// 3. **What will it cost?** Now: the marginal radio energy from the radio's
///    state (in the user's session or another app's tail a fetch costs
///    little) and the network, scaled while charging. Later: an expectation
///    over WiFi and charging odds from the device models fitted on the
///    training window (``DeviceOutlook``) and over the chance that the user's
///    own activity (other apps' opens and wakes, hourly rates from training)
///    wakes the radio before then; offline odds scale the later value.
/// 4. **Choose.** It launches now when `V(now) − μ·cost(now) > 0` and no
///    later candidate has a larger expected net utility (otherwise it
///    defers: a cheaper moment is likely before the next predicted open),
///    within the paced daily energy and launch budgets. While the budget is
///    slack (``PlannerParameters/planBoth``), it also launches now when the
///    opens before the later candidate alone pay for the fetch now: "now and
///    later" rather than "now or later", so that spending follows the budget.
///
/// μ, the price of a joule, is a PI controller on log μ as IMP's: the base
/// moves once a day by `gain · (spent − budget)/budget`, and the price is the
/// base times `exp(damping · (spent − paced)/budget)` within the day. Only
/// the past and the training window are used.
package struct PlannerPolicy: FetchPolicy {
  package static var observesRadio: Bool { true }

  let params: PlannerParameters
  let world: WorldParameters
  /// `world.radiosByNetwork`, kept (``WorldParameters/radio(for:)`` copies `world` per call).
  let radios: [RadioProfile?]
  /// ios-minimum's habit machinery: the habit model and its nightly refits,
  /// the open history and recency, the update-rate estimate, the last sync
  /// and the pacing of budgets by the user's opens by hour.
  var habit: MinimumPolicy
  /// The device models' view, nil without device rows in training.
  var outlook: DeviceOutlook?
  /// Other apps' opens and wakes per second, by local hour, from training.
  let activityRate: [Double]
  /// The app-transition model from training (see ``TransitionModel``).
  let transitions: TransitionModel
  /// The other app opened at the current instant (for the transition model).
  var otherOpen: (app: Int32, time: Double)?
  var clock: LocalClock
  /// Local hour at which the budget day starts (see
  /// ``PlannerParameters/dayStartHour``).
  let dayStartHour: Double
  /// Cumulative share of the day's budget by the end of each local hour.
  let pace: [Double]
  var day = Int.min
  var spentToday = 0.0
  var launchesToday = 0
  var logBase: Double
  let logBounds: ClosedRange<Double>
  var lastLaunch = -Double.infinity
  /// The baselines U(since + mid) of the last decisions' bins.
  var utilityMemo: UtilityMemo
  /// ``PlannerMath/utilitiesAfter(bins:step:lambda:fresh:agePerHour:)`` at
  /// the update rate (bits) it was computed for.
  var afterCache: (lambda: UInt64, values: [Double]) = (0, [])
  /// ``ActivityTerms`` by the local hours of the look-ahead bins (their
  /// activity is `activityRate[hour] · step`).
  var activityMemo: [HourKey: ActivityTerms] = [:]
  /// Scratch of the decisions: intensities and baselines of the bins.
  var rho: [Double] = []
  var base: [Double] = []
  /// The bins' survivals e^(−ρ·step), and those of the last intensities seen.
  var survivals: [Double] = []
  var survivalMemo = SurvivalMemo()
  /// Whether decisions reuse what the decisions before them computed (the
  /// memos above; off only in tests, which check that it changes nothing).
  var remembers = true
  /// Decisions, when `logDecisions` is on.
  package private(set) var decisions: [PlannerDecision] = []
  package var logDecisions = false

  package init(
    params: PlannerParameters, world: WorldParameters, training: UserTrace, app: Int32, population: HabitModel?,
    fits: HabitFitCache? = nil, deviceModels: DeviceModels? = nil, pacing: TrainingPacing? = nil
  ) {
    var mp = MinimumParameters()
    mp.checkIntervalS = params.checkIntervalS
    mp.refitHour = params.refitHour
    mp.priorUpdatesPerHour = params.priorUpdatesPerHour
    habit = MinimumPolicy(
      params: mp, world: world, training: training, app: app, population: population, fits: fits, pacing: pacing)
    // Room for two decisions' look-ahead points, one slot per step.
    let bins = max(1, Int((params.horizonS / params.stepS).rounded(.down)))
    habit.openMemo = HabitOpenMemo(slots: 2 * bins, quantum: params.stepS)
    utilityMemo = UtilityMemo(slots: 2 * bins, quantum: params.stepS)
    self.params = params
    self.world = world
    radios = world.radiosByNetwork
    if params.useDeviceModels > 0, let m = deviceModels {
      outlook = DeviceOutlook(models: m, fallback: DeviceModels(), options: DeviceModelOptions(), history: training)
    }
    activityRate = Self.activityRates(training, app: app)
    transitions = TransitionModel(training, app: app, window: params.pairWindowS)
    clock = LocalClock(training.timeZone)
    pace = params.paceByGap > 0 ? Self.gapPacing(training, app: app) : habit.pace
    dayStartHour = params.dayStartHour >= 0 ? params.dayStartHour : Self.quietHour(habit.pace)
    logBase = log(params.initialPrice)
    let r = log(params.priceRange)
    logBounds = (logBase - r)...(logBase + r)
  }

  /// Other apps' opens and wakes per second by local hour of the training
  /// window (0 without training days).
  ///
  /// - Complexity: O(training events).
  static func activityRates(_ training: UserTrace, app: Int32) -> [Double] {
    let days = (training.end - training.start) / 86_400
    guard days > 0 else { return Array(repeating: 0, count: 24) }
    var clock = LocalClock(training.timeZone)
    var counts = [Double](repeating: 0, count: 24)
    for e in training.events where (e.kind == .open && e.app != app) || e.kind == .wake {
      counts[min(23, Int(clock.hourOfDay(e.time)))] += 1
    }
    return counts.map { $0 / (days * 3600) }
  }

  /// The device models of the training window (WiFi, offline, plugged),
  /// each a logistic GLM on the user's own points shrunk toward zero (no
  /// built-in curve); nil when training has no network or charging rows.
  ///
  /// - Complexity: O(training window / 15 min) points per target, each GLM
  ///   a few IRLS steps on 17 features.
  package static func fitDeviceModels(_ training: UserTrace) -> DeviceModels? {
    let timeline = DeviceTimeline(training)
    guard timeline.hasNetwork || timeline.hasCharging else { return nil }
    let options = DeviceModelOptions()
    var points: [DeviceTarget: [DevicePoint]] = [:]
    for target in [DeviceTarget.plugged, .wifi, .offline] {
      points[target] = DeviceFeatures.points(
        target, trace: training, timeline: timeline, from: training.start, to: training.end, options: options)
    }
    return try? DeviceModels.fitUser(points, population: DeviceModels(), options: options)
  }

  /// The habit model currently in use.
  package var habitModel: HabitModel { habit.habit }

  package mutating func start(_ ctx: inout PolicyContext) {
    habit.start(&ctx)
  }

  package mutating func timerFired(_ ctx: inout PolicyContext) {
    habit.refitIfDue(&ctx)
    decide(&ctx)
    ctx.setTimer(at: ctx.now + params.checkIntervalS)
  }

  package mutating func observe(_ event: TraceEvent, _ ctx: inout PolicyContext) {
    let opportunity = habit.record(event, ctx)
    if event.kind == .open && event.app != ctx.app { otherOpen = (event.app, event.time) }
    outlook?.observe(event)
    if opportunity { decide(&ctx) }
  }

  package mutating func fetchFinished(_ outcome: FetchOutcome, _ ctx: inout PolicyContext) {
    habit.fetchFinished(outcome, &ctx)
    spentToday += outcome.energyJ
  }

  /// Share of the day's budgets released by local time `t`: `paceSlack`
  /// plus the share of the user's opens of the app from the budget day's
  /// start hour s to t (`habit.pace`), at most 1.
  mutating func released(at t: Double) -> Double {
    let s = dayStartHour
    let h = clock.hourOfDay(t)
    let a = MinimumPolicy.share(pace, atHour: s)
    let c = h >= s ? MinimumPolicy.share(pace, atHour: h) - a : 1 - a + MinimumPolicy.share(pace, atHour: h)
    return min(1, params.paceSlack + c)
  }

  /// The budget day holding `t`: local days counted from
  /// ``PlannerParameters/dayStartHour``.
  mutating func budgetDay(at t: Double) -> Int {
    Int(((clock.local(t) - dayStartHour * 3600) / 86_400).rounded(.down))
  }

  /// Cumulative shares by the end of each local hour of the app's training
  /// opens, each weighted by the time since the app's previous open, s,
  /// capped at 24 h (the first open of the window, whose previous open is
  /// unknown, weighs the cap): about the age an open would see without
  /// background fetches, so an hour whose opens follow long quiet periods
  /// (the first open of a morning) releases more of the day's budget than
  /// its count of opens would. Pseudo-opens as in
  /// ``MinimumPolicy/pacing(training:app:)`` (the population's hourly shares
  /// × 24), each weighing the mean weight of the user's opens.
  ///
  /// - Complexity: O(training events).
  static func gapPacing(_ training: UserTrace, app: Int32) -> [Double] {
    var clock = LocalClock(training.timeZone)
    var weights = [Double](repeating: 0, count: 24)
    var last = -Double.infinity
    var n = 0.0, total = 0.0
    for e in training.events where e.kind == .open && e.app == app {
      let w = min(86_400, e.time - last)
      last = e.time
      guard w.isFinite else { continue }
      weights[min(23, Int(clock.hourOfDay(e.time)))] += w
      n += 1
      total += w
    }
    let mean = n > 0 ? total / n : 1
    return MinimumPolicy.cumulativeShares(zip(weights, WorldParameters.ubiqlogHourlyShare).map { $0 + $1 * 24 * mean })
  }

  /// The start of the local hour with the fewest of the user's opens of the
  /// app (`pace`: cumulative shares by the end of each hour, as
  /// ``MinimumPolicy/pacing(training:app:)``, whose population pseudo-counts
  /// keep every hour's share positive), 0–23; the first such hour on ties.
  ///
  /// - Complexity: O(24).
  static func quietHour(_ pace: [Double]) -> Double {
    var best = 0, least = Double.infinity
    for i in 0..<min(24, pace.count) {
      let share = pace[i] - (i > 0 ? pace[i - 1] : 0)
      if share < least {
        best = i
        least = share
      }
    }
    return Double(best)
  }

  /// The ``ActivityTerms`` of the `K` look-ahead bins from `t`, whose
  /// activity is `activityRate[local hour of the bin's midpoint] · step`:
  /// kept by the bins' hours (packed 5 bits each, for up to 24 bins),
  /// computed on first use.
  ///
  /// - Complexity: O(K) local hours; O(K) exponentials for hours not seen before.
  mutating func activityTerms(at t: Double, bins K: Int) -> ActivityTerms {
    let step = params.stepS
    var key = HourKey(low: 0, high: 0)
    for j in 0..<min(K, 24) {
      let h = UInt64(min(23, Int(clock.hourOfDay(t + (Double(j) + 0.5) * step))))
      if j < 12 { key.low |= h << UInt64(5 * j) } else { key.high |= h << UInt64(5 * (j - 12)) }
    }
    if K <= 24, let terms = activityMemo[key] { return terms }
    var activity = [Double](repeating: 0, count: K)
    for j in 0..<K { activity[j] = activityRate[min(23, Int(clock.hourOfDay(t + (Double(j) + 0.5) * step)))] * step }
    let terms = ActivityTerms(activity, bins: K)
    if K <= 24 {
      if activityMemo.count >= 4096 { activityMemo.removeAll(keepingCapacity: true) }
      activityMemo[key] = terms
    }
    return terms
  }

  /// The local hours of up to 24 look-ahead bins, 5 bits each.
  struct HourKey: Hashable {
    var low: UInt64
    var high: UInt64
  }

  /// One decision at `ctx.now`: the gates, then the plan of the type's
  /// documentation; launches or not, and logs the decision when asked.
  ///
  /// - Complexity: O(K²) for K = horizon/step look-ahead bins (K habit-model
  ///   intensities and one device-model evaluation), O(1) when a gate or the
  ///   upper bound of the gain decides first.
  mutating func decide(_ ctx: inout PolicyContext) {
    let t = ctx.now
    let d = budgetDay(at: t)
    if d != day {
      if day != Int.min, params.budgetJPerDay > 0 {
        let e = (spentToday - params.budgetJPerDay) / params.budgetJPerDay
        logBase = min(logBounds.upperBound, max(logBounds.lowerBound, logBase + params.gain * min(1, e)))
      }
      // The replay's first budget day is pro-rated: its part before the
      // window start (the share of the user's opens there) counts as spent.
      let first = day == Int.min
      day = d
      spentToday = 0
      launchesToday = 0
      let w = ctx.windowStart
      if first && budgetDay(at: w) == d {
        spentToday = max(0, released(at: w) - params.paceSlack) * params.budgetJPerDay
      }
    }
    guard !ctx.fetchInFlight else { return }
    if !remembers {
      habit.openMemo = HabitOpenMemo(slots: 2 * max(1, Int((params.horizonS / params.stepS).rounded(.down))), quantum: params.stepS)
      utilityMemo = UtilityMemo(slots: 2, quantum: params.stepS)
      survivalMemo = SurvivalMemo()
      activityMemo = [:]
      afterCache = (0, [])
    }
    var decision = PlannerDecision(
      time: t, launched: false, valueNow: 0, costNowJ: 0, price: 0, bestLaterDelayS: 0, bestLaterValue: 0,
      bestLaterCostJ: 0, pWiFi: nil, pPlugged: nil, factor: .notWorthIt)
    defer { if logDecisions { decisions.append(decision) } }
    guard ctx.network != .offline else {
      decision.factor = .offline
      return
    }
    if let b = ctx.batteryPct, b < params.lowBatteryPct, !ctx.isCharging {
      decision.factor = .lowBattery
      return
    }
    if t - lastLaunch < params.minSpacingS {
      decision.factor = .rateLimit
      return
    }
    let share = released(at: t)
    let budget = params.budgetJPerDay
    if spentToday >= share * budget {
      decision.factor = .energyBudget
      return
    }
    if Double(launchesToday) >= share * params.launchesPerDay {
      decision.factor = .launchBudget
      return
    }
    let lambda = max(habit.rateEstimate, 1e-12)
    let since = max(0, t - habit.lastSync)
    let pNew = -expm1(-lambda * since)
    let down = (world.requestBytes + world.newDataMedianBytes) * pNew + world.noDataBytes * (1 - pNew)
    func estimate(_ radio: RadioProfile, gap: Double) -> Double {
      world.cpuWakeEnergyJ
        + radio.marginalEnergyEstimate(
          afterQuietGap: gap, downBytes: down, upBytes: world.requestBytes, extraConnectedS: world.serverLatencyS)
    }
    // The budget counts the energy drawn while charging; the price sees it discounted.
    let energyNow = estimate(radios[Int(ctx.network.rawValue)]!, gap: ctx.radioQuietGapS)
    let costNow = ctx.isCharging ? energyNow * params.chargingCostFactor : energyNow
    decision.costNowJ = costNow
    if spentToday + energyNow > share * budget {
      decision.factor = .energyBudget
      return
    }
    let e = budget > 0 ? (spentToday - share * budget) / budget : 0
    let price = exp(min(logBounds.upperBound, max(logBounds.lowerBound, logBase)) + params.damping * e)
    decision.price = price
    // Upper bound of any gain per open: a whole fresh open and all the age since the sync.
    let bound = params.freshWeight * pNew + params.ageWeightPerHour * since / 3600
    if !logDecisions && !(bound > price * costNow) { return }
    // 1. The next open's distribution over the horizon's bins. Consecutive
    // periodic checks share all but one of their points (intensities and
    // baselines remembered, the same bits).
    let step = params.stepS
    let K = max(1, Int((params.horizonS / step).rounded(.down)))
    let recency = habit.recency(at: t)
    if rho.count != K {
      rho = [Double](repeating: 0, count: K)
      base = [Double](repeating: 0, count: K)
      survivals = [Double](repeating: 0, count: K)
    }
    for j in 0..<K {
      let mid = (Double(j) + 0.5) * step
      rho[j] = habit.openMemo.intensity(habit.habit, at: t + mid, clock: &habit.clock, recency: recency.advanced(by: mid))
      survivals[j] = survivalMemo.survival(rho[j], step: step)
      base[j] = utilityMemo.utility(
        sinceSync: since + mid, lambda: lambda, fresh: params.freshWeight, agePerHour: params.ageWeightPerHour)
    }
    var p = PlannerMath.nextOpenProbabilities(survivals: survivals)
    if params.pairWindowS > 0, let o = otherOpen, o.time == t, t - habit.lastAppOpen >= TransitionModel.staleAfterS,
      let q = transitions.probability(after: o.app)
    {
      PlannerMath.condition(&p, firstSeconds: params.pairWindowS, step: step, on: q)
    }
    let terms = activityTerms(at: t, bins: K)
    let credited = params.sessionCredit > 0 ? terms : ActivityTerms(nil, bins: K)
    if afterCache.lambda != lambda.bitPattern || afterCache.values.count != K {
      afterCache = (
        lambda.bitPattern,
        PlannerMath.utilitiesAfter(
          bins: K, step: step, lambda: lambda, fresh: params.freshWeight, agePerHour: params.ageWeightPerHour)
      )
    }
    // 2. The expected utility of a fetch at each candidate.
    // Candidate 0 first: the others matter only when fetching now pays.
    var v = [Double](repeating: 0, count: K)
    PlannerMath.candidateValues(
      &v, candidates: 0..<1, openProbability: p, baseline: base, after: afterCache.values, activity: credited)
    decision.valueNow = v[0]
    let netNow = v[0] - price * costNow
    guard netNow > 0 || logDecisions else { return }
    PlannerMath.candidateValues(
      &v, candidates: 1..<K, openProbability: p, baseline: base, after: afterCache.values, activity: credited)
    // 3. Later candidates: expected cost over WiFi, charging and the user's
    // own radio activity; value scaled by the odds of being online.
    let onWiFi = ctx.network == .wifi
    let cellular = radios[Int((ctx.network.isCellular ? ctx.network : .cellular).rawValue)]!
    let cIdle = estimate(cellular, gap: .infinity), cBusy = estimate(cellular, gap: 0)
    let cWiFi = estimate(world.wifi, gap: .infinity)
    let odds = outlook?.probabilities(from: t)
    decision.pWiFi = odds?.wifi
    decision.pPlugged = odds?.plugged
    let netH = DeviceModelOptions().networkHorizonSeconds, plugH = DeviceModelOptions().pluggedHorizonSeconds
    let nearGate = !ctx.isCharging && (ctx.batteryPct.map { $0 < params.lowBatteryPct + params.gateMarginPct } ?? false)
    var best = (net: netNow, k: 0, value: v[0], cost: costNow)
    for k in 1..<max(1, K) {
      let u = Double(k) * step
      // Other apps' activity in the bins before the candidate (Poisson).
      let pBusy = terms.busy[k]
      let pWiFi = PlannerMath.ramp(now: onWiFi ? 1 : 0, atHorizon: odds?.wifi ?? (onWiFi ? 1 : 0), after: u, horizon: netH)
      let pOff = PlannerMath.ramp(now: 0, atHorizon: odds?.offline ?? 0, after: u, horizon: netH)
      let pPlug = ctx.isCharging ? 1 : PlannerMath.ramp(now: 0, atHorizon: odds?.plugged ?? 0, after: u, horizon: plugH)
      let cCell = pBusy * cBusy + (1 - pBusy) * cIdle
      let cost = (pWiFi * cWiFi + (1 - pWiFi) * cCell) * (1 - pPlug * (1 - params.chargingCostFactor))
      let value = v[k] * (1 - pOff) * (nearGate ? pPlug : 1)
      let net = value - price * cost
      if net > best.net { best = (net, k, value, cost) }
    }
    decision.bestLaterDelayS = Double(best.k) * step
    decision.bestLaterValue = best.value
    decision.bestLaterCostJ = best.cost
    guard netNow > 0 else { return }
    // Both now and at the best later candidate: the fetch now pays for itself
    // with the opens before that candidate.
    let both: Bool
    let slack = params.planBoth >= 2 ? spentToday + costNow <= (share - params.paceSlack) * budget : true
    if params.planBoth > 0 && best.k > 0 && slack {
      let before = PlannerMath.nowValueBefore(openProbability: p, baseline: base, after: afterCache.values, activity: credited)
      both = before[best.k] - price * costNow > 0
    } else {
      both = false
    }
    guard best.k == 0 || both else {
      decision.factor = .deferred
      return
    }
    decision.launched = true
    decision.factor = .launched
    lastLaunch = t
    launchesToday += 1
    habit.pendingGap = t - habit.lastSync
    ctx.requestFetch()
  }
}

/// `planner[:budget=<J/day>,key=value,...]`: the planning scheduler.
package enum PlannerFamily: PolicyFamily {
  package static let name = "planner"
  package static let syntax = "planner[:budget=<J/day>,key=value,...]"
  package static let example = "planner:budget=5"
  package static let summary =
    "plans with the learned models: fetches at the moment of the horizon with the best expected freshness gain at the predicted opens per marginal joule (a session, WiFi or the charger coming), under a paced daily energy budget"
  package static var settings: [PolicySettingInfo] { settingInfos(PlannerParameters.keys, defaults: PlannerParameters()) }
  package static let learns = true
  package static let usesHabitModel = true
  package static let style = PolicyStyle(color: "#117733", marker: .hexagon)

  package static func parse(_ argument: String?, spec: String) throws -> PlannerParameters {
    let p = try parseSettings(argument ?? "", policy: spec, defaults: PlannerParameters(), keys: PlannerParameters.keys)
    guard p.stepS <= p.horizonS else {
      throw PolicySpecError("policy '\(spec)': step (\(formatDuration(p.stepS))) must not exceed horizon (\(formatDuration(p.horizonS)))")
    }
    return p
  }
  package static func describe(_ p: PlannerParameters) -> String {
    name + settingsSuffix(p, defaults: PlannerParameters(), keys: PlannerParameters.keys, separator: ":")
  }
  package static func expectedFetchesPerDay(_ p: PlannerParameters) -> Double { min(p.launchesPerDay, 50) }
  package static func fetchSpacingBound(_ p: PlannerParameters) -> Double? { max(p.minSpacingS, 60) }
  package static func makePolicies(_ p: PlannerParameters, _ device: DeviceReplayInput) -> (Int32, ContentTimeline) -> PlannerPolicy {
    let training = device.training
    let user = device.user
    let learning = device.learning
    // The same models for every planner setting replayed with this context.
    let models: DeviceModels? =
      if p.useDeviceModels <= 0 {
        nil
      } else if let learning {
        learning.deviceModels.models(for: training, fit: PlannerPolicy.fitDeviceModels)
      } else {
        PlannerPolicy.fitDeviceModels(training)
      }
    return { app, _ in
      PlannerPolicy(
        params: p, world: user.world, training: training, app: app, population: learning?.population,
        fits: learning?.fits, deviceModels: models, pacing: learning?.pacing)
    }
  }
}

extension PolicySpec {
  /// `planner` with `parameters`.
  package static func planner(_ parameters: PlannerParameters = PlannerParameters()) -> PolicySpec {
    PolicySpec(PlannerFamily.self, parameters)
  }
}
