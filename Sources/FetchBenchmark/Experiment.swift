import FetchModels
import FetchSimulation
import FetchTraces
import Foundation

/// An experiment file: datasets × policy configurations × replications, run
/// by `fetchlab run EXPERIMENT.json --out DIR` (resumable; see
/// ``runExperiment(_:directory:options:format:progress:)``).
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
    public enum Source: Sendable {
      /// A trace file (resolved path).
      case trace(path: String)
      /// A synthetic population generated into the output directory.
      case synthetic(Synthetic)
    }

    /// A synthetic population's generator settings.
    public struct Synthetic: Sendable, Equatable {
      public var users: Int
      public var days: Int
      public var seed: UInt64
      public var parameters: SyntheticPopulation.Parameters

      /// The parameters as one line of JSON with sorted keys.
      public var parametersJSON: String {
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? enc.encode(parameters)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
      }
    }

    public var name: String
    public var source: Source
  }

  /// One policy configuration after grid expansion.
  public struct Configuration: Sendable {
    public var spec: PolicySpec
    /// The policy string of the file it was expanded from.
    public var pattern: String
    /// The expanded string (before canonicalisation).
    public var expanded: String
    /// The canonical name (`spec.description`).
    public var name: String { spec.description }
  }

  /// The experiment file, as given.
  public var path: String
  /// The file's text.
  public var text: String
  public var name: String
  public var datasets: [Dataset]
  /// Expanded, canonical, distinct, in file order.
  public var configurations: [Configuration]
  public var trainFraction: Double
  public var apps: AppSelection
  public var world: WorldParameters
  public var replications: Int
  public var seed: UInt64
  public var eventFiles: Bool
  public var unitUsers: Int

  /// The policies in output order.
  public var policies: [PolicySpec] { configurations.map(\.spec) }

  /// The seed of replication `r`: `StableHash.combine(seed, UInt64(r))`.
  public func replicationSeed(_ r: Int) -> UInt64 {
    precondition(r >= 0, "replication index must be ≥ 0")
    return StableHash.combine(seed, UInt64(r))
  }

  /// Reads and checks an experiment file.
  ///
  /// - Throws: ``TraceFormatError`` naming the file, line and key path.
  public init(contentsOf path: String, currentDirectory: String = FileManager.default.currentDirectoryPath) throws {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw TraceFormatError(file: path, line: 0, field: "-", message: "cannot read experiment file")
    }
    guard let text = String(validating: data, as: UTF8.self) else {
      throw TraceFormatError(file: path, line: 0, field: "-", message: "not valid UTF-8")
    }
    let dir = (path as NSString).deletingLastPathComponent
    try self.init(text: text, file: path, baseDirectory: dir.isEmpty ? "." : dir, currentDirectory: currentDirectory)
  }

  /// Parses an experiment from `text`; `file` names it in errors, relative
  /// trace paths are looked up in `baseDirectory`, then `currentDirectory`.
  public init(text: String, file: String, baseDirectory: String, currentDirectory: String) throws {
    path = file
    self.text = text
    let root = try LocatedJSON.parse(text, file: file)
    let o = try JSONObjectReader(
      root, path: "", file: file,
      allowed: [
        "name", "datasets", "train_fraction", "apps", "world", "policies", "replications", "seed", "event_files",
        "unit_users",
      ])
    let base = ((file as NSString).lastPathComponent as NSString).deletingPathExtension
    name = try o.string("name") ?? base
    seed = try o.uint64("seed") ?? 1
    replications = try o.int("replications", min: 1, max: 1_000_000) ?? 1
    eventFiles = try o.bool("event_files") ?? true
    unitUsers = try o.int("unit_users", min: 1, max: 1_000_000) ?? 64

    // Datasets.
    guard let ds = o.member("datasets") else { throw o.missing("datasets") }
    guard case .array(let items) = ds.value.value, !items.isEmpty else {
      throw o.error("datasets", ds.line, "expected a non-empty array of datasets")
    }
    var datasets: [Dataset] = []
    for (i, item) in items.enumerated() {
      let p = "datasets[\(i)]"
      let d = try JSONObjectReader(item, path: p, file: file, allowed: ["name", "trace", "synthetic"])
      guard let n = try d.string("name") else { throw d.missing("name") }
      guard Self.isValidName(n) else {
        throw d.error("name", d.member("name")?.line ?? item.line, "'\(n)': use letters, digits, '.', '_' and '-' (not starting with '.')")
      }
      if datasets.contains(where: { $0.name == n }) {
        throw d.error("name", d.member("name")?.line ?? item.line, "duplicate dataset name '\(n)'")
      }
      let trace = try d.string("trace")
      let synth = d.member("synthetic")
      switch (trace, synth) {
      case (let t?, nil):
        let line = d.member("trace")?.line ?? item.line
        guard let resolved = Self.resolve(t, base: baseDirectory, current: currentDirectory) else {
          throw d.error("trace", line, "cannot find '\(t)' (looked in \(baseDirectory) and \(currentDirectory))")
        }
        datasets.append(Dataset(name: n, source: .trace(path: resolved)))
      case (nil, let s?):
        let sp = p + ".synthetic"
        let r = try JSONObjectReader(s.value, path: sp, file: file, allowed: ["users", "days", "seed", "params"])
        guard let users = try r.int("users", min: 1, max: 10_000_000) else { throw r.missing("users") }
        guard let days = try r.int("days", min: 1, max: 3_650) else { throw r.missing("days") }
        let synthSeed = try r.uint64("seed") ?? seed
        var params = SyntheticPopulation.Parameters()
        if let pm = r.member("params") {
          guard case .object = pm.value.value else { throw r.error("params", pm.line, "expected an object") }
          do {
            let data = try JSONSerialization.data(withJSONObject: pm.value.foundation)
            params = try JSONDecoder().decode(SyntheticPopulation.Parameters.self, from: data)
            try params.validate()
          } catch {
            throw r.error("params", pm.line, "\(error)")
          }
        }
        datasets.append(Dataset(name: n, source: .synthetic(.init(users: users, days: days, seed: synthSeed, parameters: params))))
      case (nil, nil):
        throw d.error("-", item.line, "a dataset needs 'trace' or 'synthetic'")
      case (_?, _?):
        throw d.error("-", item.line, "a dataset has either 'trace' or 'synthetic', not both")
      }
    }
    self.datasets = datasets

    // Policies and their grids.
    guard let ps = o.member("policies") else { throw o.missing("policies") }
    guard case .array(let pitems) = ps.value.value, !pitems.isEmpty else {
      throw o.error("policies", ps.line, "expected a non-empty array of policy strings")
    }
    var configs: [Configuration] = []
    var seen: [String: Int] = [:]
    for (i, item) in pitems.enumerated() {
      let field = "policies[\(i)]"
      guard case .string(let pattern) = item.value else {
        throw TraceFormatError(file: file, line: item.line, field: field, message: "expected a string, got \(item.typeName)")
      }
      let expanded: [String]
      do {
        expanded = try expandBraces(pattern, limit: 10_000 - configs.count)
      } catch {
        throw TraceFormatError(file: file, line: item.line, field: field, message: "\(error)")
      }
      for e in expanded {
        let spec: PolicySpec
        do {
          spec = try PolicySpec(parsing: e)
        } catch {
          let from = e == pattern ? "" : " (expanded from '\(pattern)')"
          throw TraceFormatError(file: file, line: item.line, field: field, message: "\(error)\(from)")
        }
        let c = Configuration(spec: spec, pattern: pattern, expanded: e)
        if let j = seen[c.name] {
          let other = configs[j]
          throw TraceFormatError(
            file: file, line: item.line, field: field,
            message: "'\(e)' and '\(other.expanded)'\(other.pattern == other.expanded ? "" : " (from '\(other.pattern)')") are the same configuration '\(c.name)'")
        }
        seen[c.name] = configs.count
        configs.append(c)
      }
    }
    configurations = configs

    // World, apps, split.
    var world = WorldParameters()
    if let w = o.member("world") {
      guard case .object = w.value.value else { throw o.error("world", w.line, "expected an object of parameter overrides") }
      try world.apply(json: w.value.foundation, file: file, text: text)
    }
    self.world = world
    let appsText = try o.string("apps") ?? "top:3"
    do {
      apps = try AppSelection(parsing: appsText)
    } catch {
      throw o.error("apps", o.member("apps")?.line ?? 0, "\(error)")
    }
    if let f = try o.double("train_fraction") {
      guard f >= 0, f < 1 else { throw o.error("train_fraction", o.member("train_fraction")?.line ?? 0, "must be in [0, 1), got \(f)") }
      trainFraction = f
    } else {
      trainFraction = configs.contains(where: { $0.spec.learns }) ? 0.75 : 0
    }
  }

  /// Whether `s` is usable as a dataset name (it becomes part of file names).
  static func isValidName(_ s: String) -> Bool {
    !s.isEmpty && s.count <= 100 && !s.hasPrefix(".")
      && s.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0)) }
  }

  /// `p` itself when absolute; else `base/p` if that exists, else
  /// `current/p` if that exists; `nil` when none exists.
  static func resolve(_ p: String, base: String, current: String) -> String? {
    let fm = FileManager.default
    if p.hasPrefix("/") { return fm.fileExists(atPath: p) ? p : nil }
    for dir in [base, current] {
      let c = ((dir as NSString).appendingPathComponent(p) as NSString).standardizingPath
      var isDir: ObjCBool = false
      if fm.fileExists(atPath: c, isDirectory: &isDir), !isDir.boolValue { return c }
    }
    return nil
  }
}

