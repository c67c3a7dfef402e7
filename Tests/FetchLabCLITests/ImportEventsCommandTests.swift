import Foundation
import Testing
import FetchTestSupport

/// The package root, found from this file's path.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
  .deletingLastPathComponent().path

/// The text between `begin` and `end` (exclusive) after the first `begin`.
func section(_ text: String, from begin: String, to end: String) -> String? {
  guard let a = text.range(of: begin), let b = text.range(of: end, range: a.upperBound..<text.endIndex) else { return nil }
  return String(text[a.upperBound..<b.lowerBound])
}

@Suite("fetchlab import-events", .serialized)
struct ImportEventsCommandTests {
  @Test("docs/own-data.md: the worked example's commands run as written and print what the page shows")
  func docsWorkedExample() throws {
    let page = try String(contentsOfFile: packageRoot + "/docs/own-data.md", encoding: .utf8)
    let block = try #require(section(page, from: "<!-- begin tested commands -->", to: "<!-- end tested commands -->"))
    let script = try #require(section(block, from: "```sh\n", to: "```"))
    #expect(script.contains("fetchlab import-events docs/examples/lsapp-sample.tsv"))
    // A fresh directory holding what a clone has: docs/examples.
    let (dir, status, stdout, stderr) = try runRecipe(script)
    #expect(status == 0, "\(stderr)")
    // The summary line the page quotes, and the head of the converted trace it shows.
    let quoted = try #require(section(page, from: "The first command prints:\n\n```\n", to: "\n```"))
    #expect(stdout.contains(quoted + "\n"), "\(stdout)")
    let head = try #require(section(page, from: "The head of `results/lsapp-opens.csv`:\n\n```\n", to: "\n```"))
    let trace = try String(contentsOfFile: dir + "/results/lsapp-opens.csv", encoding: .utf8)
    #expect(trace.contains("\n" + head + "\n"))
    #expect(stdout.contains("results/lsapp-opens.csv: ok: 3 users"))
    for f in ["summary.csv", "opens.csv", "policies.csv", "manifest.json"] {
      #expect(FileManager.default.fileExists(atPath: dir + "/results/lsapp-run/" + f), "\(f)")
    }
    // What the page says is scored: its pairs and, for every policy, its opens.
    #expect(page.contains("With both, `run` replays 8 (user, app) pairs and every policy scores all\n11 opens"))
    #expect(stdout.contains("3 users, 8 (user, app) pairs, 3 policies"), "\(stdout)")
    let summary = try String(contentsOfFile: dir + "/results/lsapp-run/summary.csv", encoding: .utf8)
    let rows = summary.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false) }
    let opens = try #require(rows.first?.firstIndex(of: "opens"))
    let policy = try #require(rows.first?.firstIndex(of: "policy"))
    var scored: [String: Int] = [:]
    for r in rows.dropFirst() { scored[String(r[policy]), default: 0] += Int(r[opens]) ?? -1000 }
    #expect(scored == ["never": 11, "periodic:1h": 11, "oracle": 11], "\(scored)")
  }

  @Test("bad log: file:line: field, exit 1, no output file; bad options: exit 64")
  func errors() throws {
    let dir = scratch()
    try "user,timestamp,app,event\nu,1767571300,a,open\nu,1767571400,a,Broken\n"
      .write(toFile: dir + "/log.csv", atomically: true, encoding: .utf8)
    let r = try CLI.run(["import-events", dir + "/log.csv", "--out", dir + "/t.csv"])
    #expect(r.status == 1)
    #expect(r.stderr.contains("\(dir)/log.csv:3: event: unknown event 'Broken'"), "\(r.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir + "/t.csv"))
    let ok = try CLI.run(["import-events", dir + "/log.csv", "--out", dir + "/t.csv", "--ignore-event", "Broken"])
    #expect(ok.status == 0, "\(ok.stderr)")
    #expect(ok.stdout.contains("1 users, 1 user-days, 1 opens from 2 rows (times in s); 1 ignored rows"), "\(ok.stdout)")
    let v = try CLI.run(["validate", dir + "/t.csv"])
    #expect(v.status == 0)
    for bad in [["--time-unit", "minutes"], ["--time-zone", "Mars/Olympus"], ["--open-event", "x", "--close-event", "x"]] {
      let u = try CLI.run(["import-events", dir + "/log.csv", "--out", dir + "/u.csv"] + bad)
      #expect(u.status == 64, "\(bad): \(u.stderr)")
    }
  }

  @Test("a trace in milliseconds: validate names the unit and the fix")
  func millisecondHint() throws {
    let dir = scratch()
    try "user,time,event,app,value\nu1,1767571200000,begin,,UTC\nu1,1767657600000,end,,\n"
      .write(toFile: dir + "/ms.csv", atomically: true, encoding: .utf8)
    let r = try CLI.run(["validate", dir + "/ms.csv"])
    #expect(r.status == 1)
    #expect(r.stderr.contains("ms.csv:2: time: time 1767571200000 is not a plausible Unix time in seconds: it looks like milliseconds (2026-01-05T00:00:00Z): divide by 1000, or convert the log with 'fetchlab import-events --time-unit ms'"), "\(r.stderr)")
  }
}
