import FetchModels
import FetchTraces
import FetchWorld
import Foundation

/// Knobs of the IMP-style cost-benefit scheduler (`imp[:key=value,...]`).
///
/// IMP (Higgins, Flinn, Giuli, Noble, Peplin, Watson, *Informed Mobile
/// Prefetching*, MobiSys 2012) publishes no defaults for these
/// (NV); budgets follow the `ios-minimum` sweep.
package struct IMPParameters: SettingTable {
  /// Decision period, s: prices adapt and a decision is taken every period
  /// (plus at opportunities).
  package var checkIntervalS = 300.0
  /// "Soon": the horizon of the predicted open probability, s (NV).
  package var horizonS = 900.0
  /// Value of a prefetch that the user sees as new content, J-equivalent
  /// at the initial energy price (NV; as ``IOSMinimumParameters/freshValueJ``).
  package var valueJ = 30.0
  /// Energy budget, % of the battery per local day (sweep
  /// 0.25–2 %; 0.5 % ≈ 234 J on an iPhone 15).
  package var energyBudgetPctPerDay = 0.5
  /// Cellular data budget, MB (10^6 bytes) per local day (NV;
  /// sweep 1–20 MB).
  package var dataBudgetMBPerDay = 5.0
  /// Integral gain k_I of the price controller, per decision period (NV):
  /// the base price is multiplied by exp(k_I · e) each period, where
  /// e = (spent today − paced) / budget.
  package var gain = 0.1
  /// Proportional (damping) gain k_P of the price controller (NV): the price
  /// is the base times exp(k_P · e), so a fetch that puts spending ahead of
  /// pace raises it at once and the pace's growth lowers it in between.
  package var damping = 10.0
  /// Initial price of a joule (J-equivalent per J).
  package var initialEnergyPrice = 1.0
  /// Initial price of a cellular megabyte, J-equivalent per MB (NV: a
  /// 100 KB response then weighs about as much as 1 J).
  package var initialDataPrice = 10.0
  /// Prices stay within [initial / range, initial · range].
  package var priceRange = 1e4
  /// Budget pacing through the local day: 0 linear in clock time, 1 in step
  /// with the user's opens of the app by local hour (training; IMP paces to
  /// the goal, FetchLab's iOS model to the usage profile), or a mix.
  package var usagePacing = 1.0
  /// Prior of the content-update rate, per hour (Gamma mean); learned from
  /// the app's own NewData / NoData results as in ``IOSMinimumPolicy``.
  package var priorUpdatesPerHour = 1.0

  package init() {}

  /// Names accepted in `imp:key=value`.
  package static let keys: [SettingKey<IMPParameters>] = [
    .check(\.checkIntervalS, help: "decision period: prices adapt and a decision is taken every period"),
    .horizon(\.horizonS),
    .init("value", \.valueJ, help: "value of a prefetch the user sees as new, J-equivalent at the initial price"),
    .init("energy_budget_pct", \.energyBudgetPctPerDay, max: SettingBound.percent, help: "battery-energy budget, % of battery per local day (energy drawn while charging is free)"),
    .init("data_budget_mb", \.dataBudgetMBPerDay, help: "cellular data budget, MB per local day"),
    .init("gain", \.gain, help: "integral gain of the price controller, per decision period"),
    .init("damping", \.damping, help: "proportional (damping) gain of the price controller"),
    .init("energy_price", \.initialEnergyPrice, min: 1e-9, help: "initial price of a joule"),
    .init("data_price", \.initialDataPrice, min: 1e-9, help: "initial price of a cellular MB, J-equivalent"),
    .init("price_range", \.priceRange, min: 1, help: "prices stay within [initial / range, initial × range]"),
    .init("usage_pacing", \.usagePacing, help: "budget pacing: 0 linear in clock time, 1 with the user's opens by hour"),
    .priorUpdatesPerHour(\.priorUpdatesPerHour),
  ]
}

