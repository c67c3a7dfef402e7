import FetchReports
import FetchSupport
import FetchTraces
import Foundation
import Testing

/// A summary.csv header (today's layout) and a row builder for hand-made tables.
private let summaryHeader =
  "user,app,policy,days,opens,fetches,new_data,no_data,failed,wasted,updates,mean_age_s,p50_age_s,p90_age_s,"
  + "p99_age_s,fresh_ratio,mean_aoi_s,time_avg_age_s,time_fresh_ratio,energy_j,energy_j_per_day,"
  + "battery_pct_per_day,battery_energy_j_per_day,fetches_per_day,cellular_bytes,cellular_bytes_per_day,wifi_bytes\n"

private func summaryRow(
  _ user: String, _ app: String, _ policy: String, opens: Int = 10, energy: Double = 0, fetches: Double = 0,
  meanAge: Double = 0, p90: Double = 0, fresh: Double = 1, aoi: Double = 0, cellular: Double = 0
) -> String {
  let p = CSV.field(policy)
  return "\(user),\(app),\(p),1,\(opens),0,0,0,0,0,0,\(meanAge),0,\(p90),0,\(fresh),\(aoi),0,0,\(energy),\(energy),"
    + "\(energy / 467.28),\(energy),\(fetches),\(cellular),\(cellular),0\n"
}

@Suite("Scoring: Pareto frontier and matched-energy interpolation")
struct ParetoTests {
  @Test("minimise: dominated points off, duplicates both on, equal cost with worse staleness off")
  func minimise() {
    //           A    B    C    D    E    F(=B) G
    let cost = [0.0, 1.0, 2.0, 2.0, 3.0, 1.0, 0.0]
    let stale = [10.0, 5.0, 5.0, 1.0, 3.0, 5.0, 12.0]
    #expect(Pareto.frontier(cost: cost, staleness: stale) == [true, true, false, true, false, true, false])
  }

  @Test("maximise (fresh_ratio): higher is better")
  func maximise() {
    let cost = [0.0, 1.0, 1.0, 2.0, 3.0]
    let fresh = [0.6, 0.8, 0.7, 0.8, 0.95]
    #expect(Pareto.frontier(cost: cost, staleness: fresh, higherIsBetter: true) == [true, true, false, false, true])
    // The same points read as "lower is better" give another frontier.
    #expect(Pareto.frontier(cost: cost, staleness: fresh) == [true, false, false, false, false])
  }

  @Test("NaN points are never on the frontier and dominate nothing; empty and single inputs")
  func degenerate() {
    #expect(Pareto.frontier(cost: [0, .nan, 1], staleness: [5, 0, 4]) == [true, false, true])
    #expect(Pareto.frontier(cost: [1, 0], staleness: [1, .nan]) == [true, false])
    #expect(Pareto.frontier(cost: [], staleness: []) == [])
    #expect(Pareto.frontier(cost: [3], staleness: [7]) == [true])
    #expect(Pareto.frontier(cost: [1, 1, 1], staleness: [2, 2, 2]) == [true, true, true])
  }

  @Test("linear sweep: exact values between points, equal x merged, nothing outside the range")
  func sweep() {
    let s = LinearSweep([(x: 30, y: 10), (x: 0, y: 100), (x: 10, y: 50), (x: 10, y: 70), (x: 5, y: .nan)])
    #expect(s.xs == [0, 10, 30])
    #expect(s.ys == [100, 60, 10])
    #expect(s.value(at: 0) == 100)
    #expect(s.value(at: 5) == 80)
    #expect(s.value(at: 10) == 60)
    #expect(s.value(at: 20) == 35)
    #expect(s.value(at: 30) == 10)
    #expect(s.value(at: -0.001) == nil)
    #expect(s.value(at: 30.001) == nil)
    #expect(s.value(at: .nan) == nil)
    #expect(LinearSweep([]).value(at: 0) == nil)
    #expect(LinearSweep([(x: 2, y: 3)]).value(at: 2) == 3)
    #expect(LinearSweep([(x: 2, y: 3)]).value(at: 2.5) == nil)
  }

  /// never 0 J, periodic:{4h,2h,1h} at {60,120,240} J with ages {600,300,120},
  /// ios-minimum at 90 J / age 700, budgeted oracles at 2 and 10 fetches/day.
  static let sweepSummary: String = {
    var s = summaryHeader
    for u in ["u1", "u2"] {
      s += summaryRow(u, "news", "never", energy: 0, fetches: 0, meanAge: 3600, p90: 7200, fresh: 0.5)
      s += summaryRow(u, "news", "periodic:4h", energy: 60, fetches: 6, meanAge: 600, p90: 1800, fresh: 0.7)
      s += summaryRow(u, "news", "periodic:2h", energy: 120, fetches: 12, meanAge: 300, p90: 900, fresh: 0.8)
      s += summaryRow(u, "news", "periodic:1h", energy: 240, fetches: 24, meanAge: 120, p90: 300, fresh: 0.9)
      s += summaryRow(u, "news", "ios-minimum:price=0.1,spacing=30m", energy: 90, fetches: 8, meanAge: 700, p90: 600, fresh: 0.85)
      s += summaryRow(u, "news", "oracle-budget:2", energy: 4, fetches: 2, meanAge: 400, fresh: 0.9)
      s += summaryRow(u, "news", "oracle-budget:10", energy: 9, fetches: 10, meanAge: 0, fresh: 1)
    }
    return s
  }()

