import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation

/// The record of one finished work unit of an experiment, `parts/<unit>.state`.
///
/// A unit is (dataset, replication, block of `unit_users` users in trace
/// order). Its rows go to `parts/<unit>.csv` (summary) and, with event files,
/// `parts/<unit>.opens.csv` and `parts/<unit>.fetches.csv`; this record is
/// written last (temp + rename), so its presence means the unit is complete.
/// It holds what `pooled.csv` and `devices_pooled.csv` need, exactly: every
/// (user, app, policy) summary and every (user, policy) device at full
/// precision in row order, and the unit's age and wait histograms.
///
/// Text format, one item a line (doubles as Swift's shortest round-trip
/// `description`):
///
///     fetchlab-part 3
///     config <configuration SHA-256>
///     unit <unit id>
///     users <count> =<first user> =<last user>   (ids percent-encoded)
///     file <kind> <bytes> <SHA-256>              (kind: summary, devices, opens, fetches)
///     columns pair <name> ...                    (AppSummary.recordFields names)
///     pair <policy> <value> ...                  (in the order of `columns pair`)
///     ages <policy> <zeros> <count> <bin>:<n> ...
///     columns device <name> ...                  (DeviceSample.recordFields names)
///     device <policy> <value> ...
///     waits <policy> <zeros> <count> <bin>:<n> ...
///     end
///
/// Values are read by column name, not position: a reader accepts the
/// columns in any order, and refuses (as incomplete, so the unit is
/// recomputed) a record whose columns are not exactly its table's, or a
/// `pair`/`device` line before its `columns` line. (Format 2 was
/// positional.)
struct PartRecord: Equatable {
  static let formatVersion = 3

  /// One (user, app, policy) replay's summary: the fields of
  /// ``AppSummary/recordFields`` (the others stay at their defaults).
  struct Pair: Equatable {
    var policy: Int
    var summary: AppSummary

    init(policy: Int, _ s: AppSummary) {
      self.policy = policy
      summary = AppSummary()
      for f in AppSummary.recordFields { f.set(&summary, f.get(s)) }
    }

    init(policy: Int, summary: AppSummary) {
      self.policy = policy
      self.summary = summary
    }

    var opens: Int { summary.opens }
    var fetches: Int { summary.fetches }

    /// Equal field by field, bit for bit (so NaN staleness compares equal).
    static func == (a: Pair, b: Pair) -> Bool {
      a.policy == b.policy
        && AppSummary.recordFields.allSatisfy { $0.get(a.summary).bitPattern == $0.get(b.summary).bitPattern }
    }
  }

  /// One output file of the unit.
  struct File: Equatable {
    var kind: String
    var bytes: Int
    var sha256: String
  }

  var config: String
  var unit: String
  var users: Int
  var firstUser: String
  var lastUser: String
  var files: [File]
  var pairs: [Pair]
  /// Per policy: the unit's pooled age histogram.
  var ages: [AgeHistogram]
  /// Every (user, policy) device, in row order.
  var devices: [(policy: Int, sample: DeviceSample)] = []
  /// Per policy: the unit's pooled wait histogram.
  var waits: [AgeHistogram] = []

  static func == (a: PartRecord, b: PartRecord) -> Bool {
    a.config == b.config && a.unit == b.unit && a.users == b.users && a.firstUser == b.firstUser
      && a.lastUser == b.lastUser && a.files == b.files && a.pairs == b.pairs && a.ages == b.ages
      && a.devices.elementsEqual(b.devices) { $0.policy == $1.policy && $0.sample == $1.sample } && a.waits == b.waits
  }

  /// The record's text.
  func encoded() -> String {
    var s = "fetchlab-part \(Self.formatVersion)\nconfig \(config)\nunit \(unit)\n"
    s += "users \(users) \(Self.escape(firstUser)) \(Self.escape(lastUser))\n"
    for f in files { s += "file \(f.kind) \(f.bytes) \(f.sha256)\n" }
    func values(_ xs: [Double]) -> String { xs.map(\.description).joined(separator: " ") }
    s += "columns pair " + AppSummary.recordFields.map(\.name).joined(separator: " ") + "\n"
    for p in pairs { s += "pair \(p.policy) " + values(AppSummary.recordFields.values(of: p.summary)) + "\n" }
    func histogram(_ tag: String, _ i: Int, _ h: AgeHistogram) -> String {
      var s = "\(tag) \(i) \(h.zeros) \(h.count)"
      for (b, n) in h.counts.enumerated() where n > 0 { s += " \(b):\(n)" }
      return s + "\n"
    }
    for (i, h) in ages.enumerated() { s += histogram("ages", i, h) }
    s += "columns device " + DeviceSample.recordFields.map(\.name).joined(separator: " ") + "\n"
    for d in devices { s += "device \(d.policy) " + values(DeviceSample.recordFields.values(of: d.sample)) + "\n" }
    for (i, h) in waits.enumerated() { s += histogram("waits", i, h) }
    return s + "end\n"
  }

