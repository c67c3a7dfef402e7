import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation

// The configuration that names an experiment's results (its hash is in
// every part record and the manifest).

/// The canonical description of everything that determines the output.
func experimentConfiguration(
  _ e: Experiment, traceHashes: [Int: (bytes: Int, sha256: String)], version: String
) -> [String: Any] {
  [
    "part_format": PartRecord.formatVersion,
    "fetchlab_version": version,
    "datasets": e.datasets.enumerated().map { i, d -> [String: Any] in
      var entry: [String: Any]
      switch d.source {
      case .trace: entry = ["name": d.name, "trace_sha256": traceHashes[i]!.sha256]
      case .synthetic(let s): entry = ["name": d.name, "synthetic": s.spec]
      }
      // A world-grid dataset's own parameters (absent otherwise, so the
      // hash of an experiment without a grid is unchanged).
      if let w = d.world { entry["world_overrides"] = w.overrides() }
      if let p = d.worldPoint { entry["world_point"] = ["base": p.base, "label": p.label, "reference": p.isReference] }
      return entry
    },
    "policies": e.configurations.map(\.name),
    "apps": e.apps.description,
    "train_fraction": e.trainFraction,
    "world_overrides": e.world.overrides(),
    "seed": e.seed,
    "replication_seeds": (0..<e.replications).map { e.replicationSeed($0) },
    "event_files": e.eventFiles,
    "unit_users": e.unitUsers,
    "population_users": RunConfiguration(tracePath: "", policies: []).populationUsers,
  ]
}
