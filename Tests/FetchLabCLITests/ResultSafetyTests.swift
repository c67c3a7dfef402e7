import FetchBenchmark
import FetchTraces
import Foundation
import Testing

/// The result files of `dir` without `paired.csv` (which `compare` adds).
func resultsWithoutPaired(_ dir: String) -> [String: Data] {
  results(dir).filter { $0.key != "paired.csv" }
}

/// Runs `sh -c script` with `FETCHLAB` set to the built binary.
func shell(_ script: String) throws -> CLI.Result {
  try runFetchlabShell(script)
}

private func runFetchlabShell(_ script: String) throws -> CLI.Result {
  let p = Process()
  p.executableURL = URL(fileURLWithPath: "/bin/sh")
  p.arguments = ["-c", script]
  var e = ProcessInfo.processInfo.environment
  e["FETCHLAB"] = CLI.executable.path
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

@Suite("result directories: bounds, locks, journals, inputs", .serialized)
struct ResultSafetyTests {
  @Test("--jobs is bounded for every command that takes it: a usage error, not a trap or a hang")
  func jobsBound() throws {
    let d = scratch()
    let t = try write(fiveUserTrace, d, "t.csv")
    for jobs in ["9223372036854775807", "10000000"] {
      let commands = [
        ["run", "--trace", t, "--policy", "never", "--out", d + "/o", "--jobs", jobs],
        ["merge", "--out", d + "/m", d + "/no-shard", "--jobs", jobs],
        ["fit", "--trace", d + "/missing.csv", "--out", d + "/m.json", "--jobs", jobs],
        ["bench", "--trace", d + "/missing.csv", "--jobs", jobs],
      ]
      for args in commands {
        let r = try CLI.run(args)
        #expect(r.status == 64 && r.stderr.contains("--jobs \(jobs) is more than"), "\(args[0]): \(r.status) \(r.stderr)")
      }
    }
    // The parallel reader's own arithmetic holds for any count.
    let reader = try ParallelTraceReader(path: t, jobs: Int.max)
    var users = 0
    while try reader.next() != nil { users += 1 }
    #expect(users == 5)
  }

  @Test("compare takes the lock and finishes a pending commit first: paired.csv is of the new summary, never beside the old")
  func compareFinishesCommit() throws {
    let d = scratch()
    let t = try write(fiveUserTrace, d, "t.csv")
    let newArgs = ["run", "--trace", t, "--policy", "never", "--policy", "oracle", "--no-event-files", "--force"]
    #expect(try CLI.run(newArgs + ["--out", d + "/ref"]).status == 0)
    #expect(try CLI.run(["compare", d + "/ref", "--baseline", "never"]).status == 0)
    let reference = results(d + "/ref")
    for step in [2, 3, 5] {
      let out = d + "/k\(step)"
      #expect(try CLI.run(["run", "--trace", t, "--policy", "periodic:1h", "--out", out]).status == 0)
      let killed = try runFetchlab(newArgs + ["--out", out], env: ["FETCHLAB_TEST_KILL_AT_COMMIT_STEP": String(step)])
      #expect(killed.status != 0)
      #expect(FileManager.default.fileExists(atPath: out + "/.commit"), "step \(step): no pending commit")
      let c = try CLI.run(["compare", out, "--baseline", "never"])
      #expect(c.status == 0, "step \(step): \(c.stderr)")
      #expect(!FileManager.default.fileExists(atPath: out + "/.commit"))
      #expect(results(out) == reference, "step \(step): \(results(out).keys.sorted())")
    }
    // Held by a run, the directory is refused, not written beside it.
    let fd = open(d + "/ref/.fetchlab.lock", O_RDWR)
    #expect(flock(fd, LOCK_EX) == 0)
    let busy = try CLI.run(["compare", d + "/ref", "--baseline", "never"])
    close(fd)
    #expect(busy.status == 1 && busy.stderr.contains("in use"), "\(busy.stderr)")
  }

  @Test("compare racing a run: the directory holds the old or the new complete result, never a mix")
  func compareRacingRun() throws {
    let d = scratch()
    let t = try write(fiveUserTrace, d, "t.csv")
    let a = ["run", "--trace", t, "--policy", "never", "--policy", "periodic:1h", "--no-event-files", "--force"]
    let b = a + ["--seed", "9"]
    // What compare writes beside each summary.
    var pairedFor: [Data: Data] = [:]
    for (i, args) in [a, b].enumerated() {
      let ref = d + "/ref\(i)"
      #expect(try CLI.run(args + ["--out", ref]).status == 0)
      #expect(try CLI.run(["compare", ref, "--baseline", "never"]).status == 0)
      let r = results(ref)
      pairedFor[r["summary.csv"]!] = r["paired.csv"]!
    }
    let out = d + "/race"
    #expect(try CLI.run(a + ["--out", out]).status == 0)
    for i in 0..<12 {
      let run = Process()
      run.executableURL = CLI.executable
      run.arguments = (i % 2 == 0 ? b : a) + ["--out", out]
      run.standardError = FileHandle.nullDevice
      run.standardOutput = FileHandle.nullDevice
      try run.run()
      _ = try CLI.run(["compare", out, "--baseline", "never"])
      run.waitUntilExit()
      ResultDirectory.recoverForReading(out)
      let got = results(out)
      if let paired = got["paired.csv"], let summary = got["summary.csv"] {
        #expect(pairedFor[summary] == paired, "try \(i): paired.csv of another summary")
      }
    }
  }

  @Test("a damaged commit journal is refused and left as it is: nothing in the directory is lost")
  func damagedJournal() throws {
    let d = scratch()
    let t = try write(fiveUserTrace, d, "t.csv")
    let cases: [(String, [String: String])] = [
      ("empty names list", [".names": ""]),
      ("no names list", ["summary.csv": "x\n"]),
      ("a listed file missing everywhere", [".names": "+ghost.csv\n"]),
      ("a garbage line", [".names": "+summary.csv\nhello\n", "summary.csv": "x\n"]),
      ("a path outside", [".names": "+../outside.csv\n"]),
      ("no final line feed", [".names": "+summary.csv", "summary.csv": "x\n"]),
      ("a file the list does not name", [".names": "+summary.csv\n", "summary.csv": "x\n", "evil.csv": "y\n"]),
      ("removals only", [".names": "-manifest.json\n"]),
      ("a file claimed moved that the commit did not stage", [".names": "+summary.csv\n"]),
      ("a moved file of another inode", [".names": "+summary.csv\t1\n"]),
      ("a name twice", [".names": "+summary.csv\n+summary.csv\n", "summary.csv": "x\n"]),
    ]
    for (i, (label, files)) in cases.enumerated() {
      let out = d + "/o\(i)"
      #expect(try CLI.run(["run", "--trace", t, "--policy", "never", "--policy", "periodic:1h", "--out", out]).status == 0)
      let before = results(out)
      try FileManager.default.createDirectory(atPath: out + "/.commit", withIntermediateDirectories: false)
      for (name, text) in files { _ = try write(text, out + "/.commit", name) }
      let journal = snapshot(out + "/.commit")
      for args in [["report", out, "--no-timeline"], ["compare", out, "--baseline", "never"],
                   ["run", "--trace", t, "--policy", "never", "--policy", "periodic:1h", "--out", out]] {
        let r = try CLI.run(args)
        #expect(r.status == 1 && r.stderr.contains("damaged commit journal"), "\(label), \(args[0]): \(r.stderr)")
      }
      ResultDirectory.recoverForReading(out)
      #expect(results(out) == before, "\(label): the results changed")
      #expect(snapshot(out + "/.commit") == journal, "\(label): the journal changed")
    }
  }

  @Test("no command writes over its own input, into /, or creates directories far from the path given")
  func inputsAndPlaces() throws {
    let d = scratch()
    let t = try write(fiveUserTrace, d, "t.csv")
    let out = d + "/d9"
    #expect(try CLI.run(["run", "--trace", t, "--policy", "never", "--out", out]).status == 0)
    // The trace read from a file of the result it would replace.
    _ = try write(fiveUserTrace, out, "opens.csv")
    let r = try CLI.run(["run", "--trace", out + "/opens.csv", "--policy", "never", "--no-event-files", "--out", out, "--force"])
    #expect(r.status == 1 && r.stderr.contains("never writes over its own input"), "\(r.stderr)")
    #expect(FileManager.default.contents(atPath: out + "/opens.csv") == Data(fiveUserTrace.utf8))
    // The same file through a hard link elsewhere.
    #expect(link(out + "/opens.csv", d + "/alias.csv") == 0)
    let h = try CLI.run(["run", "--trace", d + "/alias.csv", "--policy", "never", "--no-event-files", "--out", out, "--force"])
    #expect(h.status == 1 && h.stderr.contains("never writes over its own input"), "\(h.stderr)")
    // The root directory.
    let root = try CLI.run(["merge", "--out", "/", d + "/no-shard"])
    #expect(root.status == 1 && root.stderr.contains("root directory"), "\(root.stderr)")
    // No new directory in /, nor far below an existing one.
    let top = "/fetchlab-test-\(UUID().uuidString)"
    let inRoot = try CLI.run(["report", out, "--no-timeline", "--notebook", top + "/x.ipynb"])
    let createdInRoot = FileManager.default.fileExists(atPath: top)
    try? FileManager.default.removeItem(atPath: top)
    #expect(inRoot.status == 1 && inRoot.stderr.contains("root directory") && !createdInRoot, "\(inRoot.stderr)")
    let nb = try CLI.run(["report", out, "--no-timeline", "--notebook", d + "/missing/deeper/x.ipynb"])
    #expect(nb.status == 1 && nb.stderr.contains("does not exist"), "\(nb.stderr)")
    #expect(!FileManager.default.fileExists(atPath: d + "/missing"))
    let deep = try CLI.run(["run", "--trace", t, "--policy", "never", "--out", d + "/far/away/o"])
    #expect(deep.status == 1 && deep.stderr.contains("does not exist"), "\(deep.stderr)")
    #expect(!FileManager.default.fileExists(atPath: d + "/far"))
    // A parent that is a file is named as such.
    let file = try write("x", d, "afile")
    let under = try CLI.run(["run", "--trace", t, "--policy", "never", "--out", file + "/sub"])
    #expect(under.status == 1 && under.stderr.contains("\(file) is a file, not a directory"), "\(under.stderr)")
    #expect(!under.stderr.contains("file system error"), "\(under.stderr)")
  }

  @Test("run --trace replaces a different run's result only with --force; an identical run replaces it freely")
  func differentRun() throws {
    let d = scratch()
    let t = try write(fiveUserTrace, d, "t.csv")
    let out = d + "/o"
    let first = ["run", "--trace", t, "--policy", "never", "--out", out]
    #expect(try CLI.run(first).status == 0)
    let before = results(out)
    for extra in [["--policy", "periodic:1h"], ["--seed", "5"], ["--set", "fetch.budget_s=10"]] {
      let r = try CLI.run(first + extra)
      #expect(r.status == 1 && r.stderr.contains("different run") && r.stderr.contains("--force"), "\(extra): \(r.stderr)")
      #expect(results(out) == before)
    }
    // The same settings on a changed trace: refused after the replay, the result untouched.
    _ = try write(fiveUserTrace.replacingOccurrences(of: ",5\n", with: ",6\n"), d, "t.csv")
    let changed = try CLI.run(first)
    #expect(changed.status == 1 && changed.stderr.contains("trace.sha256"), "\(changed.stderr)")
    #expect(results(out) == before)
    _ = try write(fiveUserTrace, d, "t.csv")
    #expect(try CLI.run(first).status == 0)
    #expect(try CLI.run(first + ["--policy", "periodic:1h", "--force"]).status == 0)
  }

  @Test("report refuses a policies.csv that does not score the manifest's policies")
  func policiesAgainstManifest() throws {
    let d = scratch()
    let t = try write(fiveUserTrace, d, "t.csv")
    let out = d + "/o"
    #expect(try CLI.run(["run", "--trace", t, "--policy", "never", "--policy", "periodic:1h", "--out", out]).status == 0)
    let p = out + "/policies.csv"
    let text = try String(contentsOfFile: p, encoding: .utf8)
    try text.replacingOccurrences(of: "periodic:1h", with: "periodic:2h").write(toFile: p, atomically: true, encoding: .utf8)
    let r = try CLI.run(["report", out, "--no-timeline"])
    #expect(r.status == 1 && r.stderr.contains("periodic:2h") && r.stderr.contains("not of the same run"), "\(r.stderr)")
  }

  @Test("past a file-size limit, synth, fit and import-events fail with a message and leave no temporary file")
  func fileSizeLimit() throws {
    let d = scratch()
    // Children inherit an ignored or blocked signal: give them the default
    // (death by SIGXFSZ), so that only fetchlab's own handling keeps them alive.
    let previous = signal(SIGXFSZ, SIG_DFL)
    var set = sigset_t(), old = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGXFSZ)
    pthread_sigmask(SIG_UNBLOCK, &set, &old)
    defer {
      pthread_sigmask(SIG_SETMASK, &old, nil)
      signal(SIGXFSZ, previous)
    }
    #expect(try CLI.run(["synth", "--users", "3", "--days", "10", "--seed", "1", "--out", d + "/s3.csv"]).status == 0)
    let scripts = [
      "ulimit -f 0; exec \"$FETCHLAB\" synth --users 20 --days 7 --seed 1 --out '\(d)/s.csv'",
      "ulimit -f 0; exec \"$FETCHLAB\" fit --trace '\(d)/s3.csv' --out '\(d)/m.json' --report '\(d)/fit'",
      "ulimit -f 0; exec \"$FETCHLAB\" import-events '\(packageRoot)/docs/examples/lsapp-sample.tsv' --out '\(d)/i.csv' "
        + "--user-column user_id --time-column timestamp --app-column app_name --event-column event_type "
        + "--open-event Opened --close-event Closed --ignore-event 'User Interaction' --ignore-event Broken",
    ]
    for s in scripts {
      let r = try shell(s)
      #expect(r.status == 1 && r.stderr.contains("File too large"), "\(s): \(r.status) \(r.stderr)")
      let names = snapshot(d).keys
      #expect(!names.contains { $0.contains(".tmp-") || $0.contains(".staging-") }, "\(s): \(names.sorted())")
    }
  }

  @Test("messages: a broken model file names its line, and milliseconds for --from are called so")
  func predictMessages() throws {
    let d = scratch()
    let m = try write("{\n  \"format\": \"fetchlab-model\",\n  oops\n}\n", d, "m.json")
    let r = try CLI.run(["predict", "--model", m, "--user", "a", "--app", "news", "--from", "0", "--to", "3600"])
    #expect(r.status == 1 && r.stderr.contains(":3") && !r.stderr.contains("not JSON (") && !r.stderr.contains("could not be completed"), "\(r.stderr)")
    let ms = try CLI.run(["predict", "--model", m, "--user", "a", "--app", "news", "--from", "1767571200000", "--to", "1767574800000"])
    #expect(ms.status == 64 && ms.stderr.contains("looks like milliseconds"), "\(ms.stderr)")
  }
}