  /// A histogram line's fields after `<tag> <policy>`; `nil` when malformed.
  private static func histogram(_ w: ArraySlice<Substring>) -> AgeHistogram? {
    guard w.count >= 2, let zeros = Int(w[w.startIndex]), let count = Int(w[w.startIndex + 1]) else { return nil }
    var h = AgeHistogram()
    for _ in 0..<zeros { h.add(0) }
    for item in w.dropFirst(2) {
      let bn = item.split(separator: ":")
      guard bn.count == 2, let b = Int(bn[0]), let n = Int(bn[1]), (0..<AgeHistogram.bins).contains(b) else {
        return nil
      }
      let centre = AgeHistogram.minAge * pow(10, (Double(b) + 0.5) / AgeHistogram.perDecade)
      for _ in 0..<n { h.add(centre) }
    }
    return h.count == count ? h : nil
  }

  /// Parses a record; `nil` when the text is not a complete record of this
  /// format.
  static func decode(_ text: String) -> PartRecord? {
    // Split as bytes (a String split compares Characters).
    var lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Substring.init)
    guard lines.last == "" else { return nil }
    lines.removeLast()
    guard lines.first == "fetchlab-part \(formatVersion)", lines.last == "end" else { return nil }
    var r = PartRecord(config: "", unit: "", users: 0, firstUser: "", lastUser: "", files: [], pairs: [], ages: [])
    // The table positions of the `columns` lines' fields, resolved once.
    var pairColumns: [Int]?
    var deviceColumns: [Int]?
    for line in lines.dropFirst().dropLast() {
      let w = line.utf8.split(separator: UInt8(ascii: " ")).map(Substring.init)
      guard let tag = w.first else { return nil }
      switch (tag, w.count) {
      case ("config", 2): r.config = String(w[1])
      case ("unit", 2): r.unit = String(w[1])
      case ("users", 4):
        guard let n = Int(w[1]), let a = unescape(String(w[2])), let b = unescape(String(w[3])) else { return nil }
        (r.users, r.firstUser, r.lastUser) = (n, a, b)
      case ("file", 4):
        guard let n = Int(w[2]) else { return nil }
        r.files.append(File(kind: String(w[1]), bytes: n, sha256: String(w[3])))
      case ("columns", _) where w.count >= 2 && w[1] == "pair":
        pairColumns = AppSummary.recordFields.positions(of: w.dropFirst(2).map(String.init))
      case ("columns", _) where w.count >= 2 && w[1] == "device":
        deviceColumns = DeviceSample.recordFields.positions(of: w.dropFirst(2).map(String.init))
      case ("pair", _):
        guard let columns = pairColumns, w.count == columns.count + 2, let p = Int(w[1]),
          let s = AppSummary.recordFields.record(AppSummary(), positions: columns, values: w.dropFirst(2).compactMap { Double($0) })
        else { return nil }
        r.pairs.append(Pair(policy: p, summary: s))
      case ("ages", 4...):
        guard let p = Int(w[1]), p == r.ages.count, let h = histogram(w.dropFirst(2)) else { return nil }
        r.ages.append(h)
      case ("device", _):
        guard let columns = deviceColumns, w.count == columns.count + 2, let p = Int(w[1]),
          let d = DeviceSample.recordFields.record(DeviceSample(), positions: columns, values: w.dropFirst(2).compactMap { Double($0) })
        else { return nil }
        r.devices.append((p, d))
      case ("waits", 4...):
        guard let p = Int(w[1]), p == r.waits.count, let h = histogram(w.dropFirst(2)) else { return nil }
        r.waits.append(h)
      default:
        return nil
      }
    }
    return r
  }

  /// The number of unit records (`*.state`) in the `parts` directory.
  static func unitCount(_ parts: String) -> Int {
    ((try? FileManager.default.contentsOfDirectory(atPath: parts)) ?? []).filter { $0.hasSuffix(".state") }.count
  }

  /// Reads `path`; `nil` when missing or not a complete record.
  static func load(_ path: String) -> PartRecord? {
    guard let d = FileManager.default.contents(atPath: path), let s = String(validating: d, as: UTF8.self) else {
      return nil
    }
    return decode(s)
  }

  /// `=` and the percent-encoded text (never empty, no spaces).
  static func escape(_ s: String) -> String {
    var allowed = CharacterSet.alphanumerics
    allowed.insert(charactersIn: "-._")
    return "=" + (s.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")
  }

  static func unescape(_ s: String) -> String? {
    guard s.hasPrefix("=") else { return nil }
    return String(s.dropFirst()).removingPercentEncoding
  }
}

