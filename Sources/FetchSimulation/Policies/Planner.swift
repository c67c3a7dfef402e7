import FetchModels
import FetchTraces
import FetchWorld
import Foundation

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
  package var factor: DecisionFactor
  /// The upper bound of ``valueNow`` a decision may stop on
  /// (``PlannerPolicy/valueBound(at:_:terms:)``; nil: none, or not reached).
  package var valueBound: Double? = nil
}

/// A scheduler that plans with the learned models: the learned counterpart
/// of the budgeted oracle (``OracleBudgetPolicy``).
///
/// At each decision point (every ``PlannerParameters/checkIntervalS`` and at
/// the opportunities of ``IOSMinimumPolicy``: another app's open, a wake,
/// plugging in, joining WiFi) it looks ahead over the horizon in bins:
///
/// 1. **When will the app be opened?** The habit model (ios-minimum's: the
///    same fit, shrunk toward the population, refitted nightly; kept in a
///    ``HabitTracker``) gives the intensity in each bin assuming no open
///    before it, hence the distribution of the next open.
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
  /// The radios, the exchange and the CPU a launch is priced on.
  let launch: LaunchPricing
  /// The habit model and its nightly refits, the open history and recency,
  /// the update-rate estimate and the last sync.
  var habit: HabitTracker
  /// The generator's truth in place of the habit model and the learned
  /// update rate (`models=true`), nil for the learned planner.
  var truth: PlannerTruth?
  /// The device models' view, nil without device rows in training.
  var outlook: DeviceOutlook?
  /// Other apps' opens and wakes per second, by local hour, from training.
  let activityRate: [Double]
  /// The app-transition model from training (see ``TransitionModel``).
  let transitions: TransitionModel
  /// The other app opened at the current instant (for the transition model).
  var otherOpen: (app: Int32, time: Double)?
  var clock: LocalClock
  /// The budgets and the price of a joule: this app's, or shared by the
  /// device's planner apps (``PlannerBudget``).
  let budget: PlannerBudget
  /// The estimated energy of the launched fetch still running, J.
  var launchEstimate = 0.0
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
  /// Whether a decision stops before the look-ahead when the upper bound
  /// of its value (``valueBound(at:_:terms:)``) shows that fetching now
  /// does not pay (off only in tests, which check that it changes no
  /// decision), and how many decisions it stopped.
  var boundsValue = true
  private(set) var boundStops = 0
  /// Decisions, when `logDecisions` is on.
  package private(set) var decisions: [PlannerDecision] = []
  package var logDecisions = false

  package init(
    params: PlannerParameters, world: WorldParameters, training: UserTrace, app: Int32, population: HabitModel?,
    fits: HabitFitCache? = nil, deviceModels: DeviceModels? = nil, pacing: TrainingPacing? = nil,
    budget: PlannerBudget? = nil, truth: PlannerTruth? = nil
  ) {
    self.truth = truth
    // The planner reads the model's intensities, never probabilityOfOpen: no shared probabilities.
    habit = HabitTracker(
      training: training, app: app, population: population, fits: fits, refitHour: params.refitHour,
      priorUpdatesPerHour: params.priorUpdatesPerHour, refreshesAtOpen: world.refreshesAtOpen, sharesOpens: false)
    // Room for two decisions' look-ahead points, one slot per step.
    let bins = max(1, Int((params.horizonS / params.stepS).rounded(.down)))
    habit.openMemo = HabitOpenMemo(slots: 2 * bins, quantum: params.stepS)
    utilityMemo = UtilityMemo(slots: 2 * bins, quantum: params.stepS)
    self.params = params
    launch = LaunchPricing(world)
    if params.useDeviceModels > 0, let m = deviceModels {
      outlook = DeviceOutlook(models: m, fallback: DeviceModels(), options: DeviceModelOptions(), history: training)
    }
    activityRate = Self.activityRates(training, app: app)
    transitions = TransitionModel(training, app: app, window: params.pairWindowS)
    clock = LocalClock(training.timeZone)
    self.budget = budget ?? PlannerBudget(params: params, training: training)
    self.budget.join(app, appPace: UsagePacing.pacing(training: training, app: app, shared: pacing))
  }

  /// The device models of the training window (WiFi, offline, plugged),
  /// each a logistic GLM on the user's own points shrunk toward the
  /// `population` models (as `fit` does), or toward zero without them;
  /// nil when training has no network or charging rows.
  ///
  /// - Complexity: O(training window / 15 min) points per target, each GLM
  ///   a few IRLS steps on 17 features.
  package static func fitDeviceModels(_ training: UserTrace, population: DeviceModels? = nil) -> DeviceModels? {
    let options = DeviceModelOptions()
    guard let points = DeviceFeatures.planningPoints(training, options: options) else { return nil }
    return try? DeviceModels.fitUser(points, population: population ?? DeviceModels(), options: options)
  }

  package mutating func start(_ ctx: inout PolicyContext) {
    habit.start(&ctx, firstCheckAfter: params.checkIntervalS)
  }

  package mutating func timerFired(_ ctx: inout PolicyContext) {
    habit.refitIfDue(at: ctx.now, app: ctx.app)
    decide(&ctx)
    ctx.setTimer(at: ctx.now + params.checkIntervalS)
  }

  package mutating func observe(_ event: TraceEvent, _ ctx: inout PolicyContext) {
    habit.record(event, app: ctx.app)
    truth?.record(event)
    if event.kind == .open && event.app != ctx.app { otherOpen = (event.app, event.time) }
    outlook?.observe(event)
    if isDecisionOpportunity(event, ctx) { decide(&ctx) }
  }

  package mutating func fetchFinished(_ outcome: FetchOutcome, _ ctx: inout PolicyContext) {
    habit.learn(from: outcome)
    budget.finish(estimate: launchEstimate, energyJ: outcome.batteryEnergyJ)
  }

  /// One decision at `ctx.now`: the gates, then the plan of the type's
  /// documentation; launches or not, and logs the decision when asked.
  ///
  /// - Complexity: O(K²) for K = horizon/step look-ahead bins (K habit-model
  ///   intensities and one device-model evaluation), O(1) when a gate or the
  ///   upper bound of the gain decides first.
  mutating func decide(_ ctx: inout PolicyContext) {
    let t = ctx.now
    budget.roll(at: t, windowStart: ctx.windowStart)
    guard !ctx.fetchInFlight else { return }
    if !remembers { forgetMemos() }
    var decision = PlannerDecision(
      time: t, launched: false, valueNow: 0, costNowJ: 0, price: 0, bestLaterDelayS: 0, bestLaterValue: 0,
      bestLaterCostJ: 0, pWiFi: nil, pPlugged: nil, factor: .utilityBelowPrice)
    defer { if logDecisions { decisions.append(decision) } }
    guard plan(&decision, ctx) else { return }
    decision.launched = true
    decision.factor = .launched
    lastLaunch = t
    budget.launch(estimate: launchEstimate)
    habit.launched(at: t)
    ctx.requestFetch()
  }
}

