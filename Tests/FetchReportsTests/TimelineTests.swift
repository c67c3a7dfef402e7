import FetchBenchmark
import FetchModels
import FetchReports
import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation
import Testing

#if canImport(FoundationXML)
  import FoundationXML
#endif

/// A small synthetic run with event files, a learning policy and a
/// manifest as `fetchlab run --trace` writes it; returns the run directory.
func timelineRun(trainFraction: Double = 0.5) throws -> (dir: String, trace: String) {
  let dir = tempDir()
  let trace = dir + "/t.csv"
  _ = try SyntheticPopulation(seed: 11, days: 4).write(to: trace, users: 3)
  let policies: [PolicySpec] = try ["never", "periodic:1h", "oracle", "ios-minimum", "periodic:15m"].map {
    try PolicySpec(parsing: $0)
  }
  let cfg = RunConfiguration(
    tracePath: trace, policies: policies, seed: 5, apps: .top(2), recordEvents: true, jobs: 1,
    trainFraction: trainFraction)
  let run = dir + "/run"
  var sink = try CSVReportSink(directory: run, config: cfg)
  try runReplay(cfg, into: &sink)
  try sink.commit(manifest: [
    "trace": ["path": trace, "sha256": try SHA256.hashFile(atPath: trace).hex],
    "seed": 5, "policies": policies.map(\.description), "apps": "top:2", "train_fraction": trainFraction,
    "world_overrides": [String](),
  ])
  _ = try writeScores(runDir: run, resamples: 50)
  return (run, trace)
}

/// Rows of a CSV file with a header, as dictionaries.
func csvRows(_ path: String) throws -> [[String: String]] {
  let text = try String(contentsOfFile: path, encoding: .utf8)
  var lines = text.split(separator: "\n").map(String.init)
  let header = lines.removeFirst().split(separator: ",", omittingEmptySubsequences: false).map(String.init)
  return lines.map { l in
    let f = l.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    return Dictionary(uniqueKeysWithValues: zip(header, f))
  }
}

@Suite("Timeline: one user's day, re-replayed")
struct TimelineTests {
  @Test("fetch markers and ages equal the run's fetches.csv and opens.csv for that user, app, policy and day")
  func matchesRun() throws {
    let (run, _) = try timelineRun()
    let t = try UserDayTimeline.build(runDir: run)
    // Default: the first user, ios-minimum, oracle and periodic:1h first.
    #expect(t.user == "u00001")
    #expect(t.lanes.map(\.policy) == ["ios-minimum", "oracle", "periodic:1h", "periodic:15m"])
    #expect(t.traceCheck.contains("matches"))
    let fetches = try csvRows(run + "/fetches.csv").filter { $0["user"] == t.user && $0["app"] == t.app }
    let opens = try csvRows(run + "/opens.csv").filter { $0["user"] == t.user && $0["app"] == t.app }
    let svg = t.render()
    let doc = SVGElements(svg)
    #expect(doc.wellFormed)
    var total = 0
    for lane in t.lanes {
      let want = fetches.filter { $0["policy"] == lane.policy }.compactMap { Double($0["time"] ?? "") }
        .filter { $0 >= t.dayStart && $0 < t.dayEnd }
      // fetches.csv keeps milliseconds.
      func same(_ a: [Double], _ b: [Double]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { abs($0 - $1) <= 0.0005 + 1e-9 }
      }
      #expect(same(lane.fetches.map(\.start), want), "\(lane.policy)")
      total += want.count
      let wantAges = opens.filter { $0["policy"] == lane.policy }.compactMap { r -> (Double, Double)? in
        guard let x = Double(r["time"] ?? ""), let a = Double(r["age_s"] ?? ""), x >= t.dayStart, x < t.dayEnd else {
          return nil
        }
        return (x, a)
      }
      #expect(same(lane.opens.map(\.time), wantAges.map(\.0)))
      #expect(zip(lane.opens, wantAges).allSatisfy { abs($0.ageS - $1.1) < 1e-3 }, "\(lane.policy)")
      // The SVG's fetch markers carry the same times, in the policy's lane.
      let marks = doc.elements.filter { $0.attributes["class"] == "fetch" && $0.lane == lane.policy }
        .compactMap { $0.attributes["data-t"].flatMap(Double.init) }
      #expect(same(marks, want), "\(lane.policy)")
      // And sit where the hour axis puts them.
      let xs = doc.elements.filter { $0.attributes["class"] == "fetch" && $0.lane == lane.policy && $0.name == "circle" }
        .compactMap { $0.attributes["cx"].flatMap(Double.init) }
      let wantX = lane.fetches.filter { $0.result != .failed }.map { 168 + t.hour($0.start) / 24 * 812 }
      #expect(xs.count == wantX.count && zip(xs, wantX).allSatisfy { abs($0 - $1) < 0.006 })
    }
    #expect(total > 10, "the day has fetches to compare")
    #expect(t.day.count == 10 && t.dayEnd - t.dayStart == 86_400)
    #expect(t.dayStart >= t.window.start && t.dayEnd <= t.window.end, "a whole test-window day")
  }

