import FetchModels
import FetchTraces
import FetchWorld
import Foundation

/// Knobs of the iOS-like Minimum scheduler. Apple publishes none of these
/// numbers (NV), so each is a parameter with a default chosen
/// inside a plausible sweep, and `ios-minimum:key=value,...`
/// overrides any of them.
package struct IOSMinimumParameters: SettingTable {
  /// Seconds between the system's periodic scheduling checks (NV).
  package var checkIntervalS = 300.0
  /// Rate limit: minimum seconds between two launches of the app (factor 7;
  /// NV, sweep 15–120 min). `ios-custom:<interval>` raises it.
  package var minSpacingS = 900.0
  /// "Soon": the horizon of the predicted open probability, s.
  package var horizonS = 900.0
  /// Value of showing fresh rather than stale content at an open, J-equivalent.
  package var freshValueJ = 30.0
  /// Value of one hour of age avoided at an open, J-equivalent per hour. A
  /// launch happens when P(open soon) · (P(new) · freshValue + E[age]/1 h ·
  /// ageValue) · credit ≥ price · cost.
  package var ageValueJPerHour = 30.0
  /// Price of a joule (the energy-price sweep of the benchmark).
  package var energyPrice = 1.0
  /// Cost multiplier while charging (energy from the wall is nearly free).
  package var chargingCostFactor = 0.1
  /// Per-app energy budget, % of battery per local day (factor 6; NV,
  /// sweep 0.25–2 %/day).
  package var energyBudgetPctPerDay = 0.5
  /// Launches per local day the system grants the app before feedback
  /// (factor 6, shared system budget; NV).
  package var launchesPerDay = 96.0
  /// Daily budgets are released through the day in proportion to the
  /// user's opens of the app by local hour (learned from training; "launches
  /// follow device use", WWDC20 session 10063), plus this share up front.
  package var paceSlack = 0.1
  /// Monthly cellular budget of the device, bytes, and this app's share of
  /// it, paced linearly through the calendar month (factor 6; ``DataBudget``).
  package var monthlyCellularBytes = 2e9
  package var cellularShare = 0.05
  /// Battery level below which background work stops unless charging: the
  /// critically-low gate, and Low Power Mode offered at 20 % (factors 1, 2).
  package var lowBatteryPct = 20.0
  /// Feedback multipliers on the app's launch credit (NV:
  /// ×1.1 NewData, ×0.9 NoData, ×0.8 Failed or over budget), clamped to
  /// [0.25, 2].
  package var newDataFactor = 1.1
  package var noDataFactor = 0.9
  package var failedFactor = 0.8
  /// Local hour of the nightly refit of the habit model on everything seen
  /// (24 or more: never refit).
  package var refitHour = 3.0
  /// Prior of the content-update rate estimate, per hour (Gamma mean; the
  /// estimate learns from the app's own NewData / NoData results).
  package var priorUpdatesPerHour = 1.0

  package init() {}

  /// Names accepted in `ios-minimum:key=value`.
  package static let keys: [SettingKey<IOSMinimumParameters>] = [
    .check(\.checkIntervalS, help: "time between the scheduler's periodic checks"),
    .init("spacing", \.minSpacingS, duration: true, help: "rate limit: least time between two launches of the app"),
    .horizon(\.horizonS),
    .init("value", \.freshValueJ, help: "value of fresh rather than stale content at an open, J-equivalent"),
    .init("age_value", \.ageValueJPerHour, help: "value of one hour of age avoided at an open, J-equivalent per hour"),
    .init("price", \.energyPrice, help: "price of a joule (the energy-price sweep)"),
    .init("charging_cost", \.chargingCostFactor, help: "cost multiplier while charging"),
    .init("energy_budget_pct", \.energyBudgetPctPerDay, max: SettingBound.percent, help: "energy budget, % of battery per local day (shared by the device's apps at device scope)"),
    .init("launches", \.launchesPerDay, max: SettingBound.count, help: "launches per local day before feedback"),
    .init("pace_slack", \.paceSlack, help: "share of the daily budgets released up front (the rest follows the user's opens by hour)"),
    .init("cellular_monthly_bytes", \.monthlyCellularBytes, max: SettingBound.bytes, help: "monthly cellular budget of the device, bytes"),
    .init("cellular_share", \.cellularShare, max: 1, help: "this app's share of the monthly cellular budget"),
    .init("low_battery_pct", \.lowBatteryPct, max: SettingBound.percent, help: "battery %, below which nothing runs unless charging"),
    .init("new_data_factor", \.newDataFactor, help: "launch-credit multiplier after NewData"),
    .init("no_data_factor", \.noDataFactor, help: "launch-credit multiplier after NoData"),
    .init("failed_factor", \.failedFactor, help: "launch-credit multiplier after a failure or overrun"),
    .refitHour(\.refitHour),
    .priorUpdatesPerHour(\.priorUpdatesPerHour),
  ]
}