/// An Informed-Mobile-Prefetching-style scheduler: cost-benefit decisions
/// with prices that adapt to energy and cellular-data budgets.
///
/// At each decision point (every ``IMPParameters/checkIntervalS``, and at
/// opportunities: another app's open, a wake, plugging in, joining WiFi) it
/// fetches when
///
///     benefit = P(open within horizon) · P(new) · value
///     cost    = p_E · Ê + p_D · cellular MB
///     fetch if benefit > cost and today's spending + this fetch fits both budgets
///
/// - P(open) comes from a ``HabitModel`` fitted on the training trace and
///   shrunk toward the population model, as for ``IOSMinimumPolicy``.
/// - P(new) = 1 − e^(−λ̂Δ) for the time Δ since the last sync: IMP's learned
///   hit rate, here from the app's own NewData / NoData results through the
///   update-rate estimate λ̂.
/// - Ê is the marginal energy estimated from the radio's quiet gap
///   (``RadioProfile/marginalEnergyEstimate(afterQuietGap:downBytes:upBytes:extraConnectedS:)``)
///   plus the CPU; cellular MB are the expected response and request.
///
/// **Goal-directed price adaptation.** After each decision period, each
/// price is updated multiplicatively from how far the day's spending runs
/// ahead of the budget's pace:
///
///     e      = (spent_today − paced(t)) / budget
///     paced  = budget · ((1 − w) · dayFraction(t) + w · usageShare(t))
///     base  ← base · exp(k_I · e)
///     price  = base · exp(k_P · e)
///
/// Spending ahead of pace raises the price, spending behind lowers it. The
/// base alone (price ← price · exp(k · e)) integrates the position error
/// and, with spending responding to the price, oscillates: bursts of
/// spending at a low price, then hours priced out. The proportional term
/// damps that loop (a PI controller on log price); the base learns the
/// price level across days. Both are clamped to
/// ``IMPParameters/priceRange`` around the initial price. IMP's own
/// implementation (github.com/brettdh/informed_mobile_prefetching,
/// `GoalAdaptiveResourceWeight`) multiplies its weight every second by
/// projected demand (smoothed spending rate × time to the goal) over the
/// remaining supply, with an Odyssey-style reserve; this is the same
/// multiplicative goal-directed idea for a budget per local day. As IMP's
/// weight becomes prohibitive when the supply is exhausted, a fetch is
/// never started when its estimate would overrun a budget, so each day uses
/// at most the budget plus one fetch (the estimate's error). The energy
/// budget is the battery's, as IMP's goal is a battery lifetime: energy
/// drawn while charging neither counts against it nor costs
/// (``FetchOutcome/batteryEnergyJ``).
package struct IMPPolicy: FetchPolicy {
  package static var observesRadio: Bool { true }

  let params: IMPParameters
  /// The radios, the exchange and the CPU a launch is priced on.
  let launch: LaunchPricing
  /// The habit model (never refitted), the recency, the last sync and the
  /// update-rate estimate (its clock is this scheduler's).
  var habit: HabitTracker
  /// Cumulative share of the app's training opens by the end of each local hour.
  let pace: [Double]
  let energyBudgetJ: Double
  let dataBudgetBytes: Double
  let logPriceBounds: (energy: ClosedRange<Double>, data: ClosedRange<Double>)
  /// The day's spending: the device's at `replay.scope=device` (shared by
  /// its apps' IMP instances), else the app's own.
  let spending: IMPSpending
  /// Local day in which the fetch in flight started; one that finishes
  /// after midnight is not charged to the new day.
  var launchDay = Int.min
  /// Whether a decision skips the habit model when even P(open) = 1, or its
  /// upper bound (``HabitTracker/probabilityOfOpenBound(at:within:)``),
  /// would not pay (exact; false, for tests, asks it every time).
  package var skipsHopeless = true

  /// The current price of a joule, J-equivalent per J.
  package var energyPrice: Double { exp(spending.logEnergyPrice) }
  /// The current price of a cellular megabyte, J-equivalent per MB.
  package var dataPrice: Double { exp(spending.logDataPrice) }

  /// - Parameters:
  ///   - training: the user's trace before the replay window (may be
  ///     empty); the habit model and the usage pacing are fitted on it.
  ///   - app: the app index (the same in `training` and the replayed trace).
  ///   - population: the population habit model to shrink toward.
  ///   - spending: the daily spending this instance counts against its
  ///     budgets; pass one shared object to every app of a device for
  ///     device-wide budgets.
  ///   - pacing: the apps' pacing, shared with other policies trained on
  ///     `training` (nil: computed here).
  package init(
    params: IMPParameters, world: WorldParameters, training: UserTrace, app: Int32, population: HabitModel?,
    fitter: HabitFitter = HabitFitter(), fits: HabitFitCache? = nil, spending: IMPSpending = IMPSpending(),
    pacing: TrainingPacing? = nil
  ) {
    self.spending = spending
    precondition(
      params.checkIntervalS > 0 && params.initialEnergyPrice > 0 && params.initialDataPrice > 0
        && params.initialEnergyPrice.isFinite && params.initialDataPrice.isFinite,
      "IMP needs a positive decision period and positive, finite initial prices")
    self.params = params
    launch = LaunchPricing(world)
    habit = HabitTracker(
      training: training, app: app, population: population, fitter: fitter, fits: fits, refitHour: 24,
      priorUpdatesPerHour: params.priorUpdatesPerHour, refreshesAtOpen: world.refreshesAtOpen, sharesOpens: false)
    pace = UsagePacing.pacing(training: training, app: app, shared: pacing)
    energyBudgetJ = params.energyBudgetPctPerDay / 100 * launch.device.batteryCapacityJ
    dataBudgetBytes = params.dataBudgetMBPerDay * 1e6
    let r = log(max(1, params.priceRange))
    let e0 = log(params.initialEnergyPrice), d0 = log(params.initialDataPrice)
    logPriceBounds = ((e0 - r)...(e0 + r), (d0 - r)...(d0 + r))
    if spending.paces.isEmpty {
      spending.logEnergyPrice = e0
      spending.logDataPrice = d0
      spending.logEnergyBase = e0
      spending.logDataBase = d0
    }
    spending.paces.append(pace)
  }

  /// Share of the day's budget the pace allows by local time `t`, in [0, 1].
  mutating func pacedShare(at t: Double) -> Double {
    let h = habit.clock.hourOfDay(t)
    // The device's pace: the mean of its IMP apps' usage profiles (one app
    // at replay.scope=app).
    var usage = 0.0
    for p in spending.paces { usage += UsagePacing.share(p, atHour: h) }
    usage /= Double(spending.paces.count)
    let w = min(1, max(0, params.usagePacing))
    return min(1, max(0, (1 - w) * h / 24 + w * usage))
  }

  /// Starts a new local day's budgets when `t` is in a later day.
  mutating func rollDay(at t: Double) {
    let d = Int((habit.clock.local(t) / 86_400).rounded(.down))
    if d != spending.day {
      spending.day = d
      spending.energyJ = 0
      spending.cellularBytes = 0
    }
  }

  /// One step of the price controller (after each decision period). For
  /// each resource, with the pacing error e = (spent today − paced(t)) /
  /// budget:
  ///
  ///     base  ← base · exp(k_I · e)          (integral: learns the day's level)
  ///     price = base · exp(k_P · e)          (proportional: damps the loop)
  ///
  /// Both are clamped to ``IMPParameters/priceRange`` around the initial
  /// price. Anti-windup: a positive error is not integrated once the day's
  /// budget is spent (nothing more can be spent until the next day).
  ///
  /// The controller is the device's: its apps share one price per resource
  /// (IMP prices the device's battery and data plan), stepped once per
  /// decision period by whichever app checks first in that period.
  mutating func adaptPrices(at t: Double) {
    if spending.lastPeriod == Int.min { spending.origin = t }
    let period = Int(((t - spending.origin) / params.checkIntervalS).rounded())
    guard period > spending.lastPeriod else { return }
    spending.lastPeriod = period
    let share = pacedShare(at: t)
    if energyBudgetJ > 0 {
      let e = (spending.energyJ - share * energyBudgetJ) / energyBudgetJ
      if !(e > 0 && spending.energyJ >= energyBudgetJ) {
        spending.logEnergyBase = clamp(spending.logEnergyBase + params.gain * e, logPriceBounds.energy)
      }
      spending.logEnergyPrice = clamp(spending.logEnergyBase + params.damping * e, logPriceBounds.energy)
    }
    if dataBudgetBytes > 0 {
      let e = (spending.cellularBytes - share * dataBudgetBytes) / dataBudgetBytes
      if !(e > 0 && spending.cellularBytes >= dataBudgetBytes) {
        spending.logDataBase = clamp(spending.logDataBase + params.gain * e, logPriceBounds.data)
      }
      spending.logDataPrice = clamp(spending.logDataBase + params.damping * e, logPriceBounds.data)
    }
  }

  func clamp(_ x: Double, _ r: ClosedRange<Double>) -> Double { min(r.upperBound, max(r.lowerBound, x)) }

  package mutating func start(_ ctx: inout PolicyContext) {
    habit.start(&ctx, firstCheckAfter: params.checkIntervalS)
    rollDay(at: ctx.now)
  }

  package mutating func timerFired(_ ctx: inout PolicyContext) {
    rollDay(at: ctx.now)
    adaptPrices(at: ctx.now)
    decide(&ctx)
    ctx.setTimer(at: ctx.now + params.checkIntervalS)
  }

  package mutating func observe(_ event: TraceEvent, _ ctx: inout PolicyContext) {
    habit.record(event, app: ctx.app)
    if isDecisionOpportunity(event, ctx) { decide(&ctx) }
  }

  package mutating func fetchFinished(_ outcome: FetchOutcome, _ ctx: inout PolicyContext) {
    rollDay(at: ctx.now)
    if launchDay == spending.day {
      spending.energyJ += outcome.batteryEnergyJ
      if outcome.network.isCellular { spending.cellularBytes += outcome.bytes }
    }
    habit.learn(from: outcome)
  }

  /// Expected response bytes given P(new).
  func expectedBytes(pNew: Double) -> Double {
    launch.fetch.requestBytes + pNew * launch.fetch.newDataMedianBytes + (1 - pNew) * launch.fetch.noDataBytes
  }

  mutating func decide(_ ctx: inout PolicyContext) {
    let t = ctx.now
    rollDay(at: t)
    guard !ctx.fetchInFlight, let radio = launch.radios.radio(for: ctx.network) else { return }
    let since = max(0, t - habit.lastSync)
    let pNew = -expm1(-habit.rateEstimate * since)
    let bytes = expectedBytes(pNew: pNew)
    let down = bytes - launch.fetch.requestBytes
    // One radio model for the three terms (the profile's methods each build it).
    let gap = ctx.radioQuietGapS, up = launch.fetch.requestBytes, latency = launch.fetch.serverLatencyS
    let (x, promotionS, radioJ) = radio.withModel { m in
      (
        m.transferTime(downBytes: down, upBytes: up), m.promotion(afterGap: gap).timeS,
        m.marginalEnergyEstimate(afterQuietGap: gap, downBytes: down, upBytes: up, extraConnectedS: latency)
      )
    }
    var energy = launch.device.cpuWakeEnergyJ
      + launch.device.cpuActivePowerW * (promotionS + x.up + x.down + latency) + radioJ
    let cellular = ctx.network.isCellular ? bytes : 0
    // Budgets exhausted: IMP's prohibitive price. The energy budget is the
    // battery's: energy from the charger neither counts nor costs.
    if ctx.isCharging { energy = 0 }
    guard spending.energyJ + energy <= energyBudgetJ else { return }
    guard cellular == 0 || spending.cellularBytes + cellular <= dataBudgetBytes else { return }
    let cost = energyPrice * energy + dataPrice * cellular / 1e6
    // P(open) ≤ 1, so benefit = (pOpen · pNew) · value ≤ pNew · value (value
    // ≥ 0, rounding is monotone): at or below the cost, no need to ask the
    // habit model.
    if skipsHopeless && params.valueJ >= 0 && !(pNew * params.valueJ > cost) { return }
    // Nor when it would not pay at P(open)'s upper bound (pNew ≥ 0, so the
    // products are monotone in P(open)).
    if skipsHopeless && params.valueJ >= 0
      && !(habit.probabilityOfOpenBound(at: t, within: params.horizonS) * pNew * params.valueJ > cost)
    {
      return
    }
    let pOpen = habit.probabilityOfOpen(at: t, within: params.horizonS)
    let benefit = pOpen * pNew * params.valueJ
    guard benefit > cost else { return }
    habit.launched(at: t)
    launchDay = spending.day
    ctx.requestFetch()
  }
}

