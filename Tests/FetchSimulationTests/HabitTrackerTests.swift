import FetchModels
import FetchTraces
import Testing

@testable import FetchSimulation

/// The policy kit's habit tracking (``HabitTracker``), alone: what the
/// learning schedulers (`ios-minimum`, `imp`, `planner`) know of the user's
/// opens and of the content between their own decisions.
@Suite("Habit tracker")
struct HabitTrackerTests {
  static let training = TestTraces.user(seed: 4, days: 3, opensPerHour: 1)

  static func tracker(
    refitHour: Double = 3, refreshesAtOpen: Bool = true, fits: HabitFitCache? = nil, sharesOpens: Bool = true
  ) -> HabitTracker {
    HabitTracker(
      training: training, app: 0, population: nil, fits: fits, refitHour: refitHour, priorUpdatesPerHour: 2,
      refreshesAtOpen: refreshesAtOpen, sharesOpens: sharesOpens)
  }

  /// Starts `h` at `t` (the context a replay's start gives it).
  static func start(_ h: inout HabitTracker, at t: Double) {
    var ctx = PolicyContext(now: t, app: 0, appName: "a", windowStart: t, timeZone: .utc, network: .wifi)
    h.start(&ctx, firstCheckAfter: 300)
    #expect(ctx.timerAt == t + 300)
  }

  static func outcome(_ result: FetchResult, end: Double) -> FetchOutcome {
    FetchOutcome(start: end - 2, end: end, result: result, bytes: 1000, energyJ: 1, network: .wifi, charging: false)
  }

  @Test("it starts from the training window: its last opens, its end as the last sync, the prior rate")
  func startsFromTraining() {
    let h = Self.tracker()
    let last = OpenHistory.lastOpens(Self.training, app: 0)
    #expect(h.lastAppOpen == last.app && h.lastAnyOpen == last.any)
    #expect(h.lastAppOpen.isFinite && h.lastAnyOpen >= h.lastAppOpen)
    #expect(h.lastSync == Self.training.end)
    #expect(h.rateEstimate == 2.0 / 3600)
    #expect(h.model == HabitFitter().fit(Self.training, app: 0, population: nil, fits: nil))
  }

  @Test("opens move the recency; the app's own open syncs it only when opens refresh")
  func recordsOpens() {
    let t0 = Self.training.end
    for refreshes in [true, false] {
      var h = Self.tracker(refreshesAtOpen: refreshes)
      Self.start(&h, at: t0 + 10)
      #expect(h.lastSync == t0 + 10)
      h.record(TraceEvent(time: t0 + 20, kind: .open, app: 1, value: 30), app: 0)
      #expect(h.lastAnyOpen == t0 + 20 && h.lastAppOpen < t0)
      #expect(h.recency(at: t0 + 25) == Recency(sinceAppOpenS: t0 + 25 - h.lastAppOpen, sinceAnyOpenS: 5))
      h.record(TraceEvent(time: t0 + 30, kind: .wake, app: 0, value: 0), app: 0)
      #expect(h.lastAnyOpen == t0 + 20)
      h.record(TraceEvent(time: t0 + 40, kind: .open, app: 0, value: 30), app: 0)
      #expect(h.lastAppOpen == t0 + 40 && h.lastAnyOpen == t0 + 40)
      #expect(h.lastSync == (refreshes ? t0 + 40 : t0 + 10))
      #expect(h.seenOpens.map(\.time) == [t0 + 20, t0 + 40])
    }
  }

  @Test("NewData and NoData are syncs and evidence of the update rate; a failure teaches nothing")
  func learnsFromFetches() {
    let t0 = Self.training.end
    var h = Self.tracker()
    Self.start(&h, at: t0)
    var evidence = UpdateRateEvidence()
    var rate = 2.0 / 3600
    for (k, result) in [FetchResult.noData, .newData, .failed, .noData].enumerated() {
      let t = t0 + Double(k + 1) * 3600
      h.launched(at: t)
      #expect(h.pendingGap == t - h.lastSync)
      let before = h.lastSync
      h.learn(from: Self.outcome(result, end: t + 2))
      if result == .failed {
        #expect(h.lastSync == before)
      } else {
        evidence.append(gap: t - before, new: result == .newData)
        rate = evidence.estimate(prior: 2.0 / 3600, from: rate)
        #expect(h.lastSync == t + 2)
      }
      #expect(h.rateEstimate == rate)
    }
    #expect(h.evidence.newGaps == [3598])
  }

  @Test("the nightly refit falls at the refit hour and fits everything seen up to it; hour 24 never refits")
  func refitsNightly() {
    let t0 = Self.training.end
    var h = Self.tracker(refitHour: 3)
    Self.start(&h, at: t0)
    // A UTC trace: the first 03:00 after the start.
    let day = (t0 / 86_400).rounded(.down) * 86_400
    let due = day + 3 * 3600 > t0 ? day + 3 * 3600 : day + 86_400 + 3 * 3600
    #expect(h.nextRefit == due)
    for k in 1...6 { h.record(TraceEvent(time: t0 + Double(k) * 600, kind: .open, app: 0, value: 30), app: 0) }
    let before = h.model
    h.refitIfDue(at: due - 1, app: 0)
    #expect(h.model == before)
    h.refitIfDue(at: due + 100, app: 0)
    var seen = Self.training
    seen.events += (1...6).map { TraceEvent(time: t0 + Double($0) * 600, kind: .open, app: 0, value: 30) }
    seen.end = t0 + 3600
    let want = HabitFitter().fit(
      HabitSample(trace: seen, app: 0, from: seen.start, to: due), prior: nil, start: before.coefficients)
    #expect(h.model == want)
    #expect(h.nextRefit == due + 86_400)

    var never = Self.tracker(refitHour: 24)
    Self.start(&never, at: t0)
    never.record(TraceEvent(time: t0 + 600, kind: .open, app: 0, value: 30), app: 0)
    #expect(never.nextRefit == .infinity && never.seenOpens.isEmpty)
  }

  @Test("open probabilities shared through the fits are the same bits as those computed alone")
  func sharedOpensAreTheSame() {
    let fits = HabitFitCache(trace: Self.training, sharesOpenProbabilities: true)
    var shared = Self.tracker(fits: fits), other = Self.tracker(fits: fits)
    var alone = Self.tracker(fits: fits, sharesOpens: false)
    #expect(shared.sharedOpens != nil && alone.sharedOpens == nil)
    #expect(shared.model == alone.model)
    for k in 0..<20 {
      let t = Self.training.end + Double(k) * 300
      let p = alone.probabilityOfOpen(at: t, within: 900)
      #expect(p > 0 && p < 1)
      #expect(shared.probabilityOfOpen(at: t, within: 900) == p)
      #expect(other.probabilityOfOpen(at: t, within: 900) == p)
    }
  }
}
