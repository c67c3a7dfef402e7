import FetchSimulation
import FetchSupport
import FetchTraces

extension Experiment {
  /// A policy that plans with the generator's truth (`planner:…,models=true`)
  /// needs every dataset to be synthetic: a trace file has no generator.
  ///
  /// - Throws: ``TraceFormatError`` naming the policy and the dataset.
  static func refuseTruthWithoutGenerator(_ o: JSONObjectReader, _ configs: [Configuration], _ datasets: [Dataset]) throws {
    guard let c = configs.first(where: { $0.spec.needsGeneratorTruth }) else { return }
    for d in datasets {
      guard case .trace(let path) = d.source else { continue }
      throw o.error(
        "policies", o.member("policies")?.line ?? 0,
        "'\(c.name)' plans with the synthetic generator's models, but dataset '\(d.name)' is a trace (\(path)) with no generator; run it in an experiment of synthetic datasets only")
    }
  }

  /// The generator of dataset `d` when it is synthetic and a policy of the
  /// experiment needs its truth; nil otherwise.
  func generator(of d: Dataset) -> SyntheticPopulation? {
    guard case .synthetic(let s) = d.source, configurations.contains(where: { $0.spec.needsGeneratorTruth }) else { return nil }
    return SyntheticPopulation(seed: s.seed, days: s.days, parameters: s.parameters)
  }
}
