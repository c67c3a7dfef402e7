import FetchModels
import FetchTraces
import Foundation

/// What a learning scheduler knows of the user's habit and of the content:
/// the habit model (fitted on the training window, shrunk toward the
/// population, refitted nightly on everything seen), the open history and
/// recency, the last sync and the content-update rate learned from the
/// app's own NewData / NoData results. `ios-minimum` (and so `ios-custom`,
/// `bg-app-refresh` and `fetchlab predict`), `imp` and `planner` each keep
/// one, and decide from it with their own gates, budgets and prices.
///
/// The owner forwards its replay to it: ``start(_:firstCheckAfter:)``, ``record(_:app:)``
/// for every observed event, ``refitIfDue(at:app:)`` at its checks,
/// ``launched(at:)`` when it requests a fetch and ``learn(from:)`` when the
/// fetch ends.
package struct HabitTracker {
  let fitter: HabitFitter
  let population: HabitModel?
  /// Fits shared with the run's other learning policies (nil: fit alone).
  let fits: HabitFitCache?
  /// Local hour of the nightly refit (24 or more: never refit).
  let refitHour: Double
  /// Prior mean of the update rate, per s.
  let priorRate: Double
  /// Whether the user's open of the app syncs it (``WorldParameters/refreshesAtOpen``).
  let refreshesAtOpen: Bool
  /// The habit model currently in use.
  package private(set) var model: HabitModel
  /// The user's local clock (the owner's too: one cache of the offset).
  var clock: LocalClock
  /// The trace before the replay (shared with the other policies, not copied).
  let training: UserTrace
  /// Opens seen in the replay, in order (only when refits are on), and the
  /// time of the last.
  var seenOpens: [TraceEvent] = []
  var seenEnd: Double
  var lastAppOpen: Double
  var lastAnyOpen: Double
  /// End of the last fetch with a result, or of the app's last open when
  /// opens sync it (the training end before either).
  var lastSync: Double
  /// Gap since the last sync when the fetch in flight was launched, s.
  var pendingGap = 0.0
  /// Update-rate evidence from the last fetches, and the estimate, per s.
  var evidence = UpdateRateEvidence()
  var rateEstimate: Double
  /// Time of the next nightly refit (∞: none).
  var nextRefit = Double.infinity
  /// End of the training window when the habit model was fitted on it
  /// through `fits`: nightly refits are then the cache's fast refits from
  /// that fit (``HabitFitCache/refit(_:base:prior:fitter:)``); nil: full
  /// refits warm-started from the current model.
  var refitBase: Double?
  /// The habit model's intensities at the last checks' points (reset at each refit).
  var openMemo = HabitOpenMemo()
  /// Upper bounds of the current model's intensities and open
  /// probabilities (reset at each refit).
  var openBound = HabitOpenBound()
  /// The current fit's open probabilities, shared with the other settings
  /// that ask for the same fit (nil: not shared).
  var sharedOpens: SharedOpenProbabilities?

  /// A tracker whose habit model is fitted on all of `training`.
  ///
  /// - Parameters:
  ///   - fits: the user's fits, shared by the policies replayed for this user.
  ///   - sharesOpens: whether ``probabilityOfOpen(at:within:)`` shares its
  ///     values through `fits` with the other settings of the same fit.
  package init(
    training: UserTrace, app: Int32, population: HabitModel?, fitter: HabitFitter = HabitFitter(),
    fits: HabitFitCache? = nil, refitHour: Double, priorUpdatesPerHour: Double, refreshesAtOpen: Bool,
    sharesOpens: Bool = true
  ) {
    let last = OpenHistory.lastOpens(training, app: app)
    self.init(
      model: fitter.fit(training, app: app, population: population, fits: fits), history: training,
      population: population, lastAppOpen: last.app, lastAnyOpen: last.any, fitter: fitter, fits: fits,
      refitHour: refitHour, priorUpdatesPerHour: priorUpdatesPerHour, refreshesAtOpen: refreshesAtOpen)
    if let fits {
      refitBase = training.end
      if sharesOpens {
        sharedOpens = fits.openProbabilities(
          user: training.user, app: app, from: training.start, to: training.end, base: training.end, fitter: fitter)
      }
    }
  }

  /// A tracker that starts from an already fitted habit model (e.g. from a
  /// model file) and the last open times before `history.end`; `history`
  /// holds what nightly refits learn from (it may have no events).
  package init(
    model: HabitModel, history: UserTrace, population: HabitModel?, lastAppOpen: Double, lastAnyOpen: Double,
    fitter: HabitFitter = HabitFitter(), fits: HabitFitCache? = nil, refitHour: Double, priorUpdatesPerHour: Double,
    refreshesAtOpen: Bool
  ) {
    self.fitter = fitter
    self.population = population
    self.fits = fits
    self.refitHour = refitHour
    priorRate = priorUpdatesPerHour / 3600
    self.refreshesAtOpen = refreshesAtOpen
    self.model = model
    training = history
    seenEnd = history.end
    clock = LocalClock(history.timeZone)
    self.lastAppOpen = lastAppOpen
    self.lastAnyOpen = lastAnyOpen
    lastSync = history.end
    rateEstimate = priorRate
  }

  /// Opens seen so far (training part and the replay), for nightly refits:
  /// the training trace with the opens seen since.
  ///
  /// - Complexity: O(training events + opens seen): a copy, made only for
  ///   fits the shared cache's design tables do not cover.
  var history: UserTrace {
    var h = training
    h.events.append(contentsOf: seenOpens)
    h.end = seenEnd
    return h
  }

  func recency(at t: Double) -> Recency {
    Recency(sinceAppOpenS: t - lastAppOpen, sinceAnyOpenS: t - lastAnyOpen)
  }

  /// The replay starts at `ctx.now`: content synced before it is as of
  /// then, the first refit is scheduled, and the owner's timer set for its
  /// first periodic check, `interval` seconds later.
  mutating func start(_ ctx: inout PolicyContext, firstCheckAfter interval: Double) {
    lastSync = max(lastSync, ctx.now)
    scheduleRefit(after: ctx.now)
    ctx.setTimer(at: ctx.now + interval)
  }

  /// Learns from an observed event of the replay: an open (of any app, or
  /// of `app`, which syncs it when opens refresh) moves the recency.
  @inline(__always)
  mutating func record(_ event: TraceEvent, app: Int32) {
    guard event.kind == .open else { return }
    if refitHour < 24 { seenOpens.append(event) }
    seenEnd = event.time
    lastAnyOpen = event.time
    if event.app == app {
      lastAppOpen = event.time
      if refreshesAtOpen { lastSync = event.time }
    }
  }

  /// A fetch is requested at `t`: its result will be evidence for the gap since the last sync.
  mutating func launched(at t: Double) {
    pendingGap = t - lastSync
  }

  /// Learns from the end of the fetch launched last: NewData or NoData is
  /// a sync and evidence of the update rate; a failure teaches nothing.
  mutating func learn(from outcome: FetchOutcome) {
    switch outcome.result {
    case .newData:
      evidence.append(gap: pendingGap, new: true)
      lastSync = outcome.end
    case .noData:
      evidence.append(gap: pendingGap, new: false)
      lastSync = outcome.end
    case .failed:
      return
    }
    rateEstimate = evidence.estimate(prior: priorRate, from: rateEstimate)
  }

  /// Sets ``nextRefit`` to the first ``refitHour`` local hour after `t` (∞
  /// when refits are off).
  mutating func scheduleRefit(after t: Double) {
    guard refitHour < 24 else {
      nextRefit = .infinity
      return
    }
    let local = clock.local(t)
    let dayStart = (local / 86_400).rounded(.down) * 86_400
    var next = dayStart + refitHour * 3600 - clock.offset(at: t)
    if next <= t { next += 86_400 }
    nextRefit = next
  }

  /// Refits the habit model of `app` when the nightly refit time has passed by `now`.
  mutating func refitIfDue(at now: Double, app: Int32) {
    guard now >= nextRefit else { return }
    // On everything seen up to the nominal refit time (not the check that
    // noticed it), so every policy refitting at this hour fits the same window.
    let to = nextRefit
    if let fits, let refitBase {
      model = fits.refit(
        user: training.user, app: app, from: training.start, to: to, base: refitBase, prior: population,
        fitter: fitter
      ) { HabitSample(trace: history, app: app, from: history.start, to: to) }
      if sharedOpens != nil {
        sharedOpens = fits.openProbabilities(
          user: training.user, app: app, from: training.start, to: to, base: refitBase, fitter: fitter)
      }
    } else {
      sharedOpens = nil
      let sample = HabitSample(trace: history, app: app, from: history.start, to: to)
      model =
        fits?.fit(sample, prior: population, fitter: fitter, start: model.coefficients)
        ?? fitter.fit(sample, prior: population, start: model.coefficients)
    }
    openMemo.reset()
    openBound.reset()
    scheduleRefit(after: now)
  }

  /// An upper bound of ``probabilityOfOpen(at:within:)`` with its rounding
  /// (``HabitOpenBound``): a decision that does not pay at the bound does
  /// not pay at the probability.
  ///
  /// - Complexity: O(1 + h / 300 s), one `exp` and one `expm1`.
  mutating func probabilityOfOpenBound(at t: Double, within h: Double) -> Double {
    openBound.probabilityOfOpen(model, within: h, from: t, clock: &clock, recency: recency(at: t))
  }

  /// An upper bound of the habit model's intensity, opens per s, at
  /// `t` + d for every d in [`first`, `last`] with no open in between
  /// (``HabitOpenBound/maxIntensity(_:from:first:last:clock:recency:)``; ∞
  /// across a change of the UTC offset).
  ///
  /// - Complexity: O(1 + (last − first) / 300 s).
  mutating func maxIntensity(from t: Double, first: Double, last: Double) -> Double {
    openBound.maxIntensity(model, from: t, first: first, last: last, clock: &clock, recency: recency(at: t))
  }

  /// P(an open of the app within `h` seconds of `t`) under the current
  /// habit model: read from the fit's shared probabilities when another
  /// setting has asked for it (the same bits), else from ``openMemo`` (and
  /// then kept for the others).
  @inline(never)
  mutating func probabilityOfOpen(at t: Double, within h: Double) -> Double {
    let r = recency(at: t), step = HabitOpenMemo.defaultStep
    guard let shared = sharedOpens else {
      return openMemo.probabilityOfOpen(model, within: h, from: t, clock: &clock, recency: r, step: step)
    }
    let key = SharedOpenProbabilities.Key(within: h, from: t, recency: r, step: step)
    if let p = shared.probability(key) { return p }
    let p = openMemo.probabilityOfOpen(model, within: h, from: t, clock: &clock, recency: r, step: step)
    shared.remember(p, for: key)
    return p
  }
}

extension HabitFitter {
  /// The habit model of `app` fitted on all of `training`, shrunk toward
  /// `population`: through `fits` (the user's fits, shared by the policies
  /// replayed for this user; the same bits) when given, else directly. The
  /// starting model of every habit-driven policy (``HabitTracker``,
  /// ``AndroidPrefetchPolicy``).
  func fit(_ training: UserTrace, app: Int32, population: HabitModel?, fits: HabitFitCache?) -> HabitModel {
    let sample = HabitSample(trace: training, app: app, from: training.start, to: training.end)
    return fits?.refit(sample, base: training.end, prior: population, fitter: self) ?? fit(sample, prior: population)
  }
}
