import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld

/// Switches of one replay.
package struct ReplayOptions: Sendable {
  /// Master seed; server-failure draws use the stream keyed by it, the user,
  /// the app and `policyKey`.
  package var seed: UInt64
  /// A stable name for the policy configuration (its spec string).
  package var policyKey: String
  /// Keep per-open and per-fetch records (off for large batch runs).
  package var recordEvents: Bool

  package init(seed: UInt64 = 1, policyKey: String = "", recordEvents: Bool = true) {
    self.seed = seed
    self.policyKey = policyKey
    self.recordEvents = recordEvents
  }
}

/// Replays `user`'s trace against `policy` for the content of `app` alone,
/// with a radio of its own (`replay.scope=app`).
///
/// The same engine as ``replayDevice(_:user:apps:contents:options:)`` with
/// one app: the app's background fetches and foreground refreshes share the
/// radio with the user's activity (when ``ReplaySwitches/shareUserRadio``),
/// but not with other apps' fetches.
///
/// - Complexity: O(events + fetches · log(background intervals)).
package func replay<P: FetchPolicy>(
  _ policy: inout P, user: PreparedUser, app: Int32, content: ContentTimeline,
  options: ReplayOptions = ReplayOptions()
) -> AppReplay {
  var engine = ReplayEngine(user: user, apps: [app], contents: [content], options: options)
  var policies = [policy]
  let r = engine.run(&policies)
  policy = policies[0]
  return r.apps[0]
}

/// Replays one device: every app in `apps` (with its content timeline in
/// `contents`) under its own instance of the policy in `policies`, in one
/// walk over the user's events (`replay.scope=device`).
///
/// A discrete-event simulation over three event sources, merged in time
/// order (at equal times: fetch completions, then trace events, then the
/// policies' timers; among apps, in the order of `apps`):
/// - trace events: opens update the opened app's metrics and, when
///   ``ReplaySwitches/foregroundRefresh`` is on, refresh its content in the
///   foreground (a user-initiated fetch on the device radio, reported apart
///   from the policy's); network, battery and charging rows update the
///   device state; `update` rows are never shown to a policy;
/// - each app's policy timer;
/// - the completion of each app's (single) fetch in flight.
///
/// **One radio per interface.** A fetch started at `s` on a network takes
/// the radio's promotion (if the radio is idle or in a late tail stage), the
/// uplink request, the server latency, and the downlink response; it fails
/// when the device is offline, when the network changes before it
/// completes, when it overruns ``FetchExchange/fetchBudgetS``, or (with
/// probability ``FetchExchange/failureProbability``) on the server. It
/// brings the content as of its completion (as of its start with
/// ``ReplaySwitches/instantTransfers``). Its energy is the CPU wake plus
/// the *marginal* radio energy given all radio activity on that interface
/// known when it is planned: the user's sessions and other apps' wakes
/// (when shared), and every earlier fetch of every app of the device,
/// background or foreground. Fetches are charged in the order they are
/// planned (time order; at the same instant, completions before trace
/// events before timers, and apps in the order given), so the first of two
/// simultaneous fetches pays the promotion and the tail and the second only
/// its increment. The charges telescope: their sum is exactly the device's
/// radio energy with all the fetches minus without them.
///
/// - Precondition: `apps` and `contents` have the same, non-zero count, as
///   do `policies`.
/// - Complexity: O(events · apps + fetches · log(background intervals)).
package func replayDevice<P: FetchPolicy>(
  _ policies: inout [P], user: PreparedUser, apps: [Int32], contents: [ContentTimeline],
  options: ReplayOptions = ReplayOptions()
) -> DeviceReplay {
  precondition(!apps.isEmpty && apps.count == contents.count && apps.count == policies.count, "one policy and content per app")
  precondition(Set(apps).count == apps.count, "each app once")
  var engine = ReplayEngine(user: user, apps: apps, contents: contents, options: options)
  return engine.run(&policies)
}
