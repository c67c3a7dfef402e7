import FetchBenchmark
import FetchTraces
import Foundation
import Testing

/// A trace `validate` accepts whose second user's
/// window is 1 ms long.
let oneMillisecondUserTrace = """
  user,time,event,app,value
  a,0,begin,,UTC
  a,600,open,news,5
  a,7200,end,,
  b,1000000000,begin,,UTC
  b,1000000000,open,news,5
  b,1000000000.001,end,,

  """

/// Writes `text` to `dir/name`; returns the path.
func write(_ text: String, _ dir: String, _ name: String) throws -> String {
  let p = dir + "/" + name
  try text.write(toFile: p, atomically: false, encoding: .utf8)
  return p
}

/// Every entry of `dir` (recursively), sorted, with file contents.
func snapshot(_ dir: String) -> [String: Data] {
  var out: [String: Data] = [:]
  let e = FileManager.default.enumerator(atPath: dir)
  while let f = e?.nextObject() as? String {
    var isDir: ObjCBool = false
    _ = FileManager.default.fileExists(atPath: dir + "/" + f, isDirectory: &isDir)
    out[f] = isDir.boolValue ? Data() : FileManager.default.contents(atPath: dir + "/" + f)
  }
  return out
}

/// The result files of a run (the manifest without its timing fields).
func results(_ dir: String) -> [String: Data] {
  var s = snapshot(dir).filter { !$0.key.hasPrefix(".") && !$0.key.hasPrefix("parts") && !$0.key.hasPrefix("datasets") }
  if let m = s["manifest.json"], var o = (try? JSONSerialization.jsonObject(with: m)) as? [String: Any] {
    for k in ["started_at", "elapsed_s", "command", "units"] { o[k] = nil }
    s["manifest.json"] = try? JSONSerialization.data(withJSONObject: o, options: [.sortedKeys])
  }
  return s
}

@Suite("reliability", .serialized)
struct ReliabilityTests {
  @Test("learning policies on a 1 ms user fall back to the population model instead of trapping")
  func shortUserLearning() throws {
    let d = scratch()
    let t = try write(oneMillisecondUserTrace, d, "short.csv")
    for policy in ["ios-minimum", "ios-custom:1h", "imp"] {
      let r = try CLI.run(["run", "--trace", t, "--policy", policy, "--policy", "never", "--out", d + "/o-" + policy])
      #expect(r.status == 0, "\(policy): \(r.stderr)")
      #expect(r.stderr.contains("population model"), "\(policy): \(r.stderr)")
      #expect(leftovers(d).isEmpty, "\(leftovers(d))")
    }
  }

  @Test("a trace whose every training window is shorter than a bin: no population-fit error, the run finishes")
  func noPopulationBins() throws {
    let d = scratch()
    let t = try write(
      "user,time,event,app,value\nb,1000000000,begin,,UTC\nb,1000000000,open,news,5\nb,1000000000.001,end,,\n", d, "b.csv")
    let r = try CLI.run(["run", "--trace", t, "--policy", "ios-minimum", "--out", d + "/o"])
    #expect(r.status == 0 && !r.stderr.contains("no bins"), "\(r.stderr)")
  }

  @Test("pooled age quantiles are not clipped at 10^8 s: a 9-year-old version is reported as such")
  func oldAges() throws {
    let d = scratch()
    let open = 1_000_000_000 + 9 * 365 * 86_400  // the version is 9 years old at this open
    let t = try write(
      "user,time,event,app,value\na,1000000000,begin,,UTC\na,1000000000,update,news,\n"
        + "a,\(open),open,news,5\na,\(open + 10),end,,\n", d, "old.csv")
    let r = try CLI.run([
      "run", "--trace", t, "--policy", "never", "--set", "content.source=trace", "--no-foreground-refresh",
      "--train-fraction", "0", "--out", d + "/o",
    ])
    #expect(r.status == 0, "\(r.stderr)")
    let lines = try csvLines(d + "/o", "pooled.csv")
    let header = lines[0].split(separator: ",").map(String.init)
    let row = lines[1].split(separator: ",").map(String.init)
    let p50 = try #require(header.firstIndex(of: "p50_age_s").flatMap { Double(row[$0]) })
    let exact = Double(open - 1_000_000_000)
    #expect(abs(p50 / exact - 1) < 0.006, "p50 \(p50), exact \(exact)")
  }