/// One decision of the Minimum scheduler, for `fetchlab predict`.
package struct IOSMinimumDecision: Sendable, Equatable {
  package var time: Double
  package var launched: Bool
  /// P(open within the horizon) from the habit model.
  package var pOpen: Double
  /// P(the server has new content) from the learned update rate.
  package var pNew: Double
  /// Expected age of the content now if not refreshed, s.
  package var expectedAgeS: Double
  /// pOpen · (pNew · value + expected age · age value) · credit, J-equivalent.
  package var benefitJ: Double
  /// price · estimated marginal energy, J-equivalent.
  package var costJ: Double
  /// The factor that decided.
  package var factor: DecisionFactor
}

/// An iOS-like `backgroundFetchIntervalMinimum` scheduler: the system, not
/// the app, decides when to launch it, from the seven factors of WWDC20
/// "Background execution demystified" (session 10063):
///
/// 1. critically low battery (< 20 %): no launches unless charging;
/// 2. Low Power Mode (modelled as the same threshold);
/// 3. app usage: launches go where the learned habit model predicts an open
///    soon (`HabitModel`, shrunk toward the population, refitted nightly);
/// 4. app switcher (force-quit): not in the traces, not modelled;
/// 5. the Background App Refresh switch: on (else use `never`);
/// 6. system budgets for energy and data spread through the day: an energy
///    budget per local day and a daily launch budget, both released
///    through the day in step with the user's opens of the app by hour, and
///    a share of a monthly cellular budget paced through the month; per app,
///    or per device when a ``DeviceBudgetLedger`` is shared;
/// 7. rate limiting: a minimum spacing between launches.
///
/// At each decision point (a periodic check, and opportunistic moments: the
/// user using another app, another app's network wake, plugging in, joining
/// WiFi) it launches the app when the gates and budgets allow and
/// `P(open soon) · (P(new) · freshValue + E[age] · ageValue) · credit ≥
/// price · cost`,
/// where cost is the marginal energy estimated from the radio's state (a
/// radio already in its tail makes a launch cheap; WiFi is cheap; charging
/// scales the cost down), P(new) = 1 − e^(−λ̂·Δ) and E[age] = Δ − P(new)/λ̂
/// for the time Δ since the last sync, with λ̂ learned from the app's own
/// NewData / NoData results. Feedback: NewData raises the
/// app's launch credit, NoData and failures lower it (fewer launches).
/// `ios-custom:<interval>` is the same scheduler with a floor of `interval`
/// between launches.
package struct IOSMinimumPolicy: FetchPolicy {
  package static var observesRadio: Bool { true }

  let params: IOSMinimumParameters
  /// The radios, the exchange and the CPU a launch is priced on.
  let launch: LaunchPricing
  /// The habit model and its nightly refits, the open history, the last
  /// sync and the update-rate estimate (its clock is this scheduler's).
  var habit: HabitTracker
  var lastLaunch = -Double.infinity
  var credit = 1.0
  var day = Int.min
  var energyToday = 0.0
  var launchesToday = 0
  var month = Int.min
  /// The calendar month (`DataBudget.monthIndex`) of local day ``day``.
  var monthOfDay = Int.min
  var cellularThisMonth = 0.0
  let dataBudget: DataBudget
  /// The device's shared budgets (nil: this app's own, above).
  let ledger: DeviceBudgetLedger?
  /// Cumulative share of the app's opens by the end of each local hour.
  let pace: [Double]
  /// Decisions, when `logDecisions` is on.
  package private(set) var decisions: [IOSMinimumDecision] = []
  package var logDecisions = false
  /// Whether ``nextCheck(after:fetchPending:)`` passes over checks that
  /// cannot have an effect (on by default; off, for tests, every check runs),
  /// and how many it has passed over.
  package var passesOverGatedChecks = true
  package private(set) var checksPassedOver = 0

  /// - Parameters:
  ///   - training: the user's trace before the replay window (may be empty);
  ///     the habit model is fitted on it, shrunk toward `population`.
  ///   - app: the app index (the same in `training` and the replayed trace).
  ///   - fits: fits shared with other policies replayed for this user.
  ///   - ledger: the device's budgets, shared with its other apps' instances
  ///     (nil: per-app budgets).
  ///   - pacing: the apps' pacing, shared with other policies trained on
  ///     `training` (nil: computed here).
  package init(
    params: IOSMinimumParameters, world: WorldParameters, training: UserTrace, app: Int32,
    population: HabitModel?, fitter: HabitFitter = HabitFitter(), fits: HabitFitCache? = nil,
    ledger: DeviceBudgetLedger? = nil, pacing: TrainingPacing? = nil
  ) {
    let habit = HabitTracker(
      training: training, app: app, population: population, fitter: fitter, fits: fits, refitHour: params.refitHour,
      priorUpdatesPerHour: params.priorUpdatesPerHour, refreshesAtOpen: world.refreshesAtOpen)
    self.init(params: params, world: world, habit: habit, app: app, ledger: ledger, pacing: pacing)
  }

  /// A scheduler that starts from an already fitted habit model (e.g. from
  /// a model file) and the last open times before `history.end`; `history`
  /// holds what nightly refits learn from (it may have no events).
  package init(
    params: IOSMinimumParameters, world: WorldParameters, habit: HabitModel, history: UserTrace, app: Int32,
    population: HabitModel?, lastAppOpen: Double, lastAnyOpen: Double
  ) {
    let tracker = HabitTracker(
      model: habit, history: history, population: population, lastAppOpen: lastAppOpen, lastAnyOpen: lastAnyOpen,
      refitHour: params.refitHour, priorUpdatesPerHour: params.priorUpdatesPerHour,
      refreshesAtOpen: world.refreshesAtOpen)
    self.init(params: params, world: world, habit: tracker, app: app, ledger: nil, pacing: nil)
  }

  /// A scheduler deciding from `habit`, its budgets paced by `app`'s opens
  /// in the tracker's training window.
  init(
    params: IOSMinimumParameters, world: WorldParameters, habit: HabitTracker, app: Int32,
    ledger: DeviceBudgetLedger?, pacing: TrainingPacing?
  ) {
    self.ledger = ledger
    self.params = params
    launch = LaunchPricing(world)
    dataBudget = DataBudget(monthlyBytes: params.monthlyCellularBytes, appShare: params.cellularShare)
    self.habit = habit
    pace = UsagePacing.pacing(training: habit.training, app: app, shared: pacing)
  }

  package mutating func start(_ ctx: inout PolicyContext) {
    habit.start(&ctx, firstCheckAfter: params.checkIntervalS)
  }

  package mutating func timerFired(_ ctx: inout PolicyContext) {
    habit.refitIfDue(at: ctx.now, app: ctx.app)
    decide(&ctx)
    ctx.setTimer(at: nextCheck(after: ctx.now, fetchPending: ctx.fetchInFlight || ctx.request != nil))
  }

  /// The next periodic check (``IOSMinimumParameters/checkIntervalS`` after
  /// the one at `t`, which has just decided) whose decision can have an
  /// effect: the checks before it are passed over, since each would stop at
  /// a gate that nothing before it can open, changing nothing. A check is
  /// passed over when it falls on the same local day as `t` (so it rolls no
  /// day's budgets, this app's or the device's), before the time zone's
  /// next change of offset (``LocalClock/offsetSpan(at:)``), before the
  /// next refit (``HabitTracker/refitIfDue(at:app:)`` runs at the check it was due by), and
  /// either within ``IOSMinimumParameters/minSpacingS`` of the last launch,
  /// or, with no fetch of this app pending (whose outcome changes the
  /// credit), past the day's released energy or launch budget
  /// (``budgetGate(local:day:)``): spending only grows through a day, the
  /// released share only with the local hour, and no launch can happen
  /// before such a check, since a launch needs those gates open, so they
  /// would be open at every check after it. The checks kept are among
  /// those made every ``IOSMinimumParameters/checkIntervalS``, at the same
  /// times (the same sums), so results are unchanged. Every check is kept
  /// when decisions are logged.
  ///
  /// - Complexity: O(checks passed over), a few operations each, instead
  ///   of an engine event and a decision each.
  mutating func nextCheck(after t: Double, fetchPending: Bool) -> Double {
    var next = t + params.checkIntervalS
    guard passesOverGatedChecks && !logDecisions else { return next }
    // The offset holds until `until`: there `clock.local(next)` is `next + offset`.
    let (offset, until) = habit.clock.offsetSpan(at: t)
    let stop = min(habit.nextRefit, until)
    while next < stop {
      let local = next + offset
      let d = Int((local / 86_400).rounded(.down))
      guard d == day else { break }
      if next - lastLaunch >= params.minSpacingS {
        guard !fetchPending, budgetGate(local: local, day: d) != nil else { break }
      }
      next += params.checkIntervalS
      checksPassedOver += 1
    }
    return next
  }

  package mutating func observe(_ event: TraceEvent, _ ctx: inout PolicyContext) {
    if record(event, ctx) { decide(&ctx) }
  }

  /// Learns from an observed event (the open history, recency, foreground
  /// syncs); returns whether it is an opportunity to decide (another app's
  /// open, a wake, plugging in, joining WiFi).
  mutating func record(_ event: TraceEvent, _ ctx: PolicyContext) -> Bool {
    habit.record(event, app: ctx.app)
    return isDecisionOpportunity(event, ctx)
  }

  package mutating func fetchFinished(_ outcome: FetchOutcome, _ ctx: inout PolicyContext) {
    energyToday += outcome.energyJ
    if outcome.network.isCellular { cellularThisMonth += outcome.bytes }
    if let ledger {
      ledger.energyToday += outcome.energyJ
      if outcome.network.isCellular { ledger.cellularThisMonth += outcome.bytes }
    }
    switch outcome.result {
    case .newData: credit *= params.newDataFactor
    case .noData: credit *= params.noDataFactor
    case .failed: credit *= params.failedFactor
    }
    if outcome.end - outcome.start > launch.fetch.fetchBudgetS - 1e-9 { credit *= params.failedFactor }
    credit = min(2, max(0.25, credit))
    habit.learn(from: outcome)
  }

  mutating func decide(_ ctx: inout PolicyContext) {
    let t = ctx.now
    // Local day and month for the budgets.
    let local = habit.clock.local(t)
    let d = Int((local / 86_400).rounded(.down))
    if d != day {
      day = d
      energyToday = 0
      launchesToday = 0
      // DataBudget.monthIndex of this local day, computed once a day.
      let (y, mo, _) = CivilDate.civil(fromDays: d)
      monthOfDay = y * 12 + (mo - 1)
    }
    let m = monthOfDay
    if m != month {
      month = m
      cellularThisMonth = 0
    }
    ledger?.roll(day: d, month: m)
    guard !ctx.fetchInFlight else { return }
    var decision = IOSMinimumDecision(
      time: t, launched: false, pOpen: 0, pNew: 0, expectedAgeS: 0, benefitJ: 0, costJ: 0, factor: .benefitBelowCost)
    defer { if logDecisions { decisions.append(decision) } }
    // The radio is nil exactly when offline; it is read below, after the gates.
    if let gate = DecisionFactor.closedGate(
      ctx, lowBatteryPct: params.lowBatteryPct, lastLaunch: lastLaunch, minSpacingS: params.minSpacingS)
    {
      decision.factor = gate
      return
    }
    if let gate = budgetGate(local: local, day: d) {
      decision.factor = gate
      return
    }
    let expectedBytes = launch.fetch.requestBytes + launch.fetch.newDataMedianBytes
    if ctx.network.isCellular,
      !dataBudget.permits(
        bytes: expectedBytes, at: t, clock: &habit.clock, spentThisMonth: ledger?.cellularThisMonth ?? cellularThisMonth)
    {
      decision.factor = .dataBudget
      return
    }
    let since = max(0, t - habit.lastSync)
    decision.pNew = -expm1(-habit.rateEstimate * since)
    // E[(t − X)⁺] for the first update X after the last sync, X − sync ~ Exp(λ̂).
    decision.expectedAgeS = max(0, since - decision.pNew / habit.rateEstimate)
    let value = decision.pNew * params.freshValueJ + decision.expectedAgeS / 3600 * params.ageValueJPerHour
    let radio = launch.radios.radio(for: ctx.network)!
    var cost = launch.energyJ(
      on: radio, afterQuietGap: ctx.radioQuietGapS,
      downBytes: expectedBytes * decision.pNew + launch.fetch.noDataBytes * (1 - decision.pNew))
    // The energy budget holds the launch it would pay for: spent plus this
    // launch's estimate, so a day ends over it by at most one launch's
    // estimate error.
    let allowance = released(atHour: (local - Double(d) * 86_400) / 3600) * params.energyBudgetPctPerDay / 100 * launch.device.batteryCapacityJ
    if (ledger?.energyToday ?? energyToday) + cost > allowance {
      decision.factor = .energyBudget
      return
    }
    if ctx.isCharging { cost *= params.chargingCostFactor }
    decision.costJ = params.energyPrice * cost
    // P(open soon) ≤ 1, so benefit = (pOpen · credit) · value ≤ credit · value
    // for value ≥ 0 (rounding is monotone): below the cost, the habit model
    // need not be asked.
    if !logDecisions && value >= 0 && !(credit * value >= decision.costJ) { return }
    // Nor when it would not pay at P(open)'s upper bound (credit > 0).
    if !logDecisions && value >= 0
      && !(habit.probabilityOfOpenBound(at: t, within: params.horizonS) * credit * value >= decision.costJ)
    {
      return
    }
    decision.pOpen = habit.probabilityOfOpen(at: t, within: params.horizonS)
    decision.benefitJ = decision.pOpen * credit * value
    guard decision.benefitJ >= decision.costJ else { return }
    decision.launched = true
    decision.factor = .benefitAboveCost
    lastLaunch = t
    launchesToday += 1
    ledger?.launchesToday += 1
    habit.launched(at: t)
    ctx.requestFetch()
  }
}