extension PolicyAggregate {
  /// Adds one pair from a part record: the same arithmetic, in the same
  /// order, as ``add(_:)`` on the replay (its ages are merged separately).
  mutating func add(_ p: PartRecord.Pair) { add(summary: p.summary) }
}

/// A finished shard's `DIR/shard.json`, written by `fetchlab run
/// EXPERIMENT.json --shard K/N --out DIR` once all of its units are done
/// (``ExperimentOutcome/commitShard(extra:)``); its presence means the shard
/// is complete.
///
/// Keys: `format` (`fetchlab-shard 1`), `config_hash`, `shard` (`index`,
/// `count`), `experiment` (`name`, `path` as given, `sha256`, `text`),
/// `working_directory`, `inputs`, `units` (`id`, `state_bytes`,
/// `state_sha256` of `parts/<id>.state`, whose own `file` lines hold each
/// part file's size and SHA-256), `units_total` (of the whole experiment),
/// `units_computed`, `units_reused`, and the command line and times.
package struct ShardRecord: Sendable {
  /// The `format` value.
  package static let format = "fetchlab-shard 1"

  /// One finished unit: its id and its record's size and SHA-256.
  package struct Unit: Sendable, Equatable {
    package var id: String
    package var stateBytes: Int
    package var stateSHA256: String
  }

  /// The shard directory.
  package let directory: String
  package let shard: ExperimentShard
  package let configurationHash: String
  /// The experiment file as the shard was given it.
  package let experimentPath: String
  package let experimentText: String
  package let experimentSHA256: String
  /// The shard's working directory (relative paths were resolved from it).
  package let workingDirectory: String
  /// The shard's units, in output order.
  package let units: [Unit]
  /// Units of the whole experiment.
  package let unitsTotal: Int

  /// Reads `directory/shard.json`.
  ///
  /// - Throws: ``ExperimentError`` naming the file and the field.
  package init(directory: String) throws {
    let path = directory + "/shard.json"
    guard let data = FileManager.default.contents(atPath: path) else {
      throw ExperimentError(
        "\(path): cannot read: not a finished shard (run 'fetchlab run EXPERIMENT.json --shard K/N --out "
          + "\(directory)' to the end first)")
    }
    guard let o = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
      throw ExperimentError("\(path): not a JSON object")
    }
    func bad(_ field: String, _ what: String) -> ExperimentError {
      ExperimentError("\(path): \(field): \(what)")
    }
    func string(_ x: Any?, _ field: String) throws -> String {
      guard let s = x as? String else { throw bad(field, "missing or not a string") }
      return s
    }
    func int(_ x: Any?, _ field: String) throws -> Int {
      guard let i = x as? Int else { throw bad(field, "missing or not an integer") }
      return i
    }
    guard o["format"] as? String == Self.format else {
      throw bad("format", "expected '\(Self.format)', got \(o["format"].map { "\($0)" } ?? "nothing")")
    }
    self.directory = directory
    configurationHash = try string(o["config_hash"], "config_hash")
    let s = o["shard"] as? [String: Any]
    let k = try int(s?["index"], "shard.index"), n = try int(s?["count"], "shard.count")
    guard let shard = ExperimentShard(index: k, count: n) else { throw bad("shard", "\(k)/\(n) is not a valid K/N") }
    self.shard = shard
    let x = o["experiment"] as? [String: Any]
    experimentPath = try string(x?["path"], "experiment.path")
    experimentText = try string(x?["text"], "experiment.text")
    experimentSHA256 = try string(x?["sha256"], "experiment.sha256")
    guard SHA256.hex(Array(experimentText.utf8)) == experimentSHA256 else {
      throw bad("experiment.text", "does not match experiment.sha256")
    }
    workingDirectory = try string(o["working_directory"], "working_directory")
    guard let us = o["units"] as? [[String: Any]] else { throw bad("units", "missing or not an array of objects") }
    units = try us.enumerated().map { i, u in
      Unit(
        id: try string(u["id"], "units[\(i)].id"), stateBytes: try int(u["state_bytes"], "units[\(i)].state_bytes"),
        stateSHA256: try string(u["state_sha256"], "units[\(i)].state_sha256"))
    }
    unitsTotal = try int(o["units_total"], "units_total")
  }

  /// The shard recorded in `directory/shard.json` when it is one of the
  /// experiment with configuration `hash`; `nil` otherwise.
  static func recordedShard(directory: String, hash: String) -> ExperimentShard? {
    guard let r = try? ShardRecord(directory: directory), r.configurationHash == hash else { return nil }
    return r.shard
  }

  /// Checks every unit: its record has the size and SHA-256 in
  /// `shard.json`, belongs to this configuration, and each of its files has
  /// the size and SHA-256 in the record. Reads every part once.
  ///
  /// - Throws: ``ExperimentError`` naming the file that does not match.
  package func verifyParts() throws {
    let parts = directory + "/parts/"
    let again = "run shard \(shard) again (fetchlab run \(experimentPath) --shard \(shard) --out \(directory))"
    for u in units {
      let statePath = parts + u.id + ".state"
      let rerun = "delete \(statePath) and " + again
      guard let state = FileManager.default.contents(atPath: statePath) else {
        throw ExperimentError(.damagedParts, "\(statePath): missing, though \(directory)/shard.json lists unit \(u.id); " + again)
      }
      guard state.count == u.stateBytes, SHA256.hex([UInt8](state)) == u.stateSHA256 else {
        throw ExperimentError(
          .damagedParts, "\(statePath) does not match the size and SHA-256 recorded in \(directory)/shard.json; \(rerun)")
      }
      guard let rec = String(validating: state, as: UTF8.self).flatMap(PartRecord.decode), rec.unit == u.id,
        rec.config == configurationHash
      else {
        throw ExperimentError("\(statePath): not a finished unit \(u.id) of configuration \(configurationHash.prefix(12)); \(rerun)")
      }
      for f in rec.files {
        let path = parts + u.id + (f.kind == "summary" ? ".csv" : "." + f.kind + ".csv")
        guard let d = FileManager.default.contents(atPath: path) else {
          throw ExperimentError(.damagedParts, "\(path): missing; \(rerun)")
        }
        guard d.count == f.bytes, SHA256.hex([UInt8](d)) == f.sha256 else {
          throw ExperimentError(.damagedParts, "\(path) does not match the size and SHA-256 recorded in \(statePath); \(rerun)")
        }
      }
    }
  }

  /// The experiment the shard ran: the file at ``experimentPath`` read as
  /// `run` reads it when it is unchanged (so the manifest records the same
  /// paths), else the recorded text with relative paths resolved from the
  /// shard's working directory.
  ///
  /// - Throws: ``TraceFormatError`` when the text no longer parses (a trace
  ///   is gone).
  package func experiment(currentDirectory: String = FileManager.default.currentDirectoryPath) throws -> Experiment {
    if let d = FileManager.default.contents(atPath: experimentPath), SHA256.hex([UInt8](d)) == experimentSHA256 {
      return try Experiment(contentsOf: experimentPath, currentDirectory: currentDirectory)
    }
    let absolute = experimentPath.hasPrefix("/") ? experimentPath : workingDirectory + "/" + experimentPath
    let base = (absolute as NSString).deletingLastPathComponent
    return try Experiment(
      text: experimentText, file: experimentPath, baseDirectory: base.isEmpty ? "/" : base,
      currentDirectory: workingDirectory)
  }
}

