import FetchTraces
import FetchWorld

/// Which models the planner plans with (`models=`).
///
/// - ``learned``: the habit model, the update rate learned from its own
///   fetches and the device models fitted on the training window.
/// - ``truth``: the **model oracle** of a synthetic population: the
///   generator's intensity of the app's opens given the opens seen
///   (``ConditionalOpens``) and its content-update rate
///   (``SyntheticTruth``) in place of the habit model and the learned
///   update rate; the rest of the plan (the device models, the activity of
///   the other apps, the app-transition model, the pacing) is the learned
///   planner's. It knows the models the trace was drawn from, not the
///   draws, so the planner against it is the loss of learning, and it
///   against `oracle-budget:…,know=opens` the price of not knowing the
///   future. Only where the run knows the generator (an experiment's
///   `synthetic` dataset); elsewhere the run refuses it.
package enum PlannerModels: String, CaseIterable, Sendable, Hashable {
  case learned
  case truth = "true"
}

/// The generator's truth of one app, as the model oracle reads it.
package struct PlannerTruth: Sendable {
  let truth: SyntheticTruth
  /// The trace's app names (events name apps by their index here), and this one.
  let apps: [String]
  let app: String
  /// The update rate of an app without `update` rows: the world's content
  /// model's, per s.
  let modelRate: Double
  /// The opens seen, as the conditional intensity needs them.
  var opens: ConditionalOpens

  /// The truth of `app` with the opens of `training`'s last hours recorded.
  package init(truth: SyntheticTruth, training: UserTrace, app: String, content: ContentUpdates) {
    self.truth = truth
    apps = training.apps
    self.app = app
    modelRate = content.updateRate(app: app)
    opens = ConditionalOpens(truth: truth)
    let from = training.end - ConditionalOpens.memoryS
    for e in training.events where e.kind == .open && e.time >= from { record(e) }
  }

  /// Records `event` when it is an open.
  mutating func record(_ event: TraceEvent) {
    guard event.kind == .open, event.app >= 0, Int(event.app) < apps.count else { return }
    opens.record(openAt: event.time, length: event.value, app: apps[Int(event.app)])
  }

  /// Intensity of the app's opens at `t` given the opens recorded (none
  /// between the last and `t`), per s.
  func openIntensity(at t: Double) -> Double { opens.intensity(app: app, at: t) }

  /// The content-update rate at `t`, per s.
  func updateRate(at t: Double) -> Double { truth.updateRate(app: app, at: t) ?? modelRate }
}

extension PolicySpec {
  /// Whether the policy plans with the generator's truth (`models=true`),
  /// which only a synthetic dataset's run can give it.
  package var needsGeneratorTruth: Bool {
    (configuration as? PlannerParameters)?.models == .truth
  }
}
