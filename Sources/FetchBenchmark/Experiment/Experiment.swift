import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces
import FetchWorld
import Foundation

/// An experiment file: datasets × policy configurations × replications, run
/// by `fetchlab run EXPERIMENT.json --out DIR` (resumable; see
/// ``runExperiment(_:directory:options:progress:)``).
///
/// The output directory gets the files of `run --trace` with two leading
/// columns `dataset,replication` in `summary.csv`, `opens.csv`,
/// `fetches.csv` and `pooled.csv` (one row per dataset × replication ×
/// configuration), `manifest.json` (this file's text, the expanded
/// configurations, the replication seeds, input SHA-256s, counts, threads,
/// times), `parts/` (finished work units, kept so that a rerun resumes) and
/// `datasets/` (generated synthetic traces).
///
/// The file is one JSON object. Every key (unknown keys, duplicate keys and
/// wrong types are errors of the form `file:line: key.path: message`):
///
/// | key | type | default | meaning |
/// |---|---|---|---|
/// | `name` | string | file name without `.json` | a label, recorded in the manifest |
/// | `datasets` | array, ≥ 1 | required | traces to replay, in output order |
/// | `datasets[i].name` | string | required | `[A-Za-z0-9._-]`, unique; the `dataset` column |
/// | `datasets[i].trace` | string | – | a canonical trace file; relative paths are looked up from the experiment file's directory, then the current directory |
/// | `datasets[i].synthetic` | object | – | a synthetic population, generated once into `DIR/datasets/<name>.csv` |
/// | `….synthetic.users` | integer ≥ 1 | required | users `u00001`… |
/// | `….synthetic.days` | integer ≥ 1 | required | days per user |
/// | `….synthetic.seed` | integer ≥ 0 | the experiment's `seed` | generator seed (the trace is the same in every replication) |
/// | `….synthetic.params` | object | `{}` | generator parameter overrides, as `fetchlab synth --params` |
/// | `train_fraction` | number in [0, 1) | 0.75 with a learning policy, else 0 | as `run --train-fraction` |
/// | `apps` | string | `"top:3"` | as `run --apps` (`top:K`, `min-opens:N`, `names:A,B`) |
/// | `world` | object | `{}` | world-parameter overrides, as `run --config` (dotted or nested names, `fetchlab params`) |
/// | `policies` | array of strings, ≥ 1 | required | policy strings with `{a,b,…}` grids (below) |
/// | `replications` | integer ≥ 1 | 1 | independent repetitions of every random draw |
/// | `seed` | integer in [0, 2⁶⁴) | 1 | master seed |
/// | `event_files` | boolean | true | write `opens.csv` and `fetches.csv` |
/// | `unit_users` | integer ≥ 1 | 64 | users per resumable work unit (output does not depend on it, only resume granularity) |
///
/// Each dataset has exactly one of `trace` and `synthetic`.
///
/// **Grids.** A policy string may hold brace groups `{a,b,c}`: each group is
/// replaced by each of its comma-separated alternatives, several groups give
/// the Cartesian product (the leftmost group varies slowest), and groups may
/// nest (`{never,periodic:{1h,2h}}`). Alternatives are split at commas
/// outside nested braces, so one alternative cannot hold a comma: write
/// `tailender:{1h,2h},key=value` rather than a group of whole setting lists,
/// or list such strings separately. Each expanded string is parsed by
/// ``PolicySpec/init(parsing:)``; its canonical ``PolicySpec/description`` is
/// the configuration's name, and two strings naming the same configuration
/// (`periodic:60m`, `periodic:1h`) are an error.
///
/// **Sizes.** An experiment whose estimated size (``estimate()``: result
/// cells, policy-user-days, peak memory, output bytes) exceeds
/// ``ResourceLimits/current`` is refused while the file is read, with the
/// estimate, the limit and what to change; so are files over
/// ``maxFileBytes``, policy strings over ``maxPolicyBytes`` and brace groups
/// nested or chained more than 64 deep.
///
/// **Replications.** Replication `r` (0-based) replays with seed
/// `StableHash.combine(seed, UInt64(r))` (``replicationSeed(_:)``): content
/// updates, response sizes and every other random draw of the world change
/// between replications; the traces, and so the opens, do not.
/// `fetchlab run --trace T --seed S` is the one-dataset, one-replication
/// experiment whose replication seed is `S`.
public struct Experiment: Sendable {
  /// One trace to replay.
  public struct Dataset: Sendable {
    /// Where the trace comes from.
    package enum Source: Sendable {
      /// A trace file (resolved path).
      case trace(path: String)
      /// A synthetic population generated into the output directory.
      case synthetic(Synthetic)
    }

    /// A synthetic population's generator settings.
    package struct Synthetic: Sendable, Equatable {
      package var users: Int
      package var days: Int
      package var seed: UInt64
      package var parameters: SyntheticPopulation.Parameters

      /// The parameters as one line of JSON with sorted keys.
      package var parametersJSON: String {
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? enc.encode(parameters)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
      }
    }

    /// The dataset's name (the `dataset` column).
    public var name: String
    package var source: Source
    /// The world of this dataset's replays when a world-parameter grid
    /// gives it its own (`nil`: the experiment's ``Experiment/world``;
    /// see ``Experiment/world(of:)``).
    package var world: WorldParameters?
    /// Where this dataset sits in a world grid or among world variants
    /// (nil without either).
    package var worldPoint: WorldPoint?
  }

  /// A dataset's place among the worlds of a grid or of `world_variants`:
  /// the dataset it was expanded from and the point's label and changes.
  package struct WorldPoint: Sendable, Equatable {
    /// The dataset of the file it was expanded from.
    package var base: String
    /// The point's label (`<parameter>-<value>...` or the variant's name).
    package var label: String
    /// The parameters the point sets, `name=value` joined by `; `.
    package var changed: String
    /// Whether this is the first point, the one the others are compared with.
    package var isReference: Bool
  }