/// A checked set of shard directories, ready to assemble with
/// ``runExperiment(_:directory:options:progress:)`` in
/// assemble-only mode (``options(jobs:force:version:)``).
package struct ShardMerge: Sendable {
  /// The shards, by index.
  package let shards: [ShardRecord]
  /// The experiment they ran.
  package let experiment: Experiment
  package let configurationHash: String
  /// Unit id → the `parts/` directory of the shard that holds it.
  package let partSources: [String: String]

  /// The options that assemble the shards' units (nothing is computed).
  package func options(jobs: Int, force: Bool, version: String) -> ExperimentOptions {
    ExperimentOptions(
      jobs: jobs, force: force, version: version, assembleOnly: true, partSources: partSources,
      datasetSources: shards.map { $0.directory + "/datasets" }, expectedConfigurationHash: configurationHash)
  }
}

/// Reads and checks shard directories before a merge: every one holds a
/// finished shard (`shard.json`), all of the same experiment (configuration
/// hash) and the same N, each of 1...N exactly once, no unit in two shards,
/// all units of the experiment present, and every part matching its
/// recorded size and SHA-256 (``ShardRecord/verifyParts()``).
///
/// - Throws: ``ExperimentError`` naming the directory or file at fault and
///   the missing or duplicate shard.
package func mergeShards(
  _ directories: [String], currentDirectory: String = FileManager.default.currentDirectoryPath
) throws -> ShardMerge {
  guard !directories.isEmpty else { throw ExperimentError("no shard directories given") }
  let records = try directories.map { try ShardRecord(directory: $0) }
  let first = records[0]
  for r in records.dropFirst() where r.configurationHash != first.configurationHash {
    throw ExperimentError(
      .shardMismatch, "shards of different experiments: \(first.directory) has configuration \(first.configurationHash.prefix(12)) "
        + "(\(first.experimentPath)), \(r.directory) has \(r.configurationHash.prefix(12)) (\(r.experimentPath))")
  }
  let n = first.shard.count
  for r in records.dropFirst() where r.shard.count != n {
    throw ExperimentError(
      .shardMismatch, "\(first.directory) is shard \(first.shard) but \(r.directory) is shard \(r.shard): "
        + "the shards of one merge split the experiment the same way (same N)")
  }
  var byIndex: [Int: ShardRecord] = [:]
  for r in records {
    if let other = byIndex[r.shard.index] {
      throw ExperimentError(.shardMismatch, "duplicate shard \(r.shard): given twice, as \(other.directory) and \(r.directory)")
    }
    byIndex[r.shard.index] = r
  }
  let missing = (1...n).filter { byIndex[$0] == nil }
  if !missing.isEmpty {
    let names = missing.map { "\($0)/\(n)" }.joined(separator: ", ")
    throw ExperimentError(
      .shardMismatch, "missing shard\(missing.count == 1 ? "" : "s") \(names): a merge needs every shard 1/\(n) to \(n)/\(n) "
        + "exactly once (given \(records.count))")
  }
  let shards = (1...n).map { byIndex[$0]! }
  var sources: [String: String] = [:]
  var owner: [String: ExperimentShard] = [:]
  for r in shards {
    guard r.unitsTotal == first.unitsTotal else {
      throw ExperimentError("\(r.directory)/shard.json: units_total: \(r.unitsTotal), but \(first.directory) has \(first.unitsTotal)")
    }
    for u in r.units {
      if let o = owner[u.id] {
        throw ExperimentError("unit \(u.id) is listed by shard \(o) and by shard \(r.shard) (\(r.directory))")
      }
      owner[u.id] = r.shard
      sources[u.id] = r.directory + "/parts"
    }
  }
  guard sources.count == first.unitsTotal else {
    throw ExperimentError("the shards hold \(sources.count) of the experiment's \(first.unitsTotal) units")
  }
  for r in shards { try r.verifyParts() }
  let experiment = try first.experiment(currentDirectory: currentDirectory)
  return ShardMerge(
    shards: shards, experiment: experiment, configurationHash: first.configurationHash, partSources: sources)
}

