import FetchSupport
@testable import FetchBenchmark
import FetchModels
import FetchSimulation
import FetchTraces
import Foundation
import Testing

@Suite("SHA-256 (FIPS 180-4)")
struct SHA256Tests {
  @Test("standard vectors", arguments: [
    ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
     "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
  ])
  func vectors(message: String, digest: String) {
    #expect(SHA256.hex(Array(message.utf8)) == digest)
  }

  @Test("one million 'a', fed in uneven chunks")
  func million() {
    let want = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
    let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
    var h = SHA256()
    var fed = 0
    var k = 1
    while fed < 1_000_000 {
      let n = min(k % 997 + 1, 1_000_000 - fed, chunk.count)
      h.update(Array(chunk[0..<n]))
      fed += n
      k += 7
    }
    #expect(h.hexDigest() == want)
    #expect(SHA256.hex([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)) == want)
  }

  @Test("every length around the block boundaries; files hash like their bytes")
  func lengths() throws {
    // Message lengths 0...130 cross the 55/56/64-byte padding cases; a
    // streamed digest must equal the one-shot digest of the same bytes.
    var rng = SplitMix64(seed: 3)
    for n in 0...130 {
      let bytes = (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
      var h = SHA256()
      for b in bytes { h.update([b]) }
      #expect(h.hexDigest() == SHA256.hex(bytes), "length \(n)")
    }
    let path = tempDir() + "/abc"
    try "abc".write(toFile: path, atomically: true, encoding: .utf8)
    let f = try SHA256.hashFile(atPath: path)
    #expect(f.hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" && f.bytes == 3)
    #expect(throws: FileError.self) { try SHA256.hashFile(atPath: path + "-missing") }
  }
}

@Suite("Brace expansion")
struct BraceExpansionTests {
  @Test("groups, products (leftmost slowest), nesting, empty alternatives")
  func expansion() throws {
    #expect(try expandBraces("never") == ["never"])
    #expect(try expandBraces("periodic:{15m,30m,1h}") == ["periodic:15m", "periodic:30m", "periodic:1h"])
    #expect(
      try expandBraces("ios-minimum:price={0.1,1},age_value={2,3}") == [
        "ios-minimum:price=0.1,age_value=2", "ios-minimum:price=0.1,age_value=3",
        "ios-minimum:price=1,age_value=2", "ios-minimum:price=1,age_value=3",
      ])
    #expect(try expandBraces("{never,periodic:{1h,2h}}") == ["never", "periodic:1h", "periodic:2h"])
    #expect(try expandBraces("{a,b}{c,d{e,f}}") == ["ac", "ade", "adf", "bc", "bde", "bdf"])
    #expect(try expandBraces("ios-minimum{,:price=0.1}") == ["ios-minimum", "ios-minimum:price=0.1"])
    #expect(try expandBraces("periodic:{1h}") == ["periodic:1h"])
  }

  @Test("unbalanced braces and explosions are errors naming the string", arguments: [
    ("periodic:{15m,30m", "unbalanced '{' in 'periodic:{15m,30m'"),
    ("periodic:15m}", "unbalanced '}' in 'periodic:15m}'"),
    ("{a,b}{c,d}{e,f}", "expands to more than 4"),
  ])
  func errors(pattern: String, message: String) {
    #expect {
      _ = try expandBraces(pattern, limit: 4)
    } throws: { e in
      "\(e)".contains(message)
    }
  }
}

/// Parses `json` as an experiment in a fresh directory holding `t.csv`.
func parseExperiment(_ json: String, file: String = "e.json") throws -> Experiment {
  let dir = tempDir()
  try FileManager.default.copyItem(atPath: goldenURL("tiny-trace.csv").path, toPath: dir + "/t.csv")
  return try Experiment(text: json, file: dir + "/" + file, baseDirectory: dir, currentDirectory: "/nonexistent")
}

func expectError(_ json: String, _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation) {
  #expect(sourceLocation: sourceLocation) {
    _ = try parseExperiment(json)
  } throws: { e in
    let ok = e is TraceFormatError && "\(e)".contains(fragment)
    if !ok { Issue.record("got: \(e)", sourceLocation: sourceLocation) }
    return ok
  }
}

