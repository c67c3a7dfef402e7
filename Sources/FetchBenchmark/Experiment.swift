import FetchModels
import FetchSimulation
import FetchSupport
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
        // A trace is read twice (hashed, then replayed): a device or a pipe
        // such as /dev/zero would never end.
        var st = stat()
        guard stat(resolved, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
          throw d.error("trace", line, "'\(t)' is not a regular file")
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
          params = try SyntheticPopulation.Parameters.load(pm.value, file: file, field: sp + ".params")
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
      (world, datasets) = try Self.applyWorld(w.value, line: w.line, to: datasets, file: file)
      self.datasets = datasets
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
      trainFraction = RunConfiguration.defaultTrainFraction
    }

    // Sizes: refuse before anything is generated or replayed.
    if let (key, message) = check(limits: limits) {
      let line = key.flatMap { k -> Int? in
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
      throw TraceFormatError(file: file, line: line ?? root.line, field: key ?? "-", message: message)
    }
  }

  /// Most policy configurations after grid expansion.
  package static let maxConfigurations = 10_000
  /// Longest policy string (before expansion), in bytes.
  package static let maxPolicyBytes = 4_096

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

extension Experiment {
  /// A rough, deliberately generous estimate of an experiment's size, made
  /// before anything runs so that an absurd experiment is refused with a
  /// message instead of exhausting memory or disk (see ``ResourceLimits``).
  ///
  /// Per dataset it takes users and user-days from the synthetic settings,
  /// or from a trace's size (``ResourceLimits/traceBytesPerRow`` bytes a
  /// row, ``ResourceLimits/syntheticRowsPerUserDay`` rows a user-day, 7
  /// days a user); ``ResourceLimits/opensPerUserDay`` opens a user-day; at
  /// most 20 replayed apps a user; a timer policy (periodic, ios-custom,
  /// android-workmanager, tailender) 86,400 / interval fetches a pair-day,
  /// any other 50. Output counts the part files and the final files
  /// (twice the rows). Memory is the largest block (``unitUsers`` users'
  /// traces and their results for every replication at once) plus the age
  /// histograms of every (dataset, replication, policy).
  package struct Estimate: Sendable, Equatable {
    /// Bytes written: generated traces, parts and final CSV files.
    package var outputBytes: Double
    /// Of which `opens.csv` and `fetches.csv` (and their parts).
    package var eventFileBytes: Double
    /// Peak memory, in bytes.
    package var memoryBytes: Double
    /// (policy, replication, user-day) replays.
    package var policyUserDays: Double
    /// (dataset, replication, policy) cells, each with an age histogram.
    package var resultCells: Double
  }

  /// Bytes of one age histogram (``AgeHistogram``: 2,600 bins of 8 bytes).
  static let histogramBytes = 20_800.0

  /// The experiment's estimated size (see ``Estimate``).
  package func estimate() -> Estimate {
    let R = Double(replications), C = Double(configurations.count)
    let apps: Double =
      switch self.apps {
      case .top(let k): Double(min(k, 20))
      case .named(let n): Double(min(n.count, 20))
      case .minOpens: 20
      }
    let scored = 1 - trainFraction
    let fetchesPerPairDay = configurations.reduce(0.0) { $0 + $1.spec.expectedFetchesPerDay }
    var e = Estimate(outputBytes: 0, eventFileBytes: 0, memoryBytes: 0, policyUserDays: 0, resultCells: 0)
    var block = 0.0
    for d in datasets {
      let users: Double, userDays: Double
      switch d.source {
      case .synthetic(let s):
        users = Double(s.users)
        userDays = Double(s.users) * Double(s.days)
        e.outputBytes += ResourceLimits.syntheticEstimate(users: s.users, days: s.days).bytes
      case .trace(let p):
        let bytes = Double(((try? FileManager.default.attributesOfItem(atPath: p)[.size]) as? Int) ?? 0)
        userDays = bytes / ResourceLimits.traceBytesPerRow / ResourceLimits.syntheticRowsPerUserDay
        users = max(1, userDays / 7)
      }
      let pairs = users * apps, pairDays = userDays * apps
      let opens = userDays * ResourceLimits.opensPerUserDay * scored
      let fetches = pairDays * scored * fetchesPerPairDay  // over all policies
      let summary = R * C * pairs * ResourceLimits.summaryBytesPerRow
      let events =
        eventFiles ? R * (C * opens * ResourceLimits.openBytesPerRow + fetches * ResourceLimits.fetchBytesPerRow) : 0
      e.outputBytes += 2 * (summary + events)
      e.eventFileBytes += 2 * events
      e.policyUserDays += userDays * C * R
      // One block: its users' events, and per replication and policy their
      // results (a summary, the ages of the opens, the event records) as
      // objects and as CSV text.
      let share = min(Double(unitUsers), users) / users
      let traceMemory = share * userDays * ResourceLimits.syntheticRowsPerUserDay * ResourceLimits.memoryBytesPerEvent
      let results =
        share * R
        * (C * (pairs * 1_000 + opens * (8 + (eventFiles ? 2 * ResourceLimits.openBytesPerRow : 0)))
          + (eventFiles ? fetches * 2 * ResourceLimits.fetchBytesPerRow : 0))
      block = max(block, traceMemory + results)
    }
    e.resultCells = Double(datasets.count) * (R + 1) * C
    e.memoryBytes = block + (e.resultCells + C) * Self.histogramBytes
    return e
  }