// MARK: - Unit files

/// `<dataset>.r<replication>.b<block, 6 digits>`.
func unitID(_ dataset: String, replication: Int, block: Int) -> String {
  let b = String(block)
  return "\(dataset).r\(replication).b" + String(repeating: "0", count: max(0, 6 - b.count)) + b
}

/// The replication of a unit id.
func replicationOf(_ id: String) -> Int {
  let parts = id.split(separator: ".")
  return Int(parts[parts.count - 2].dropFirst())!
}

func partSuffix(_ kind: String) -> String {
  kind == "summary" ? ".csv" : "." + kind + ".csv"
}

/// Whether a finished part can be reused for this block.
func partUsable(_ r: PartRecord, hash: String, unit: String, users: [UserTrace], parts: String) -> Bool {
  guard r.config == hash, r.unit == unit, r.users == users.count, r.firstUser == users.first?.user,
    r.lastUser == users.last?.user
  else { return false }
  for f in r.files {
    let size = (try? FileManager.default.attributesOfItem(atPath: parts + "/" + unit + partSuffix(f.kind))[.size]) as? Int
    guard size == f.bytes else { return false }
  }
  return true
}

/// A part file's records (after its header line), checked against its size
/// and SHA-256 in the unit's record.
func verifiedPart(_ path: String, record f: PartRecord.File) throws -> String {
  guard let data = FileManager.default.contents(atPath: path), data.count == f.bytes else {
    throw ExperimentError(.damagedParts, "\(path) is missing or has the wrong size; delete its .state file and run again")
  }
  let bytes = [UInt8](data)
  guard SHA256.hex(bytes) == f.sha256 else {
    throw ExperimentError(.damagedParts, "\(path) does not match its SHA-256; delete its .state file and run again")
  }
  guard let nl = bytes.firstIndex(of: UInt8(ascii: "\n")) else { return "" }
  return String(decoding: bytes[(nl + 1)...], as: UTF8.self)
}

