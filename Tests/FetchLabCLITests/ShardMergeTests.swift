import Foundation
import Testing

/// Two datasets (the trace and a synthetic one), 2 replications, units of 2
/// users: 3 + 2 blocks × 2 replications = 10 units; a learning policy, so
/// every shard fits the population model.
let shardExperiment = """
  {
    "name": "shards",
    "datasets": [
      {"name": "five", "trace": "t.csv"},
      {"name": "syn", "synthetic": {"users": 4, "days": 2, "seed": 5}}
    ],
    "apps": "top:2",
    "policies": ["never", "periodic:{30m,2h}", "oracle", "ios-minimum"],
    "replications": 2,
    "seed": 9,
    "unit_users": 2
  }
  """

/// Every CSV of a run directory (the final files and the scores), by name.
func csvFiles(_ dir: String) throws -> [String: Data] {
  let names = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".csv") }
  var out: [String: Data] = [:]
  for n in names { out[n] = FileManager.default.contents(atPath: dir + "/" + n) }
  return out
}

/// Runs `fetchlab run FILE --shard k/n --out base/shard-k` for every k,
/// then `fetchlab merge`; returns the merge's result.
func shardAndMerge(_ file: String, count n: Int, base: String, out: String) throws -> CLI.Result {
  var dirs: [String] = []
  for k in 1...n {
    let d = base + "/shard-\(k)"
    let r = try CLI.run(["run", file, "--shard", "\(k)/\(n)", "--out", d, "--jobs", "1"])
    #expect(r.status == 0, "shard \(k)/\(n): \(r.stderr)")
    dirs.append(d)
  }
  return try CLI.run(["merge", "--out", out] + dirs)
}

/// The manifest without the keys a merge may change: command, jobs,
/// started_at, elapsed_s, units.computed and units.reused, and the paths of
/// generated datasets (they lie inside the output directory).
func comparableManifest(_ dir: String) throws -> String {
  var m = try manifest(dir)
  for k in ["command", "jobs", "started_at", "elapsed_s"] { m[k] = nil }
  if var u = m["units"] as? [String: Any] {
    u["computed"] = nil
    u["reused"] = nil
    m["units"] = u
  }
  if let inputs = m["inputs"] as? [[String: Any]] {
    m["inputs"] = inputs.map { i -> [String: Any] in
      var i = i
      if i["kind"] as? String == "synthetic" { i["path"] = nil }
      return i
    }
  }
  let data = try JSONSerialization.data(withJSONObject: m, options: [.sortedKeys])
  return String(decoding: data, as: UTF8.self)
}