  @Test("scores on several threads equal the scores on one, in the same order", arguments: [2, 3, 8])
  func scoresOnThreads(jobs: Int) throws {
    let table = try SummaryTable(text: Self.sweepSummary)
    let one = Scoring.score(table, resamples: 60)
    #expect(one.count > 3)
    #expect(Scoring.score(table, resamples: 60, jobs: jobs) == one)
  }

  @Test("matched energy: each family interpolated at every configuration's energy; empty outside its range")
  func matched() throws {
    let scores = Scoring.score(try SummaryTable(text: Self.sweepSummary), resamples: 50)
    let rows = Scoring.matchedEnergy(scores).filter { $0.family == "periodic" }
    #expect(rows.map(\.referencePolicy) == [
      "never", "oracle-budget:2", "oracle-budget:10", "periodic:4h", "ios-minimum:price=0.1,spacing=30m",
      "periodic:2h", "periodic:1h",
    ])
    #expect(rows.map(\.energyJPerDay) == [0, 4, 9, 60, 90, 120, 240])
    #expect(rows.map(\.meanAgeS) == [nil, nil, nil, 600, 450, 300, 120])
    #expect(rows.map(\.p90AgeS) == [nil, nil, nil, 1800, 1350, 900, 300])
    let fresh = rows.compactMap(\.freshRatio)
    #expect(fresh.count == 4)
    #expect(fresh[1].isApproximatelyEqual(0.75))
    // Single-configuration families are defined only at their own energy.
    let minimum = Scoring.matchedEnergy(scores).filter { $0.family == "ios-minimum" }
    #expect(minimum.compactMap(\.meanAgeS) == [700])
  }

  @Test("gap to the budgeted oracle: its frontier by fetches/day (never at 0) read at each other configuration's fetches")
  func oracleGap() throws {
    let scores = Scoring.score(try SummaryTable(text: Self.sweepSummary), resamples: 50)
    let gaps = Scoring.oracleGaps(scores)
    #expect(gaps.allSatisfy { $0.budget == .fetches })
    #expect(gaps.map(\.policy) == ["never", "periodic:4h", "periodic:2h", "periodic:1h", "ios-minimum:price=0.1,spacing=30m"])
    let g = Dictionary(uniqueKeysWithValues: gaps.map { ($0.policy, $0) })
    #expect(g["periodic:4h"]?.oracleMeanAgeS == 200)  // halfway from (2, 400) to (10, 0)
    #expect(g["periodic:4h"]?.gapS == 400)
    #expect(g["ios-minimum:price=0.1,spacing=30m"]?.gapS == 600)  // 700 - oracle at 8/day (100)
    #expect(g["never"]?.gapS == 0)  // 0 fetches/day: never is the frontier's first point
    #expect(g["periodic:1h"]?.gapS == 120)  // 24/day: beyond the frontier, its best point (0 s)
    // Fresh share at 6/day: halfway from (2, 0.9) to (10, 1): 0.95; closed (0.7 − 0.5) / (0.95 − 0.5).
    #expect(try #require(g["periodic:4h"]?.oracleFreshRatio).isApproximatelyEqual(0.95))
    #expect(try #require(g["periodic:4h"]?.freshGapClosed).isApproximatelyEqual(0.2 / 0.45))
    #expect(try #require(g["periodic:1h"]?.freshGapClosed).isApproximatelyEqual(0.8))  // (0.9 − 0.5) / (1 − 0.5)
    #expect(g["never"]?.freshGapClosed == nil)  // the frontier is never's own share at 0: no gap
    #expect(OracleGapRow.Budget(policy: "oracle-budget:50J") == .energy)
    #expect(OracleGapRow.Budget(policy: "oracle-budget:6") == .fetches)
    #expect(OracleGapRow.Budget(policy: "oracle") == nil)
  }

  /// A frontier past 10 J: oracle-budget:5J/10J/20J/50J at 3 / 5 / 8.5 / 9
  /// J/day, fresh 0.8 / 0.9 / 0.985 / 0.98, mean age 300 / 100 / 10 / 20 s;
  /// never 0.5 fresh, 3600 s at 0 J (1000 opens, so the fresh shares are whole counts).
  static let wideFrontier: String = {
    var s = summaryHeader
    for u in ["u1", "u2"] {
      s += summaryRow(u, "news", "never", opens: 1000, energy: 0, meanAge: 3600, fresh: 0.5)
      s += summaryRow(u, "news", "oracle-budget:5J", opens: 1000, energy: 3, meanAge: 300, fresh: 0.8)
      s += summaryRow(u, "news", "oracle-budget:10J", opens: 1000, energy: 5, meanAge: 100, fresh: 0.9)
      s += summaryRow(u, "news", "oracle-budget:20J", opens: 1000, energy: 8.5, meanAge: 10, fresh: 0.985)
      s += summaryRow(u, "news", "oracle-budget:50J", opens: 1000, energy: 9, meanAge: 20, fresh: 0.98)
      s += summaryRow(u, "news", "planner", opens: 1000, energy: 7, meanAge: 200, fresh: 0.8)
      s += summaryRow(u, "news", "planner:budget=20", opens: 1000, energy: 8.8, meanAge: 150, fresh: 0.85)
      s += summaryRow(u, "news", "planner:budget=100", opens: 1000, energy: 30, meanAge: 50, fresh: 0.9)
    }
    return s
  }()

  @Test("gap against the whole frontier: budgets above 10 J count, never worse than a cheaper point, flat beyond")
  func oracleGapWholeFrontier() throws {
    let gaps = Scoring.oracleGaps(Scoring.score(try SummaryTable(text: Self.wideFrontier), resamples: 50))
    let g = Dictionary(uniqueKeysWithValues: gaps.filter { $0.budget == .energy }.map { ($0.policy, $0) })
    // 7 J/day: between 10J (5, 0.9) and 20J (8.5, 0.985): 0.9 + 2/3.5 × 0.085; age 100 − 2/3.5 × 90.
    let p = try #require(g["planner"])
    #expect(try #require(p.oracleFreshRatio).isApproximatelyEqual(0.9 + 2 / 3.5 * 0.085))
    #expect(try #require(p.oracleMeanAgeS).isApproximatelyEqual(100 - 2 / 3.5 * 90))
    #expect(try #require(p.freshGapClosed).isApproximatelyEqual(0.3 / (0.4 + 2 / 3.5 * 0.085)))
    // 8.8 J/day: between 20J and 50J the line falls to 0.982 / rises to 16 s; the cheaper 20J point holds.
    let q = try #require(g["planner:budget=20"])
    #expect(try #require(q.oracleFreshRatio).isApproximatelyEqual(0.985))
    #expect(q.oracleMeanAgeS == 10)
    // 30 J/day: beyond the frontier's last point, its best: 0.985, 10 s.
    let r = try #require(g["planner:budget=100"])
    #expect(try #require(r.oracleFreshRatio).isApproximatelyEqual(0.985))
    #expect(r.gapS == 40)
    #expect(try #require(r.freshGapClosed).isApproximatelyEqual(0.4 / 0.485))
    #expect(OracleFrontier([], higherIsBetter: true).value(at: 1) == nil)
    #expect(OracleFrontier([(x: 2, y: 0.9)], higherIsBetter: true).value(at: 1) == nil)  // below the cheapest point
  }

  @Test("pareto rows: 3 staleness x 4 cost planes per configuration, fresh_ratio maximised")
  func paretoRows() throws {
    let scores = Scoring.score(try SummaryTable(text: Self.sweepSummary), resamples: 50)
    let rows = Scoring.pareto(scores)
    #expect(rows.count == 12 * 7)
    let ageEnergy = rows.filter { $0.staleness == .mean_age_s && $0.cost == .energy_j_per_day }
    // oracle-budget:10 has age 0 at 9 J/day: it dominates every timer and ios-minimum.
    #expect(ageEnergy.filter(\.onFrontier).map(\.policy) == ["never", "oracle-budget:2", "oracle-budget:10"])
    let freshEnergy = rows.filter { $0.staleness == .fresh_ratio && $0.cost == .energy_j_per_day }
    #expect(freshEnergy.filter(\.onFrontier).map(\.policy) == ["never", "oracle-budget:2", "oracle-budget:10"])
  }
}