/// What fetching now is expected to cost, once the gates and the budgets
/// have let a decision through.
struct FetchNow {
  /// Share of the day's budgets released by now.
  let share: Double
  /// The update-rate estimate, per s (at least 10⁻¹²), and the time since
  /// the last sync, s.
  let lambda: Double, since: Double
  /// P(the server has new content since the last sync), and the expected
  /// bytes down of a fetch.
  let pNew: Double, downBytes: Double
  /// Marginal energy of fetching now, J, × `charging_cost` while charging, and
  /// the price of a joule, utility per J.
  let cost: Double, price: Double
}

/// The look-ahead of a decision over the horizon's bins.
private struct LookAhead {
  /// Probability of the next open in each bin.
  let p: [Double]
  /// The activity factors of the bins, and those credited to a fetch (all
  /// ones when ``PlannerParameters/sessionCredit`` is off).
  let terms: ActivityTerms
  let credited: ActivityTerms
}

extension PlannerPolicy {
  /// The plan after the gates: whether to launch now. Fills in `decision`
  /// (its factor stays ``DecisionFactor/utilityBelowPrice`` unless a gate, a budget
  /// or a cheaper later moment decides).
  private mutating func plan(_ decision: inout PlannerDecision, _ ctx: PolicyContext) -> Bool {
    guard let now = fetchNow(&decision, ctx) else { return false }
    // Upper bound of any gain per open: a whole fresh open and all the age since the sync.
    let bound = params.freshWeight * now.pNew + params.ageWeightPerHour * now.since / 3600
    if !logDecisions && !(bound > now.price * now.cost) { return false }
    let terms = activityTerms(at: ctx.now, bins: bins)
    let credited = params.sessionCredit > 0 ? terms : ActivityTerms(nil, bins: bins)
    if logDecisions {
      decision.valueBound = valueBound(at: ctx.now, now, terms: credited)
    } else if boundsValue, let b = valueBound(at: ctx.now, now, terms: credited), b <= now.price * now.cost {
      boundStops += 1
      return false
    }
    let look = lookAhead(at: ctx.now, now, terms: terms, credited: credited)
    let K = look.p.count
    // 2. The expected utility of a fetch at each candidate.
    // Candidate 0 first: the others matter only when fetching now pays.
    var v = [Double](repeating: 0, count: K)
    PlannerMath.candidateValues(
      &v, candidates: 0..<1, openProbability: look.p, baseline: base, after: afterCache.values, activity: look.credited)
    decision.valueNow = v[0]
    let netNow = v[0] - now.price * now.cost
    guard netNow > 0 || logDecisions else { return false }
    PlannerMath.candidateValues(
      &v, candidates: 1..<K, openProbability: look.p, baseline: base, after: afterCache.values, activity: look.credited)
    let best = bestCandidate(v, netNow: netNow, look, now, ctx, &decision)
    decision.bestLaterDelayS = Double(best.k) * params.stepS
    decision.bestLaterValue = best.value
    decision.bestLaterCostJ = best.cost
    guard netNow > 0 else { return false }
    guard best.k == 0 || fetchesBoth(later: best.k, look, now) else {
      decision.factor = .cheaperLater
      return false
    }
    return true
  }