@Suite("Experiment files")
struct ExperimentFileTests {
  @Test("the brief's example: defaults, grids, canonical names, seeds")
  func example() throws {
    let e = try parseExperiment(
      """
      {
        "name": "default",
        "datasets": [
          {"name": "tiny", "trace": "t.csv"},
          {"name": "synthetic", "synthetic": {"users": 200, "days": 28, "seed": 1}}
        ],
        "train_fraction": 0.75,
        "apps": "top:3",
        "world": { "radio.lte.tail_s": 11.576 },
        "policies": ["never", "periodic:{15m,30m,1h,2h,4h}", "oracle", "ios-minimum:price={0.1,0.3,1}"],
        "replications": 3,
        "seed": 18446744073709551615,
        "event_files": false
      }
      """)
    #expect(e.name == "default")
    #expect(e.datasets.map(\.name) == ["tiny", "synthetic"])
    #expect(
      e.configurations.map(\.name) == [
        "never", "periodic:15m", "periodic:30m", "periodic:1h", "periodic:2h", "periodic:4h", "oracle",
        "ios-minimum:price=0.1", "ios-minimum:price=0.3", "ios-minimum",
      ])
    #expect(e.configurations.last?.expanded == "ios-minimum:price=1")
    #expect(e.configurations.last?.pattern == "ios-minimum:price={0.1,0.3,1}")
    #expect(e.seed == UInt64.max)
    #expect((0..<3).map(e.replicationSeed) == (0..<3).map { StableHash.combine(UInt64.max, UInt64($0)) })
    #expect(e.replications == 3 && !e.eventFiles && e.trainFraction == 0.75 && e.unitUsers == 64)
    #expect(e.world.overrides() == ["radio.lte.tail_s=11.576"])
    guard case .synthetic(let s) = e.datasets[1].source else {
      Issue.record("expected a synthetic dataset")
      return
    }
    #expect(s.users == 200 && s.days == 28 && s.seed == 1)
  }

  @Test("defaults: name from the file; one scored window whether or not a policy learns")
  func defaults() throws {
    let e = try parseExperiment(#"{"datasets": [{"name": "t", "trace": "t.csv"}], "policies": ["never"]}"#, file: "sweep.json")
    #expect(e.name == "sweep" && e.seed == 1 && e.replications == 1 && e.eventFiles)
    #expect(e.apps == .top(3))
    let l = try parseExperiment(#"{"datasets": [{"name": "t", "trace": "t.csv"}], "policies": ["never", "ios-custom:1h"]}"#)
    #expect(e.trainFraction == 0.75 && l.trainFraction == e.trainFraction)
  }

  @Test("relative trace paths: the experiment's directory first, then the current directory")
  func relativePaths() throws {
    let base = tempDir(), cwd = tempDir()
    try "x".write(toFile: base + "/a.csv", atomically: true, encoding: .utf8)
    try "x".write(toFile: cwd + "/a.csv", atomically: true, encoding: .utf8)
    try "x".write(toFile: cwd + "/b.csv", atomically: true, encoding: .utf8)
    let json = #"{"datasets": [{"name": "a", "trace": "a.csv"}, {"name": "b", "trace": "b.csv"}], "policies": ["never"]}"#
    let e = try Experiment(text: json, file: base + "/e.json", baseDirectory: base, currentDirectory: cwd)
    let paths = e.datasets.map { d -> String in
      if case .trace(let p) = d.source { return p }
      return ""
    }
    #expect(paths == [base + "/a.csv", cwd + "/b.csv"])
    // Through a file: its directory is the base.
    try json.write(toFile: base + "/e.json", atomically: true, encoding: .utf8)
    #expect(throws: TraceFormatError.self) {
      _ = try Experiment(contentsOf: base + "/e.json", currentDirectory: base)  // b.csv is only in cwd
    }
    let f = try Experiment(contentsOf: base + "/e.json", currentDirectory: cwd)
    #expect(f.datasets.count == 2)
  }

  @Test("unknown keys name the file, line and key path")
  func unknownKeys() {
    expectError(
      """
      {
        "datasets": [
          {"name": "t", "trace": "t.csv"},
          {"name": "s", "synthetic": {"users": 2,
                                     "dayz": 3}}
        ],
        "policies": ["never"]
      }
      """, "e.json:5: datasets[1].synthetic.dayz: unknown key; known: users, days, seed, params")
    expectError(
      "{\"datasets\": [{\"name\": \"t\", \"trace\": \"t.csv\"}],\n\"policies\": [\"never\"],\n\"replicatons\": 2}",
      "e.json:3: replicatons: unknown key")
    expectError(
      #"{"datasets": [{"name": "t", "trace": "t.csv", "path": "x"}], "policies": ["never"]}"#,
      "e.json:1: datasets[0].path: unknown key")
  }

  @Test("policy grids: bad policies name the string, duplicates after canonicalisation are errors")
  func policyErrors() {
    expectError(
      "{\"datasets\": [{\"name\": \"t\", \"trace\": \"t.csv\"}],\n\"policies\": [\"never\",\n \"periodic:{1h,soon}\"]}",
      "e.json:3: policies[1]: policy 'periodic:soon': bad interval 'soon'")
    expectError(
      #"{"datasets": [{"name": "t", "trace": "t.csv"}], "policies": ["sometimes"]}"#,
      "policies[0]: unknown policy 'sometimes'")
    expectError(
      #"{"datasets": [{"name": "t", "trace": "t.csv"}], "policies": ["periodic:{60m,2h}", "periodic:1h"]}"#,
      "policies[1]: 'periodic:1h' and 'periodic:60m' (from 'periodic:{60m,2h}') are the same configuration 'periodic:1h'")
    expectError(
      #"{"datasets": [{"name": "t", "trace": "t.csv"}], "policies": ["ios-minimum:price={1,0.5,1.0}"]}"#,
      "are the same configuration 'ios-minimum'")
    expectError(
      #"{"datasets": [{"name": "t", "trace": "t.csv"}], "policies": ["periodic:{1h"]}"#,
      "policies[0]: unbalanced '{'")
  }

  @Test("types, ranges, required keys, dataset names, JSON syntax")
  func otherErrors() {
    let ds = #""datasets": [{"name": "t", "trace": "t.csv"}]"#
    expectError(#"{"policies": ["never"]}"#, "e.json:1: datasets: missing (required)")
    expectError("{\(ds)}", "policies: missing (required)")
    expectError("{\(ds), \"policies\": []}", "policies: expected a non-empty array")
    expectError("{\(ds), \"policies\": [\"never\"], \"replications\": 0}", "replications: must be in [1,")
    expectError("{\(ds), \"policies\": [\"never\"], \"replications\": 1.5}", "replications: expected an integer, got a number")
    expectError("{\(ds), \"policies\": [\"never\"], \"seed\": -1}", "seed: expected an integer in [0, 2^64)")
    expectError("{\(ds), \"policies\": [\"never\"], \"event_files\": \"no\"}", "event_files: expected true or false, got a string")
    expectError("{\(ds), \"policies\": [\"never\"], \"train_fraction\": 1}", "train_fraction: must be in [0, 1)")
    expectError("{\(ds), \"policies\": [\"never\"], \"apps\": \"best:3\"}", "apps: bad app selection")
    expectError("{\(ds), \"policies\": [\"never\"], \"world\": {\"radio.lte.tail_s\": -1}}", "radio.lte.tail_s")
    expectError("{\(ds), \"policies\": [\"never\"], \"world\": {\"radio.lte.tail\": 1}}", "radio.lte.tail")
    expectError("{\(ds), \"policies\": [\"never\"], \"seed\": 1, \"seed\": 2}", "seed: duplicate key")
    expectError(#"{"datasets": [{"name": "t"}], "policies": ["never"]}"#, "datasets[0]: a dataset needs 'trace' or 'synthetic'")
    expectError(
      #"{"datasets": [{"name": "t", "trace": "t.csv"}, {"name": "t", "trace": "t.csv"}], "policies": ["never"]}"#,
      "datasets[1].name: duplicate dataset name 't'")
    expectError(#"{"datasets": [{"name": "a/b", "trace": "t.csv"}], "policies": ["never"]}"#, "datasets[0].name: 'a/b'")
    expectError(#"{"datasets": [{"name": "t", "trace": "nope.csv"}], "policies": ["never"]}"#, "datasets[0].trace: cannot find 'nope.csv'")
    expectError(
      #"{"datasets": [{"name": "s", "synthetic": {"users": 2, "days": 1, "params": {"nope": 1}}}], "policies": ["never"]}"#,
      "e.json:1: datasets[0].synthetic.params.nope: unknown parameter key")
    expectError("{\(ds), \"policies\": [\"never\"],\n\n  }", "e.json:3: not valid JSON: expected a \"key\"")
    expectError("[1, 2]", "e.json:1: expected an object, got an array")
    // A world grid is sized before it is built: 200 × 60 grid points.
    let tails = "{" + (1...200).map(String.init).joined(separator: ",") + "}"
    let budgets = "{" + (1...60).map(String.init).joined(separator: ",") + "}"
    expectError(
      #"{"datasets": [{"name": "t", "trace": "t.csv"}], "policies": ["never"], "world": {"radio.lte.tail_s": ""#
        + tails + #"", "fetch.budget_s": ""# + budgets + #""}}"#,
      "world: the world grid gives 12000 (dataset, world) combinations; at most 10000")
  }

  @Test("a world grid: one dataset per grid point, with its world; the experiment's own world without the grid")
  func worldGridDatasets() throws {
    let e = try parseExperiment(
      #"{"datasets": [{"name": "t", "trace": "t.csv"}], "policies": ["never"], "#
        + #""world": {"radio": {"lte": {"tail_s": "{5,15}"}}, "replay.foreground_refresh": "{true,false}", "fetch.budget_s": 20}}"#)
    #expect(e.datasets.map(\.name) == [
      "t.radio.lte.tail_s-5.replay.foreground_refresh-true", "t.radio.lte.tail_s-5.replay.foreground_refresh-false",
      "t.radio.lte.tail_s-15.replay.foreground_refresh-true", "t.radio.lte.tail_s-15.replay.foreground_refresh-false",
    ])
    #expect(e.datasets.map { $0.world?.radios.lte.tailDurationS } == [5, 5, 15, 15])
    #expect(e.datasets.map { $0.world?.replay.foregroundRefresh } == [true, false, true, false])
    #expect(e.datasets.allSatisfy { $0.world?.fetch.fetchBudgetS == 20 })
    #expect(e.world.overrides() == ["fetch.budget_s=20"])
  }

  @Test("the repository's experiments/example.json parses")
  func repositoryExample() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized
    let e = try Experiment(contentsOf: root.appendingPathComponent("experiments/example.json").path, currentDirectory: "/")
    #expect(e.datasets.count == 2)
    #expect(e.configurations.count == 8)
  }
}

@Suite("Experiment runs", .serialized)
struct ExperimentRunTests {
  func experiment(units: Int = 1, replications: Int = 2) throws -> Experiment {
    try parseExperiment(
      """
      {"datasets": [{"name": "tiny", "trace": "t.csv"}, {"name": "syn", "synthetic": {"users": 3, "days": 1, "seed": 2}}],
       "apps": "top:2", "policies": ["never", "periodic:{1h,15m}", "oracle"],
       "replications": \(replications), "seed": 7, "unit_users": \(units)}
      """)
  }

  func files(_ dir: String) -> [Data?] {
    ["summary.csv", "opens.csv", "fetches.csv", "pooled.csv"].map { FileManager.default.contents(atPath: dir + "/" + $0) }
  }

  /// Runs and commits; the outcome (and its directory lock) is released on return.
  func run(_ e: Experiment, _ dir: String, jobs: Int = 2) throws -> (computed: Int, reused: Int, aggregates: [[[PolicyAggregate]]]) {
    let o = try runExperiment(e, directory: dir, options: ExperimentOptions(jobs: jobs))
    try o.commit(manifest: ["test": true])
    return (o.unitsComputed, o.unitsReused, o.aggregates)
  }

  @Test("stopped after k units, then resumed: the same bytes; parts deleted: recomputed, same bytes")
  func resume() throws {
    let e = try experiment()
    let a = tempDir()
    let full = try run(e, a)
    // tiny: 2 users, syn: 3 users; one user a unit; 2 replications.
    #expect(full.computed == 10 && full.reused == 0)
    let want = files(a)
    #expect(want.allSatisfy { $0 != nil })

    let b = tempDir()
    for k in [3, 4] {
      #expect(throws: ExperimentError.self) {
        _ = try runExperiment(e, directory: b, options: ExperimentOptions(jobs: 1, stopAfterUnits: k))
      }
      #expect(!FileManager.default.fileExists(atPath: b + "/summary.csv"))
    }
    let resumed = try run(e, b)
    #expect(resumed.computed == 3 && resumed.reused == 7)
    #expect(files(b) == want)
    #expect(resumed.aggregates == full.aggregates)

    for f in ["tiny.r1.b000000.state", "syn.r0.b000002.csv", "syn.r1.b000001.fetches.csv"] {
      try FileManager.default.removeItem(atPath: b + "/parts/" + f)
    }
    let again = try run(e, b, jobs: 1)
    #expect(again.computed == 3 && again.reused == 7)
    #expect(files(b) == want)
  }

  @Test("output does not depend on the unit size or the thread count; counts")
  func unitSize() throws {
    let a = tempDir(), b = tempDir()
    _ = try run(try experiment(units: 1), a, jobs: 1)
    _ = try run(try experiment(units: 64), b, jobs: 3)
    #expect(files(a) == files(b))
    let o = try runExperiment(try experiment(units: 64), directory: b, options: ExperimentOptions())
    #expect(o.counts.map(\.users) == [2, 3])
    #expect(o.unitsComputed == 0 && o.unitsReused == 4)
  }

  @Test("a directory in use by another run is refused")
  func locked() throws {
    let e = try experiment(replications: 1)
    let d = tempDir()
    let held = try runExperiment(e, directory: d, options: ExperimentOptions())
    #expect {
      _ = try runExperiment(e, directory: d, options: ExperimentOptions())
    } throws: { "\($0)".contains("in use by another fetchlab run") }
    withExtendedLifetime(held) {}
  }

  @Test("a corrupted part is reported, not silently assembled")
  func corrupted() throws {
    let e = try experiment(replications: 1)
    let d = tempDir()
    _ = try runExperiment(e, directory: d, options: ExperimentOptions())
    // Same size, different bytes: passes the resume check, fails the hash.
    let p = d + "/parts/tiny.r0.b000001.csv"
    var bytes = try #require(FileManager.default.contents(atPath: p))
    bytes[bytes.count - 2] = bytes[bytes.count - 2] == UInt8(ascii: "1") ? UInt8(ascii: "2") : UInt8(ascii: "1")
    try bytes.write(to: URL(fileURLWithPath: p))
    #expect {
      _ = try runExperiment(e, directory: d, options: ExperimentOptions())
    } throws: { "\($0)".contains("does not match its SHA-256") }
  }

  @Test("part records rebuild the aggregates exactly (same arithmetic as PolicyAggregate.add)")
  func partRecords() throws {
    let policies: [PolicySpec] = [.never, .periodic(interval: 3600), .periodic(interval: 900), .oracle]
    let cfg = RunConfiguration(
      tracePath: goldenURL("tiny-trace.csv").path, policies: policies, seed: 7, apps: .top(2), recordEvents: false)
    let reader = try TraceReader(path: cfg.tracePath)
    var direct = policies.map { PolicyAggregate(policy: $0.description) }
    var rebuilt = direct
    var pairs: [PartRecord.Pair] = []
    var ages = [AgeHistogram](repeating: AgeHistogram(), count: policies.count)
    while let u = try reader.next() {
      for replays in replayUser(u, cfg).replays {
        for (p, r) in replays.enumerated() {
          direct[p].add(r)
          pairs.append(PartRecord.Pair(policy: p, r.summary))
          for x in r.sortedAges { ages[p].add(x) }
        }
      }
    }
    let rec = PartRecord(
      config: "h", unit: "tiny.r0.b000000", users: 2, firstUser: "a b,c", lastUser: "", files: [
        PartRecord.File(kind: "summary", bytes: 10, sha256: "x")
      ], pairs: pairs, ages: ages)
    let back = try #require(PartRecord.decode(rec.encoded()))
    #expect(back == rec)
    for p in back.pairs { rebuilt[p.policy].add(p) }
    for (p, h) in back.ages.enumerated() { rebuilt[p].ages.merge(h) }
    #expect(rebuilt == direct)
    #expect(PartRecord.decode(String(rec.encoded().dropLast(4))) == nil)  // no "end": incomplete
  }

  @Test("devices_pooled.csv pools the delivery delays: counts and mean as pooled.csv's and as the replays' own sums")
  func devicePoolDeliveryDelays() throws {
    let out = try runTiny(jobs: 2, batch: 1)
    func rows(_ f: String) throws -> [[String: String]] {
      let lines = try String(contentsOfFile: out + "/" + f, encoding: .utf8).split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
      return lines.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(lines[0], $0)) }
    }
    let pool = try rows("devices_pooled.csv"), pooled = try rows("pooled.csv")
    // The direct figures: the delivered updates and their delays, per policy.
    let policies: [PolicySpec] = [.never, .periodic(interval: 3600), .periodic(interval: 900), .oracle]
    let cfg = RunConfiguration(
      tracePath: goldenURL("tiny-trace.csv").path, policies: policies, seed: 7, apps: .top(2), recordEvents: false)
    let reader = try TraceReader(path: cfg.tracePath)
    var delivered = [Int](repeating: 0, count: policies.count)
    var delaySum = [Double](repeating: 0, count: policies.count)
    while let u = try reader.next() {
      for replays in replayUser(u, cfg).replays {
        for (p, r) in replays.enumerated() {
          delivered[p] += r.summary.delivered
          delaySum[p] += r.summary.deliveryDelaySumS
        }
      }
    }
    #expect(pool.count == policies.count && pooled.count == policies.count)
    for (p, row) in pool.enumerated() {
      let name = policies[p].description
      #expect(row["policy"] == name)
      for c in ["updates", "delivered", "mean_delivery_delay_s"] { #expect(row[c] == pooled[p][c], "\(name): \(c)") }
      #expect(Int(row["delivered"] ?? "") == delivered[p] && delivered[p] > 10, "\(name)")
      let mean = try #require(Double(row["mean_delivery_delay_s"] ?? ""))
      #expect(abs(mean - delaySum[p] / Double(delivered[p])) < 1e-3, "\(name): mean \(mean)")
      #expect(row["transfer_energy_j_per_day"] == "0" && row["transfer_wifi_bytes_per_day"] == "0")
    }
  }

  @Test("part records are read by column name: any column order; a missing, unknown or repeated column is refused")
  func partRecordColumnsByName() throws {
    var a = AppSummary()
    (a.days, a.opens, a.fetches, a.meanAgeS, a.freshRatio, a.energyJ, a.updates) = (7, 12, 30, .nan, 0.25, 41.5, 3)
    var d = DeviceSample()
    (d.days, d.fetches, d.energyJ, d.waits, d.waitSumS) = (7, 90, 120.25, 12, 3.5)
    (d.updates, d.delivered, d.deliveryDelaySumS) = (9, 8, 4000.5)
    d.transferWifiBytes = 6e7
    let rec = PartRecord(
      config: "h", unit: "u", users: 1, firstUser: "x", lastUser: "x", files: [],
      pairs: [PartRecord.Pair(policy: 0, a)], ages: [AgeHistogram()], devices: [(0, d)], waits: [AgeHistogram()])
    let text = rec.encoded()
    #expect(PartRecord.decode(text) == rec)
    #expect(PartRecord.decode(text)?.devices.first?.sample == d)
    // Reverse the columns and the values of every pair and device line.
    func reversed(_ text: String) -> String {
      text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
        var w = line.split(separator: " ").map(String.init)
        if w.first == "columns" { return (w.prefix(2) + w.dropFirst(2).reversed()).joined(separator: " ") }
        if w.first == "pair" || w.first == "device" { w = Array(w.prefix(2) + w.dropFirst(2).reversed()) }
        return w.joined(separator: " ")
      }.joined(separator: "\n")
    }
    #expect(reversed(text) != text)
    #expect(PartRecord.decode(reversed(text)) == rec)
    let back = try #require(PartRecord.decode(reversed(text)))
    #expect(back.pairs[0].summary.energyJ == 41.5 && back.pairs[0].summary.updates == 3 && back.devices[0].sample.waitSumS == 3.5)
    // A column renamed (so one is missing and one unknown), a column
    // repeated, or a pair line before its columns: not a complete record.
    #expect(PartRecord.decode(text.replacingOccurrences(of: " energy_j ", with: " energy_kj ")) == nil)
    #expect(PartRecord.decode(text.replacingOccurrences(of: "columns pair days ", with: "columns pair days days ")) == nil)
    let noColumns = text.split(separator: "\n").filter { !$0.hasPrefix("columns pair") }.joined(separator: "\n") + "\n"
    #expect(PartRecord.decode(noColumns) == nil)
  }

  @Test("the declared pooling of each part-record field is what pooled.csv's aggregate does")
  func declaredPooling() throws {
    let policies: [PolicySpec] = [.never, .periodic(interval: 3600), .oracle]
    let cfg = RunConfiguration(
      tracePath: goldenURL("tiny-trace.csv").path, policies: policies, seed: 7, apps: .top(2), recordEvents: false)
    let reader = try TraceReader(path: cfg.tracePath)
    var aggregates = policies.map { PolicyAggregate(policy: $0.description) }
    var pairs = [[AppSummary]](repeating: [], count: policies.count)
    while let u = try reader.next() {
      for replays in replayUser(u, cfg).replays {
        for (p, r) in replays.enumerated() {
          aggregates[p].add(r)
          pairs[p].append(r.summary)
        }
      }
    }
    for (p, a) in aggregates.enumerated() {
      let pooled: [String: Double] = [
        "days": a.days, "opens": Double(a.opens), "fetches": Double(a.fetches), "new_data": Double(a.newData),
        "no_data": Double(a.noData), "failed": Double(a.failed), "wasted": Double(a.wasted), "energy_j": a.energyJ,
        "cellular_bytes": a.cellularBytes, "mean_age_s": a.meanAgeS, "fresh_ratio": a.freshRatio, "mean_aoi_s": a.meanAoiS,
      ]
      for f in AppSummary.recordFields {
        guard let want = pooled[f.name] else { continue }  // pooled elsewhere (histograms) or not in pooled.csv
        let got: Double
        switch f.pooling {
        case .sum: got = pairs[p].reduce(0) { $0 + f.get($1) }
        case .opensWeighted:
          let withOpens = pairs[p].filter { $0.opens > 0 }
          got = withOpens.reduce(0) { $0 + f.get($1) * Double($1.opens) } / Double(withOpens.reduce(0) { $0 + $1.opens })
        case .none:
          Issue.record("\(f.name) is in pooled.csv but declared as not pooled")
          continue
        }
        #expect(abs(got - want) <= 1e-9 * max(1, abs(want)), "\(policies[p]) \(f.name): declared pooling gives \(got), aggregate \(want)")
      }
    }
  }

  @Test("record fields by position: any order; a missing, unknown or repeated name refused, even at the right count")
  func recordFieldPositions() throws {
    let fields = AppSummary.recordFields
    var summary = AppSummary()
    (summary.opens, summary.energyJ, summary.meanAgeS) = (7, 1.25, 42.5)
    let names = fields.map(\.name), values = fields.values(of: summary)
    let positions = try #require(fields.positions(of: names.reversed()))
    #expect(positions == Array(fields.indices.reversed()))
    #expect(fields.record(AppSummary(), positions: positions, values: values.reversed()) == summary)
    #expect(fields.record(AppSummary(), positions: positions, values: values.dropLast()) == nil)
    #expect(fields.positions(of: names.dropLast()) == nil)
    #expect(fields.positions(of: names.dropLast() + ["no_such_field"]) == nil)
    // The last field missing and the first twice: the count is right.
    #expect(fields.positions(of: names.dropLast() + [names[0]]) == nil)
  }

  @Test("every part-record field is declared once, with a unit and a meaning")
  func recordFieldDeclarations() {
    for names in [AppSummary.recordFields.map(\.name), DeviceSample.recordFields.map(\.name)] {
      #expect(Set(names).count == names.count)
      #expect(names.allSatisfy { $0.allSatisfy { $0.isLowercase || $0 == "_" || $0.isNumber } })
    }
    #expect(AppSummary.recordFields.allSatisfy { !$0.unit.isEmpty && !$0.help.isEmpty })
    #expect(DeviceSample.recordFields.allSatisfy { !$0.unit.isEmpty && !$0.help.isEmpty })
    // Every summary.csv count or raw total the pooled figures need is kept.
    for column in ["opens", "fetches", "new_data", "no_data", "failed", "wasted", "mean_age_s", "fresh_ratio", "mean_aoi_s", "energy_j", "cellular_bytes"] {
      #expect(AppSummary.recordFields.contains { $0.name == column }, "\(column)")
    }
  }

  @Test("record prefixes respect quoted line breaks")
  func prefixes() {
    #expect(prefixRecords("a,1\n\"x\ny\",2\n", "d,0,") == "d,0,a,1\nd,0,\"x\ny\",2\n")
    #expect(prefixRecords("", "d,0,") == "")
    #expect(unitID("syn", replication: 2, block: 31) == "syn.r2.b000031")
  }
}
