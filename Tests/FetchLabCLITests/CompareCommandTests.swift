import Foundation
import Testing

@Suite("fetchlab compare", .serialized)
struct CompareCommandTests {
  /// A small synthetic run with never, periodic:1h and periodic:4h; returns its directory.
  static func smallRun() throws -> String {
    let dir = scratch()
    let synth = try CLI.run(["synth", "--users", "8", "--days", "4", "--seed", "5", "--out", dir + "/t.csv"])
    #expect(synth.status == 0, "\(synth.stderr)")
    let run = try CLI.run([
      "run", "--trace", dir + "/t.csv", "--policy", "never", "--policy", "periodic:1h", "--policy", "periodic:4h",
      "--apps", "top:2", "--no-event-files", "--out", dir + "/run",
    ])
    #expect(run.status == 0, "\(run.stderr)")
    return dir + "/run"
  }

  @Test("compare: a row per non-baseline policy and metric, paired.csv parses, same bytes twice")
  func endToEnd() throws {
    let run = try Self.smallRun()
    let r = try CLI.run(["compare", run, "--baseline", "never"])
    #expect(r.status == 0, "\(r.stderr)")
    let lines = r.stdout.split(separator: "\n").map(String.init)
    let metrics = ["battery_energy_j_per_day", "energy_j_per_day", "mean_age_s", "p90_age_s", "fresh_ratio", "cellular_bytes_per_day"]
    for p in ["periodic:1h", "periodic:4h"] {
      for m in metrics {
        #expect(lines.contains { $0.hasPrefix(p + " ") && $0.contains(" \(m) ") }, "no \(p) \(m) row:\n\(r.stdout)")
      }
    }
    #expect(!lines.contains { $0.hasPrefix("never ") }, "the baseline is not compared with itself")
    // The table's columns line up: every row as wide as the header.
    let header = try #require(lines.firstIndex { $0.hasPrefix("policy ") })
    let width = lines[header].count
    #expect(lines[(header + 1)..<(header + 11)].allSatisfy { $0.count == width }, "\(r.stdout)")

    let csv = try String(contentsOfFile: run + "/paired.csv", encoding: .utf8)
    let rows = csv.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
    #expect(rows.first == [
      "dataset", "baseline", "policy", "metric", "better", "users", "baseline_mean", "policy_mean", "mean_diff",
      "mean_diff_lo", "mean_diff_hi", "wins", "losses", "ties", "sign_test_p",
    ])
    #expect(rows.count == 1 + 2 * metrics.count)
    #expect(rows.dropFirst().allSatisfy { $0.count == 15 && $0[1] == "never" && $0[5] == "8" })
    // A timer costs energy for every user: 0 wins, 8 losses, p = 2/256.
    let energy = try #require(rows.first { $0[2] == "periodic:1h" && $0[3] == "energy_j_per_day" })
    #expect(energy[4] == "lower" && energy[11] == "0" && energy[12] == "8" && energy[13] == "0")
    #expect(Double(energy[14]) == 0.0078125)
    let (d, lo, hi) = (try #require(Double(energy[8])), try #require(Double(energy[9])), try #require(Double(energy[10])))
    #expect(0 < lo && lo <= d && d <= hi)
    let again = try CLI.run(["compare", run, "--baseline", "never"])
    #expect(again.stdout == r.stdout)
    #expect(try String(contentsOfFile: run + "/paired.csv", encoding: .utf8) == csv)

    let one = try CLI.run(["compare", run, "--baseline", "periodic:4h", "--metric", "mean_age_s"])
    #expect(one.status == 0, "\(one.stderr)")
    let oneRows = try String(contentsOfFile: run + "/paired.csv", encoding: .utf8).split(separator: "\n")
    #expect(oneRows.count == 3)
    #expect(oneRows.dropFirst().allSatisfy { $0.contains(",periodic:4h,") && $0.contains(",mean_age_s,") })
  }

  @Test("bad baseline, missing or malformed summary exit 1 with a clear message; a bad metric is a usage error")
  func errors() throws {
    let run = try Self.smallRun()
    let bad = try CLI.run(["compare", run, "--baseline", "periodic:2h"])
    #expect(bad.status == 1)
    #expect(bad.stderr.contains("unknown baseline 'periodic:2h'; policies in \(run)/summary.csv: never, periodic:1h, periodic:4h"), "\(bad.stderr)")

    let empty = scratch()
    let missing = try CLI.run(["compare", empty, "--baseline", "never"])
    #expect(missing.status == 1)
    #expect(missing.stderr.contains("\(empty)/summary.csv: cannot read file"), "\(missing.stderr)")
    #expect(!FileManager.default.fileExists(atPath: empty + "/paired.csv"))

    var lines = try String(contentsOfFile: run + "/summary.csv", encoding: .utf8).split(separator: "\n").map(String.init)
    lines[2] = lines[2].replacingOccurrences(of: ",", with: ",\"", options: [], range: lines[2].range(of: ","))
    try (lines.joined(separator: "\n") + "\n").write(toFile: run + "/summary.csv", atomically: true, encoding: .utf8)
    let malformed = try CLI.run(["compare", run, "--baseline", "never"])
    #expect(malformed.status == 1)
    #expect(malformed.stderr.contains("\(run)/summary.csv:3: app: column 2: "), "\(malformed.stderr)")

    let metric = try CLI.run(["compare", run, "--baseline", "never", "--metric", "joules"])
    #expect(metric.status == 64)
    #expect(metric.stderr.contains("unknown metric 'joules'"), "\(metric.stderr)")
  }
}
