@testable import FetchBenchmark
import FetchModels
import FetchSimulation
import FetchTestSupport
import FetchTraces
import Foundation
import Testing

@testable import FetchReports

@Suite("Pairs without opens")
struct ZeroOpensTests {
  @Test("summary.csv and pooled.csv leave staleness empty without opens; the scores skip such rows")
  func emptyStaleness() throws {
    let dir = Scratch.directory("zero-opens")
    let trace = dir + "/t.csv"
    // "b" is opened only in the training half: its scored part has no opens.
    try """
      user,time,event,app,value
      u,0,begin,,+00:00
      u,100,open,a,10
      u,200,open,b,10
      u,60000,open,a,10
      u,86400,end,,

      """.write(toFile: trace, atomically: true, encoding: .utf8)
    let cfg = RunConfiguration(
      tracePath: trace, policies: [.never, .periodic(interval: 3600)], apps: .top(2), jobs: 1,
      trainFraction: 0.5)
    var sink = try CSVReportSink(directory: dir + "/out", config: cfg)
    try runReplay(cfg, into: &sink)
    try sink.commit(manifest: [:])
    #expect(sink.pairsWithoutOpens == 2)
    let summary = try String(contentsOfFile: dir + "/out/summary.csv", encoding: .utf8)
    let rows = summary.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false) }
    let h = rows[0].map(String.init)
    let b = rows.dropFirst().filter { $0[1] == "b" }
    #expect(b.count == 2)
    for r in b {
      for c in ["mean_age_s", "p50_age_s", "p90_age_s", "p99_age_s", "fresh_ratio", "mean_aoi_s"] {
        #expect(r[h.firstIndex(of: c)!].isEmpty, "\(c)")
      }
      #expect(r[h.firstIndex(of: "opens")!] == "0")
    }
    // The per-user scores read the file and take staleness from "a" alone.
    let table = try SummaryTable(path: dir + "/out/summary.csv")
    let never = try #require(table.values(dataset: "", policy: "never"))
    let a = try #require(rows.dropFirst().first { $0[1] == "a" && $0[2] == "never" })
    #expect(never[.mean_age_s] == [Double(a[h.firstIndex(of: "mean_age_s")!])!])
    #expect(never[.fresh_ratio] == [Double(a[h.firstIndex(of: "fresh_ratio")!])!])
  }

  @Test("a policy without any opens gets empty pooled staleness")
  func pooledWithoutOpens() {
    var a = PolicyAggregate(policy: "p")
    var s = AppSummary()
    s.days = 1
    s.meanAgeS = .nan
    s.freshRatio = .nan
    s.meanAoiS = .nan
    a.add(summary: s)
    #expect(a.meanAgeS.isNaN && a.freshRatio.isNaN && a.ages.quantile(0.9).isNaN)
    let fields = pooledRecord(a, capacityJ: 1000).split(separator: ",", omittingEmptySubsequences: false)
    let h = PolicyColumn.allCases.map(\.rawValue)
    #expect(fields[h.firstIndex(of: "mean_age_s")!].isEmpty && fields[h.firstIndex(of: "fresh_ratio")!].isEmpty)
    #expect(ComparisonTable.render([a], capacityJ: 1000).contains(" - "))
  }

  @Test("the CLI table gives battery and total energy: 30 J over 2 days, 10 J of it on the charger, is 10.0 and 15.0 J/day")
  func batteryAndTotalEnergy() throws {
    var a = PolicyAggregate(policy: "p")
    var s = AppSummary()
    s.days = 2
    s.energyJ = 30
    s.chargingEnergyJ = 10
    a.add(summary: s)
    let lines = ComparisonTable.render([a], capacityJ: 1000).split(separator: "\n")
    let header = lines[0].split(separator: "  ").map { $0.trimmingCharacters(in: .whitespaces) }
    let row = lines[1].split(separator: " ").map(String.init)
    // The row's cells are single words but for the policy name: index by the header.
    let cells = Dictionary(uniqueKeysWithValues: zip(header, row).map { ($0, $1) })
    #expect(cells["batt J/day"] == "10.0" && cells["total J/day"] == "15.0")
  }

  @Test("pooled-over-opens and mean-over-users figures carry different names")
  func pooledAndUserMeanNames() {
    // The CLI table pools over opens; the report's headline averages users.
    let table = ComparisonTable.render([PolicyAggregate(policy: "never")], capacityJ: 1000)
    #expect(table.contains("pooled fresh%") && table.contains("pooled mean age"))
    let headline = RunReport.headlineTable([]).header
    #expect(
      headline.contains { $0.hasPrefix("user-mean age at open") } && headline.contains { $0.hasPrefix("user-mean fresh at open") })
  }
}