/// Hard-links (or, across file systems, copies) a finished unit's files
/// from `source` into `parts`, each under a temporary name renamed into
/// place, the record last: an interrupted import leaves no unit behind.
func importPart(_ id: String, record: PartRecord, from source: String, to parts: String) throws {
  let names = record.files.map { id + partSuffix($0.kind) } + [id + ".state"]
  for name in names {
    try placeFile(from: source + "/" + name, to: parts + "/" + name)
  }
}

/// Writes one unit's part files, then its record. The rows are those of
/// `run --trace` (``CSVReportSink/format(_:config:)``) after the dataset's
/// name and the replication.
func writePart(
  id: String, dataset: String, replication r: Int, users: [UserTrace], results: [UserResult], config: RunConfiguration,
  hash: String, parts: String
) throws {
  let records = results.map { CSVReportSink.format($0, config: config) }
  let prefix = CSV.field(dataset) + ",\(r),"
  let texts = UserFile.written(events: config.recordEvents).map { kind in
    (kind.rawValue, experimentLeadingColumns + kind.headerLine + prefixRecords(records.map(kind.records).joined(), prefix))
  }
  var files: [PartRecord.File] = []
  for (kind, text) in texts {
    let f = try AtomicTextFile(path: parts + "/" + id + partSuffix(kind))
    try f.write(text)
    try f.commit()
    let bytes = Array(text.utf8)
    files.append(PartRecord.File(kind: kind, bytes: bytes.count, sha256: SHA256.hex(bytes)))
  }
  var pairs: [PartRecord.Pair] = []
  var ages = [AgeHistogram](repeating: AgeHistogram(), count: config.policies.count)
  var devices: [(policy: Int, sample: DeviceSample)] = []
  var waits = [DeviceAggregate](repeating: DeviceAggregate(policy: ""), count: config.policies.count)
  for u in results {
    for replays in u.replays {
      for (p, x) in replays.enumerated() {
        pairs.append(PartRecord.Pair(policy: p, x.summary))
        ages[p].add(x)
      }
    }
    for (p, d) in u.devices.enumerated() {
      let apps = u.replays.map { $0[p] }
      devices.append((p, DeviceSample(d, apps: apps)))
      waits[p].addWaits(of: apps)
    }
  }
  let rec = PartRecord(
    config: hash, unit: id, users: users.count, firstUser: users.first?.user ?? "", lastUser: users.last?.user ?? "",
    files: files, pairs: pairs, ages: ages, devices: devices, waits: waits.map { $0.waitHistogram })
  let f = try AtomicTextFile(path: parts + "/" + id + ".state")
  try f.write(rec.encoded())
  try f.commit()
}