@Suite("Scoring: summary.csv reading")
struct SummaryTableTests {
  @Test("per user: costs averaged over apps, open-sampled means weighted by opens, p90 over apps with opens")
  func perUser() throws {
    var s = summaryHeader
    s += summaryRow("u1", "news", "never", opens: 10, energy: 10, meanAge: 100, p90: 400, fresh: 0.5, aoi: 1000)
    s += summaryRow("u1", "chat", "never", opens: 30, energy: 20, meanAge: 200, p90: 800, fresh: 0.9, aoi: 2000)
    s += summaryRow("u1", "mail", "never", opens: 0, energy: 30, meanAge: 0, p90: 0, fresh: 0, aoi: 0)
    s += summaryRow("u2", "news", "never", opens: 0, energy: 3)
    let t = try SummaryTable(text: s)
    #expect(t.datasets == [""])
    #expect(!t.hasDatasetColumn)
    let v = try #require(t.values(dataset: "", policy: "never"))
    #expect(v.users == ["u1", "u2"])
    #expect(v[.energy_j_per_day] == [20, 3])
    #expect(v[.mean_age_s][0] == 175)
    #expect(v[.fresh_ratio][0].isApproximatelyEqual(0.8))
    #expect(v[.mean_aoi_s][0] == 1750)
    #expect(v[.p90_age_s][0] == 600)
    #expect(v[.mean_age_s][1].isNaN && v[.p90_age_s][1].isNaN && v[.fresh_ratio][1].isNaN)
    let score = Scoring.score(t, resamples: 100)[0]
    #expect(score.users == 2)
    #expect(score[.energy_j_per_day].mean == 11.5)
    #expect(score[.mean_age_s].users == 1 && score[.mean_age_s].mean == 175)
    #expect(score[.mean_age_s].interval == ConfidenceInterval(lower: 175, upper: 175))
  }

