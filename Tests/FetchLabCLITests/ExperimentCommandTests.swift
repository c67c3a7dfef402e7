import Foundation
import Testing

/// Five one-day users without `update` rows (content is drawn from the seed).
let fiveUserTrace =
  [
    "user,time,event,app,value",
    "a,1767571200,begin,,UTC", "a,1767571200,network,,lte", "a,1767575000,open,news,40",
    "a,1767580000,open,news,10", "a,1767590000,network,,wifi", "a,1767600000,open,chat,20",
    "a,1767610000,open,news,30", "a,1767640000,open,news,15", "a,1767657600,end,,",
    "b,1767571200,begin,,+01:00", "b,1767571200,network,,wifi", "b,1767578000,open,mail,25",
    "b,1767586000,open,news,12", "b,1767599000,network,,lte", "b,1767605000,open,mail,60",
    "b,1767621000,open,news,8", "b,1767650000,open,mail,30", "b,1767657600,end,,",
    "c,1767571200,begin,,UTC", "c,1767571200,network,,lte", "c,1767583000,open,chat,5",
    "c,1767592000,open,chat,50", "c,1767603000,open,news,20", "c,1767633000,open,chat,10", "c,1767657600,end,,",
    "d,1767571200,begin,,-05:00", "d,1767571200,network,,wifi", "d,1767574000,open,news,30",
    "d,1767597000,open,news,30", "d,1767615000,network,,offline", "d,1767620000,network,,lte",
    "d,1767626000,open,news,30", "d,1767657600,end,,",
    "e,1767571200,begin,,UTC", "e,1767571200,network,,5g", "e,1767581000,open,video,300",
    "e,1767611000,open,news,45", "e,1767631000,open,video,100", "e,1767657600,end,,",
  ].joined(separator: "\n") + "\n"

/// SHA-256 of ``fiveUserTrace`` (Python's hashlib and coreutils' sha256sum agree).
let fiveUserTraceSHA256 = "0b906e54a2d8f0245b6f85c0a10031bd7deaa48db7f8cbe301f1f46c93be1ece"

/// Runs `fetchlab` with extra environment variables.
func runFetchlab(_ args: [String], env: [String: String] = [:]) throws -> CLI.Result {
  let p = Process()
  p.executableURL = CLI.executable
  p.arguments = args
  var e = ProcessInfo.processInfo.environment
  for (k, v) in env { e[k] = v }
  p.environment = e
  let out = Pipe(), err = Pipe()
  p.standardOutput = out
  p.standardError = err
  try p.run()
  let o = out.fileHandleForReading.readDataToEndOfFile()
  let x = err.fileHandleForReading.readDataToEndOfFile()
  p.waitUntilExit()
  return CLI.Result(
    status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: x, as: UTF8.self))
}

/// A directory with `exp/t.csv` (``fiveUserTrace``) and `exp/e.json`.
func experimentDir(_ json: String) throws -> (dir: String, file: String) {
  let dir = scratch()
  try FileManager.default.createDirectory(atPath: dir + "/exp", withIntermediateDirectories: true)
  try fiveUserTrace.write(toFile: dir + "/exp/t.csv", atomically: true, encoding: .utf8)
  try json.write(toFile: dir + "/exp/e.json", atomically: true, encoding: .utf8)
  return (dir, dir + "/exp/e.json")
}

let finalFiles = ["summary.csv", "devices.csv", "opens.csv", "fetches.csv", "pooled.csv", "devices_pooled.csv"]

func contents(_ dir: String, _ files: [String] = finalFiles) -> [String: Data?] {
  Dictionary(uniqueKeysWithValues: files.map { ($0, FileManager.default.contents(atPath: dir + "/" + $0)) })
}

func manifest(_ dir: String) throws -> [String: Any] {
  let d = try Data(contentsOf: URL(fileURLWithPath: dir + "/manifest.json"))
  return try #require(JSONSerialization.jsonObject(with: d) as? [String: Any])
}

/// Records of a CSV file (no quoted newlines in these tests), header first.
func csvLines(_ dir: String, _ file: String) throws -> [String] {
  try String(contentsOfFile: dir + "/" + file, encoding: .utf8).split(separator: "\n").map(String.init)
}

/// Two datasets (the trace and a synthetic one), 2 replications, units of 2
/// users: 3 + 2 blocks × 2 replications = 10 units.
let resumeExperiment = """
  {
    "name": "resume",
    "datasets": [
      {"name": "five", "trace": "t.csv"},
      {"name": "syn", "synthetic": {"users": 4, "days": 2, "seed": 5}}
    ],
    "apps": "top:2",
    "policies": ["never", "periodic:{30m,2h}", "oracle"],
    "replications": 2,
    "seed": 9,
    "unit_users": 2
  }
  """