/// Reads the members of one JSON object, rejecting unknown and duplicate keys.
struct JSONObjectReader {
  let node: LocatedJSON
  let path: String
  let file: String
  private var members: [String: LocatedJSON.Member] = [:]

  init(_ node: LocatedJSON, path: String, file: String, allowed: [String]) throws {
    self.node = node
    self.path = path
    self.file = file
    guard case .object(let ms) = node.value else {
      throw TraceFormatError(file: file, line: node.line, field: path.isEmpty ? "-" : path, message: "expected an object, got \(node.typeName)")
    }
    for m in ms {
      let field = path.isEmpty ? m.key : path + "." + m.key
      guard allowed.contains(m.key) else {
        throw TraceFormatError(file: file, line: m.line, field: field, message: "unknown key; known: " + allowed.joined(separator: ", "))
      }
      guard members[m.key] == nil else {
        throw TraceFormatError(file: file, line: m.line, field: field, message: "duplicate key")
      }
      members[m.key] = m
    }
  }

  func member(_ key: String) -> LocatedJSON.Member? { members[key] }

  func field(_ key: String) -> String { key == "-" ? (path.isEmpty ? "-" : path) : path.isEmpty ? key : path + "." + key }

  func error(_ key: String, _ line: Int, _ message: String) -> TraceFormatError {
    TraceFormatError(file: file, line: line, field: field(key), message: message)
  }

