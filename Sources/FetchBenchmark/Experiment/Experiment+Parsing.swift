import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces
import FetchWorld
import Foundation

extension Experiment {
  /// The keys of an experiment file's top-level object.
  static let topLevelKeys = [
    "name", "datasets", "train_fraction", "apps", "world", "world_variants", "policies", "replications", "seed",
    "event_files", "unit_users", "energy",
  ]

  /// The `energy` key: `battery` (the default) or `total`.
  static func parseEnergy(_ o: JSONObjectReader) throws -> EnergyBasis {
    guard let s = try o.string("energy") else { return .standard }
    guard let b = EnergyBasis(rawValue: s) else {
      throw o.error("energy", o.member("energy")!.line, "expected \"battery\" or \"total\", got '\(s)'")
    }
    return b
  }

  // MARK: - Datasets

  /// The `datasets` array, in file order: each with a valid, distinct name
  /// and exactly one of `trace` (resolved to a regular file) and `synthetic`
  /// (whose seed defaults to the experiment's `seed`).
  ///
  /// - Throws: ``TraceFormatError`` naming the dataset's key path.
  static func parseDatasets(
    _ o: JSONObjectReader, seed: UInt64, baseDirectory: String, currentDirectory: String
  ) throws -> [Dataset] {
    guard let ds = o.member("datasets") else { throw o.missing("datasets") }
    guard case .array(let items) = ds.value.value, !items.isEmpty else {
      throw o.error("datasets", ds.line, "expected a non-empty array of datasets")
    }
    var datasets: [Dataset] = []
    for (i, item) in items.enumerated() {
      datasets.append(
        try parseDataset(
          item, index: i, after: datasets, file: o.file, seed: seed, baseDirectory: baseDirectory,
          currentDirectory: currentDirectory))
    }
    return datasets
  }

  /// Dataset `i` of the file, `item`; `earlier` are the datasets before it
  /// (its name must differ from theirs).
  static func parseDataset(
    _ item: LocatedJSON, index i: Int, after earlier: [Dataset], file: String, seed: UInt64, baseDirectory: String,
    currentDirectory: String
  ) throws -> Dataset {
    let p = "datasets[\(i)]"
    let d = try JSONObjectReader(item, path: p, file: file, allowed: ["name", "trace", "synthetic"])
    guard let n = try d.string("name") else { throw d.missing("name") }
    guard Self.isValidName(n) else {
      throw d.error("name", d.member("name")?.line ?? item.line, "'\(n)': use letters, digits, '.', '_' and '-' (not starting with '.')")
    }
    if earlier.contains(where: { $0.name == n }) {
      throw d.error("name", d.member("name")?.line ?? item.line, "duplicate dataset name '\(n)'")
    }
    let trace = try d.string("trace")
    let synth = d.member("synthetic")
    switch (trace, synth) {
    case (let t?, nil):
      let line = d.member("trace")?.line ?? item.line
      let resolved = try resolveTrace(t, reader: d, line: line, base: baseDirectory, current: currentDirectory)
      return Dataset(name: n, source: .trace(path: resolved))
    case (nil, let s?):
      let synthetic = try parseSynthetic(s.value, path: p + ".synthetic", file: file, seed: seed)
      return Dataset(name: n, source: .synthetic(synthetic))
    case (nil, nil):
      throw d.error("-", item.line, "a dataset needs 'trace' or 'synthetic'")
    case (_?, _?):
      throw d.error("-", item.line, "a dataset has either 'trace' or 'synthetic', not both")
    }
  }

  /// The path of the trace `t` (see ``resolve(_:base:current:)``), which
  /// must be a regular file: a trace is read twice (hashed, then replayed),
  /// and a device or a pipe such as /dev/zero would never end.
  static func resolveTrace(
    _ t: String, reader d: JSONObjectReader, line: Int, base: String, current: String
  ) throws -> String {
    guard let resolved = Self.resolve(t, base: base, current: current) else {
      throw d.error("trace", line, "cannot find '\(t)' (looked in \(base) and \(current))")
    }
    var st = stat()
    guard stat(resolved, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
      throw d.error("trace", line, "'\(t)' is not a regular file")
    }
    return resolved
  }

  /// A dataset's `synthetic` object at key path `sp`: users, days, the
  /// generator seed (default `seed`) and parameter overrides.
  static func parseSynthetic(_ node: LocatedJSON, path sp: String, file: String, seed: UInt64) throws -> Dataset.Synthetic {
    let r = try JSONObjectReader(node, path: sp, file: file, allowed: ["users", "days", "seed", "params"])
    guard let users = try r.int("users", min: 1, max: 10_000_000) else { throw r.missing("users") }
    guard let days = try r.int("days", min: 1, max: 3_650) else { throw r.missing("days") }
    let synthSeed = try r.uint64("seed") ?? seed
    var params = SyntheticPopulation.Parameters()
    if let pm = r.member("params") {
      guard case .object = pm.value.value else { throw r.error("params", pm.line, "expected an object") }
      params = try SyntheticPopulation.Parameters.load(pm.value, file: file, field: sp + ".params")
    }
    return Dataset.Synthetic(users: users, days: days, seed: synthSeed, parameters: params)
  }

