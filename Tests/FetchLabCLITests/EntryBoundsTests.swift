import Foundation
import FetchSupport
import Testing

/// The same bounds on every entry: `run --trace`'s policies and output,
/// device-wide policy work, commands that write two things, and what a
/// report draws for a large grid.
@Suite("Bounds on every entry", .serialized)
struct EntryBoundsTests {
  /// A synthetic trace of `users` × `days` in a new scratch directory.
  static func synthTrace(users: Int, days: Int) throws -> (dir: String, trace: String) {
    let dir = scratch()
    let r = try CLI.run(["synth", "--users", "\(users)", "--days", "\(days)", "--seed", "3", "--out", dir + "/t.csv"])
    #expect(r.status == 0, "\(r.stderr)")
    return (dir, dir + "/t.csv")
  }

  @Test("run --trace: a --policy longer than 4,096 bytes is refused before anything runs, without an echo")
  func policyLength() throws {
    let dir = scratch()
    try smallTrace.write(toFile: dir + "/t.csv", atomically: true, encoding: .utf8)
    let long = "per-app:" + (0..<1_000).map { "a\($0)=never" }.joined(separator: ";") + ";*=periodic:1m"
    let l = try CLI.run(["run", "--trace", dir + "/t.csv", "--out", dir + "/b", "--policy", long])
    #expect(l.status == 64)
    #expect(l.stderr.contains("--policy #1 of \(long.utf8.count) bytes is longer than 4096 bytes"), "\(l.stderr.prefix(300))")
    #expect(l.stderr.count < 1_000, "the message does not echo the policy")
    #expect(!FileManager.default.fileExists(atPath: dir + "/b"))
  }

  @Test("run --trace: the output is estimated before writing and refused past FETCHLAB_MAX_OUTPUT_MB; without event files it fits")
  func outputEstimate() throws {
    let (dir, trace) = try Self.synthTrace(users: 6, days: 3)
    let env = ["FETCHLAB_MAX_OUTPUT_MB": "1"]
    let args = ["run", "--trace", trace, "--policy", "periodic:1m", "--policy", "periodic:2m", "--train-fraction", "0"]
    let r = try CLI.run(args + ["--out", dir + "/big"], environment: env)
    #expect(r.status == 1)
    #expect(r.stderr.contains("estimated output") && r.stderr.contains("of opens.csv and fetches.csv"), "\(r.stderr)")
    #expect(r.stderr.contains("over the limit of 1 MB") && r.stderr.contains("--no-event-files"), "\(r.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir + "/big"))
    let small = try CLI.run(args + ["--no-event-files", "--out", dir + "/small"], environment: env)
    #expect(small.status == 0, "\(small.stderr)")
  }

  @Test("a planner deciding at every event of three apps is refused by its device-wide work, naming apps and events")
  func deviceWork() throws {
    let (dir, trace) = try Self.synthTrace(users: 1, days: 2)
    let r = try CLI.run([
      "run", "--trace", trace, "--policy", "planner:horizon=7d,step=1m,check=1d", "--apps", "top:3", "--out", dir + "/out",
    ])
    #expect(r.status == 1)
    #expect(r.stderr.contains("decision steps for 3 apps"), "\(r.stderr)")
    #expect(r.stderr.contains("other apps' opens, wakes, plug-ins and network changes"), "\(r.stderr)")
    #expect(r.stderr.contains("horizon=7d, step=1m, check=1d") && r.stderr.contains("FETCHLAB_MAX_POLICY_STEPS"), "\(r.stderr)")
  }

  @Test("bg-app-refresh at its documented minimum (earliest=0s, spacing=0s) replays: its fetches are estimated, not divided by 0")
  func zeroMinimum() throws {
    let (dir, trace) = try Self.synthTrace(users: 2, days: 2)
    let r = try CLI.run([
      "run", "--trace", trace, "--policy", "bg-app-refresh:earliest=0s,spacing=0s", "--out", dir + "/out", "--no-event-files",
    ])
    #expect(r.status == 0, "\(r.stderr)")
    #expect(!r.stderr.contains("∞"))
  }

