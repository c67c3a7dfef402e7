import FetchBenchmark
import FetchModels
import FetchReports
import FetchSimulation
import FetchTraces
import FetchWorld
import Foundation
import Testing
import FetchTestSupport

let reportFiles = ["summary.csv", "devices.csv", "opens.csv", "fetches.csv", "pooled.csv", "devices_pooled.csv"]

func goldenURL(_ name: String) -> URL {
  Bundle.module.url(forResource: "Golden/" + name, withExtension: nil)
    ?? Bundle.module.resourceURL!.appendingPathComponent("Golden/" + name)
}

func tempDir() -> String {
  Scratch.directory("run")
}

/// Runs the tiny fixture and returns the output directory.
func runTiny(
  jobs: Int, batch: Int, events: Bool = true, trace: String? = nil, world: WorldParameters = WorldParameters()
) throws -> String {
  let out = tempDir()
  let cfg = RunConfiguration(
    tracePath: trace ?? goldenURL("tiny-trace.csv").path,
    policies: [.never, .periodic(interval: 3600), .periodic(interval: 900), .oracle], seed: 7, world: world,
    apps: .top(2), recordEvents: events, jobs: jobs, batchUsers: batch)
  var sink = try CSVReportSink(directory: out, config: cfg)
  try runReplay(cfg, into: &sink)
  try sink.commit(manifest: ["test": true])
  return out
}

@Suite("Report CSVs")
struct ReportGoldenTests {
  @Test("CSV outputs match the golden files byte for byte (FETCHLAB_UPDATE_GOLDEN=1 rewrites them)")
  func golden() throws {
    let out = try runTiny(jobs: 1, batch: 64)
    let update = ProcessInfo.processInfo.environment["FETCHLAB_UPDATE_GOLDEN"] == "1"
    let sourceGolden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")
    for f in reportFiles {
      let got = try String(contentsOfFile: out + "/" + f, encoding: .utf8)
      if update {
        try got.write(to: sourceGolden.appendingPathComponent(f), atomically: true, encoding: .utf8)
        continue
      }
      let want = try String(contentsOf: goldenURL(f), encoding: .utf8)
      #expect(got == want, "\(f) differs from the golden file; inspect \(out)/\(f)")
    }
  }

  /// `Golden/app-scope/` holds the golden files of per-app replay, where
  /// every app has a radio of its own.
  @Test("replay.scope=app reproduces the per-app golden results")
  func appScope() throws {
    var w = WorldParameters()
    w.replay.scope = .app
    let out = try runTiny(jobs: 1, batch: 64, world: w)
    let update = ProcessInfo.processInfo.environment["FETCHLAB_UPDATE_GOLDEN"] == "1"
    let sourceGolden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")
    for f in ["summary.csv", "pooled.csv"] {
      let got = try String(contentsOfFile: out + "/" + f, encoding: .utf8)
      if update {
        try got.write(to: sourceGolden.appendingPathComponent("app-scope/" + f), atomically: true, encoding: .utf8)
        continue
      }
      let want = try String(contentsOf: goldenURL("app-scope/" + f), encoding: .utf8)
      #expect(got == want, "\(f) at app scope differs from the per-app golden file; inspect \(out)/\(f)")
    }
  }

  @Test("same seed, same bytes, whatever the thread count and batch size", arguments: [(2, 1), (2, 64), (8, 1)])
  func deterministic(jobs: Int, batch: Int) throws {
    let a = try runTiny(jobs: 1, batch: 64)
    let b = try runTiny(jobs: jobs, batch: batch)
    for f in reportFiles {
      #expect(FileManager.default.contents(atPath: a + "/" + f) == FileManager.default.contents(atPath: b + "/" + f), "\(f)")
    }
  }

  @Test("summary and policies do not depend on whether event files are written")
  func eventsOff() throws {
    let a = try runTiny(jobs: 1, batch: 64)
    let b = try runTiny(jobs: 2, batch: 64, events: false)
    for f in ["summary.csv", "pooled.csv"] {
      #expect(FileManager.default.contents(atPath: a + "/" + f) == FileManager.default.contents(atPath: b + "/" + f), "\(f)")
    }
    #expect(!FileManager.default.fileExists(atPath: b + "/opens.csv"))
  }

  @Test("a trace that fails half-way leaves no report files")
  func noHalfWrittenReport() throws {
    var text = try String(contentsOf: goldenURL("tiny-trace.csv"), encoding: .utf8)
    text += "carol,1767571200,begin,,UTC\ncarol,1767571100,open,news,5\n"
    let path = tempDir() + "/broken.csv"
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    let out = tempDir()
    let cfg = RunConfiguration(tracePath: path, policies: [.never], apps: .top(1), batchUsers: 1)
    var sink = try CSVReportSink(directory: out, config: cfg)
    #expect(throws: TraceFormatError.self) { try runReplay(cfg, into: &sink) }
    let left = try FileManager.default.contentsOfDirectory(atPath: out).filter { !$0.contains(".tmp-") }
    #expect(left.isEmpty, "left behind: \(left)")
  }

  @Test("summary rows agree with the per-open and per-fetch files")
  func consistency() throws {
    let out = try runTiny(jobs: 2, batch: 1)
    func rows(_ f: String) throws -> [[String: String]] {
      let lines = try String(contentsOfFile: out + "/" + f, encoding: .utf8).split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
      return lines.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(lines[0], $0)) }
    }
    let summary = try rows("summary.csv"), opens = try rows("opens.csv"), fetches = try rows("fetches.csv")
    #expect(summary.count == 2 * 2 * 4)
    for s in summary {
      let key = { (r: [String: String]) in r["user"] == s["user"] && r["app"] == s["app"] && r["policy"] == s["policy"] }
      #expect(opens.filter(key).count == Int(s["opens"]!)!)
      let fs = fetches.filter(key)
      #expect(fs.count == Int(s["fetches"]!)!)
      let e = fs.map { Double($0["energy_j"]!)! }.reduce(0, +)
      #expect(abs(e - Double(s["energy_j"]!)!) < 1e-4)
      if s["policy"] == "never" { #expect(s["energy_j"] == "0" && s["cellular_bytes"] == "0") }
    }
  }
}
