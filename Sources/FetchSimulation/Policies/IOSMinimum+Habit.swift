import FetchModels
import FetchTraces
import Foundation

extension IOSMinimumPolicy {
  /// Sets ``nextRefit`` to the first ``IOSMinimumParameters/refitHour`` local
  /// hour after `t` (∞ when refits are off).
  mutating func scheduleRefit(after t: Double) {
    guard params.refitHour < 24 else {
      nextRefit = .infinity
      return
    }
    let local = clock.local(t)
    let dayStart = (local / 86_400).rounded(.down) * 86_400
    var next = dayStart + params.refitHour * 3600 - clock.offset(at: t)
    if next <= t { next += 86_400 }
    nextRefit = next
  }

  /// Refits the habit model when the nightly refit time has passed (shared
  /// with ``PlannerPolicy``, which keeps its habit model through this type).
  mutating func refitIfDue(_ ctx: inout PolicyContext) {
    if ctx.now >= nextRefit {
      // On everything seen up to the nominal refit time (not the check that
      // noticed it), so every policy refitting at this hour fits the same window.
      let app = ctx.app, to = nextRefit
      if let fits, let refitBase {
        habit = fits.refit(
          user: training.user, app: app, from: training.start, to: to, base: refitBase, prior: population,
          fitter: fitter
        ) { HabitSample(trace: history, app: app, from: history.start, to: to) }
        sharedOpens = fits.openProbabilities(
          user: training.user, app: app, from: training.start, to: to, base: refitBase, fitter: fitter)
      } else {
        sharedOpens = nil
        let sample = HabitSample(trace: history, app: app, from: history.start, to: to)
        habit =
          fits?.fit(sample, prior: population, fitter: fitter, start: habit.coefficients)
          ?? fitter.fit(sample, prior: population, start: habit.coefficients)
      }
      openMemo.reset()
      scheduleRefit(after: ctx.now)
    }
  }

  /// P(an open of the app within ``IOSMinimumParameters/horizonS`` of `t`)
  /// under the current habit model: read from the fit's shared
  /// probabilities when another setting has asked for it (the same bits),
  /// else from ``openMemo`` (and then kept for the others).
  @inline(never)
  mutating func probabilityOfOpen(at t: Double) -> Double {
    let r = recency(at: t), h = params.horizonS, step = HabitOpenMemo.defaultStep
    guard let shared = sharedOpens else {
      return openMemo.probabilityOfOpen(habit, within: h, from: t, clock: &clock, recency: r, step: step)
    }
    let key = SharedOpenProbabilities.Key(within: h, from: t, recency: r, step: step)
    if let p = shared.probability(key) { return p }
    let p = openMemo.probabilityOfOpen(habit, within: h, from: t, clock: &clock, recency: r, step: step)
    shared.remember(p, for: key)
    return p
  }
}

extension HabitFitter {
  /// The habit model of `app` fitted on all of `training`, shrunk toward
  /// `population`: through `fits` (the user's fits, shared by the policies
  /// replayed for this user; the same bits) when given, else directly. The
  /// starting model of every habit-driven policy (``IOSMinimumPolicy``,
  /// ``IMPPolicy``, ``AndroidPrefetchPolicy``).
  func fit(_ training: UserTrace, app: Int32, population: HabitModel?, fits: HabitFitCache?) -> HabitModel {
    let sample = HabitSample(trace: training, app: app, from: training.start, to: training.end)
    return fits?.refit(sample, base: training.end, prior: population, fitter: self) ?? fit(sample, prior: population)
  }
}
