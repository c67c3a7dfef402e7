import FetchTraces
import Foundation

/// A read-only view of a user's device models for a policy: it is fed the
/// device rows the policy has seen (``observe(_:)``, in time order) and
/// answers, for a moment `t` at or after them, what the models expect
/// next — the chance of being on the charger within the plugged horizon,
/// and of being on WiFi / offline at the network horizon
/// (``DeviceModels/probabilities(at:timeline:fallback:clock:)``). ``PlannerPolicy`` (in FetchSimulation) uses it to
/// weigh deferring a fetch to a cheaper moment.
package struct DeviceOutlook: Sendable {
  /// The user's models and the population's (used where the user has none).
  package let models: DeviceModels
  package let fallback: DeviceModels
  /// Horizons of the answers.
  package let options: DeviceModelOptions
  /// The device rows seen so far.
  package private(set) var timeline: DeviceTimeline
  private var clock: LocalClock

  /// An outlook for the user of `user`, starting from the device rows of
  /// `history` (e.g. the training window).
  package init(user: ModelFile.UserModels, file: ModelFile, history: UserTrace) {
    models = user.device
    fallback = file.devicePopulation
    options = file.options.device
    timeline = DeviceTimeline(history)
    clock = LocalClock(user.timeZone)
  }

  /// An outlook from models fitted elsewhere (e.g. by a policy on its
  /// training window), starting from the device rows of `history`.
  package init(models: DeviceModels, fallback: DeviceModels, options: DeviceModelOptions, history: UserTrace) {
    self.models = models
    self.fallback = fallback
    self.options = options
    timeline = DeviceTimeline(history)
    clock = LocalClock(history.timeZone)
  }

  /// Records a row the policy has seen (non-device rows are ignored).
  package mutating func observe(_ e: TraceEvent) { timeline.append(e) }

  /// All three answers of the models at `t` (one evaluation): P(plugged
  /// within the plugged horizon), P(WiFi) and P(offline) at the network
  /// horizon; each nil when unknown.
  package mutating func probabilities(from t: Double) -> (plugged: Double?, wifi: Double?, offline: Double?) {
    models.probabilities(at: t, timeline: timeline, fallback: fallback, clock: &clock)
  }

  /// P(on the charger at some moment of [t, t + plugged horizon]); nil when
  /// the charging state is unknown or no model has the target.
  package mutating func probabilityPlugged(from t: Double) -> Double? {
    models.probabilities(at: t, timeline: timeline, fallback: fallback, clock: &clock).plugged
  }

  /// P(on WiFi at t + network horizon); nil when unknown.
  package mutating func probabilityWiFi(from t: Double) -> Double? {
    models.probabilities(at: t, timeline: timeline, fallback: fallback, clock: &clock).wifi
  }

  /// P(offline at t + network horizon); nil when unknown.
  package mutating func probabilityOffline(from t: Double) -> Double? {
    models.probabilities(at: t, timeline: timeline, fallback: fallback, clock: &clock).offline
  }
}