  @Test("experiment layout: datasets kept apart, replications averaged within a user")
  func datasets() throws {
    let head = "dataset,replication," + summaryHeader
    var s = head
    s += "ubiqlog,1," + summaryRow("u1", "news", "never", energy: 2)
    s += "ubiqlog,2," + summaryRow("u1", "news", "never", energy: 4)
    s += "synth,1," + summaryRow("u1", "news", "never", energy: 100)
    s += "synth,1," + summaryRow("u1", "news", "periodic:1h", energy: 300)
    let t = try SummaryTable(text: s)
    #expect(t.hasDatasetColumn)
    #expect(t.datasets == ["ubiqlog", "synth"])
    #expect(t.policies == ["never", "periodic:1h"])
    #expect(t.policies(in: "ubiqlog") == ["never"])
    #expect(t.values(dataset: "ubiqlog", policy: "never")?[.energy_j_per_day] == [3])
    #expect(t.values(dataset: "synth", policy: "never")?[.energy_j_per_day] == [100])
    let scores = Scoring.score(t, resamples: 10)
    #expect(scores.map { "\($0.dataset)/\($0.policy)" } == ["ubiqlog/never", "synth/never", "synth/periodic:1h"])
  }

  @Test("strict CSV: quoted fields with commas, doubled quotes, line breaks and CRLF are read")
  func quoting() throws {
    let (h, rows) = try StrictCSV.parse("a,b,c\r\n\"x,y\",\"he said \"\"hi\"\"\",\"two\nlines\"\r\n,,\n")
    #expect(h == ["a", "b", "c"])
    #expect(rows == [["x,y", "he said \"hi\"", "two\nlines"], ["", "", ""]])
    let (_, last) = try StrictCSV.parse("a\n1")
    #expect(last == [["1"]])
  }

  @Test("strict CSV and summary errors name file, line and column", arguments: [
    ("a,b\n1,x\"y\n", "t.csv:2: b: column 2: quote inside an unquoted field"),
    ("a,b\n1,\"xy\"z\n", "t.csv:2: b: column 2: unexpected text after a closing quote"),
    ("a,b\n1,2\n\"open\n,3\n", "t.csv:3: a: column 1: unterminated quoted field"),
    ("a,b\n1,2,3\n", "t.csv:2: column 3: expected 2 fields, found 3"),
    ("a,b\n1\n", "t.csv:2: b: column 2: expected 2 fields, found 1"),
    ("a,b\n1,2\r3,4\n", "t.csv:2: b: column 2: bare CR"),
    ("a,b\n1,2\n\n", "t.csv:3: empty line"),
    ("a,a\n", "t.csv:1: a: column 2: duplicate column name"),
    ("", "t.csv:1: empty file"),
  ])
  func csvErrors(text: String, message: String) {
    do {
      _ = try StrictCSV.parse(text, file: "t.csv")
      Issue.record("no error for \(text.debugDescription)")
    } catch {
      #expect(String(describing: error).hasPrefix(message), "\(error)")
    }
  }

