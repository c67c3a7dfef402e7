import FetchSupport
import FetchTraces
import Foundation
import Testing

/// Every file a finished experiment run writes, except `manifest.json`
/// (it holds timestamps; compared by its content keys instead).
let allResultFiles = finalFiles + ["policies.csv", "pareto.csv", "matched.csv", "oracle_gap.csv", "loss_split.csv"]

/// Two datasets (the five-user trace and a generated one), 2 replications,
/// units of 2 users: (3 + 6 blocks) × 2 replications = 18 units.
let killExperiment = """
  {"name": "kill",
   "datasets": [{"name": "five", "trace": "t.csv"},
                {"name": "syn", "synthetic": {"users": 12, "days": 2, "seed": 3}}],
   "apps": "top:2", "policies": ["never", "periodic:{15m,1h}", "oracle"],
   "replications": 2, "seed": 5, "unit_users": 2}
  """
let killExperimentUnits = 18

/// Files under `dir` (recursively) whose names mark an unfinished write.
func leftovers(_ dir: String) -> [String] {
  let e = FileManager.default.enumerator(atPath: dir)
  var out: [String] = []
  while let f = e?.nextObject() as? String {
    let name = (f as NSString).lastPathComponent
    if name.contains(".tmp-") || name.hasPrefix(".work-") || name.hasPrefix(".staging-") || name == ".commit" {
      out.append(f)
    }
  }
  return out.sorted()
}

/// When to send SIGKILL to a running `fetchlab run`.
enum KillPoint: CustomStringConvertible {
  /// While the synthetic dataset is being generated (its temp file exists).
  case generating
  /// Once `k` unit records (`parts/*.state`) exist and this process has
  /// written at least one.
  case units(Int)
  /// `seconds` after the start.
  case after(Double)
  /// While the final files are assembled (in the staging directory).
  case assembling
  /// After the staged manifest is written, while the scores are written.
  case scoring

  var description: String {
    switch self {
    case .generating: "while generating the synthetic trace"
    case .units(let k): "after \(k) unit records"
    case .after(let s): "after \(CSV.number(s, decimals: 3)) s"
    case .assembling: "while assembling the final files"
    case .scoring: "after the manifest, while writing the scores"
    }
  }
}

