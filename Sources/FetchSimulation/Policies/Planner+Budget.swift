import FetchModels
import FetchTraces
import FetchWorld
import Foundation

/// The planner's daily energy and launch budgets and the price of a joule,
/// for one app (`budget_scope=app`) or shared by the planner instances of
/// all the apps of a device replay (`budget_scope=device`, the default).
///
/// A device budget is the per-app `budget` (and `launches`) times the apps
/// that joined it, released through the budget day in step with all their
/// opens, and priced by one controller: every app weighs its expected gain
/// against the same price of a joule, so a joule goes to the app that
/// expects the most from it (the Lagrangian of a shared budget, as Kolobov
/// et al.'s refresh price), and an app whose fetches are worth less waits
/// until the phone's spending leaves room at that price.
///
/// The budget is the battery's: a fetch that starts on the charger counts
/// nothing against it (``FetchOutcome/batteryEnergyJ``).
///
/// Launches reserve their estimated energy until they finish, so apps
/// deciding while another's fetch runs see it: a budget day ends over its
/// budget by at most the estimate errors of the fetches in flight when the
/// last one was admitted (one per app).
package final class PlannerBudget {
  let params: PlannerParameters
  /// The apps that draw on this budget, in the order they joined.
  private(set) var apps: [Int32] = []
  let training: UserTrace
  var clock: LocalClock
  /// Cumulative share of the day's budget by the end of each local hour,
  /// and the local hour at which the budget day starts (set again as each
  /// app joins).
  private(set) var pace: [Double] = []
  private(set) var dayStartHour = 0.0
  var day = Int.min
  /// Energy of the day's finished fetches, J, and the estimates of the
  /// launched fetches still running.
  var spentToday = 0.0
  var reserved = 0.0
  var running = 0
  var launchesToday = 0
  var logBase: Double
  let logBounds: ClosedRange<Double>

  init(params: PlannerParameters, training: UserTrace) {
    self.params = params
    self.training = training
    clock = LocalClock(training.timeZone)
    logBase = log(params.initialPrice)
    let r = log(params.priceRange)
    logBounds = (logBase - r)...(logBase + r)
  }

  /// Adds `app`, whose count pacing is `appPace`
  /// (``UsagePacing/pacing(training:app:)``), to the apps that share
  /// this budget, and paces the budget by all of them.
  ///
  /// - Complexity: O(training events) (apps join before the replay).
  func join(_ app: Int32, appPace: [Double]) {
    apps.append(app)
    setUpPacing(appPace: appPace)
  }

  /// The day's energy budget and launch budget of all the joined apps.
  var budgetJ: Double { params.budgetJPerDay * Double(apps.count) }
  var launches: Double { params.launchesPerDay * Double(apps.count) }

  /// The finished and the reserved energy of the day, J.
  var committed: Double { spentToday + reserved }

  /// Sets the pacing and the day's start hour from the joined apps' training opens.
  private func setUpPacing(appPace: [Double]) {
    if apps.count == 1 {
      pace = params.paceByGap > 0 ? Self.gapPacing(training, apps: apps) : appPace
      dayStartHour = params.dayStartHour >= 0 ? params.dayStartHour : Self.quietHour(appPace)
    } else {
      let counts = UsagePacing.pacing(training: training, apps: apps)
      var hourly = [Double](repeating: 0, count: 24)
      for c in counts { for h in 0..<24 { hourly[h] += c[h] - (h > 0 ? c[h - 1] : 0) } }
      let countPace = UsagePacing.cumulativeShares(hourly)
      pace = params.paceByGap > 0 ? Self.gapPacing(training, apps: apps) : countPace
      dayStartHour = params.dayStartHour >= 0 ? params.dayStartHour : Self.quietHour(countPace)
    }
  }

  /// Share of the day's budgets released by local time `t`: `paceSlack`
  /// plus the share of the apps' opens from the budget day's start hour s
  /// to t, at most 1.
  func released(at t: Double) -> Double {
    let s = dayStartHour
    let h = clock.hourOfDay(t)
    let a = UsagePacing.share(pace, atHour: s)
    let c = h >= s ? UsagePacing.share(pace, atHour: h) - a : 1 - a + UsagePacing.share(pace, atHour: h)
    return min(1, params.paceSlack + c)
  }

  /// The budget day holding `t`: local days counted from the start hour.
  func budgetDay(at t: Double) -> Int {
    Int(((clock.local(t) - dayStartHour * 3600) / 86_400).rounded(.down))
  }

  /// Starts a new budget day when `t` is past the current one: the price
  /// controller's base moves by `gain · (spent − budget)/budget` (at most
  /// `gain` up, within ``logBounds``) and the day's spending and launches
  /// reset. The replay's first budget day is pro-rated: its part before
  /// `windowStart` (the share of the opens there) counts as spent.
  func roll(at t: Double, windowStart w: Double) {
    let d = budgetDay(at: t)
    guard d != day else { return }
    let budget = budgetJ
    if day != Int.min, budget > 0 {
      let e = (spentToday - budget) / budget
      logBase = min(logBounds.upperBound, max(logBounds.lowerBound, logBase + params.gain * min(1, e)))
    }
    let first = day == Int.min
    day = d
    spentToday = 0
    launchesToday = 0
    if first && budgetDay(at: w) == d {
      spentToday = max(0, released(at: w) - params.paceSlack) * budget
    }
  }

  /// Whether the day's energy and launch budgets bind: not at a fixed
  /// price (``PlannerParameters/fixedPrice``), which has no budget and no
  /// controller.
  var binds: Bool { params.fixedPrice <= 0 }

  /// The price of a joule when `share` of the day's budget is released
  /// (the fixed price when there is one).
  func price(share: Double) -> Double {
    guard binds else { return params.fixedPrice }
    let budget = budgetJ
    let e = budget > 0 ? (committed - share * budget) / budget : 0
    return exp(min(logBounds.upperBound, max(logBounds.lowerBound, logBase)) + params.damping * e)
  }

  /// Records a launch with estimated energy `estimate`, J.
  func launch(estimate: Double) {
    launchesToday += 1
    reserved += estimate
    running += 1
  }

  /// Records the end of a launched fetch: its estimate is released and its
  /// energy, J, spent.
  func finish(estimate: Double, energyJ: Double) {
    running -= 1
    reserved = running > 0 ? reserved - estimate : 0
    spentToday += energyJ
  }

  /// Cumulative shares by the end of each local hour of the training opens
  /// of `apps`, each weighted by the time since the same app's previous
  /// open, s, capped at 24 h (the first open of each app, whose previous
  /// open is unknown, weighs the cap): about the age an open would see
  /// without background fetches, so an hour whose opens follow long quiet
  /// periods (the first open of a morning) releases more of the day's
  /// budget than its count of opens would. Pseudo-opens as in
  /// ``UsagePacing/pacing(training:app:)`` (the population's hourly
  /// shares × 24 per app), each weighing the mean weight of the opens.
  ///
  /// - Complexity: O(training events + apps).
  static func gapPacing(_ training: UserTrace, apps: [Int32]) -> [Double] {
    var clock = LocalClock(training.timeZone)
    var weights = [Double](repeating: 0, count: 24)
    var last = [Double](repeating: -Double.infinity, count: training.apps.count)
    var member = [Bool](repeating: false, count: training.apps.count)
    for a in apps where a >= 0 && Int(a) < member.count { member[Int(a)] = true }
    var n = 0.0, total = 0.0
    for e in training.events where e.kind == .open && e.app >= 0 && Int(e.app) < member.count && member[Int(e.app)] {
      let w = min(86_400, e.time - last[Int(e.app)])
      last[Int(e.app)] = e.time
      guard w.isFinite else { continue }
      weights[min(23, Int(clock.hourOfDay(e.time)))] += w
      n += 1
      total += w
    }
    let mean = n > 0 ? total / n : 1
    let k = Double(max(1, apps.count))
    return UsagePacing.cumulativeShares(zip(weights, ContentUpdates.ubiqlogHourlyShare).map { $0 + $1 * 24 * mean * k })
  }

  /// The start of the local hour with the fewest opens (`pace`: cumulative
  /// shares by the end of each hour, as
  /// ``UsagePacing/pacing(training:app:)``, whose population
  /// pseudo-counts keep every hour's share positive), 0–23; the first such
  /// hour on ties.
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
}