@Suite("fetchlab run --shard and fetchlab merge", .serialized)
struct ShardMergeTests {
  @Test("shards 1/3, 2/3, 3/3 merged are a single run, byte for byte; a shard resumes")
  func mergedEqualsSingle() throws {
    let (dir, file) = try experimentDir(shardExperiment)
    let single = try CLI.run(["run", file, "--out", dir + "/single"])
    #expect(single.status == 0, "\(single.stderr)")
    let want = try csvFiles(dir + "/single")
    #expect(Set(want.keys).isSuperset(of: finalFiles + ["policies.csv", "pareto.csv", "matched.csv", "oracle_gap.csv"]))

    // Shard 2 is interrupted after one unit, then resumed.
    let s2 = dir + "/shards/shard-2"
    let stopped = try runFetchlab(
      ["run", file, "--shard", "2/3", "--out", s2], env: ["FETCHLAB_TEST_STOP_AFTER_UNITS": "1"])
    #expect(stopped.status != 0 && stopped.stderr.contains("stopped after 1 units"), "\(stopped.stderr)")
    #expect(!FileManager.default.fileExists(atPath: s2 + "/shard.json"))
    let resumed = try CLI.run(["run", file, "--shard", "2/3", "--out", s2])
    #expect(resumed.status == 0, "\(resumed.stderr)")
    #expect(resumed.stdout.contains("shard 2/3: 3 of 10 units (2 computed, 1 reused)"), "\(resumed.stdout)")

    for k in [1, 3] {
      let r = try CLI.run(["run", file, "--shard", "\(k)/3", "--out", dir + "/shards/shard-\(k)"])
      #expect(r.status == 0, "\(r.stderr)")
    }
    var units: [String] = []
    for k in 1...3 {
      let d = dir + "/shards/shard-\(k)"
      // A shard writes parts and shard.json, no final file.
      #expect(!FileManager.default.fileExists(atPath: d + "/summary.csv"))
      #expect(!FileManager.default.fileExists(atPath: d + "/manifest.json"))
      let data = try #require(FileManager.default.contents(atPath: d + "/shard.json"))
      let o = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
      #expect((o["shard"] as? [String: Any])?["index"] as? Int == k)
      #expect((o["shard"] as? [String: Any])?["count"] as? Int == 3)
      #expect(o["config_hash"] as? String == (try manifest(dir + "/single"))["config_hash"] as? String)
      units += try #require(o["units"] as? [[String: Any]]).compactMap { $0["id"] as? String }
    }
    #expect(units.count == 10 && Set(units).count == 10, "\(units)")

    let m = try CLI.run(["merge", "--out", dir + "/merged"] + (1...3).map { dir + "/shards/shard-\($0)" })
    #expect(m.status == 0, "\(m.stderr)")
    #expect(m.stdout.contains("0 units computed, 10 reused"), "\(m.stdout)")
    #expect(try csvFiles(dir + "/merged") == want)
    #expect(try comparableManifest(dir + "/merged") == (try comparableManifest(dir + "/single")))
    // Merging again into the finished directory changes nothing.
    let again = try CLI.run(["merge", "--out", dir + "/merged"] + (1...3).map { dir + "/shards/shard-\($0)" })
    #expect(again.status == 0, "\(again.stderr)")
    #expect(try csvFiles(dir + "/merged") == want)
  }

