@testable import FetchReports
import FetchSupport
import FetchTestSupport
import Foundation
import Testing

/// A report of a large world grid summarises: its size is bounded by the
/// report's caps, not by the number of datasets (sizes compared, no times).
@Suite("Report of a large grid")
struct LargeGridReportTests {
  static let policies = ["never", "periodic:1h", "oracle"]

  /// A run directory with `datasets` datasets (`grid.p-1`, `grid.p-2`, …) of
  /// three policies each.
  static func runDir(datasets: Int) throws -> String {
    let dir = Scratch.directory("grid")
    let metrics = ScoreMetric.allCases.map(\.rawValue)
    var p = (["dataset", "policy", "family", "users"] + metrics.flatMap { [$0, $0 + "_lo", $0 + "_hi"] })
      .joined(separator: ",") + "\n"
    for d in 1...datasets {
      for (i, policy) in policies.enumerated() {
        let values = metrics.map { m -> [Double] in
          let x = m == "fresh_ratio" ? 0.5 + 0.1 * Double(i) : Double(10 * (i + 1) + d)
          return [x, x * 0.9, x * 1.1]
        }
        p += (["grid.p-\(d)", policy, String(policy.split(separator: ":")[0]), "12"] + values.flatMap { $0 }.map { CSV.number($0) })
          .joined(separator: ",") + "\n"
      }
    }
    try p.write(toFile: dir + "/policies.csv", atomically: true, encoding: .utf8)
    try (ParetoColumn.allCases.map(\.rawValue).joined(separator: ",") + "\n")
      .write(toFile: dir + "/pareto.csv", atomically: true, encoding: .utf8)
    let manifest = #"{"command": "fetchlab run grid.json --out run", "seed": 1, "event_files": false, "policies": ["#
      + policies.map { "\"\($0)\"" }.joined(separator: ", ") + "]}"
    try manifest.write(toFile: dir + "/manifest.json", atomically: true, encoding: .utf8)
    return dir
  }

  static func report(datasets: Int, pageBytes: Int = RunReport.maxPageBytes) throws -> (html: String, md: String, plots: Int) {
    let dir = try runDir(datasets: datasets)
    var options = RunReport.Options(timeline: nil, readsTrace: false)
    options.pageBytes = pageBytes
    try RunReport.write(runDir: dir, options: options)
    let plots = try FileManager.default.contentsOfDirectory(atPath: dir + "/plots").count
    return (
      try String(contentsOfFile: dir + "/report.html", encoding: .utf8),
      try String(contentsOfFile: dir + "/report.md", encoding: .utf8), plots
    )
  }

  @Test("past 100 datasets the report's size no longer grows: 300 datasets give the page of 150")
  func sizeIsBounded() throws {
    let small = try Self.report(datasets: 20), mid = try Self.report(datasets: 150), big = try Self.report(datasets: 300)
    func tables(_ md: String) -> Int { md.components(separatedBy: "### Dataset ").count - 1 }
    // 20 datasets: every chart and table, no summary.
    #expect(tables(small.md) == 2 * 20 && !small.html.contains("This report summarises"))
    // 150 and 300: the charts of 24 datasets, the tables of 100, and a note saying so.
    for r in [mid, big] {
      #expect(r.plots == mid.plots && r.plots <= 4 * RunReport.maxChartedDatasets, "\(r.plots) charts")
      #expect(tables(r.md) == 2 * RunReport.maxTabledDatasets)
      #expect(r.html.contains("This report summarises (a report holds at most 24 datasets&apos; charts, 100 datasets&apos; tables and 16 MiB): charts for the first 24 of the"), "\(r.html.prefix(3_000))")
      #expect(r.md.contains("tables for the first 100 of the"))
    }
    // The bigger grid's pages differ only by the counts in that note and its manifest's size.
    #expect(abs(big.html.utf8.count - mid.html.utf8.count) < 16, "\(mid.html.utf8.count) → \(big.html.utf8.count) bytes")
    #expect(abs(big.md.utf8.count - mid.md.utf8.count) < 16, "\(mid.md.utf8.count) → \(big.md.utf8.count) bytes")
    #expect(big.html.utf8.count < 5 * small.html.utf8.count)
  }

  @Test("the byte cap: parts past it are left out in order, charts then linked, and the page says so")
  func byteCap() throws {
    let cap = 300 << 10
    let full = try Self.report(datasets: 150)
    #expect(full.html.utf8.count > cap, "the test needs a page above the cap")
    let capped = try Self.report(datasets: 150, pageBytes: cap)
    #expect(capped.html.utf8.count <= cap && capped.md.utf8.count <= cap, "\(capped.html.utf8.count) bytes")
    #expect(capped.html.contains("charts linked to their SVGs in plots/, not drawn here"), "\(capped.html.prefix(2_000))")
    // As many links as the note counts.
    let counted = try #require(capped.html.firstMatch(of: /; (\d+) charts linked/)).output.1
    let links = capped.html.components(separatedBy: "\">\n<a href=\"plots/").count - 1
    #expect(links > 0 && "\(links)" == counted, "\(links) links, the note says \(counted)")
    #expect(capped.html.contains("tables left out") && capped.html.contains("300 KiB"))
    // The charts are still written as files.
    #expect(capped.plots == full.plots)
  }
}
