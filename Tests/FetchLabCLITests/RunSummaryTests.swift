import Foundation
import Testing

private func run(_ args: [String], environment: [String: String] = [:]) throws -> CLI.Result {
  try CLI.run(args, environment: environment)
}

/// A 2-day trace of 2 users. u1 opens a 5, b 4, c 3, d 2 and e 1 times
/// (top:3 replays a, b, c; d and e are left out); u2 opens a 3 times and
/// b once. In the last 25 % of the window (from 1767571200 + 129600 s) lie
/// 2 opens of u1's a, 1 of b, 1 of d (left out) and 1 of u2's a: 4 scored
/// opens of 19.
let twoDayTrace: String = {
  let t0 = 1_767_571_200, late = t0 + 130_000
  var rows = ["user,time,event,app,value"]
  func user(_ u: String, _ opens: [(Int, String)]) {
    rows.append("\(u),\(t0),begin,,UTC")
    rows.append("\(u),\(t0),network,,lte")
    for (t, a) in opens.sorted(by: { $0.0 < $1.0 }) { rows.append("\(u),\(t),open,\(a),30") }
    rows.append("\(u),\(t0 + 172_800),end,,")
  }
  var u1: [(Int, String)] = []
  for (i, (app, n)) in [("a", 3), ("b", 3), ("c", 3), ("d", 1), ("e", 1)].enumerated() {
    for k in 0..<n { u1.append((t0 + 3600 + 7200 * k + 600 * i, app)) }
  }
  u1 += [(late, "a"), (late + 3600, "a"), (late + 7200, "b"), (late + 10_800, "d")]
  user("u1", u1)
  user("u2", [(t0 + 5000, "a"), (t0 + 9000, "a"), (t0 + 20_000, "b"), (late + 100, "a")])
  return rows.joined(separator: "\n") + "\n"
}()

@Suite("A newcomer's run and comparison", .serialized)
struct RunSummaryTests {
  static func writeTrace() throws -> (dir: String, trace: String) {
    let dir = scratch()
    try twoDayTrace.write(toFile: dir + "/two-days.csv", atomically: true, encoding: .utf8)
    return (dir, dir + "/two-days.csv")
  }

  /// Runs never and periodic:1h on the 2-day trace into `dir/run`, then
  /// compares them against never; returns `dir` and compare's result.
  static func runAndCompare() throws -> (dir: String, compare: CLI.Result) {
    let (dir, trace) = try writeTrace()
    let r = try run(["run", "--trace", trace, "--policy", "never", "--policy", "periodic:1h", "--out", dir + "/run"])
    #expect(r.status == 0, "\(r.stderr)")
    let c = try run(["compare", dir + "/run", "--baseline", "never"])
    #expect(c.status == 0, "\(c.stderr)")
    return (dir, c)
  }

  @Test("run ends with a summary: opens scored of opens in the trace, the window rule, apps replayed and left out")
  func summary() throws {
    let (dir, trace) = try Self.writeTrace()
    let r = try run(["run", "--trace", trace, "--policy", "never", "--policy", "periodic:1h", "--out", dir + "/run"])
    #expect(r.status == 0, "\(r.stderr)")
    let err = r.stderr
    #expect(
      err.contains(
        "summary: 4 of 19 opens in the trace scored (21 %): the replayed apps' opens in the last 25 % of each "
          + "user's window (--train-fraction 0.75)."), "\(err)")
    #expect(err.contains("apps: 5 of 7 opened (user, app) pairs replayed (--apps top:3); 2 left out, for 1 of 2 users."), "\(err)")
    #expect(err.contains("  user u1: 3 replayed (a, b, c), 2 left out (d, e)"), "\(err)")
    #expect(err.contains("  user u2: 2 replayed (a, b), none left out"), "\(err)")
    #expect(err.contains("--train-fraction 0 scores whole windows") && err.contains("--apps min-opens:1"), "\(err)")
    // The summary's scored opens are the replay's.
    let manifest = try String(contentsOfFile: dir + "/run/manifest.json", encoding: .utf8)
    #expect(manifest.contains("\"opens\" : 4") || manifest.contains("\"opens\":4"), "\(manifest)")