/// Runs `fetchlab run file --out out --jobs 2` and kills it with SIGKILL
/// at `point` if it is still running then; returns whether it was killed
/// and how many unit records existed at that moment.
func runAndKill(_ file: String, out: String, at point: KillPoint) throws -> (killed: Bool, states: Int) {
  let fm = FileManager.default
  func states() -> Int { ((try? fm.contentsOfDirectory(atPath: out + "/parts")) ?? []).filter { $0.hasSuffix(".state") }.count }
  func has(_ dir: String, _ test: (String) -> Bool) -> Bool { ((try? fm.contentsOfDirectory(atPath: dir)) ?? []).contains(where: test) }
  let p = Process()
  p.executableURL = CLI.executable
  p.arguments = ["run", file, "--out", out, "--jobs", "2"]
  p.standardOutput = FileHandle.nullDevice
  p.standardError = FileHandle.nullDevice
  let before = states()
  let start = Date()
  try p.run()
  let deadline = start.addingTimeInterval(60)
  while p.isRunning, Date() < deadline {
    let due: Bool =
      switch point {
      case .generating: has(out + "/datasets") { $0.contains(".tmp-") }
      case .units(let k): states() >= max(k, before + 1)
      case .after(let s): Date().timeIntervalSince(start) >= s
      case .assembling:
        has(out) { s in
          s.hasPrefix(".staging-") && has(out + "/" + s) { $0.hasPrefix("summary.csv.tmp-") || $0.hasPrefix("pooled.csv.tmp-") }
        }
      case .scoring: has(out) { $0.hasPrefix(".staging-") && fm.fileExists(atPath: out + "/" + $0 + "/manifest.json") }
      }
    if due { break }
    usleep(500)
  }
  var killed = false
  if p.isRunning {
    kill(p.processIdentifier, SIGKILL)
    killed = true
  }
  p.waitUntilExit()
  if killed { #expect(p.terminationReason == .uncaughtSignal, "\(point)") }
  return (killed && p.terminationReason == .uncaughtSignal, states())
}

@Suite("SIGKILL and resume", .serialized)
struct KillResumeTests {
  @Test("killed with SIGKILL at seeded points (generation, units, times, assembly, scores), rerun to completion: the bytes of an uninterrupted run, no temp files")
  func killAndResume() throws {
    let (dir, file) = try experimentDir(killExperiment)
    let t0 = Date()
    let full = try CLI.run(["run", file, "--out", dir + "/full", "--jobs", "2"])
    let duration = Date().timeIntervalSince(t0)
    #expect(full.status == 0, "\(full.stderr)")
    #expect(full.stdout.contains("\(killExperimentUnits) units computed, 0 reused"), "\(full.stdout)")
    let want = contents(dir + "/full", allResultFiles)
    #expect(want.values.allSatisfy { $0 != nil })

    // Kill points, seeded: one in generation, unit counts spread over the
    // run, two times spread over an uninterrupted run's duration, one in
    // the final assembly and one while the scores are written.
    var rng = SplitMix64(seed: 0x51_6C1B)
    let third = killExperimentUnits / 3
    let k1 = 1 + Int(rng.next() % UInt64(third))
    let k2 = third + 1 + Int(rng.next() % UInt64(third))
    let k3 = 2 * third + 1 + Int(rng.next() % UInt64(killExperimentUnits - 2 * third - 1))
    let points: [KillPoint] = [
      .generating, .units(k1), .after(duration * (0.05 + 0.4 * rng.uniform())), .units(k2),
      .after(duration * (0.05 + 0.4 * rng.uniform())), .units(k3), .assembling, .scoring,
    ]
    let out = dir + "/killed"
    var log: [String] = []
    var kills = 0
    var last = 0
    for point in points {
      let (killed, states) = try runAndKill(file, out: out, at: point)
      kills += killed ? 1 : 0
      log.append("\(point): \(killed ? "killed" : "finished first"), \(states) unit records")
      // Finished units are never lost: the records only grow.
      #expect(states >= last, "\(point)")
      last = states
    }
    let done = try CLI.run(["run", file, "--out", out, "--jobs", "1"])
    #expect(done.status == 0, "\(done.stderr)")
    print("kill and resume: uninterrupted run \(CSV.number(duration, decimals: 2)) s; " + log.joined(separator: "; "))
    // Most kill points must land while the process runs, or the test tests nothing.
    #expect(kills >= 5, "\(log)")

    // Same bytes, every file; the manifest describes the same run.
    let got = contents(out, allResultFiles)
    for f in allResultFiles { #expect(got[f] == want[f], "\(f) differs after \(kills) kills: \(log)") }
    let a = try manifest(dir + "/full"), b = try manifest(out)
    #expect(a["config_hash"] as? String == b["config_hash"] as? String)
    #expect(NSDictionary(dictionary: a["counts"] as? [String: Any] ?? [:]) == NSDictionary(dictionary: b["counts"] as? [String: Any] ?? [:]))
    #expect(((b["units"] as? [String: Any])?["computed"] as? Int ?? -1) + ((b["units"] as? [String: Any])?["reused"] as? Int ?? -1) == killExperimentUnits)

    // No lost or duplicated rows.
    let rows = try csvLines(out, "summary.csv").dropFirst()
    let keys = rows.map { $0.split(separator: ",").prefix(5).joined(separator: ",") }
    let wantRows = try csvLines(dir + "/full", "summary.csv").count - 1
    #expect(Set(keys).count == keys.count && rows.count == wantRows)

    // No temporary file anywhere in the results (parts/, datasets/, top level).
    #expect(leftovers(out).isEmpty, "left behind: \(leftovers(out))")
  }

  @Test("experiment output is byte-identical for --jobs 1, 2 and 8")
  func jobs() throws {
    let (dir, file) = try experimentDir(killExperiment)
    var outputs: [[String: Data?]] = []
    for j in ["1", "2", "8"] {
      let r = try CLI.run(["run", file, "--out", dir + "/out" + j, "--jobs", j])
      #expect(r.status == 0, "\(r.stderr)")
      outputs.append(contents(dir + "/out" + j, allResultFiles))
    }
    // The traces parsed on 2 threads in chunks of a few rows to a few users.
    for chunk in ["300", "5000"] {
      let r = try runFetchlab(
        ["run", file, "--out", dir + "/chunks" + chunk, "--jobs", "2"], env: ["FETCHLAB_READ_CHUNK_BYTES": chunk])
      #expect(r.status == 0, "\(r.stderr)")
      outputs.append(contents(dir + "/chunks" + chunk, allResultFiles))
    }
    #expect(outputs[0].values.allSatisfy { $0 != nil })
    for f in allResultFiles {
      #expect(outputs[0][f] == outputs[1][f], "\(f): --jobs 1 and 2 differ")
      #expect(outputs[0][f] == outputs[2][f], "\(f): --jobs 1 and 8 differ")
      #expect(outputs[0][f] == outputs[3][f], "\(f): --jobs 1 and 2 with chunks of 300 bytes differ")
      #expect(outputs[0][f] == outputs[4][f], "\(f): --jobs 1 and 2 with chunks of 5000 bytes differ")
    }
  }
}