  /// The world points of the datasets, in dataset order (empty without a
  /// world grid or variants).
  package var worldPoints: [(dataset: String, point: WorldPoint)] {
    datasets.compactMap { d in d.worldPoint.map { (d.name, $0) } }
  }

  /// The world `d` is replayed in: its grid point's, else the experiment's.
  package func world(of d: Dataset) -> WorldParameters { d.world ?? world }

  /// One policy configuration after grid expansion.
  public struct Configuration: Sendable {
    /// The parsed policy configuration.
    public var spec: PolicySpec
    /// The policy string of the file it was expanded from.
    package var pattern: String
    /// The expanded string (before canonicalisation).
    package var expanded: String
    /// The canonical name (`spec.description`).
    package var name: String { spec.description }
  }

  /// The experiment file, as given.
  public var path: String
  /// The file's text.
  package var text: String
  /// The experiment's name.
  public var name: String
  /// The datasets, in file order.
  public var datasets: [Dataset]
  /// Expanded, canonical, distinct, in file order.
  public var configurations: [Configuration]
  package var trainFraction: Double
  package var apps: AppSelection
  /// The world parameters of every replay.
  public var world: WorldParameters
  /// Replications of each dataset (synthetic ones are redrawn with ``replicationSeed(_:)``).
  public var replications: Int
  /// The experiment's base seed.
  public var seed: UInt64
  package var eventFiles: Bool
  package var unitUsers: Int
  /// The energy its scores, report and robustness rank on (`"energy"`:
  /// `battery`, the default, or `total`).
  public var energy: EnergyBasis

  /// The policies in output order.
  public var policies: [PolicySpec] { configurations.map(\.spec) }

  /// The seed of replication `r`: `StableHash.combine(seed, UInt64(r))`.
  package func replicationSeed(_ r: Int) -> UInt64 {
    precondition(r >= 0, "replication index must be ≥ 0")
    return StableHash.combine(seed, UInt64(r))
  }

  /// Longest accepted experiment file, in bytes (real ones are a few kB;
  /// this bounds the parser's memory at about 30× the file).
  package static let maxFileBytes = 4 << 20

  /// Reads and checks an experiment file, refusing one whose estimated
  /// size exceeds `limits` (see ``estimate()`` and ``check(limits:)``).
  ///
  /// - Throws: ``TraceFormatError`` naming the file, line and key path.
  public init(
    contentsOf path: String, currentDirectory: String = FileManager.default.currentDirectoryPath,
    limits: ResourceLimits = .current
  ) throws {
    let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int
    if let size, size > Self.maxFileBytes {
      throw TraceFormatError(
        file: path, line: 0, field: "-",
        message: "experiment file of \(size) bytes is larger than \(Self.maxFileBytes) bytes; is it the right file?")
    }
    guard let data = FileManager.default.contents(atPath: path) else {
      throw TraceFormatError(file: path, line: 0, field: "-", message: "cannot read experiment file")
    }
    guard let text = String(validating: data, as: UTF8.self) else {
      throw TraceFormatError(file: path, line: 0, field: "-", message: "not valid UTF-8")
    }
    let dir = (path as NSString).deletingLastPathComponent
    try self.init(
      text: text, file: path, baseDirectory: dir.isEmpty ? "." : dir, currentDirectory: currentDirectory,
      limits: limits)
  }

  /// Parses an experiment from `text`; `file` names it in errors, relative
  /// trace paths are looked up in `baseDirectory`, then `currentDirectory`.
  /// An experiment whose estimated size exceeds `limits` is refused (see
  /// ``check(limits:)``).
  ///
  /// The keys are read in a fixed order (scalars, datasets, policies, world,
  /// apps, train fraction), so that the first error reported is always the
  /// same one; the size check comes last, before anything is generated or
  /// replayed.
  public init(
    text: String, file: String, baseDirectory: String, currentDirectory: String, limits: ResourceLimits = .current
  ) throws {
    path = file
    self.text = text
    guard text.utf8.count <= Self.maxFileBytes else {
      throw TraceFormatError(
        file: file, line: 0, field: "-",
        message: "experiment text of \(text.utf8.count) bytes is larger than \(Self.maxFileBytes) bytes")
    }
    let root = try LocatedJSON.parse(text, file: file)
    let o = try JSONObjectReader(root, path: "", file: file, allowed: Self.topLevelKeys)
    let base = ((file as NSString).lastPathComponent as NSString).deletingPathExtension
    name = try o.string("name") ?? base
    seed = try o.uint64("seed") ?? 1
    replications = try o.int("replications", min: 1, max: 1_000_000) ?? 1
    eventFiles = try o.bool("event_files") ?? true
    unitUsers = try o.int("unit_users", min: 1, max: 1_000_000) ?? 64
    energy = try Self.parseEnergy(o)
    let datasets = try Self.parseDatasets(
      o, seed: seed, baseDirectory: baseDirectory, currentDirectory: currentDirectory)
    self.datasets = datasets
    configurations = try Self.parsePolicies(o)
    try Self.refuseTruthWithoutGenerator(o, configurations, datasets)
    (world, self.datasets) = try Self.parseWorld(o, datasets: datasets)
    apps = try Self.parseApps(o)
    trainFraction = try Self.parseTrainFraction(o)
    try refuseIfTooLarge(limits, reader: o, root: root)
  }

  /// Most policy configurations after grid expansion.
  package static let maxConfigurations = 10_000
  /// Longest policy string (before expansion), in bytes.
  package static let maxPolicyBytes = 4_096
}