  @Test("summary errors: bad number, missing column, duplicate row, missing file")
  func summaryErrors() throws {
    let bad = summaryHeader + summaryRow("u1", "news", "never")
      + "u2,news,never,1,10,0,0,0,0,0,0,abc,0,0,0,1,0,0,0,0,0,0,0,0,0,0,0\n"
    #expect(errorText { try SummaryTable(text: bad) }.hasPrefix("summary.csv:3: mean_age_s: column 12: not a finite number: 'abc'"))
    let nan = summaryHeader + summaryRow("u1", "news", "never", energy: .nan)
    #expect(errorText { try SummaryTable(text: nan) }.hasPrefix("summary.csv:2: energy_j_per_day: column 21: not a finite number: 'nan'"))
    let missing = "user,app,policy,opens\nu1,news,never,3\n"
    #expect(errorText { try SummaryTable(text: missing) }.hasPrefix("summary.csv:1: energy_j_per_day: missing column"))
    let dup = summaryHeader + summaryRow("u1", "news", "never") + summaryRow("u1", "news", "never")
    #expect(errorText { try SummaryTable(text: dup) }.hasPrefix("summary.csv:3: duplicate row for user 'u1', app 'news', policy 'never'"))
    let dir = tempDir()
    #expect(errorText { try writeScores(runDir: dir) }.hasPrefix(dir + "/summary.csv: cannot read file"))
    #expect(!FileManager.default.fileExists(atPath: dir + "/policies.csv"))
  }
}

/// The description of the error `body` throws, or "" when it does not throw.
private func errorText(_ body: () throws -> Any) -> String {
  do {
    _ = try body()
    return ""
  } catch {
    return String(describing: error)
  }
}

extension Double {
  /// Relative comparison for the scoring tests.
  fileprivate func isApproximatelyEqual(_ other: Double, relativeTolerance: Double = 1e-12) -> Bool {
    abs(self - other) <= relativeTolerance * Swift.max(abs(self), abs(other))
  }
}

@Suite("Scoring: sign test and bootstrap")
struct StatisticsTests {
  @Test("exact two-sided sign test against hand-computed binomial tails", arguments: [
    (9, 1, 0.021484375),  // 2 * (1 + 10) / 1024
    (1, 9, 0.021484375),
    (10, 0, 0.001953125),  // 2 / 1024
    (8, 2, 0.109375),  // 2 * (1 + 10 + 45) / 1024
    (7, 3, 0.34375),  // 2 * 176 / 1024
    (6, 4, 0.75390625),  // 2 * 386 / 1024
    (5, 5, 1.0),
    (1, 0, 1.0),
    (0, 0, 1.0),
    (0, 20, 2.0 / 1_048_576),
    (15, 5, 0.041389465332031250),  // 2 * 21700 / 2^20
  ])
  func signTest(wins: Int, losses: Int, p: Double) {
    let got = SignTest.twoSidedP(wins: wins, losses: losses)
    #expect(got.isApproximatelyEqual(p, relativeTolerance: 1e-12), "\(wins)/\(losses): \(got) vs \(p)")
    #expect(got == SignTest.twoSidedP(wins: losses, losses: wins))
  }

  @Test("sign test is stable for n up to 10^5: matches the normal approximation, monotone, no NaN")
  func signTestLarge() {
    // z with continuity correction: (|w - n/2| - 0.5) / sqrt(n/4)
    for (w, l) in [(50_500, 49_500), (50_200, 49_800), (5_100, 4_900)] {
      let n = Double(w + l)
      let z = (abs(Double(w) - n / 2) - 0.5) / (n / 4).squareRoot()
      let approx = erfc(z / 2.0.squareRoot())
      let p = SignTest.twoSidedP(wins: w, losses: l)
      #expect(abs(p - approx) / approx < 0.02, "\(w)/\(l): \(p) vs \(approx)")
    }
    #expect(SignTest.twoSidedP(wins: 50_000, losses: 50_000) == 1)
    #expect(SignTest.twoSidedP(wins: 50_001, losses: 49_999) > 0.99)
    #expect(SignTest.twoSidedP(wins: 100_000, losses: 0) == 0)
    #expect(SignTest.twoSidedP(wins: 60_000, losses: 40_000) >= 0)
    var last = 1.0
    for w in stride(from: 50_000, through: 52_000, by: 100) {
      let p = SignTest.twoSidedP(wins: w, losses: 100_000 - w)
      #expect(p <= last && !p.isNaN)
      last = p
    }
  }

  @Test("paired summary: ties dropped from the sign test, better follows the metric's direction")
  func pairedTies() {
    var rng = SplitMix64(seed: 1)
    let base: [Double] = [10, 10, 10, 10, 10, .nan]
    let pol: [Double] = [5, 6, 10, 12, 10, 1]
    let lower = PairedComparison.summarize(policy: pol, baseline: base, higherIsBetter: false, resamples: 200, using: &rng)
    #expect(lower.users == 5)
    #expect((lower.wins, lower.losses, lower.ties) == (2, 1, 2))
    #expect(lower.meanDifference == -1.4)
    #expect(lower.signTestP == SignTest.twoSidedP(wins: 2, losses: 1))
    let higher = PairedComparison.summarize(policy: pol, baseline: base, higherIsBetter: true, resamples: 200, using: &rng)
    #expect((higher.wins, higher.losses, higher.ties) == (1, 2, 2))
    #expect(lower.interval.map { $0.lower <= -1.4 && -1.4 <= $0.upper } == true)
    let none = PairedComparison.summarize(policy: [], baseline: [], higherIsBetter: false, using: &rng)
    #expect(none.users == 0 && none.interval == nil && none.signTestP == 1 && none.meanDifference.isNaN)
  }