  @Test("fit --out M --report DIR under a full disk: both new or both old, never a new model beside an old report")
  func fitBothOrNeither() throws {
    let (dir, trace) = try Self.synthTrace(users: 4, days: 3)
    let other = try CLI.run(["synth", "--users", "4", "--days", "3", "--seed", "4", "--out", dir + "/t2.csv"])
    #expect(other.status == 0)
    let m = dir + "/m.json", rep = dir + "/fit"
    let first = try CLI.run(["fit", "--trace", trace, "--out", m, "--report", rep])
    #expect(first.status == 0, "\(first.stderr)")
    let oldModel = try #require(FileManager.default.contents(atPath: m))
    let oldManifest = try #require(FileManager.default.contents(atPath: rep + "/manifest.json"))
    // The report names the model it describes by its hash: a reader can
    // tell whether the model beside it is that one.
    func modelHash(_ manifest: Data) throws -> String? {
      try (JSONSerialization.jsonObject(with: manifest) as? [String: Any])?["model_sha256"] as? String
    }
    #expect(try modelHash(oldManifest) == SHA256.hex(oldModel))
    var failures = 0
    for limit in [2_000, 20_000, 60_000, 120_000, 200_000, 400_000] {
      let r = try CLI.run(
        ["fit", "--trace", dir + "/t2.csv", "--out", m, "--report", rep],
        environment: ["FETCHLAB_TEST_WRITE_LIMIT_BYTES": "\(limit)"])
      let model = try #require(FileManager.default.contents(atPath: m))
      let manifest = try #require(FileManager.default.contents(atPath: rep + "/manifest.json"))
      if r.status == 0 {
        #expect(model != oldModel && manifest != oldManifest, "limit \(limit)")
        #expect(try modelHash(manifest) == SHA256.hex(model), "limit \(limit)")
        break
      }
      failures += 1
      #expect(r.status == 1 && r.stderr.contains("No space left"), "limit \(limit): \(r.stderr)")
      #expect(model == oldModel, "limit \(limit): the model was replaced by a failed fit")
      #expect(manifest == oldManifest, "limit \(limit)")
      let left = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.contains(".tmp-") }
      #expect(left.isEmpty, "limit \(limit): \(left)")
    }
    #expect(failures >= 2)
  }

  @Test("a merge into a new directory that fails leaves no directory")
  func failedMergeLeavesNothing() throws {
    let (dir, file) = try experimentDir(shardExperiment.replacingOccurrences(of: "\"replications\": 2", with: "\"replications\": 1"))
    for k in 1...2 {
      let r = try CLI.run(["run", file, "--shard", "\(k)/2", "--out", dir + "/shards/shard-\(k)"])
      #expect(r.status == 0, "\(r.stderr)")
    }
    let shards = [dir + "/shards/shard-1", dir + "/shards/shard-2"]
    for (out, limit) in [(dir + "/merged", 30_000), (dir + "/new/merged", 60_000)] {
      let m = try CLI.run(["merge", "--out", out] + shards, environment: ["FETCHLAB_TEST_WRITE_LIMIT_BYTES": "\(limit)"])
      #expect(m.status == 1, "\(m.stderr)")
      #expect(!FileManager.default.fileExists(atPath: out), "\(out) left behind")
    }
    #expect(!FileManager.default.fileExists(atPath: dir + "/new"))
    let ok = try CLI.run(["merge", "--out", dir + "/merged"] + shards)
    #expect(ok.status == 0, "\(ok.stderr)")
  }

  @Test("a grid of more than 24 datasets: run prints and report draws the first 24, and both say so; the tables cover up to 100")
  func largeGridReport() throws {
    let json = """
      {
        "name": "grid",
        "datasets": [{"name": "five", "trace": "t.csv"}],
        "apps": "top:1",
        "train_fraction": 0,
        "world": {"device": {"cpu_wake_j": "{0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1,1.1,1.2,1.3,1.4,1.5}"},
                  "radio": {"lte": {"tail_s": "{5,10}"}}},
        "policies": ["never", "periodic:1h"],
        "replications": 1,
        "seed": 3
      }
      """
    let (dir, file) = try experimentDir(json)
    let r = try CLI.run(["run", file, "--out", dir + "/out"])
    #expect(r.status == 0, "\(r.stderr)")
    // The run prints the tables of the first 24 datasets, then how many more there are.
    #expect(r.stdout.components(separatedBy: "\ndataset ").count - 1 == 24, "\(r.stdout.suffix(500))")
    #expect(r.stdout.contains("... and 6 more datasets (a run prints the first 24): every dataset's rows are in "), "\(r.stdout.suffix(500))")
    let rep = try CLI.run(["report", dir + "/out", "--no-timeline"])
    #expect(rep.status == 0, "\(rep.stderr)")
    let plots = try FileManager.default.contentsOfDirectory(atPath: dir + "/out/plots")
    let staleness = plots.filter { $0.hasPrefix("staleness-energy") }
    #expect(staleness.count == 24, "\(staleness.count) staleness charts")
    let md = try String(contentsOfFile: dir + "/out/report.md", encoding: .utf8)
    #expect(md.contains("30 datasets: charts for the first 24 only"), "\(md.prefix(2_000))")
    #expect(md.components(separatedBy: "### Dataset ").count - 1 >= 30, "under 100 datasets, every dataset has its tables")
    #expect(md.contains("**This report summarises"), "\(md.prefix(2_000))")
  }
}
