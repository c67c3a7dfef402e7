import Foundation
import Testing

/// A run remembers its trace by the path given, the path from the run
/// directory, the absolute path and the SHA-256: a copied run directory
/// still finds a trace given by a relative path, and a report that cannot
/// find it says so instead of drawing UTC hours without a word.
@Suite("a run's trace after the run directory moves", .serialized)
struct MovedTraceTests {
  @Test("copied run directory, relative trace path: local hours from the absolute path; trace gone: a note naming it")
  func copiedRunDirectory() throws {
    let d = scratch()
    try FileManager.default.createDirectory(atPath: d + "/data", withIntermediateDirectories: true)
    let synth = try CLI.run(["synth", "--users", "3", "--days", "2", "--seed", "5", "--out", d + "/data/t.csv"])
    #expect(synth.status == 0, "\(synth.stderr)")
    // The trace given relative to the directory the run starts in.
    let run = try shell(
      "cd '\(d)' && \"$FETCHLAB\" run --trace data/t.csv --policy never --policy periodic:1h --train-fraction 0 "
        + "--out runs/a")
    #expect(run.status == 0, "\(run.stderr)")
    let data = try Data(contentsOf: URL(fileURLWithPath: d + "/runs/a/manifest.json"))
    let manifest = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    let trace = try #require(manifest["trace"] as? [String: Any])
    let canonical = URL(fileURLWithPath: d + "/data/t.csv").standardizedFileURL.path
    #expect(trace["absolute_path"] as? String == canonical)
    #expect(trace["path"] as? String == "data/t.csv")

    // Copied two levels deeper: neither "data/t.csv" from there nor the
    // recorded path from the run directory (../../data/t.csv) exists.
    let copy = d + "/elsewhere/deeper/a"
    try FileManager.default.createDirectory(atPath: d + "/elsewhere/deeper", withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: d + "/runs/a", toPath: copy)
    let report = try shell("cd '\(d)/elsewhere' && \"$FETCHLAB\" report deeper/a")
    #expect(report.status == 0, "\(report.stderr)")
    #expect(!report.stderr.contains("UTC"), "\(report.stderr)")
    let hours = try String(contentsOfFile: copy + "/plots/hour-of-day.svg", encoding: .utf8)
    #expect(!hours.contains("UTC"))

    // The trace removed: the report still runs, and says why the hours are UTC.
    try FileManager.default.removeItem(atPath: d + "/data/t.csv")
    let gone = try shell("cd '\(d)/elsewhere' && \"$FETCHLAB\" report deeper/a")
    #expect(gone.status == 0, "\(gone.stderr)")
    #expect(gone.stderr.contains("\(canonical) is not found"), "\(gone.stderr)")
    #expect(gone.stderr.contains("hours of day in UTC"), "\(gone.stderr)")
  }
}