  /// Coverage of the paired bootstrap interval on synthetic paired normal data.
  ///
  /// Each repetition draws 100 users with baseline b ~ N(100, 20²) and policy
  /// b + 3 + N(0, 5²): the true mean difference is 3. The percentile
  /// interval of a mean behaves like x̄ ± 1.96·σ̂/√n with the 1/n variance, so
  /// its coverage is about P(|t_(n−1)| ≤ 1.96·√((n−1)/n)): ≈ 94.2 % at n = 50,
  /// ≈ 94.6 % at n = 100, hence 100 users, to keep the expected share away
  /// from the lower limit. Over 1,000 repetitions the observed share has a
  /// Monte Carlo standard deviation of √(0.95·0.05/1000) ≈ 0.7 %, so the
  /// 93–97 % window lies 2.3 SD below and 3.4 SD above the expected value: a
  /// correct bootstrap fails it for about 1 seed in 100; an interval 10 %
  /// too narrow (coverage ≈ 92 %) or 15 % too wide (≈ 97.6 %) fails it mostly. Seeds are fixed, so
  /// the test is deterministic. B = 500 resamples keeps it at about 1.5 s in
  /// a debug build; their effect on the endpoints is ~0.1 σ̂/√n.
  @Test("bootstrap 95% CI of a paired mean difference covers the truth in 93-97% of repetitions")
  func coverage() {
    let reps = 1000, n = 100, truth = 3.0
    var data = SplitMix64(seed: 20_240_601)
    var covered = 0
    for r in 0..<reps {
      var base = [Double](repeating: 0, count: n), pol = base
      for i in 0..<n {
        base[i] = 100 + 20 * data.normal()
        pol[i] = base[i] + truth + 5 * data.normal()
      }
      var rng = Bootstrap.generator("coverage", String(r))
      let s = PairedComparison.summarize(policy: pol, baseline: base, higherIsBetter: false, resamples: 500, using: &rng)
      if s.interval?.contains(truth) == true { covered += 1 }
    }
    let share = Double(covered) / Double(reps)
    #expect(share >= 0.93 && share <= 0.97, "coverage \(share)")
  }

  @Test("bootstrap intervals: deterministic for the same names, joint over columns, NaN left out")
  func bootstrapBasics() {
    let xs = (0..<40).map { Double($0 % 7) }
    var a = Bootstrap.generator("policies", "", "periodic:1h")
    var b = Bootstrap.generator("policies", "", "periodic:1h")
    var c = Bootstrap.generator("policies", "", "periodic:4h")
    let ia = Bootstrap.meanInterval(xs, resamples: 300, using: &a)
    #expect(ia == Bootstrap.meanInterval(xs, resamples: 300, using: &b))
    #expect(ia != Bootstrap.meanInterval(xs, resamples: 300, using: &c))
    let mean = xs.reduce(0, +) / 40
    #expect(ia.map { $0.lower < mean && mean < $0.upper } == true)
    var d = SplitMix64(seed: 9)
    let two = Bootstrap.meanIntervals([xs, xs.map { $0 == 3 ? .nan : $0 * 2 }, xs.map { _ in .nan }], resamples: 300, using: &d)
    #expect(two.count == 3 && two[0] != nil && two[1] != nil && two[2] == nil)
  }
}

