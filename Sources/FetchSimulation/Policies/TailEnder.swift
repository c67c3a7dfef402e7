import FetchModels
import FetchTraces
import FetchWorld

/// Knobs of the TailEnder policy (`tailender:<interval>[,key=value,...]`).
///
/// TailEnder (Balasubramanian, Balasubramanian, Venkataramani, *Energy
/// Consumption in Mobile Phones: A Measurement Study and Implications for
/// Network Applications*, IMC 2009, DOI 10.1145/1644893.1644927 (M))
/// defers delay-tolerant transfers, each with a deadline, so
/// that they share radio tails with other traffic. The paper leaves the
/// deadline to the application; the defaults below are ours (NV).
package struct TailEnderParameters: SettingTable {
  /// Deadline after each due time, s; 0 means ``deadlineFraction`` of the
  /// interval. Capped at the interval, so that due periods never overlap.
  package var deadlineS = 0.0
  /// Deadline as a share of the interval when ``deadlineS`` is 0. Default
  /// 1/2 (NV): each fetch lands in [due, due + interval/2], so consecutive
  /// fetches are between interval/2 and 3·interval/2 apart and the fetch
  /// rate stays the timer's; the longest gap between background syncs grows
  /// by at most half an interval; and with other apps' opens at rate r the
  /// deadline binds with probability e^(−r·interval/2), small for any user
  /// who is awake (UbiqLog's median gap between opens of any app is 1.8 min)
  /// at intervals of 15 min or more.
  package var deadlineFraction = 0.5
  /// The radio counts as active or in its tail while its quiet gap is below
  /// this, s. Default 10 s: just under the LTE tail (ARO 10.12 s; paper
  /// 11.576 s, Huang et al.), inside 3G's DCH + FACH tail (17 s, PowerTutor);
  /// on WiFi (0.24 s tail) a fetch after any gap costs well under 0.2 J.
  package var tailS = 10.0

  package init() {}

  /// Names accepted in `tailender:<interval>,key=value`.
  package static let keys: [SettingKey<TailEnderParameters>] = [
    .init("deadline", \.deadlineS, duration: true, help: "deadline after each due time (0: deadline_frac of the interval)"),
    .init("deadline_frac", \.deadlineFraction, help: "deadline as a share of the interval when deadline is 0"),
    .init("tail", \.tailS, duration: true, help: "the radio counts as active or in its tail while its quiet gap is below this"),
  ]

  /// The deadline after each due time for a timer of `interval` seconds, s:
  /// in [0, interval].
  package func deadline(interval: Double) -> Double {
    let d = deadlineS > 0 ? deadlineS : deadlineFraction * interval
    return min(max(0, d), interval)
  }
}

/// TailEnder: a timer whose fetches wait for someone else's radio tail.
///
/// A fetch becomes due every `interval` seconds from the window start, as
/// with ``PeriodicPolicy``. It is deferred until an opportunity, when the
/// radio is already active or in its tail (``PolicyContext/radioQuietGapS``
/// below ``TailEnderParameters/tailS``), or until the deadline passes,
/// whichever comes first; at most one fetch per due period (Balasubramanian
/// et al., IMC 2009). Opportunities are noticed at the due
/// time itself and after every observed event after which the radio is
/// busy (another app's open, a wake); a fetch started there pays only the
/// transfer and the tail it extends (the isolated-transfer energy of ``RadioProfile``).
///
/// The app's own opens are not opportunities: with foreground refresh the
/// open already brings the content. A period whose deadline finds the device
/// offline is skipped (launching offline would only fail). A fetch still
/// running when another is wanted makes that period a no-op, as for the
/// timer.
///
/// Every fetch starts in [due, due + deadline] of its period, and there are
/// at most as many fetches as the timer makes. A fetch at an opportunity
/// pays only the transfer and the stretch of tail it extends, never more
/// than an isolated one; a fetch at the deadline costs what the timer's
/// does. So the energy per fetch is below the timer's (tested on random
/// traces: 3.5–7 J against 11.3–11.7 J on LTE at 30 min and 1 h).
package struct TailEnderPolicy: IntervalJobPolicy {
  /// The family, `tailender:<interval>[,key=value,...]`.
  package static let family = FamilyInfo(
    "tailender", .interval, style: PolicyStyle(color: "#56B4E9", marker: .star),
    summary:
      "a fetch is due every <interval> but waits, up to its deadline, for another app's radio activity (a tail to ride)")

  package static var observesRadio: Bool { true }

  /// Seconds between due times.
  package let interval: Double
  package let params: TailEnderParameters
  /// Seconds after a due time by which its fetch must have started.
  package let deadline: Double
  /// Due time of the current period (if `pending`) and of the next one.
  var due = 0.0
  var nextDue = 0.0
  var pending = false
  /// The first due time's offset from the window start, as a fraction of
  /// the interval (``TimerPhase``).
  let phase: Double

  /// - Parameter phase: the first due time, as a fraction in (0, 1] of the
  ///   interval after the window start (1: aligned with every other app).
  package init(interval: Double, params: TailEnderParameters = TailEnderParameters(), phase: Double = 1) {
    precondition(interval > 0 && interval.isFinite, "tailender interval must be positive and finite")
    self.interval = interval
    self.params = params
    self.phase = phase
    deadline = params.deadline(interval: interval)
  }

  package mutating func start(_ ctx: inout PolicyContext) {
    nextDue = ctx.now + interval * phase
    pending = false
    ctx.setTimer(at: nextDue)
  }

  /// Whether the radio is busy or in its tail now.
  func radioIsWarm(_ ctx: PolicyContext) -> Bool {
    ctx.network != .offline && ctx.radioQuietGapS < params.tailS
  }

  /// Starts the pending fetch if possible; the period is over either way.
  mutating func launch(_ ctx: inout PolicyContext) {
    pending = false
    guard !ctx.fetchInFlight, ctx.network != .offline else { return }
    ctx.requestFetch()
  }

  mutating func arm(_ ctx: inout PolicyContext) {
    ctx.setTimer(at: pending ? min(due + deadline, nextDue) : nextDue)
  }

  package mutating func timerFired(_ ctx: inout PolicyContext) {
    if pending && ctx.now >= due + deadline { launch(&ctx) }
    if ctx.now >= nextDue {
      // A new period; a still-pending older one (deadline = interval) was
      // launched just above.
      due = nextDue
      nextDue += interval
      pending = true
      if radioIsWarm(ctx) && !ctx.fetchInFlight || deadline == 0 { launch(&ctx) }
    }
    arm(&ctx)
  }

  package mutating func observe(_ event: TraceEvent, _ ctx: inout PolicyContext) {
    // A location wake goes only to apps registered for it (location-wake).
    guard pending, !ctx.fetchInFlight else { return }
    if event.kind == .open && event.app == ctx.app { return }
    if radioIsWarm(ctx) {
      launch(&ctx)
      arm(&ctx)
    }
  }
}

/// `tailender:<interval>[,key=value,...]`.
package typealias TailEnderFamily = IntervalJobFamily<TailEnderPolicy>