@Suite("report reads a trace only as the run's regular file", .serialized)
struct ReportTraceTests {
  @Test("hour of day: a changed trace is not used (the chart of a missing trace), a FIFO in its place is never opened, --no-timeline reads no trace")
  func changedOrFifoTrace() throws {
    let d = scratch()
    let t = try write(fiveUserTrace, d, "t.csv")
    let out = d + "/o"
    #expect(try CLI.run(["run", "--trace", t, "--policy", "never", "--policy", "periodic:1h", "--out", out]).status == 0)
    func hourOfDay(_ extra: [String] = []) throws -> Data? {
      let r = try runWithDeadline(["report", out] + extra, seconds: 60)
      #expect(r.status == 0, "\(r.status) \(r.stderr)")
      return FileManager.default.contents(atPath: out + "/plots/hour-of-day.svg")
    }
    let local = try hourOfDay()
    let resultOnly = try hourOfDay(["--no-timeline"])
    // Other zones in a trace of other bytes: not the run's trace.
    _ = try write(fiveUserTrace.replacingOccurrences(of: "begin,,UTC", with: "begin,,+09:00"), d, "t.csv")
    let changed = try hourOfDay()
    try FileManager.default.removeItem(atPath: t)
    let missing = try hourOfDay()
    #expect(changed == missing && changed != local)
    #expect(resultOnly == missing)
    #expect(mkfifo(t, 0o600) == 0)
    #expect(try hourOfDay() == missing)
    #expect(try hourOfDay(["--no-timeline"]) == missing)
  }
}