  @Test("explicit request: user, day, policies; same bytes twice; errors name the option")
  func explicitAndErrors() throws {
    let (run, trace) = try timelineRun()
    let base = try UserDayTimeline.build(runDir: run)
    let req = TimelineRequest(user: "u00002", day: base.day, policies: ["periodic:60m", "never"])
    let a = try UserDayTimeline.build(runDir: run, request: req)
    #expect(a.user == "u00002" && a.day == base.day)
    #expect(a.lanes.map(\.policy) == ["periodic:1h", "never"])
    #expect(a.lanes[1].fetches.isEmpty)
    let b = try UserDayTimeline.build(runDir: run, request: req)
    #expect(a.render() == b.render())
    for (r, text) in [
      (TimelineRequest(user: "nobody"), "--timeline-user nobody"),
      (TimelineRequest(day: "2020-01-01"), "--timeline-day 2020-01-01: outside"),
      (TimelineRequest(day: "2026-02-30"), "expected YYYY-MM-DD"),
      (TimelineRequest(policies: ["periodic:2h"]), "not one of the run's policies"),
      (TimelineRequest(dataset: "x"), "--timeline-dataset x"),
    ] {
      #expect {
        try UserDayTimeline.build(runDir: run, request: r)
      } throws: { e in
        "\(e)".contains(text)
      }
    }
    // A changed trace is refused.
    try (try String(contentsOfFile: trace, encoding: .utf8) + "\n").write(toFile: trace, atomically: true, encoding: .utf8)
    #expect {
      try UserDayTimeline.build(runDir: run)
    } throws: { e in
      "\(e)".contains("changed since the run: SHA-256")
    }
  }

  @Test("report: the default timeline is written and inlined; a missing trace only skips it")
  func inReport() throws {
    let (run, trace) = try timelineRun()
    let out = try RunReport.write(runDir: run)
    let t = try UserDayTimeline.build(runDir: run)
    let file = run + "/plots/timeline-\(t.user)-\(t.day).svg"
    #expect(out.files.contains(file))
    let svg = try String(contentsOfFile: file, encoding: .utf8)
    #expect(svg == t.render())
    #expect(try String(contentsOfFile: run + "/report.html", encoding: .utf8).contains(svg))
    let first = try Data(contentsOf: URL(fileURLWithPath: run + "/report.html"))
    try RunReport.write(runDir: run)
    #expect(try Data(contentsOf: URL(fileURLWithPath: run + "/report.html")) == first)
    try FileManager.default.removeItem(atPath: trace)
    let again = try RunReport.write(runDir: run)
    #expect(again.notes.contains { $0.hasPrefix("timeline skipped: trace ") })
    #expect {
      try RunReport.write(runDir: run, options: .init(timeline: TimelineRequest(user: "u00001")))
    } throws: { e in
      e is TimelineError
    }
  }

  @Test("dates: civil day numbers round-trip")
  func dates() {
    #expect(UserDayTimeline.dayNumber("1970-01-01") == 0)
    #expect(UserDayTimeline.dayNumber("2026-01-05") == 20458)
    #expect(UserDayTimeline.dayNumber("2024-02-29") != nil && UserDayTimeline.dayNumber("2023-02-29") == nil)
  }
}