  @Test("1, 2 and 3 shards give the same bytes; a shard with no unit is fine")
  func shardCounts() throws {
    let (dir, file) = try experimentDir(shardExperiment.replacingOccurrences(of: "\"replications\": 2", with: "\"replications\": 1"))
    var results: [[String: Data]] = []
    for n in 1...3 {
      let r = try shardAndMerge(file, count: n, base: dir + "/n\(n)", out: dir + "/merged\(n)")
      #expect(r.status == 0, "\(r.stderr)")
      results.append(try csvFiles(dir + "/merged\(n)"))
    }
    #expect(!results[0].isEmpty && results[0]["summary.csv"] != nil)
    #expect(results[0] == results[1] && results[1] == results[2])

    // One unit, two shards: shard 2/2 has nothing to do.
    let (one, oneFile) = try experimentDir(
      #"{"datasets": [{"name": "five", "trace": "t.csv"}], "policies": ["never", "oracle"], "unit_users": 8}"#)
    let r = try shardAndMerge(oneFile, count: 2, base: one + "/shards", out: one + "/merged")
    #expect(r.status == 0, "\(r.stderr)")
    let direct = try CLI.run(["run", oneFile, "--out", one + "/single"])
    #expect(direct.status == 0, "\(direct.stderr)")
    #expect(try csvFiles(one + "/merged") == (try csvFiles(one + "/single")))
  }

  @Test("merge refuses a missing, duplicate or foreign shard and a tampered part, and writes nothing")
  func mergeErrors() throws {
    let (dir, file) = try experimentDir(shardExperiment)
    let shards = dir + "/shards"
    for k in 1...3 {
      let r = try CLI.run(["run", file, "--shard", "\(k)/3", "--out", shards + "/shard-\(k)", "--jobs", "1"])
      #expect(r.status == 0, "\(r.stderr)")
    }
    let s = (1...3).map { shards + "/shard-\($0)" }
    func merge(_ dirs: [String], out: String) throws -> CLI.Result {
      let r = try CLI.run(["merge", "--out", dir + "/" + out] + dirs)
      #expect(!FileManager.default.fileExists(atPath: dir + "/" + out + "/summary.csv"), "\(out)")
      #expect(!FileManager.default.fileExists(atPath: dir + "/" + out + "/manifest.json"), "\(out)")
      return r
    }

    let missing = try merge([s[0], s[2]], out: "missing")
    #expect(missing.status == 1 && missing.stderr.contains("missing shard 2/3"), "\(missing.stderr)")

    let duplicate = try merge([s[0], s[1], s[1], s[2]], out: "duplicate")
    #expect(duplicate.status == 1 && duplicate.stderr.contains("duplicate shard 2/3"), "\(duplicate.stderr)")

    // A shard of a different seed: another configuration.
    let other = dir + "/exp/other.json"
    try shardExperiment.replacingOccurrences(of: "\"seed\": 9", with: "\"seed\": 10")
      .write(toFile: other, atomically: true, encoding: .utf8)
    let o = try CLI.run(["run", other, "--shard", "2/3", "--out", shards + "/other-2", "--jobs", "1"])
    #expect(o.status == 0, "\(o.stderr)")
    let foreign = try merge([s[0], shards + "/other-2", s[2]], out: "foreign")
    #expect(foreign.status == 1 && foreign.stderr.contains("shards of different experiments"), "\(foreign.stderr)")

    // Shards of another split (N = 2).
    let h = try CLI.run(["run", file, "--shard", "1/2", "--out", shards + "/half-1", "--jobs", "1"])
    #expect(h.status == 0, "\(h.stderr)")
    let split = try merge([shards + "/half-1", s[1]], out: "split")
    #expect(split.status == 1 && split.stderr.contains("same N"), "\(split.stderr)")

    // Not a shard at all, and --out being a shard directory.
    let none = try merge([s[0], s[1], dir + "/exp"], out: "none")
    #expect(none.status == 1 && none.stderr.contains("shard.json: cannot read"), "\(none.stderr)")
    let into = try CLI.run(["merge", "--out", s[0]] + s)
    #expect(into.status == 64 && into.stderr.contains("merge into a directory of its own"), "\(into.stderr)")

    // A part whose bytes changed but not its size: the SHA-256 catches it.
    let parts = s[1] + "/parts/"
    let part = try #require(
      try FileManager.default.contentsOfDirectory(atPath: parts).sorted().first { $0.hasSuffix(".fetches.csv") })
    var bytes = [UInt8](try #require(FileManager.default.contents(atPath: parts + part)))
    let digit = try #require(bytes.lastIndex { (UInt8(ascii: "0")...UInt8(ascii: "8")).contains($0) })
    bytes[digit] += 1
    try Data(bytes).write(to: URL(fileURLWithPath: parts + part))
    let tampered = try merge(s, out: "tampered")
    #expect(tampered.status == 1, "\(tampered.stderr)")
    #expect(tampered.stderr.contains(part) && tampered.stderr.contains("SHA-256"), "\(tampered.stderr)")
  }

  @Test("bad --shard values are usage errors", arguments: [
    ("0/3", "the shard K must be in 1...3"), ("4/3", "the shard K must be in 1...3"), ("x", "expected K/N"),
    ("2/0", "the number of shards N must be at least 1"), ("1/2/3", "expected K/N"),
  ])
  func badShard(value: String, fragment: String) throws {
    let (dir, file) = try experimentDir(shardExperiment)
    let r = try CLI.run(["run", file, "--shard", value, "--out", dir + "/out"])
    #expect(r.status == 64, "\(r.stderr)")
    #expect(r.stderr.contains("--shard '\(value)': \(fragment)"), "\(r.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir + "/out"))
  }

  @Test("--shard needs an experiment file; a shard directory keeps its K/N")
  func shardUsage() throws {
    let (dir, file) = try experimentDir(shardExperiment)
    let t = try CLI.run(["run", "--trace", dir + "/exp/t.csv", "--shard", "1/2", "--out", dir + "/t"])
    #expect(t.status == 64 && t.stderr.contains("--shard applies to experiment files only"), "\(t.stderr)")
    let a = try CLI.run(["run", file, "--shard", "1/3", "--out", dir + "/s", "--jobs", "1"])
    #expect(a.status == 0, "\(a.stderr)")
    let b = try CLI.run(["run", file, "--shard", "1/2", "--out", dir + "/s"])
    #expect(b.status == 1 && b.stderr.contains("holds shard 1/3"), "\(b.stderr)")
  }
}
