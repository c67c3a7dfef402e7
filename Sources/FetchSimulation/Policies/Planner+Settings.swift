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
package struct PlannerParameters: SettingTable {
  /// Battery-energy budget per app, J per budget day (CPU and marginal
  /// radio of the fetches that start off the charger, as the results'
  /// battery energy counts them; the day starts at ``dayStartHour``),
  /// released through the day in step with
  /// the user's opens of the app by hour (weighted by the time since the
  /// previous open with ``paceByGap``), ``paceSlack`` of it up front.
  package var budgetJPerDay = 10.0
  /// 1: one budget for all the planner's apps of a device replay (`budget`
  /// and `launches` times the apps, paced by all their opens, one price of
  /// a joule: ``PlannerBudget``); 0: each app spends its own budget.
  package var deviceBudget = 1.0
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
  /// A fixed price of a joule, utility per J; 0 (the default): off. When
  /// positive there is no budget and no controller: every joule is priced
  /// at this, and neither the energy nor the launch budget stops a fetch
  /// (the gates and ``minSpacingS`` still do). The price is the Lagrange
  /// multiplier of a budget (Kolobov et al.), so sweeping it traces a
  /// frontier as sweeping the budget does, without the pacing and the
  /// controller's lag (a week's replay at a budget far above what the
  /// initial price spends does not find its price), and without a bound on
  /// any day's spending.
  package var fixedPrice = 0.0
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
  /// (``PlannerBudget/quietHour(_:)``), so that a night's and the next
  /// morning's fetches draw on one day's budget.
  package var dayStartHour = -1.0
  /// 1: release the budget in step with the user's opens weighted by the
  /// time since the app's previous open (``PlannerBudget/gapPacing(_:apps:)``),
  /// so that the first open of a morning, which would see the night's age,
  /// releases the energy of the fetch it needs; 0: with the count of opens
  /// (``UsagePacing/pacing(training:app:)``).
  package var paceByGap = 1.0
  /// Cost multiplier of the energy drawn while charging, in the price (the
  /// budget counts none of it). 0.1, as `ios-minimum`'s: the budget and the
  /// results count battery energy, so the charger's joules cost the phone
  /// nothing, but at 0 any fetch with a positive value pays, and the planner
  /// would fetch at every check on the charger. On the tuning seed
  /// (`experiments/planner-tuning.json`): fresher and younger than 1 at
  /// every budget from 5 to 50 J per app-day at the same battery energy,
  /// and within 0.003 of the fresh share of 0 at a half to two thirds of
  /// its total energy (UbiqLog has no charging rows).
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
  /// The models it plans with (`models=`, ``PlannerModels``).
  package var models = PlannerModels.learned

  package init() {}

  /// Names accepted in `planner:key=value`.
  package static let keys: [SettingKey<PlannerParameters>] = [
    .init("budget", \.budgetJPerDay, help: "battery-energy budget per app, J per budget day (energy drawn while charging is free; from day_start; paced by the user's opens by hour)"),
    .init("device_budget", \.deviceBudget, max: 1, help: "1: one budget and one price for all the planner's apps of the device (budget × apps); 0: a budget per app"),
    .init("horizon", \.horizonS, min: 300, max: SettingBound.horizon, duration: true, help: "look-ahead horizon of the plan"),
    .init("step", \.stepS, min: 60, max: SettingBound.period, duration: true, help: "width of the look-ahead bins and spacing of the candidate fetch times"),
    .init("check", \.checkIntervalS, min: 60, max: SettingBound.period, duration: true, help: "time between the periodic decision points"),
    .init("spacing", \.minSpacingS, duration: true, help: "least time between two launches of the app"),
    .init("fresh_weight", \.freshWeight, help: "utility of one more fresh open"),
    .init("age_weight", \.ageWeightPerHour, help: "utility of one hour of age avoided at an open"),
    .init("price", \.initialPrice, min: 1e-9, help: "initial price of a joule, utility per J (adapted to the budget)"),
    .init("fixed_price", \.fixedPrice, help: "fixed price of a joule, utility per J (0: off): no budget and no controller, every joule priced at this"),
    .init("gain", \.gain, help: "integral gain of the price controller, per local day"),
    .init("damping", \.damping, help: "proportional gain of the price controller"),
    .init("price_range", \.priceRange, min: 1, help: "the price stays within [initial / range, initial × range]"),
    .init("launches", \.launchesPerDay, max: SettingBound.count, help: "launches per budget day (paced like the energy budget)"),
    .init("pace_slack", \.paceSlack, help: "share of the daily budgets released up front"),
    .init("pace_by_gap", \.paceByGap, max: 1, help: "1: release the budget with the opens weighted by the time since the app's previous open; 0: by the count of opens"),
    .init("day_start", \.dayStartHour, min: -1, max: 23, help: "local hour at which the budget day starts (-1: the hour with the fewest of the user's opens of the app)"),
    .init("charging_cost", \.chargingCostFactor, help: "multiplier of the energy drawn while charging in the price (the budget counts none of it)"),
    .init("low_battery_pct", \.lowBatteryPct, max: SettingBound.percent, help: "battery %, below which nothing runs unless charging"),
    .init("gate_margin_pct", \.gateMarginPct, max: SettingBound.percent, help: "battery points above the gate within which later candidates need the charger"),
    .init("device_models", \.useDeviceModels, max: 1, help: "1: weigh WiFi, charging and offline odds from the device models; 0: assume the state persists"),
    .init("session_credit", \.sessionCredit, max: 1, help: "1: credit an open to a fetch only if no other radio activity of the user is expected between them; 0: always"),
    .init("pair_window", \.pairWindowS, max: SettingBound.horizon, duration: true, help: "window of the app-transition model (0s: off): P(this app within it \\| another app just opened), from training"),
    .init("plan_both", \.planBoth, max: 2, help: "fetch now as well as at a better later moment when the opens before it pay for the fetch now: 1 always, 2 while the budget is slack (the paced budget less its up-front share not yet spent), 0 never (now or later)"),
    .refitHour(\.refitHour),
    .priorUpdatesPerHour(\.priorUpdatesPerHour),
  ]
}