  /// The key to blame and the message when the experiment exceeds `limits`;
  /// `nil` when it fits. Messages give the estimate, the limit and what to
  /// change.
  package func check(limits: ResourceLimits) -> (key: String?, message: String)? {
    typealias L = ResourceLimits
    for (i, d) in datasets.enumerated() {
      if case .synthetic(let s) = d.source,
        let m = limits.checkSynthetic(users: s.users, days: s.days, what: "synthetic dataset '\(d.name)'")
      {
        return ("datasets[\(i)].synthetic.users", m)
      }
    }
    let e = estimate()
    let R = replications, C = configurations.count, D = datasets.count
    let biggest = R >= C ? "replications" : "policies"
    if e.resultCells > Double(limits.maxResultCells) {
      return (
        biggest,
        "\(D) datasets × (\(R) replications + 1) × \(C) policies = \(L.countText(e.resultCells)) result cells "
          + "(\(L.bytesText(e.resultCells * Self.histogramBytes)) of age histograms), over the limit of "
          + "\(limits.maxResultCells); use fewer replications or policies (or raise FETCHLAB_MAX_RESULT_CELLS)"
      )
    }
    if e.policyUserDays > limits.maxPolicyUserDays {
      return (
        biggest,
        "about \(L.countText(e.policyUserDays)) policy-user-days to replay (user-days × \(C) policies × \(R) "
          + "replications), over the limit of \(L.countText(limits.maxPolicyUserDays)); use fewer replications, "
          + "policies or users (or raise FETCHLAB_MAX_POLICY_USER_DAYS)"
      )
    }
    if e.memoryBytes > limits.maxMemoryBytes {
      return (
        unitUsers > 1 ? "unit_users" : biggest,
        "estimated peak memory \(L.bytesText(e.memoryBytes)) (\(unitUsers) users a unit × \(R) replications × "
          + "\(C) policies), over the limit of \(L.bytesText(limits.maxMemoryBytes)); use a smaller unit_users, "
          + "fewer replications or policies\(eventFiles ? ", or \"event_files\": false" : "") "
          + "(or raise FETCHLAB_MAX_MEMORY_MB)"
      )
    }
    if e.outputBytes > limits.maxOutputBytes {
      let events = e.eventFileBytes > e.outputBytes / 2
      return (
        events ? "event_files" : biggest,
        "estimated output \(L.bytesText(e.outputBytes))"
          + (events ? " (\(L.bytesText(e.eventFileBytes)) of opens.csv and fetches.csv)" : "")
          + ", over the limit of \(L.bytesText(limits.maxOutputBytes)); "
          + (events ? "set \"event_files\": false (the summary and scores do not change), or use " : "use ")
          + "fewer replications, policies or users, or longer timer intervals (or raise FETCHLAB_MAX_OUTPUT_MB)"
      )
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
      let key = JSONObjectReader.displayKey(m.key)
      let field = path.isEmpty ? key : path + "." + key
      guard allowed.contains(m.key) else {
        throw TraceFormatError(file: file, line: m.line, field: field, message: "unknown key; known: " + allowed.joined(separator: ", "))
      }
      guard members[m.key] == nil else {
        throw TraceFormatError(file: file, line: m.line, field: field, message: "duplicate key")
      }
      members[m.key] = m
    }
  }

  /// A key as it appears in a field path: as is when it is a plain name,
  /// else JSON-quoted (an empty key, spaces, dots, control characters).
  static func displayKey(_ key: String) -> String {
    let plain = !key.isEmpty && key.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "_" || $0 == "-") }
    guard !plain else { return key }
    var out = "\""
    for u in key.unicodeScalars.prefix(80) {
      switch u {
      case "\"", "\\": out += "\\" + String(u)
      case _ where u.value < 0x20 || u.value == 0x7F: out += "\\u" + String(u.value, radix: 16).leftPadded(4)
      default: out.unicodeScalars.append(u)
      }
    }
    return out + (key.unicodeScalars.count > 80 ? "…\"" : "\"")
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

extension String {
  fileprivate func leftPadded(_ n: Int) -> String { String(repeating: "0", count: max(0, n - count)) + self }
}

