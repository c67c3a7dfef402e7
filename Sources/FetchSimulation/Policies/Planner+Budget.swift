import FetchModels
import FetchTraces
import FetchWorld
import Foundation

extension PlannerPolicy {
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

  /// Starts a new budget day when `t` is past the current one: the price
  /// controller's base moves by `gain · (spent − budget)/budget` (at most
  /// `gain` up, within ``logBounds``) and the day's spending and launches
  /// reset. The replay's first budget day is pro-rated: its part before
  /// `windowStart` (the share of the user's opens there) counts as spent.
  mutating func rollBudgetDay(at t: Double, windowStart w: Double) {
    let d = budgetDay(at: t)
    guard d != day else { return }
    if day != Int.min, params.budgetJPerDay > 0 {
      let e = (spentToday - params.budgetJPerDay) / params.budgetJPerDay
      logBase = min(logBounds.upperBound, max(logBounds.lowerBound, logBase + params.gain * min(1, e)))
    }
    let first = day == Int.min
    day = d
    spentToday = 0
    launchesToday = 0
    if first && budgetDay(at: w) == d {
      spentToday = max(0, released(at: w) - params.paceSlack) * params.budgetJPerDay
    }
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
}