    let whole = try run([
      "run", "--trace", trace, "--policy", "never", "--train-fraction", "0", "--apps", "min-opens:1", "--out", dir + "/all",
    ])
    #expect(whole.status == 0, "\(whole.stderr)")
    #expect(whole.stderr.contains("summary: 19 of 19 opens in the trace scored (100 %)"), "\(whole.stderr)")
    #expect(whole.stderr.contains("(--train-fraction 0)"), "\(whole.stderr)")
    #expect(whole.stderr.contains("apps: 7 of 7 opened (user, app) pairs replayed (--apps min-opens:1); 0 left out"), "\(whole.stderr)")
    #expect(!whole.stderr.contains("to score more"), "\(whole.stderr)")
  }

  @Test("an experiment run ends with the same summary per dataset, naming the file's keys")
  func experimentSummary() throws {
    let (dir, trace) = try Self.writeTrace()
    let exp = """
      {"name": "two-days", "datasets": [{"name": "mine", "trace": "\(trace)"}],
       "policies": ["never"], "replications": 1}
      """
    try exp.write(toFile: dir + "/exp.json", atomically: true, encoding: .utf8)
    let r = try run(["run", dir + "/exp.json", "--out", dir + "/exp"])
    #expect(r.status == 0, "\(r.stderr)")
    #expect(r.stderr.contains("dataset mine: summary: 4 of 19 opens in the trace scored (21 %)"), "\(r.stderr)")
    #expect(r.stderr.contains("(train_fraction 0.75)") && r.stderr.contains("(apps top:3)"), "\(r.stderr)")
  }

  @Test("a mistyped option is reported with a suggestion, not as a clash of the others")
  func unknownOption() throws {
    let r = try run(["run", "--trace", "x.csv", "--polcy", "never", "--out", scratch() + "/o"])
    #expect(r.status == 64)
    #expect(r.stderr.contains("unknown option '--polcy' for 'run'. Did you mean '--policy'?"), "\(r.stderr)")
    #expect(!r.stderr.contains("not both"), "\(r.stderr)")
    let c = try run(["compare", "dir", "--baselin", "never"])
    #expect(c.status == 64)
    #expect(c.stderr.contains("unknown option '--baselin' for 'compare'. Did you mean '--baseline'?"), "\(c.stderr)")
  }

  @Test("every example command line of every command's help fits 80 columns or continues with a backslash")
  func helpExamplesPaste() throws {
    let root = try run(["help"], environment: ["COLUMNS": "1000"])
    let section = try #require(root.stdout.components(separatedBy: "SUBCOMMANDS:").last)
    let commands = section.split(separator: "\n").compactMap { line -> String? in
      let t = line.trimmingCharacters(in: .whitespaces)
      guard line.hasPrefix("  "), let w = t.split(separator: " ").first else { return nil }
      return String(w)
    }.filter { $0 != "help" }
    #expect(commands.count >= 12, "\(root.stdout)")
    for c in [""] + commands {
      let args = c.isEmpty ? ["help"] : ["help", c]
      let wide = try run(args, environment: ["COLUMNS": "1000"]).stdout.split(separator: "\n").map(String.init)
      let narrow = Set(try run(args, environment: ["COLUMNS": "80"]).stdout.split(separator: "\n").map(String.init))
      var continued = false
      for line in wide {
        let t = line.trimmingCharacters(in: .whitespaces)
        let isCommand = t.hasPrefix("fetchlab ") || t.hasPrefix("Example: fetchlab ")
        guard isCommand || continued else { continue }
        #expect(line.count <= 80 && narrow.contains(line), "fetchlab help \(c): an example line is wrapped at 80 columns: \(line)")
        continued = t.hasSuffix(" \\")
      }
    }
  }

  @Test("compare: under 10 users it warns that CIs and sign tests are unreliable; it says it shows user-means")
  func compareFewUsers() throws {
    let (_, c) = try Self.runAndCompare()
    let warning = "warning: only 2 users in some comparisons (fewer than 10): their bootstrap CIs and sign-test p-values are unreliable"
    #expect(c.stderr.contains(warning), "\(c.stderr)")
    #expect(c.stdout.contains(warning), "\(c.stdout)")
    #expect(c.stdout.contains("Every figure is a mean over users (each user weighs the same), not pooled"), "\(c.stdout)")
  }

  @Test("a --trace run's scored files name the trace in their dataset column; data is in bytes in every file")
  func datasetAndUnits() throws {
    let (dir, _) = try Self.runAndCompare()
    for f in ["policies.csv", "pareto.csv", "matched.csv", "paired.csv"] {
      let rows = try String(contentsOfFile: dir + "/run/" + f, encoding: .utf8).split(separator: "\n").dropFirst()
      #expect(!rows.isEmpty && rows.allSatisfy { $0.hasPrefix("two-days,") }, "\(f): \(rows.first ?? "")")
    }
    // The report still reads them as the run's one dataset.
    let report = try run(["report", dir + "/run", "--no-timeline"])
    #expect(report.status == 0, "\(report.stderr)")
    #expect(FileManager.default.fileExists(atPath: dir + "/run/plots/staleness-energy.svg"))

    let files = try FileManager.default.contentsOfDirectory(atPath: dir + "/run").filter { $0.hasSuffix(".csv") }
    for f in files {
      let header = try String(contentsOfFile: dir + "/run/" + f, encoding: .utf8).prefix { $0 != "\n" }
      #expect(!header.split(separator: ",").contains { $0.contains("_mb") }, "\(f): \(header)")
    }
    // devices_pooled.csv's cellular bytes/day is the mean of devices.csv's.
    func table(_ f: String) throws -> [[String: String]] {
      let lines = try String(contentsOfFile: dir + "/run/" + f, encoding: .utf8).split(separator: "\n")
      let h = lines[0].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
      return lines.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(h, $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init))) }
    }
    let devices = try table("devices.csv").filter { $0["policy"] == "periodic:1h" }
    let pooled = try #require(try table("devices_pooled.csv").first { $0["policy"] == "periodic:1h" })
    let mean = devices.map { Double($0["cellular_bytes_per_day"]!)! }.reduce(0, +) / Double(devices.count)
    let value = try #require(Double(pooled["cellular_bytes_per_day"] ?? ""))
    #expect(mean > 0 && abs(value - mean) <= 1e-3, "\(value) vs \(mean)")
  }

  @Test("docs/slurm.md says to run compare, fit and report on the merged directory")
  func slurmAfterMerge() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    let doc = try String(contentsOf: root.appendingPathComponent("docs/slurm.md"), encoding: .utf8)
    let merge = try #require(doc.range(of: "## The merge"))
    let after = doc[merge.upperBound...]
    for c in ["fetchlab compare results/default --baseline", "fetchlab fit --trace", "fetchlab report results/default"] {
      #expect(after.contains(c), "docs/slurm.md: no '\(c)' after the merge")
    }
  }
}
