/// What one replay covers (``ReplaySwitches/scope``).
package enum ReplayScope: String, Sendable, CaseIterable {
  /// All modelled apps of a user's device in one walk, on one radio per interface.
  case device
  /// Each app alone, with a radio of its own.
  case app
}

/// The modelling choices of a replay (`replay.*`): what it covers, whether
/// fetches share the radio with the user, when content lands, how timers
/// are phased, and whether opens refresh in the foreground.
package struct ReplaySwitches: Sendable, Equatable {
  /// Whether an app open refreshes the content in the foreground (resets
  /// staleness; not charged to the policy).
  package var foregroundRefresh = true
  /// What one replay covers: a whole device (all modelled apps on one radio
  /// and one walk) or one app on a radio of its own (the literature's
  /// per-app semantics). Default `device`: a phone has one radio, so apps
  /// that fetch together share a promotion and a tail.
  package var scope = ReplayScope.device
  /// Whether background fetches share the radio with the user's own
  /// activity (sessions and other apps' wakes): a fetch inside a session's
  /// tail pays only its increment. Default on (the radio is physically
  /// shared); off gives the per-flow models of papers that charge each
  /// fetch from its own radio state.
  package var shareUserRadio = true
  /// Whether a fetch's content lands at its start (instantaneous, as in
  /// analytic freshness models; its energy still counts its duration)
  /// rather than at its completion. Default timed: the content is as of
  /// the response, which arrives after promotion, request, latency and
  /// transfer.
  package var instantTransfers = false
  /// Whether every app's own timers start together, one interval after the
  /// window start (perfect OS batching), rather than at each (user, app)'s
  /// own phase drawn from the seed. Default off: independent apps are
  /// independent.
  package var alignedTimers = false

  /// The documented defaults.
  package init() {}
}