/// Expands brace groups: `p{a,b}q` → `paq`, `pbq`; several groups give the
/// Cartesian product with the leftmost group varying slowest; groups nest
/// (`{x,y{1,2}}` → `x`, `y1`, `y2`). A group without a comma is its own
/// single alternative; `{}` is one empty alternative.
///
/// - Throws: ``ExperimentError`` for an unbalanced brace, or when the result
///   would have more than `limit` strings.
/// - Complexity: O(output size).
package func expandBraces(_ s: String, limit: Int = 10_000) throws -> [String] {
  let out = try expand(Array(s), whole: s, limit: max(0, limit), level: 0)
  return out.map { String($0) }
}

/// Deepest accepted brace nesting (and longest run of groups) in a policy
/// string; bounds the recursion.
let maxBraceDepth = 64

private func expand(_ c: [Character], whole: String, limit: Int, level: Int) throws -> [[Character]] {
  guard let open = c.firstIndex(where: { $0 == "{" || $0 == "}" }) else { return [c] }
  guard level < maxBraceDepth else {
    throw ExperimentError(.badPolicyPattern, "'\(whole.prefix(80))\(whole.count > 80 ? "…" : "")' nests or chains more than \(maxBraceDepth) brace groups")
  }
  guard c[open] == "{" else { throw ExperimentError(.badPolicyPattern, "unbalanced '}' in '\(whole)'") }
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
  guard let close else { throw ExperimentError(.badPolicyPattern, "unbalanced '{' in '\(whole)'") }
  let prefix = Array(c[..<open])
  var alternatives: [[Character]] = []
  var from = open + 1
  for cut in cuts + [close] {
    alternatives += try expand(Array(c[from..<cut]), whole: whole, limit: limit, level: level + 1)
    guard alternatives.count <= limit else {
      throw ExperimentError(.badPolicyPattern, "'\(whole)' expands to more than \(limit) policies")
    }
    from = cut + 1
  }
  let suffixes = try expand(Array(c[(close + 1)...]), whole: whole, limit: limit, level: level + 1)
  guard alternatives.count * suffixes.count <= limit else {
    throw ExperimentError(.badPolicyPattern, "'\(whole)' expands to more than \(limit) policies")
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
///
/// A public struct over an internal enum (like `LinearAlgebraError`): match
/// on ``code``, show ``message``; new codes do not break callers.
public struct ExperimentError: Error, CustomStringConvertible, Sendable, Equatable {
  enum Kind: Sendable, Hashable {
    case badShard, badPolicyPattern, directoryConflict, configurationChanged, inputChanged, damagedParts
    case shardMismatch, other
  }

  /// The category of an ``ExperimentError``.
  public struct Code: Sendable, Hashable, CustomStringConvertible {
    let kind: Kind

    /// A `--shard K/N` value that is malformed or out of range.
    public static let badShard = Code(kind: .badShard)
    /// A policy pattern with unbalanced braces or too many expansions.
    public static let badPolicyPattern = Code(kind: .badPolicyPattern)
    /// The output directory is in use or holds another experiment's results.
    public static let directoryConflict = Code(kind: .directoryConflict)
    /// The configuration changed since the parts in the directory were computed.
    public static let configurationChanged = Code(kind: .configurationChanged)
    /// An input file changed during the run.
    public static let inputChanged = Code(kind: .inputChanged)
    /// A part, state or shard file is missing or does not match its checksum.
    public static let damagedParts = Code(kind: .damagedParts)
    /// Shards given to a merge do not belong together.
    public static let shardMismatch = Code(kind: .shardMismatch)
    /// Any other problem (directories that cannot be created or written, …).
    public static let other = Code(kind: .other)

    /// A stable kebab-case name.
    public var description: String {
      switch kind {
      case .badShard: "bad-shard"
      case .badPolicyPattern: "bad-policy-pattern"
      case .directoryConflict: "directory-conflict"
      case .configurationChanged: "configuration-changed"
      case .inputChanged: "input-changed"
      case .damagedParts: "damaged-parts"
      case .shardMismatch: "shard-mismatch"
      case .other: "other"
      }
    }
  }

  /// The category.
  public let code: Code
  /// What is wrong, in words, control characters escaped (also the ``description``).
  public let message: String
  /// The file or option at fault, when known.
  public var location: InputLocation

  /// An error of `code`; `message` with control characters escaped (names
  /// from input files may hold them).
  package init(_ code: Code, _ message: String, location: InputLocation = InputLocation()) {
    self.code = code
    self.message = escaped(message)
    self.location = location
  }

  /// An ``Code-swift.struct/other`` error with `message`.
  package init(_ message: String) { self.init(.other, message) }

  /// The message.
  public var description: String { message }
}