  /// The gates and the day's budgets, then the cost and the price of
  /// fetching now (set in `decision`); nil when a gate or a budget stops
  /// the decision (its factor set).
  private mutating func fetchNow(_ decision: inout PlannerDecision, _ ctx: PolicyContext) -> FetchNow? {
    let t = ctx.now
    if let gate = DecisionFactor.closedGate(
      ctx, lowBatteryPct: params.lowBatteryPct, lastLaunch: lastLaunch, minSpacingS: params.minSpacingS)
    {
      decision.factor = gate
      return nil
    }
    let share = budget.released(at: t)
    let budgetJ = budget.budgetJ
    let budgeted = budget.binds
    // A spent budget stops nothing on the charger: the budget is the battery's.
    if budgeted && !ctx.isCharging && budget.committed >= share * budgetJ {
      decision.factor = .energyBudget
      return nil
    }
    if budgeted && Double(budget.launchesToday) >= share * budget.launches {
      decision.factor = .launchBudget
      return nil
    }
    let lambda = max(truth?.updateRate(at: t) ?? habit.rateEstimate, 1e-12)
    let since = max(0, t - habit.lastSync)
    let pNew = -expm1(-lambda * since)
    let down = (launch.fetch.requestBytes + launch.fetch.newDataMedianBytes) * pNew + launch.fetch.noDataBytes * (1 - pNew)
    // The budget is the battery's: energy drawn while charging does not
    // count against it; the price sees it × `charging_cost`.
    let energyNow = launch.energyJ(on: launch.radios.radio(for: ctx.network)!, afterQuietGap: ctx.radioQuietGapS, downBytes: down)
    let costNow = ctx.isCharging ? energyNow * params.chargingCostFactor : energyNow
    let onBattery = ctx.isCharging ? 0 : energyNow
    decision.costNowJ = costNow
    if budgeted && budget.committed + onBattery > share * budgetJ {
      decision.factor = .energyBudget
      return nil
    }
    launchEstimate = onBattery
    let price = budget.price(share: share)
    decision.price = price
    return FetchNow(share: share, lambda: lambda, since: since, pNew: pNew, downBytes: down, cost: costNow, price: price)
  }

  /// 1. The next open's distribution over the horizon's bins from `t`
  /// (conditioned on the app-transition model at another app's open), the
  /// bins' baselines (``base``) and activity factors, and the utilities
  /// after a fetch at the current update rate (``afterCache``).
  /// Consecutive periodic checks share all but one of their points
  /// (intensities and baselines remembered, the same bits). `terms` and
  /// `credited` are the bins' activity factors (``activityTerms(at:bins:)``).
  private mutating func lookAhead(
    at t: Double, _ now: FetchNow, terms: ActivityTerms, credited: ActivityTerms
  ) -> LookAhead {
    let step = params.stepS
    let K = bins
    let lambda = now.lambda, since = now.since
    let recency = habit.recency(at: t)
    if rho.count != K {
      rho = [Double](repeating: 0, count: K)
      base = [Double](repeating: 0, count: K)
      survivals = [Double](repeating: 0, count: K)
    }
    for j in 0..<K {
      let mid = (Double(j) + 0.5) * step
      rho[j] =
        if let truth { truth.openIntensity(at: t + mid) } else {
          habit.openMemo.intensity(habit.model, at: t + mid, clock: &habit.clock, recency: recency.advanced(by: mid))
        }
      survivals[j] = survivalMemo.survival(rho[j], step: step)
      base[j] = utilityMemo.utility(
        sinceSync: since + mid, lambda: lambda, fresh: params.freshWeight, agePerHour: params.ageWeightPerHour)
    }
    var p = PlannerMath.nextOpenProbabilities(survivals: survivals)
    if let q = transitionOdds(at: t) { PlannerMath.condition(&p, firstSeconds: params.pairWindowS, step: step, on: q) }
    if afterCache.lambda != lambda.bitPattern || afterCache.values.count != K {
      afterCache = (
        lambda.bitPattern,
        PlannerMath.utilitiesAfter(
          bins: K, step: step, lambda: lambda, fresh: params.freshWeight, agePerHour: params.ageWeightPerHour)
      )
    }
    return LookAhead(p: p, terms: terms, credited: credited)
  }