/// `planner[:budget=<J/day>,key=value,...]`: the planning scheduler.
package enum PlannerFamily: PolicyFamily {
  package static let info = FamilyInfo(
    "planner", .settingsAfter("budget=<J/day>"), example: "planner:budget=5",
    learning: .habitModel, style: PolicyStyle(color: "#0072B2", marker: .hexagon),
    summary:
      "plans with the learned models: fetches at the moment of the horizon with the best expected freshness gain at the predicted opens per marginal joule (a session, WiFi or the charger coming), under a paced daily energy budget or at a fixed price of a joule (`fixed_price`)")

  /// `models=learned|true`, among the table's settings.
  static let models = ChoiceSetting(
    name: "models", path: \PlannerParameters.models,
    help: "learned: the fitted habit model and the learned update rate; true: the synthetic generator's open intensity given the opens seen and its update rate (the model oracle; synthetic datasets only)")

  package static var settings: [PolicySettingInfo] { PlannerParameters.settingInfos + [models.info] }

  package static func describe(_ p: PlannerParameters) -> String {
    let rest = p.settingsSuffix(separator: ":")
    return name + rest + (p.models == .learned ? "" : (rest.isEmpty ? ":" : ",") + "models=\(p.models.rawValue)")
  }

  package static func parse(_ argument: String?, spec: String) throws -> PlannerParameters {
    let p = try models.parse(argument, policy: spec)
    guard p.stepS <= p.horizonS else {
      throw PolicySpecError("policy '\(spec)': step (\(formatDuration(p.stepS))) must not exceed horizon (\(formatDuration(p.horizonS)))")
    }
    return p
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
        learning.deviceModels.models(for: training) { PlannerPolicy.fitDeviceModels($0, population: learning.populationDevice) }
      } else {
        PlannerPolicy.fitDeviceModels(training)
      }
    // At device scope the apps draw on one budget (made once per device).
    let shared = p.deviceBudget > 0 && device.scope == .device ? device.services.shared(PlannerBudget.self, key: p) { PlannerBudget(params: p, training: training) } : nil
    let truth = p.models == .truth ? learning?.truth : nil
    precondition(p.models == .learned || truth != nil, "planner:models=true replayed without the generator's truth")
    return { app, _ in
      PlannerPolicy(
        params: p, world: user.world, training: training, app: app, population: learning?.population,
        fits: learning?.fits, deviceModels: models, pacing: learning?.pacing, budget: shared,
        truth: truth.map {
          PlannerTruth(truth: $0, training: training, app: user.trace.apps[Int(app)], content: user.world.content)
        })
    }
  }
}

extension PolicySpec {
  /// `planner` with `parameters`.
  package static func planner(_ parameters: PlannerParameters = PlannerParameters()) -> PolicySpec {
    PolicySpec(PlannerFamily.self, parameters)
  }
}