@Suite("fetchlab run EXPERIMENT.json", .serialized)
struct ExperimentCommandTests {
  @Test("a one-dataset, one-replication experiment is 'run --trace' with two leading columns")
  func equivalentToRunTrace() throws {
    let (dir, file) = try experimentDir(
      """
      {"datasets": [{"name": "five", "trace": "t.csv"}],
       "policies": ["never", "periodic:{30m,1h}", "oracle"], "seed": 3, "unit_users": 2}
      """)
    let r = try CLI.run(["run", file, "--out", dir + "/exp-out"])
    #expect(r.status == 0, "\(r.stderr)")
    #expect(r.stdout.contains("dataset five: 5 users") && r.stdout.contains("periodic:30m"), "\(r.stdout)")
    let m = try manifest(dir + "/exp-out")
    let reps = try #require(m["replications"] as? [[String: Any]])
    let seed = try #require((reps.first?["seed"] as? NSNumber)?.uint64Value)
    let t = try CLI.run([
      "run", "--trace", dir + "/exp/t.csv", "--policy", "never", "--policy", "periodic:30m", "--policy", "periodic:1h",
      "--policy", "oracle", "--seed", String(seed), "--out", dir + "/trace-out",
    ])
    #expect(t.status == 0, "\(t.stderr)")
    for f in finalFiles {
      let exp = try csvLines(dir + "/exp-out", f)
      let trace = try csvLines(dir + "/trace-out", f)
      #expect(exp.count == trace.count, "\(f)")
      #expect(exp.first == "dataset,replication," + (trace.first ?? ""), "\(f)")
      #expect(exp.dropFirst().allSatisfy { $0.hasPrefix("five,0,") }, "\(f)")
      #expect(Array(exp.dropFirst().map { String($0.dropFirst("five,0,".count)) }) == Array(trace.dropFirst()), "\(f)")
    }
    // The manifest records the input hash and the expanded configurations.
    let inputs = try #require(m["inputs"] as? [[String: Any]])
    #expect(inputs.first?["sha256"] as? String == fiveUserTraceSHA256)
    #expect(m["policies"] as? [String] == ["never", "periodic:30m", "periodic:1h", "oracle"])
    #expect((m["experiment"] as? [String: Any])?["text"] as? String != nil)
    #expect((m["counts"] as? [String: Any])?["users"] as? Int == 5)
    #expect((m["config_hash"] as? String)?.count == 64)
  }