  @Test("per-app content rate: bounded; an absurd one is refused, not a trap or a 230 GB allocation")
  func appRateBounded() throws {
    let d = scratch()
    let t = try write(smallTrace, d, "t.csv")
    for v in ["1e300", "1e9", "inf"] {
      let r = try CLI.run(["run", "--trace", t, "--policy", "never", "--set", "content.app_rate_per_hour.news=" + v, "--out", d + "/o"])
      #expect(r.status != 0 && r.status < 128, "\(v): \(r.status)")
      #expect(r.stderr.contains("content.app_rate_per_hour.news"), "\(v): \(r.stderr)")
      #expect(!FileManager.default.fileExists(atPath: d + "/o"), "a run failing up front leaves nothing")
    }
  }

  @Test("windows whose replay would not fit are refused up front with the estimate and the limit")
  func windowEstimates() throws {
    let d = scratch()
    let wide = try write(
      "user,time,event,app,value\na,-99999999999,begin,,UTC\na,0,open,news,5\na,99999999999,end,,\n", d, "wide.csv")
    // Times outside 1970...2100: refused by the reader, so by `validate` too, with the line.
    let v = try CLI.run(["validate", wide])
    #expect(v.status != 0 && v.stderr.contains("wide.csv:2: time:") && v.stderr.contains("outside 1970-01-01"), "\(v.stderr)")
    for policy in ["never", "periodic:15m"] {
      let t0 = Date()
      let r = try CLI.run(["run", "--trace", wide, "--policy", policy, "--out", d + "/o"])
      #expect(r.status == 1, "\(policy): \(r.stderr)")
      #expect(r.stderr.contains("outside 1970-01-01"), "\(policy): \(r.stderr)")
      #expect(Date().timeIntervalSince(t0) < 20)
    }
    var long = "user,time,event,app,value\na,0,begin,,UTC\n"
    for k in 1...60 { long += "a,\(k * 16_000_000),open,news,5\n" }
    long += "a,1000000000,end,,\n"
    let lt = try write(long, d, "long.csv")
    let t0 = Date()
    let r = try CLI.run(["run", "--trace", lt, "--policy", "ios-minimum", "--out", d + "/o"])
    #expect(r.status == 1 && r.stderr.contains("limit"), "\(r.stderr)")
    #expect(Date().timeIntervalSince(t0) < 20)
    // A documented-range rate on a month: refused by its estimate.
    let t = try write(fiveUserTrace, d, "five.csv")
    let m = try CLI.run(["run", "--trace", t, "--policy", "never", "--set", "content.rate_per_hour=1000000", "--out", d + "/o"])
    #expect(m.status == 1 && m.stderr.contains("content updates"), "\(m.stderr)")
    // And from an experiment file.
    let (edir, efile) = try experimentDir(
      #"{"name": "w", "datasets": [{"name": "w", "trace": "wide.csv"}], "policies": ["never"]}"#)
    try FileManager.default.copyItem(atPath: wide, toPath: edir + "/exp/wide.csv")
    let e = try CLI.run(["run", efile, "--out", edir + "/o"])
    #expect(e.status == 1 && e.stderr.contains("outside 1970-01-01"), "\(e.stderr)")
    #expect(!FileManager.default.fileExists(atPath: edir + "/o"), "\(snapshot(edir + "/o").keys.sorted())")
  }

  @Test("a FIFO as the trace is refused at once (no hang re-opening it)")
  func fifo() throws {
    let d = scratch()
    #expect(mkfifo(d + "/fifo", 0o600) == 0)
    let r = try CLI.run(["run", "--trace", d + "/fifo", "--policy", "never", "--out", d + "/o"])
    #expect(r.status == 1 && r.stderr.contains("not a regular file"), "\(r.stderr)")
  }

  @Test("disk full while writing: an older result stays whole; a new directory is left empty")
  func diskFull() throws {
    let d = scratch()
    let t = try write(fiveUserTrace, d, "t.csv")
    let out = d + "/o"
    let args = ["run", "--trace", t, "--policy", "never", "--policy", "periodic:1h", "--out", out]
    let old = try CLI.run(args + ["--seed", "7"])
    #expect(old.status == 0, "\(old.stderr)")
    let before = results(out)
    var failures = 0
    for limit in [0, 100, 2_000, 6_000, 20_000] {
      let r = try runFetchlab(args + ["--force"], env: ["FETCHLAB_TEST_WRITE_LIMIT_BYTES": String(limit)])
      if r.status != 0 {
        failures += 1
        #expect(r.stderr.contains("No space left on device"), "\(r.stderr)")
        #expect(results(out) == before, "limit \(limit): the older result changed")
      }
      let fresh = d + "/fresh\(limit)"
      let f = try runFetchlab(
        ["run", "--trace", t, "--policy", "never", "--out", fresh], env: ["FETCHLAB_TEST_WRITE_LIMIT_BYTES": String(limit)])
      if f.status != 0 { #expect(!FileManager.default.fileExists(atPath: fresh), "\(snapshot(fresh).keys)") }
    }
    #expect(failures >= 3)
  }

  @Test("disk full during an experiment's assembly: the older result (same or another experiment, --force) stays whole")
  func diskFullExperiment() throws {
    let (dir, file) = try experimentDir(
      #"{"name": "a", "datasets": [{"name": "five", "trace": "t.csv"}], "policies": ["never", "oracle"], "seed": 3}"#)
    let out = dir + "/o"
    #expect(try CLI.run(["run", file, "--out", out]).status == 0)
    let before = results(out)
    let other = try write(
      #"{"name": "b", "datasets": [{"name": "five", "trace": "t.csv"}], "policies": ["periodic:1h"], "seed": 4}"#,
      dir + "/exp", "b.json")
    var failures = 0
    for limit in [0, 3_000, 12_000, 30_000] {
      for args in [["run", file, "--out", out], ["run", other, "--out", out, "--force"]] {
        let r = try runFetchlab(args + ["--force"], env: ["FETCHLAB_TEST_WRITE_LIMIT_BYTES": String(limit)])
        if r.status != 0 {
          failures += 1
          #expect(r.stderr.contains("No space left on device"), "\(r.stderr)")
          #expect(results(out) == before, "limit \(limit), \(args[1]): the older result changed")
        }
      }
    }
    #expect(failures >= 5)
    #expect(try CLI.run(["run", file, "--out", out, "--force"]).status == 0)
    #expect(results(out) == before)
  }

  @Test("SIGKILL at every step of the commit: the directory (after recovery) holds the old or the new result, never a mix")
  func killDuringCommit() throws {
    let d = scratch()
    let t = try write(fiveUserTrace, d, "t.csv")
    let reference = d + "/ref"
    let newArgs = ["run", "--trace", t, "--policy", "never", "--policy", "oracle", "--no-event-files", "--force"]
    #expect(try CLI.run(newArgs + ["--out", reference]).status == 0)
    let newResult = results(reference)
    var killedSteps = 0
    for step in 1...40 {
      let out = d + "/k\(step)"
      #expect(try CLI.run(["run", "--trace", t, "--policy", "periodic:1h", "--out", out]).status == 0)
      let oldResult = results(out)
      let r = try runFetchlab(newArgs + ["--out", out], env: ["FETCHLAB_TEST_KILL_AT_COMMIT_STEP": String(step)])
      if r.status == 0 { break }
      killedSteps += 1
      ResultDirectory.recoverForReading(out)
      let got = results(out)
      #expect(got == oldResult || got == newResult, "step \(step): \(got.keys.sorted())")
      // The next run cleans up and succeeds.
      #expect(try CLI.run(newArgs + ["--out", out]).status == 0)
      #expect(results(out) == newResult)
      #expect(snapshot(out).keys.allSatisfy { !$0.hasPrefix(".staging") && !$0.hasPrefix(".commit") && !$0.contains(".tmp-") })
    }
    #expect(killedSteps >= 8, "only \(killedSteps) commit steps")
  }

  @Test("an experiment killed at every step of its commit: old or new result, never a mix")
  func killExperimentCommit() throws {
    let (dir, file) = try experimentDir(
      #"{"name": "k", "datasets": [{"name": "five", "trace": "t.csv"}], "policies": ["never", "periodic:1h"], "seed": 3}"#)
    let reference = dir + "/ref"
    #expect(try CLI.run(["run", file, "--out", reference]).status == 0)
    let newResult = results(reference)
    var killed = 0
    for step in 1...30 {
      let out = dir + "/k\(step)"
      let r = try runFetchlab(["run", file, "--out", out], env: ["FETCHLAB_TEST_KILL_AT_COMMIT_STEP": String(step)])
      if r.status == 0 { break }
      killed += 1
      ResultDirectory.recoverForReading(out)
      let got = results(out)
      #expect(got.isEmpty || got == newResult, "step \(step): \(got.keys.sorted())")
      #expect(try CLI.run(["run", file, "--out", out]).status == 0)
      #expect(results(out) == newResult)
    }
    #expect(killed >= 8)
  }

  @Test("report killed at every step of its commit: the old or the new report (charts, html, md) as a whole; results untouched")
  func killReportCommit() throws {
    let d = scratch()
    let t = try write(fiveUserTrace, d, "t.csv")
    var killed = 0
    for step in 1...30 {
      let out = d + "/r\(step)"
      #expect(try CLI.run(["run", "--trace", t, "--policy", "never", "--policy", "periodic:1h", "--out", out]).status == 0)
      #expect(try CLI.run(["report", out]).status == 0)  // with the timeline chart
      let old = results(out)
      let r = try runFetchlab(["report", out, "--no-timeline"], env: ["FETCHLAB_TEST_KILL_AT_COMMIT_STEP": String(step)])
      if r.status == 0 { break }
      killed += 1
      ResultDirectory.recoverForReading(out)
      let got = results(out)
      #expect(try CLI.run(["report", out, "--no-timeline"]).status == 0)
      let new = results(out)
      #expect(old != new)
      #expect(got == old || got == new, "step \(step): \(got.keys.sorted())")
      // Killed before the commit point, nothing of the new report is visible.
      if step == 1 { #expect(got == old) }
      #expect(snapshot(out).keys.allSatisfy { !$0.hasPrefix(".staging") && !$0.hasPrefix(".commit") && !$0.contains(".tmp-") })
    }
    #expect(killed >= 3, "only \(killed) commit steps")
  }

  @Test("two runs into one --out: the second is refused while the first holds the lock")
  func lock() throws {
    let d = scratch()
    let t = try write(fiveUserTrace, d, "t.csv")
    let out = d + "/o"
    try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
    let fd = open(out + "/.fetchlab.lock", O_RDWR | O_CREAT, 0o644)
    #expect(flock(fd, LOCK_EX) == 0)
    let r = try CLI.run(["run", "--trace", t, "--policy", "never", "--out", out])
    let report = try CLI.run(["report", out, "--no-timeline"])
    close(fd)
    #expect(r.status == 1 && r.stderr.contains("in use by another fetchlab run"), "\(r.stderr)")
    #expect(report.status == 1 && report.stderr.contains("in use"), "a report waits for no run: \(report.stderr)")
    #expect(try CLI.run(["run", "--trace", t, "--policy", "never", "--out", out]).status == 0)
  }

  @Test("leftovers of killed runs are removed by the next run; --no-event-files removes the older event files and report")
  func leftoversAndStaleFiles() throws {
    let d = scratch()
    let t = try write(fiveUserTrace, d, "t.csv")
    let out = d + "/o"
    #expect(try CLI.run(["run", "--trace", t, "--policy", "never", "--policy", "oracle", "--out", out]).status == 0)
    #expect(try CLI.run(["report", out, "--no-timeline"]).status == 0)
    try FileManager.default.createDirectory(atPath: out + "/.staging-99999", withIntermediateDirectories: true)
    _ = try write("x", out, "summary.csv.tmp-99999")
    let r = try CLI.run(["run", "--trace", t, "--policy", "never", "--policy", "oracle", "--no-event-files", "--out", out])
    #expect(r.status == 0, "\(r.stderr)")
    let names = Set((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? [])
    #expect(!names.contains("opens.csv") && !names.contains("fetches.csv"))
    #expect(!names.contains("report.html") && !names.contains("plots"))
    #expect(!names.contains(".staging-99999") && !names.contains("summary.csv.tmp-99999"))
  }

  @Test("run --trace never replaces an experiment's directory or files it did not write, unless --force")
  func traceOverExperiment() throws {
    let (dir, file) = try experimentDir(
      #"{"name": "x", "datasets": [{"name": "five", "trace": "t.csv"}], "policies": ["never"]}"#)
    let out = dir + "/o"
    #expect(try CLI.run(["run", file, "--out", out]).status == 0)
    let before = results(out)
    let r = try CLI.run(["run", "--trace", dir + "/exp/t.csv", "--policy", "never", "--out", out])
    #expect(r.status == 1 && r.stderr.contains("--force"), "\(r.stderr)")
    #expect(results(out) == before)
    let f = try CLI.run(["run", "--trace", dir + "/exp/t.csv", "--policy", "never", "--out", out, "--force"])
    #expect(f.status == 0, "\(f.stderr)")
    #expect(!FileManager.default.fileExists(atPath: out + "/parts"), "\(f.stderr)")
    let foreign = dir + "/foreign"
    try FileManager.default.createDirectory(atPath: foreign, withIntermediateDirectories: true)
    _ = try write("mine\n", foreign, "summary.csv")
    let g = try CLI.run(["run", "--trace", dir + "/exp/t.csv", "--policy", "never", "--out", foreign])
    #expect(g.status == 1 && g.stderr.contains("did not write"), "\(g.stderr)")
    #expect(FileManager.default.contents(atPath: foreign + "/summary.csv") == Data("mine\n".utf8))
  }

  @Test("a failed first experiment run leaves nothing, so the corrected command needs no --force")
  func failedFirstExperiment() throws {
    let (base, _) = try experimentDir("{}")
    let dir = base + "/exp"
    let bad = try write(#"{"name": "e", "datasets": [{"name": "d", "trace": "missing.csv"}], "policies": ["never"]}"#, dir, "bad.json")
    let r = try CLI.run(["run", bad, "--out", dir + "/o"])
    #expect(r.status == 1)
    #expect(!FileManager.default.fileExists(atPath: dir + "/o"), "\(snapshot(dir + "/o").keys.sorted())")
    let bad2 = try write(
      #"{"name": "e", "datasets": [{"name": "d", "trace": "t.csv"}], "policies": ["never"], "world": {"content.rate_per_hour": 1000000}}"#,
      dir, "bad2.json")
    #expect(try CLI.run(["run", bad2, "--out", dir + "/o"]).status == 1)
    let good = try write(#"{"name": "e", "datasets": [{"name": "d", "trace": "t.csv"}], "policies": ["never"]}"#, dir, "good.json")
    let g = try CLI.run(["run", good, "--out", dir + "/o"])
    #expect(g.status == 0, "\(g.stderr)")
  }

  @Test("ambiguous input is refused: duplicate keys, dotted plus nested, repeated policy settings, NUL in paths")
  func ambiguity() throws {
    let d = scratch()
    let t = try write(fiveUserTrace, d, "t.csv")
    let cases: [(String, String)] = [
      (#"{"fetch.budget_s": 10, "fetch.budget_s": 20}"#, "duplicate key"),
      (#"{"fetch": {"budget_s": 10}, "fetch.budget_s": 20}"#, "set twice"),
      (#"{"radio": {"lte": {"tail_s": 1}, "lte": {"tail_s": 2}}}"#, "duplicate key"),
    ]
    for (json, want) in cases {
      let c = try write(json, d, "c.json")
      let r = try CLI.run(["run", "--trace", t, "--policy", "never", "--config", c, "--out", d + "/o"])
      #expect(r.status != 0 && r.stderr.contains(want), "\(json): \(r.stderr)")
    }
    let (ebase, _) = try experimentDir("{}")
    let edir = ebase + "/exp"
    let exps = [
      #"{"name": "e", "name": "f", "datasets": [{"name": "d", "trace": "t.csv"}], "policies": ["never"]}"#,
      #"{"name": "e", "datasets": [{"name": "d", "trace": "t.csv"}], "policies": ["never"], "world": {"fetch.budget_s": 1, "fetch.budget_s": 2}}"#,
      #"{"name": "e", "datasets": [{"name": "d", "synthetic": {"users": 2, "days": 1, "params": {"a": 1, "a": 2}}}], "policies": ["never"]}"#,
    ]
    for e in exps {
      let f = try write(e, edir, "e.json")
      let r = try CLI.run(["run", f, "--out", edir + "/o"])
      #expect(r.status == 1 && r.stderr.contains("duplicate key"), "\(e): \(r.stderr)")
    }
    let p = try CLI.run(["run", "--trace", t, "--policy", "ios-minimum:price=1,price=2", "--out", d + "/o"])
    #expect(p.status != 0 && p.stderr.contains("more than once"), "\(p.stderr)")
    // exec(2) cannot pass a NUL in an argument; an experiment file's JSON can.
    let nul = try write(
      #"{"name": "e", "datasets": [{"name": "d", "trace": "t.csv\u0000.evil"}], "policies": ["never"]}"#, edir, "nul.json")
    let n = try CLI.run(["run", nul, "--out", edir + "/o"])
    #expect(n.status == 1 && n.stderr.contains("NUL"), "\(n.stderr)")
    let big = try write(
      #"{"name": "e", "datasets": [{"name": "d", "synthetic": {"users": 2, "days": 1, "params": {"x": 1e400}}}], "policies": ["never"]}"#,
      edir, "big.json")
    let b = try CLI.run(["run", big, "--out", edir + "/o"])
    #expect(b.status == 1 && !b.stderr.contains("Domain=") && b.stderr.contains("big.json:1"), "\(b.stderr)")
  }

  @Test("messages: BOM accepted, CR-only named, control bytes escaped, --out problems without Foundation dumps, --seed -1 explained")
  func messages() throws {
    let d = scratch()
    let bom = try write("\u{FEFF}" + fiveUserTrace, d, "bom.csv")
    let v = try CLI.run(["validate", bom])
    #expect(v.status == 0, "\(v.stderr)")
    let cr = try write(fiveUserTrace.replacingOccurrences(of: "\n", with: "\r"), d, "cr.csv")
    let c = try CLI.run(["validate", cr])
    #expect(c.status == 1 && c.stderr.contains("CR"), "\(c.stderr)")
    let esc = try write("user,time,event,app,value\na\u{1B}[31m,0,begin,,UTC\nz,10,open,news,5\n", d, "esc.csv")
    let e = try CLI.run(["validate", esc])
    #expect(e.status == 1 && !e.stderr.contains("\u{1B}") && e.stderr.contains("\\u{1B}"), "\(e.stderr)")
    let t = try write(fiveUserTrace, d, "t.csv")
    let file = try write("x", d, "afile")
    for out in [file, ""] {
      let r = try CLI.run(["run", "--trace", t, "--policy", "never", "--out", out])
      #expect(r.status != 0 && !r.stderr.contains("NSCocoaErrorDomain") && !r.stderr.contains("Domain="), "\(r.stderr)")
    }
    let broken = try write("{\n  \"fetch.budget_s\": 10,\n  oops\n}\n", d, "broken.json")
    let b = try CLI.run(["run", "--trace", t, "--config", broken, "--out", d + "/o"])
    #expect(b.status != 0 && b.stderr.contains(broken + ":3: ") && !b.stderr.contains("Domain="), "\(b.stderr)")
    let s = try CLI.run(["run", "--trace", t, "--seed", "-1", "--out", d + "/o"])
    #expect(s.status != 0 && s.stderr.contains("0 to 18446744073709551615"), "\(s.stderr)")
  }
}