  // MARK: - Names and paths

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

  // MARK: - Policies

  /// The `policies` array expanded into configurations (see
  /// ``expandBraces(_:limit:)``), in file order: at most
  /// ``maxConfigurations``, each string at most ``maxPolicyBytes`` bytes,
  /// no two naming the same canonical configuration.
  static func parsePolicies(_ o: JSONObjectReader) throws -> [Configuration] {
    let file = o.file
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
      guard pattern.utf8.count <= Self.maxPolicyBytes else {
        throw TraceFormatError(
          file: file, line: item.line, field: field,
          message: "policy string of \(pattern.utf8.count) bytes is longer than \(Self.maxPolicyBytes) bytes")
      }
      do {
        expanded = try expandBraces(pattern, limit: Self.maxConfigurations - configs.count)
      } catch {
        throw TraceFormatError(file: file, line: item.line, field: field, message: "\(error)")
      }
      for e in expanded {
        let c = try parseConfiguration(e, pattern: pattern, file: file, line: item.line, field: field)
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
    return configs
  }

  /// The configuration of `e`, one expansion of `pattern`; a parse error
  /// names the pattern when it differs from `e`.
  static func parseConfiguration(
    _ e: String, pattern: String, file: String, line: Int, field: String
  ) throws -> Configuration {
    let spec: PolicySpec
    do {
      spec = try PolicySpec(parsing: e)
    } catch {
      let from = e == pattern ? "" : " (expanded from '\(pattern)')"
      throw TraceFormatError(file: file, line: line, field: field, message: "\(error)\(from)")
    }
    return Configuration(spec: spec, pattern: pattern, expanded: e)
  }

  // MARK: - World, apps and split

  /// The experiment's world and the datasets with their own worlds, from
  /// the `world` object (see ``applyWorld(_:line:to:file:)``); the default
  /// world and `datasets` unchanged without one.
  static func parseWorld(
    _ o: JSONObjectReader, datasets: [Dataset]
  ) throws -> (world: WorldParameters, datasets: [Dataset]) {
    let w = o.member("world")
    if let w, case .object = w.value.value {} else if let w {
      throw o.error("world", w.line, "expected an object of parameter overrides")
    }
    if let v = o.member("world_variants") {
      return try Self.applyVariants(v.value, base: w?.value, to: datasets, file: o.file)
    }
    guard let w else { return (WorldParameters(), datasets) }
    return try Self.applyWorld(w.value, line: w.line, to: datasets, file: o.file)
  }

  /// The `apps` selection, `top:3` by default.
  static func parseApps(_ o: JSONObjectReader) throws -> AppSelection {
    let appsText = try o.string("apps") ?? "top:3"
    do {
      return try AppSelection(parsing: appsText)
    } catch {
      throw o.error("apps", o.member("apps")?.line ?? 0, "\(error)")
    }
  }

  /// The `train_fraction`, in [0, 1); ``RunConfiguration/defaultTrainFraction`` by default.
  static func parseTrainFraction(_ o: JSONObjectReader) throws -> Double {
    guard let f = try o.double("train_fraction") else { return RunConfiguration.defaultTrainFraction }
    guard f >= 0, f < 1 else { throw o.error("train_fraction", o.member("train_fraction")?.line ?? 0, "must be in [0, 1), got \(f)") }
    return f
  }

  // MARK: - Sizes

  /// Refuses the experiment when its estimated size exceeds `limits` (see
  /// ``check(limits:)``), with the line of the key to blame (`root`'s when
  /// none).
  func refuseIfTooLarge(_ limits: ResourceLimits, reader o: JSONObjectReader, root: LocatedJSON) throws {
    if let (key, message) = check(limits: limits) {
      let line = key.flatMap { Self.line(ofKey: $0, in: o) }
      throw TraceFormatError(file: o.file, line: line ?? root.line, field: key ?? "-", message: message)
    }
  }

  /// The line of key path `k` in the file: a top-level key's, or for
  /// `datasets[i].synthetic.users` that of `users` (else of the synthetic
  /// object); `nil` when absent.
  static func line(ofKey k: String, in o: JSONObjectReader) -> Int? {
    if let i = k.firstIndex(of: ".") {
      // datasets[i].synthetic.users: the synthetic object's line.
      let head = String(k[..<i])
      guard head.hasPrefix("datasets["), let n = Int(head.dropFirst(9).dropLast()),
        case .array(let items)? = o.member("datasets")?.value.value, n < items.count,
        case .object(let ms) = items[n].value, let syn = ms.first(where: { $0.key == "synthetic" })
      else { return nil }
      if case .object(let sms) = syn.value.value, let u = sms.first(where: { $0.key == "users" }) { return u.line }
      return syn.line
    }
    return o.member(k)?.line
  }
}
