import FetchReports
import FetchSupport
import Testing

/// One `summary.csv` row with the columns ``SummaryTable`` reads.
private func row(_ user: String, _ app: String, _ policy: String, opens: Int, fresh: String, age: String = "60") -> String {
  "\(user),\(app),\(policy),\(opens),1,1,0,0,0,\(age),\(age),\(fresh),\(age)\n"
}
private let header =
  "user,app,policy,opens,energy_j_per_day,battery_energy_j_per_day,battery_pct_per_day,cellular_bytes_per_day,fetches_per_day,"
  + "mean_age_s,p90_age_s,fresh_ratio,mean_aoi_s\n"

@Suite("Paired comparison: ties at summary.csv's precision, small samples")
struct PairedTiesTests {
  /// A user with 3 fresh opens of 10 under both policies, split differently
  /// over two apps: 1/3 + 2/7 under `a`, 2/3 + 1/7 under `b`. Read from the
  /// rounded ratios (0.333333·3 + 0.285714·7 = 2.999997 against 3.000000)
  /// the user means differ by 3e-7; from the counts they are both 0.3.
  @Test("equal fresh shares reached through differently rounded app ratios are a tie, and exactly 0.3")
  func freshTieFromCounts() throws {
    let text = header
      + row("u1", "x", "a", opens: 3, fresh: "0.333333") + row("u1", "y", "a", opens: 7, fresh: "0.285714")
      + row("u1", "x", "b", opens: 3, fresh: "0.666667") + row("u1", "y", "b", opens: 7, fresh: "0.142857")
    let table = try SummaryTable(text: text)
    let a = try #require(table.values(dataset: "", policy: "a"))
    let b = try #require(table.values(dataset: "", policy: "b"))
    #expect(a[.fresh_ratio] == [0.3] && b[.fresh_ratio] == [0.3])
    let rows = try PairedComparison.compare(table, baseline: "a", metrics: [.fresh_ratio], resamples: 10)
    let s = try #require(rows.first?.summary)
    #expect((s.wins, s.losses, s.ties) == (0, 0, 1))
    #expect(s.meanDifference == 0)
  }

  /// Ages are written with 3 decimals, so each is within 0.5 ms of the
  /// replay's and a difference of up to 1 ms may be rounding alone: u1's
  /// 0.5 ms is a tie; u2's 5 ms is a loss.
  @Test("age differences within one step of summary.csv's 3 decimals are ties; larger ones count")
  func ageTolerance() throws {
    let text = header
      + row("u1", "x", "a", opens: 1, fresh: "0", age: "10.001") + row("u1", "x", "b", opens: 1, fresh: "0", age: "10.0015")
      + row("u2", "x", "a", opens: 1, fresh: "0", age: "10.001") + row("u2", "x", "b", opens: 1, fresh: "0", age: "10.006")
    let table = try SummaryTable(text: text)
    let rows = try PairedComparison.compare(table, baseline: "a", metrics: [.mean_age_s], resamples: 10)
    let s = try #require(rows.first?.summary)
    #expect((s.wins, s.losses, s.ties) == (0, 1, 1))
  }

  @Test("fewer than 10 users: a warning in the printed table; none from 10 users up")
  func smallSampleWarning() throws {
    func table(users: Int) throws -> [PairedDifference] {
      var text = header
      for u in 0..<users {
        text += row("u\(u)", "x", "a", opens: 4, fresh: "0.5") + row("u\(u)", "x", "b", opens: 4, fresh: "0.75")
      }
      return try PairedComparison.compare(try SummaryTable(text: text), baseline: "a", metrics: [.fresh_ratio], resamples: 10)
    }
    let few = PairedComparison.render(try table(users: 9), resamples: 10)
    #expect(few.contains("warning: only 9 users in some comparisons (fewer than 10)"), "\(few)")
    #expect(PairedComparison.smallSampleWarning(try table(users: 10)) == nil)
    #expect(!PairedComparison.render(try table(users: 10), resamples: 10).contains("warning"))
  }
}