/// `imp[:key=value,...]`.
package enum IMPFamily: PolicyFamily {
  package static let info = FamilyInfo(
    "imp", .settings, learning: .habitModel, style: PolicyStyle(color: "#777777", marker: .pentagon),
    summary:
      "Informed Mobile Prefetching: cost-benefit (habit model × learned hit rate) against energy and data prices that adapt to daily budgets")

  /// One IMP instance per app; at device scope they share one
  /// ``IMPSpending``, so the energy and data budgets are the device's.
  package static func makePolicies(_ p: IMPParameters, _ device: DeviceReplayInput) -> (Int32, ContentTimeline) -> IMPPolicy {
    let training = device.training
    let user = device.user
    let learning = device.learning
    let shared = device.scope == .device ? device.services.shared(IMPSpending.self) { IMPSpending() } : nil
    return { app, _ in
      IMPPolicy(
        params: p, world: user.world, training: training, app: app, population: learning?.population,
        fits: learning?.fits, spending: shared ?? IMPSpending(), pacing: learning?.pacing)
    }
  }

}

/// IMP's budget state: the spending in the current local day and the price
/// controller, the device's when its apps share it (`replay.scope=device`),
/// each app's own otherwise.
///
/// IMP (Higgins et al., MobiSys 2012) budgets the device's battery and data
/// plan with one price per resource, and every app's prefetch decision is
/// priced by it. So at device scope the apps share one spending, one price
/// controller (stepped once per decision period) and one pace, the mean of
/// the apps' usage profiles; each app keeps its own habit model, hit-rate
/// evidence and decisions. The budgets are then spent where the apps' own
/// benefit per joule is highest at the going price, the arbitration rule.
package final class IMPSpending {
  /// The local day being counted, and its energy, J, and cellular bytes.
  var day = Int.min
  var energyJ = 0.0
  var cellularBytes = 0.0
  /// The log prices, and their integral parts.
  var logEnergyPrice = 0.0, logDataPrice = 0.0
  var logEnergyBase = 0.0, logDataBase = 0.0
  /// The time of the controller's first step, and the last period stepped.
  var origin = 0.0
  var lastPeriod = Int.min
  /// The usage profile (``UsagePacing/pacing(training:app:)``) of each app
  /// that draws on this budget.
  var paces: [[Double]] = []

  package init() {}
}