@Suite("Scoring: files of a run")
struct ScoreFilesTests {
  @Test("writeScores: policies.csv means equal the mean over users of per-user app averages, with lo <= mean <= hi")
  func writeScoresOnRun() throws {
    let out = try runTiny(jobs: 1, batch: 64)
    let scores = try writeScores(runDir: out, resamples: 200)
    let (h, rows) = try StrictCSV.parse(String(contentsOfFile: out + "/policies.csv", encoding: .utf8))
    #expect(h == Scoring.policiesHeader)
    #expect(rows.map { $0[1] } == ["never", "periodic:1h", "periodic:15m", "oracle"])
    #expect(rows.map { $0[2] } == ["never", "periodic", "periodic", "oracle"])
    #expect(scores.count == 4)
    // Recompute the energy column from summary.csv by hand.
    let (sh, srows) = try StrictCSV.parse(String(contentsOfFile: out + "/summary.csv", encoding: .utf8))
    let ui = try #require(sh.firstIndex(of: "user")), pi = try #require(sh.firstIndex(of: "policy"))
    let ei = try #require(sh.firstIndex(of: "energy_j_per_day"))
    for (k, policy) in ["never", "periodic:1h", "periodic:15m", "oracle"].enumerated() {
      var perUser: [String: [Double]] = [:]
      for r in srows where r[pi] == policy { perUser[r[ui], default: []].append(Double(r[ei]) ?? .nan) }
      let means = perUser.values.map { $0.reduce(0, +) / Double($0.count) }
      let want = means.reduce(0, +) / Double(means.count)
      let got = try #require(Double(rows[k][4]))
      #expect(got.isApproximatelyEqual(want, relativeTolerance: 1e-9), "\(policy): \(got) vs \(want)")
      #expect(rows[k][3] == String(perUser.count))
      for m in 0..<ScoreMetric.allCases.count {
        if let v = Double(rows[k][4 + 3 * m]), let lo = Double(rows[k][5 + 3 * m]), let hi = Double(rows[k][6 + 3 * m]) {
          #expect(lo <= v + 1e-9 * abs(v) && v <= hi + 1e-9 * abs(v), "\(policy) \(ScoreMetric.allCases[m])")
        }
      }
    }
    let (ph, prow) = try StrictCSV.parse(String(contentsOfFile: out + "/pareto.csv", encoding: .utf8))
    #expect(ph == ParetoColumn.allCases.map(\.rawValue))
    #expect(prow.count == 12 * 4)  // 3 staleness × 4 cost planes, 4 configurations
    #expect(prow.allSatisfy { $0[7] == "0" || $0[7] == "1" })
    let (mh, mrows) = try StrictCSV.parse(String(contentsOfFile: out + "/matched.csv", encoding: .utf8))
    #expect(mh == ["dataset", "family", "reference_policy", "battery_energy_j_per_day", "mean_age_s", "p90_age_s", "fresh_ratio"])
    #expect(mrows.count == 3 * 4)  // families never, periodic, oracle × 4 reference energies
    let (gh, grows) = try StrictCSV.parse(String(contentsOfFile: out + "/oracle_gap.csv", encoding: .utf8))
    #expect(gh == OracleGapColumn.allCases.map(\.rawValue))
    #expect(grows.isEmpty)
    // Same input, same bytes.
    let first = FileManager.default.contents(atPath: out + "/policies.csv")
    try writeScores(runDir: out, resamples: 200)
    #expect(FileManager.default.contents(atPath: out + "/policies.csv") == first)
  }

  @Test("paired comparison: users matched by id, unknown baseline lists the policies")
  func paired() throws {
    var s = summaryHeader
    for (u, e) in [("u1", 10.0), ("u2", 20.0), ("u3", 30.0)] {
      s += summaryRow(u, "news", "never", energy: 0, meanAge: 600)
      s += summaryRow(u, "news", "periodic:1h", energy: e, meanAge: 100)
    }
    s += summaryRow("u4", "news", "periodic:1h", energy: 1000, meanAge: 0)  // no baseline row: left out
    let t = try SummaryTable(text: s)
    let rows = try PairedComparison.compare(t, baseline: "never", metrics: [.energy_j_per_day, .mean_age_s], resamples: 300)
    #expect(rows.map(\.metric) == [.energy_j_per_day, .mean_age_s])
    let energy = rows[0].summary, age = rows[1].summary
    #expect(energy.users == 3 && energy.meanDifference == 20 && (energy.wins, energy.losses) == (0, 3))
    #expect(age.meanDifference == -500 && (age.wins, age.losses, age.ties) == (3, 0, 0))
    #expect(age.signTestP == 0.25)
    #expect(age.interval == ConfidenceInterval(lower: -500, upper: -500))
    do {
      _ = try PairedComparison.compare(t, baseline: "oracle")
      Issue.record("no error")
    } catch {
      #expect(String(describing: error) == "unknown baseline 'oracle'; policies in summary.csv: never, periodic:1h")
    }
    // With datasets: compared within each dataset that has the baseline.
    var e = "dataset,replication," + summaryHeader
    e += "a,1," + summaryRow("u1", "news", "never", energy: 0)
    e += "a,1," + summaryRow("u1", "news", "periodic:1h", energy: 10)
    e += "b,1," + summaryRow("u1", "news", "periodic:1h", energy: 10)
    e += "b,1," + summaryRow("u1", "news", "periodic:4h", energy: 5)
    let byDataset = try PairedComparison.compare(SummaryTable(text: e), baseline: "never", metrics: [.energy_j_per_day])
    #expect(byDataset.map { "\($0.dataset)/\($0.policy)" } == ["a/periodic:1h"])
    #expect(PairedComparison.render(byDataset).contains("a        periodic:1h  energy_j_per_day"))
    let table = PairedComparison.render(rows, resamples: 300)
    #expect(table.contains("periodic:1h  energy_j_per_day"))
    #expect(table.contains("0/3/0"))
  }
}