  func missing(_ key: String) -> TraceFormatError {
    error(key, node.line, "missing (required)")
  }

  private func typed(_ key: String, _ what: String) -> TraceFormatError {
    let m = members[key]!
    return error(key, m.line, "expected \(what), got \(m.value.typeName)")
  }

  func string(_ key: String) throws -> String? {
    guard let m = members[key] else { return nil }
    guard case .string(let s) = m.value.value else { throw typed(key, "a string") }
    return s
  }

  func bool(_ key: String) throws -> Bool? {
    guard let m = members[key] else { return nil }
    guard case .bool(let b) = m.value.value else { throw typed(key, "true or false") }
    return b
  }

  func double(_ key: String) throws -> Double? {
    guard let m = members[key] else { return nil }
    guard case .number(let t) = m.value.value, let x = Double(t), x.isFinite else { throw typed(key, "a number") }
    return x
  }

  func int(_ key: String, min lo: Int, max hi: Int) throws -> Int? {
    guard let m = members[key] else { return nil }
    guard case .number(let t) = m.value.value, let x = Int(t) else { throw typed(key, "an integer") }
    guard x >= lo, x <= hi else { throw error(key, m.line, "must be in [\(lo), \(hi)], got \(x)") }
    return x
  }

  func uint64(_ key: String) throws -> UInt64? {
    guard let m = members[key] else { return nil }
    guard case .number(let t) = m.value.value, let x = UInt64(t) else {
      throw typed(key, "an integer in [0, 2^64)")
    }
    return x
  }
}

/// Expands brace groups: `p{a,b}q` → `paq`, `pbq`; several groups give the
/// Cartesian product with the leftmost group varying slowest; groups nest
/// (`{x,y{1,2}}` → `x`, `y1`, `y2`). A group without a comma is its own
/// single alternative; `{}` is one empty alternative.
///
/// - Throws: ``ExperimentError`` for an unbalanced brace, or when the result
///   would have more than `limit` strings.
/// - Complexity: O(output size).
public func expandBraces(_ s: String, limit: Int = 10_000) throws -> [String] {
  let out = try expand(Array(s), whole: s, limit: max(0, limit))
  return out.map { String($0) }
}

private func expand(_ c: [Character], whole: String, limit: Int) throws -> [[Character]] {
  guard let open = c.firstIndex(where: { $0 == "{" || $0 == "}" }) else { return [c] }
  guard c[open] == "{" else { throw ExperimentError("unbalanced '}' in '\(whole)'") }
  // The matching close and the top-level commas inside.
  var depth = 0
  var close: Int?
  var cuts: [Int] = []
  for i in open..<c.count {
    switch c[i] {
    case "{": depth += 1
    case "}":
      depth -= 1
      if depth == 0 { close = i }
    case "," where depth == 1: cuts.append(i)
    default: break
    }
    if close != nil { break }
  }
  guard let close else { throw ExperimentError("unbalanced '{' in '\(whole)'") }
  let prefix = Array(c[..<open])
  var alternatives: [[Character]] = []
  var from = open + 1
  for cut in cuts + [close] {
    alternatives += try expand(Array(c[from..<cut]), whole: whole, limit: limit)
    from = cut + 1
  }
  let suffixes = try expand(Array(c[(close + 1)...]), whole: whole, limit: limit)
  guard alternatives.count * suffixes.count <= limit else {
    throw ExperimentError("'\(whole)' expands to more than \(limit) policies")
  }
  var out: [[Character]] = []
  out.reserveCapacity(alternatives.count * suffixes.count)
  for a in alternatives {
    for s in suffixes { out.append(prefix + a + s) }
  }
  return out
}

/// A problem running an experiment that is not located in an input file
/// (a directory holding another experiment, a corrupted part, …).
public struct ExperimentError: Error, CustomStringConvertible, Sendable {
  public let description: String
  public init(_ s: String) { description = s }
}