  /// 3. The candidate with the largest expected net utility, candidate 0
  /// (now, net `netNow`) unless a later one beats it: a later candidate's
  /// expected cost is taken over WiFi, charging and the user's own radio
  /// activity, its value scaled by the odds of being online (and, near the
  /// battery gate, of being plugged in). Sets the device models' odds in
  /// `decision`.
  private mutating func bestCandidate(
    _ v: [Double], netNow: Double, _ look: LookAhead, _ now: FetchNow, _ ctx: PolicyContext,
    _ decision: inout PlannerDecision
  ) -> (net: Double, k: Int, value: Double, cost: Double) {
    let t = ctx.now, step = params.stepS, K = v.count
    let onWiFi = ctx.network == .wifi
    let cellular = launch.radios.radio(for: ctx.network.isCellular ? ctx.network : .cellular)!
    let cIdle = launch.energyJ(on: cellular, afterQuietGap: .infinity, downBytes: now.downBytes)
    let cBusy = launch.energyJ(on: cellular, afterQuietGap: 0, downBytes: now.downBytes)
    let cWiFi = launch.energyJ(on: launch.radios.wifi, afterQuietGap: .infinity, downBytes: now.downBytes)
    let odds = outlook?.probabilities(from: t)
    decision.pWiFi = odds?.wifi
    decision.pPlugged = odds?.plugged
    let netH = DeviceModelOptions().networkHorizonSeconds, plugH = DeviceModelOptions().pluggedHorizonSeconds
    let nearGate = !ctx.isCharging && (ctx.batteryPct.map { $0 < params.lowBatteryPct + params.gateMarginPct } ?? false)
    var best = (net: netNow, k: 0, value: v[0], cost: now.cost)
    for k in 1..<max(1, K) {
      let u = Double(k) * step
      // Other apps' activity in the bins before the candidate (Poisson).
      let pBusy = look.terms.busy[k]
      let pWiFi = PlannerMath.ramp(now: onWiFi ? 1 : 0, atHorizon: odds?.wifi ?? (onWiFi ? 1 : 0), after: u, horizon: netH)
      let pOff = PlannerMath.ramp(now: 0, atHorizon: odds?.offline ?? 0, after: u, horizon: netH)
      let pPlug = ctx.isCharging ? 1 : PlannerMath.ramp(now: 0, atHorizon: odds?.plugged ?? 0, after: u, horizon: plugH)
      let cCell = pBusy * cBusy + (1 - pBusy) * cIdle
      let cost = (pWiFi * cWiFi + (1 - pWiFi) * cCell) * (1 - pPlug * (1 - params.chargingCostFactor))
      let value = v[k] * (1 - pOff) * (nearGate ? pPlug : 1)
      let net = value - now.price * cost
      if net > best.net { best = (net, k, value, cost) }
    }
    return best
  }

  /// 4. Whether to fetch now as well as at the better later candidate `k`:
  /// when the fetch now pays for itself with the opens before that
  /// candidate (``PlannerParameters/planBoth``; at 2 only while the
  /// budget is slack).
  private func fetchesBoth(later k: Int, _ look: LookAhead, _ now: FetchNow) -> Bool {
    let slack = params.planBoth >= 2 && budget.binds
      ? budget.committed + now.cost <= (now.share - params.paceSlack) * budget.budgetJ : true
    guard params.planBoth > 0 && k > 0 && slack else { return false }
    let before = PlannerMath.nowValueBefore(
      openProbability: look.p, baseline: base, after: afterCache.values, activity: look.credited)
    return before[k] - now.price * now.cost > 0
  }
}