@Suite("Scoring: the loss split into learning and foresight")
struct LossSplitTests {
  @Test("per budget: planner against model oracle, model oracle against the content-blind oracle, paired by user")
  func handWorked() throws {
    var s = summaryHeader
    // Fresh shares per user: never 0.6; planner 0.7 / 0.8 / 0.9; model
    // oracle 0.8 / 0.8 / 1.0; content-blind oracle 0.9 at every user.
    for (u, planner, truth) in [("u1", 0.7, 0.8), ("u2", 0.8, 0.8), ("u3", 0.9, 1.0)] {
      s += summaryRow(u, "news", "never", meanAge: 600, fresh: 0.6)
      s += summaryRow(u, "news", "planner:budget=5", meanAge: 300, fresh: planner)
      s += summaryRow(u, "news", "planner:budget=5,models=true", meanAge: 200, fresh: truth)
      s += summaryRow(u, "news", "oracle-budget:5J,know=opens", meanAge: 100, fresh: 0.9)
      s += summaryRow(u, "news", "planner:budget=20", meanAge: 100, fresh: 0.95)  // no model oracle at 20: no row
    }
    let rows = Scoring.lossSplit(try SummaryTable(text: s), resamples: 300)
    #expect(rows.map(\.loss) == [.learning, .learning, .foresight, .foresight])
    #expect(rows.allSatisfy { $0.budget == 5 && $0.paired.users == 3 })
    let learning = rows[0], foresight = rows[2]
    #expect(learning.policy == "planner:budget=5" && learning.reference == "planner:budget=5,models=true")
    #expect(learning.metric == .fresh_ratio)
    // Differences 0.1, 0, 0.1: mean 1/15; the planner gains 0.2 over never
    // where the model oracle gains 0.8667 − 0.6.
    #expect(abs(learning.paired.meanDifference - 0.2 / 3) < 1e-12)
    #expect(abs(learning.gainShare! - 0.2 / (2.6 / 3 - 0.6)) < 1e-12)
    #expect(rows[1].metric == .mean_age_s && rows[1].paired.meanDifference == -100)
    #expect(foresight.policy == "planner:budget=5,models=true" && foresight.reference == "oracle-budget:5J,know=opens")
    #expect(abs(foresight.paired.meanDifference - (0.9 - 2.6 / 3)) < 1e-12)
    let lines = Scoring.lossSplitLines(rows, named: { $0 })
    #expect(lines.count == 5 && lines[0] == LossSplitColumn.headerLine)
    #expect(Scoring.plannerBudget("planner") ?? (0, true) == (10, false))
    #expect(Scoring.plannerBudget("planner:models=true") ?? (0, false) == (10, true))
    #expect(Scoring.plannerBudget("planner:budget=5,age_weight=0") == nil)
    #expect(Scoring.contentBlindBudget("oracle-budget:10J,know=opens") == 10)
    #expect(Scoring.contentBlindBudget("oracle-budget:10J") == nil)
    // oracle_gap.csv's loss columns: the learned planner's row carries its
    // learning loss and the model oracle's foresight loss at its budget.
    #expect(Scoring.loss(.learning, .fresh_ratio, of: "planner:budget=5", dataset: "", in: rows) == learning.paired.meanDifference)
    #expect(Scoring.loss(.learning, .mean_age_s, of: "planner:budget=5", dataset: "", in: rows) == -100)
    #expect(Scoring.loss(.foresight, .fresh_ratio, of: "planner:budget=5", dataset: "", in: rows) == foresight.paired.meanDifference)
    #expect(Scoring.loss(.foresight, .mean_age_s, of: "planner:budget=5", dataset: "", in: rows) == rows[3].paired.meanDifference)
    #expect(Scoring.loss(.learning, .fresh_ratio, of: "planner:budget=20", dataset: "", in: rows) == nil)
    #expect(Scoring.loss(.foresight, .fresh_ratio, of: "planner:budget=5,models=true", dataset: "", in: rows) == nil)
    #expect(Scoring.loss(.learning, .fresh_ratio, of: "planner:budget=5", dataset: "other", in: rows) == nil)
  }

  @Test("the oracle-gap sweep is the oracle that knows opens and content; know= variants are rows against it")
  func gapSweepKnowsBoth() {
    #expect(OracleGapRow.Budget(policy: "oracle-budget:10J") == .energy)
    #expect(OracleGapRow.Budget(policy: "oracle-budget:10J,know=opens") == nil)
    #expect(OracleGapRow.Budget(policy: "oracle-budget:4,know=none") == nil)
  }
}