  @Test("a world-parameter grid replays each dataset once per grid point, as its own dataset, equal to a run with that world")
  func worldGrid() throws {
    let (dir, file) = try experimentDir(
      """
      {"datasets": [{"name": "five", "trace": "t.csv"}],
       "policies": ["never", "periodic:1h"], "seed": 3,
       "world": {"radio": {"lte": {"tail_s": "{5,15}"}}, "fetch.budget_s": 25}}
      """)
    let r = try CLI.run(["run", file, "--out", dir + "/grid"])
    #expect(r.status == 0, "\(r.stderr)")
    #expect(r.stdout.contains("dataset five.radio.lte.tail_s-5:") && r.stdout.contains("dataset five.radio.lte.tail_s-15:"), "\(r.stdout)")
    let pooled = try csvLines(dir + "/grid", "pooled.csv")
    func row(_ prefix: String) -> [String] { pooled.first { $0.hasPrefix(prefix) }.map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) } ?? [] }
    let header = pooled[0].split(separator: ",").map(String.init)
    let energy = try #require(header.firstIndex(of: "energy_j_per_day"))
    let (short, long) = (row("five.radio.lte.tail_s-5,0,periodic:1h,"), row("five.radio.lte.tail_s-15,0,periodic:1h,"))
    // A longer LTE tail costs the timer more; `never` costs nothing in both.
    #expect(Double(long[energy])! > Double(short[energy])!)
    #expect(Double(row("five.radio.lte.tail_s-15,0,never,")[energy]) == 0)
    // The manifest keeps the grid out of the experiment's own world and
    // records each grid dataset's world.
    let m = try manifest(dir + "/grid")
    #expect(m["world_overrides"] as? [String] == ["fetch.budget_s=25"])
    let inputs = try #require(m["inputs"] as? [[String: Any]])
    #expect(inputs.map { $0["world_overrides"] as? [String] ?? [] } == [
      ["radio.lte.tail_s=5", "fetch.budget_s=25"], ["radio.lte.tail_s=15", "fetch.budget_s=25"],
    ])
    // Each grid point is exactly the run with that world.
    let t = try CLI.run([
      "run", "--trace", dir + "/exp/t.csv", "--policy", "never", "--policy", "periodic:1h", "--seed", String(
        try #require(((m["replications"] as? [[String: Any]])?.first?["seed"] as? NSNumber)?.uint64Value)),
      "--set", "radio.lte.tail_s=15", "--set", "fetch.budget_s=25", "--out", dir + "/t15",
    ])
    #expect(t.status == 0, "\(t.stderr)")
    let prefix = "five.radio.lte.tail_s-15,0,"
    let grid = try csvLines(dir + "/grid", "summary.csv").dropFirst().filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
    #expect(grid == Array(try csvLines(dir + "/t15", "summary.csv").dropFirst()))
    // A grid value that is not a valid parameter value names the file, line and parameter.
    let (_, bad) = try experimentDir(
      """
      {"datasets": [{"name": "five", "trace": "t.csv"}], "policies": ["never"],
       "world": {
         "radio.lte.tail_s": "{5,soon}"}}
      """)
    let b = try CLI.run(["run", bad, "--out", dir + "/bad"])
    #expect(b.status != 0 && b.stderr.contains(":3: radio.lte.tail_s:"), "\(b.stderr)")
  }

  @Test("a dataset without scored opens is named in a warning, not shown as fresh or 0 s old")
  func datasetWithoutScoredOpens() throws {
    let (dir, file) = try experimentDir(
      """
      {"datasets": [{"name": "five", "trace": "t.csv"}], "policies": ["never", "periodic:1h"], "train_fraction": 0.99}
      """)
    let r = try CLI.run(["run", file, "--out", dir + "/out"])
    #expect(r.status == 0, "\(r.stderr)")
    #expect(r.stderr.contains("warning: dataset five has no scored opens"), "\(r.stderr)")
    let pooled = try csvLines(dir + "/out", "pooled.csv")
    let header = pooled[0].split(separator: ",", omittingEmptySubsequences: false)
    let age = try #require(header.firstIndex(of: "mean_age_s"))
    #expect(pooled.dropFirst().allSatisfy { $0.split(separator: ",", omittingEmptySubsequences: false)[age].isEmpty })
  }

  @Test("same file, same bytes for --jobs 1 and --jobs 2")
  func jobs() throws {
    let (dir, file) = try experimentDir(resumeExperiment)
    for j in ["1", "2"] {
      let r = try CLI.run(["run", file, "--out", dir + "/out" + j, "--jobs", j])
      #expect(r.status == 0, "\(r.stderr)")
    }
    let a = contents(dir + "/out1"), b = contents(dir + "/out2")
    #expect(a.values.allSatisfy { $0 != nil })
    #expect(a == b)
  }

  @Test("an interrupted run resumes: same bytes as an uninterrupted one, no lost or duplicated rows")
  func resume() throws {
    let (dir, file) = try experimentDir(resumeExperiment)
    let full = try CLI.run(["run", file, "--out", dir + "/full"])
    #expect(full.status == 0, "\(full.stderr)")
    let want = contents(dir + "/full")

    // Killed (by the test hook) after 4 of 10 units: no report, 4 parts.
    let out = dir + "/resumed"
    let stopped = try runFetchlab(["run", file, "--out", out, "--jobs", "2"], env: ["FETCHLAB_TEST_STOP_AFTER_UNITS": "4"])
    #expect(stopped.status != 0)
    #expect(stopped.stderr.contains("stopped after 4 units"), "\(stopped.stderr)")
    #expect(!FileManager.default.fileExists(atPath: out + "/summary.csv"))
    let states = try FileManager.default.contentsOfDirectory(atPath: out + "/parts").filter { $0.hasSuffix(".state") }
    #expect(states.count == 4)

    let resumed = try CLI.run(["run", file, "--out", out])
    #expect(resumed.status == 0, "\(resumed.stderr)")
    #expect(resumed.stdout.contains("6 units computed, 4 reused"), "\(resumed.stdout)")
    #expect(contents(out) == want)
    let units = try #require(try manifest(out)["units"] as? [String: Any])
    #expect(units["computed"] as? Int == 6 && units["reused"] as? Int == 4)

    // Damaged parts: a missing row file, a missing record, an events file
    // of the wrong size. Only those units are recomputed.
    let parts = out + "/parts/"
    try FileManager.default.removeItem(atPath: parts + "five.r0.b000001.csv")
    try FileManager.default.removeItem(atPath: parts + "syn.r1.b000000.state")
    try "x\n".write(toFile: parts + "five.r1.b000002.opens.csv", atomically: true, encoding: .utf8)
    let again = try CLI.run(["run", file, "--out", out, "--jobs", "1"])
    #expect(again.status == 0, "\(again.stderr)")
    #expect(again.stdout.contains("3 units computed, 7 reused"), "\(again.stdout)")
    #expect(contents(out) == want)

    // No lost or duplicated rows: every (dataset, replication, user, app,
    // policy) exactly once, pairs × 4 policies × 2 replications in all.
    let rows = try csvLines(out, "summary.csv").dropFirst()
    let keys = rows.map { $0.split(separator: ",").prefix(5).joined(separator: ",") }
    #expect(Set(keys).count == keys.count)
    let pairs = try #require((try manifest(out)["counts"] as? [String: Any])?["pairs"] as? Int)
    #expect(rows.count == pairs * 4 * 2)
    let users = Set(rows.map { $0.split(separator: ",").prefix(3).joined(separator: ",") })
    #expect(users.count == (5 + 4) * 2)

    // A complete directory: everything reused, same bytes again.
    let done = try CLI.run(["run", file, "--out", out])
    #expect(done.stdout.contains("0 units computed, 10 reused"), "\(done.stdout)")
    #expect(contents(out) == want)
  }

  @Test("a run killed with SIGKILL mid-way resumes to the same bytes")
  func sigkill() throws {
    let (dir, file) = try experimentDir(
      """
      {"datasets": [{"name": "syn", "synthetic": {"users": 16, "days": 3, "seed": 3}}],
       "policies": ["never", "periodic:{15m,1h}", "oracle"], "replications": 2, "unit_users": 2}
      """)
    let full = try CLI.run(["run", file, "--out", dir + "/full"])
    #expect(full.status == 0, "\(full.stderr)")
    let out = dir + "/killed"
    let p = Process()
    p.executableURL = CLI.executable
    p.arguments = ["run", file, "--out", out, "--jobs", "2"]
    p.standardOutput = FileHandle.nullDevice
    p.standardError = FileHandle.nullDevice
    try p.run()
    // Kill it once a few units are done (if it is still running by then).
    let deadline = Date().addingTimeInterval(60)
    while p.isRunning, Date() < deadline {
      let states = (try? FileManager.default.contentsOfDirectory(atPath: out + "/parts"))?.filter { $0.hasSuffix(".state") }
      if (states?.count ?? 0) >= 3 { break }
      usleep(10_000)
    }
    if p.isRunning { kill(p.processIdentifier, SIGKILL) }
    p.waitUntilExit()
    let r = try CLI.run(["run", file, "--out", out])
    #expect(r.status == 0, "\(r.stderr)")
    #expect(contents(out) == contents(dir + "/full"))
    let left = try FileManager.default.contentsOfDirectory(atPath: out + "/parts").filter { $0.contains(".tmp-") || $0.hasPrefix(".work-") }
    #expect(left.isEmpty, "\(left)")
  }

  @Test("replications change the content draws, not the opens")
  func replications() throws {
    let (dir, file) = try experimentDir(
      """
      {"datasets": [{"name": "five", "trace": "t.csv"}], "policies": ["never", "periodic:1h"],
       "replications": 2, "seed": 4}
      """)
    let r = try CLI.run(["run", file, "--out", dir + "/out"])
    #expect(r.status == 0, "\(r.stderr)")
    let opens = try csvLines(dir + "/out", "opens.csv").dropFirst().map { $0.split(separator: ",").map(String.init) }
    // dataset, replication, user, app, policy, time, age_s, aoi_s, fresh
    let byRep = { (r: String) in opens.filter { $0[1] == r } }
    #expect(!byRep("0").isEmpty)
    #expect(byRep("0").map { $0[2...5] } == byRep("1").map { $0[2...5] })
    #expect(byRep("0").map { $0[6...7] } != byRep("1").map { $0[6...7] })
    let m = try manifest(dir + "/out")
    let seeds = try #require(m["replications"] as? [[String: Any]]).compactMap { ($0["seed"] as? NSNumber)?.uint64Value }
    #expect(seeds.count == 2 && seeds[0] != seeds[1])
  }

  @Test("a directory holding a different experiment is refused unless --force")
  func refuseOther() throws {
    let (dir, file) = try experimentDir(resumeExperiment)
    #expect(try CLI.run(["run", file, "--out", dir + "/out"]).status == 0)
    let other = resumeExperiment.replacingOccurrences(of: "\"seed\": 9", with: "\"seed\": 10")
    try other.write(toFile: file, atomically: true, encoding: .utf8)
    let r = try CLI.run(["run", file, "--out", dir + "/out"])
    #expect(r.status == 1)
    #expect(r.stderr.contains("holds parts of a different experiment") && r.stderr.contains("--force"), "\(r.stderr)")
    let f = try CLI.run(["run", file, "--out", dir + "/out", "--force"])
    #expect(f.status == 0, "\(f.stderr)")
    #expect(f.stdout.contains("10 units computed, 0 reused"), "\(f.stdout)")
    // Output of 'run --trace' is not an experiment's either.
    let t = try CLI.run(["run", "--trace", dir + "/exp/t.csv", "--out", dir + "/trace"])
    #expect(t.status == 0, "\(t.stderr)")
    let x = try CLI.run(["run", file, "--out", dir + "/trace"])
    #expect(x.status == 1 && x.stderr.contains("'run --trace'"), "\(x.stderr)")
  }

  @Test("a synthetic dataset is generated once and regenerated when its file no longer matches its hash")
  func synthetic() throws {
    let (dir, file) = try experimentDir(
      """
      {"datasets": [{"name": "syn", "synthetic": {"users": 3, "days": 2, "seed": 5}}],
       "policies": ["never"], "event_files": false}
      """)
    #expect(try CLI.run(["run", file, "--out", dir + "/out"]).status == 0)
    let path = dir + "/out/datasets/syn.csv"
    let original = try #require(FileManager.default.contents(atPath: path))
    #expect(FileManager.default.fileExists(atPath: dir + "/out/datasets/syn.json"))
    #expect(!FileManager.default.fileExists(atPath: dir + "/out/opens.csv"))
    try "garbage\n".write(toFile: path, atomically: true, encoding: .utf8)
    let r = try CLI.run(["run", file, "--out", dir + "/out"])
    #expect(r.status == 0, "\(r.stderr)")
    #expect(FileManager.default.contents(atPath: path) == original)
    let inputs = try #require(try manifest(dir + "/out")["inputs"] as? [[String: Any]])
    #expect(inputs.first?["kind"] as? String == "synthetic" && (inputs.first?["sha256"] as? String)?.count == 64)
  }

  @Test("bad experiment files and option clashes fail clearly", arguments: [
    (#"{"datasets": [{"name": "x", "synthetic": {"users": 2, "day": 3}}], "policies": ["never"]}"#, Int32(1),
     "e.json:1: datasets[0].synthetic.day: unknown key"),
    ("{\n \"datasets\": [{\"name\": \"x\", \"trace\": \"t.csv\"}],\n \"policies\": [\"periodic:{1h,soon}\"]\n}", Int32(1),
     "e.json:3: policies[0]: policy 'periodic:soon': bad interval"),
    (#"{"datasets": [{"name": "x", "trace": "missing.csv"}], "policies": ["never"]}"#, Int32(1),
     "datasets[0].trace: cannot find 'missing.csv'"),
  ])
  func badFiles(json: String, status: Int32, fragment: String) throws {
    let (dir, file) = try experimentDir(json)
    let r = try CLI.run(["run", file, "--out", dir + "/out"])
    #expect(r.status == status, "\(r.stderr)")
    #expect(r.stderr.contains(fragment), "\(r.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir + "/out/summary.csv"))
  }

  @Test("usage errors: an experiment with --policy, neither form, --shard with --trace")
  func usage() throws {
    let (dir, file) = try experimentDir(resumeExperiment)
    let a = try CLI.run(["run", file, "--policy", "never", "--out", dir + "/out"])
    #expect(a.status == 64 && a.stderr.contains("--policy cannot be combined with an experiment file"), "\(a.stderr)")
    let b = try CLI.run(["run", "--out", dir + "/out"])
    #expect(b.status == 64, "\(b.stderr)")
    // --force with --trace is accepted (it replaces an
    // experiment's directory); --shard is still experiment-only.
    let c = try CLI.run(["run", "--trace", dir + "/exp/t.csv", "--shard", "1/2", "--out", dir + "/out"])
    #expect(c.status == 64, "\(c.stderr)")
  }
}
