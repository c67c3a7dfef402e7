import Foundation
import Testing
import FetchTestSupport

@testable import FetchTraces

/// A fresh path in the temporary directory.
private func temporaryPath(_ name: String) -> String {
  Scratch.directory("synth") + "/" + name
}

private func median(_ xs: [Double]) -> Double {
  let s = xs.sorted()
  guard !s.isEmpty else { return .nan }
  return s.count % 2 == 1
    ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

private func correlation(_ a: [Double], _ b: [Double]) -> Double {
  let ma = a.reduce(0, +) / Double(a.count)
  let mb = b.reduce(0, +) / Double(b.count)
  var sab = 0.0, saa = 0.0, sbb = 0.0
  for (x, y) in zip(a, b) {
    sab += (x - ma) * (y - mb)
    saa += (x - ma) * (x - ma)
    sbb += (y - mb) * (y - mb)
  }
  return sab / (saa * sbb).squareRoot()
}

@Suite("SyntheticPopulation")
struct SyntheticPopulationTests {
  let small = SyntheticPopulation(seed: 42, days: 7)

  // MARK: Determinism

  @Test func sameSeedGivesIdenticalUsers() {
    let other = SyntheticPopulation(seed: 42, days: 7)
    for i in [0, 1, 17] {
      #expect(small.user(i) == other.user(i))
    }
  }

  @Test func usersDoNotDependOnGenerationOrder() {
    let forward = (0..<6).map(small.user)
    let backward = (0..<6).reversed().map(small.user).reversed()
    #expect(forward == Array(backward))
    #expect(small.generate(0..<6) == forward)
    #expect(small.generate(3..<5) == Array(forward[3..<5]))
  }

  @Test func differentSeedsAndUsersDiffer() {
    let other = SyntheticPopulation(seed: 43, days: 7)
    #expect(small.user(0) != other.user(0))
    #expect(small.user(0).events != small.user(1).events)
  }

  @Test func userIDs() {
    #expect(SyntheticPopulation.userID(0) == "u00001")
    #expect(SyntheticPopulation.userID(41) == "u00042")
    #expect(SyntheticPopulation.userID(99_999) == "u100000")
    #expect(small.user(4).user == "u00005")
  }

  // MARK: Structure

  @Test(arguments: 0..<8)
  func traceIsWellFormed(index: Int) throws {
    let p = small.parameters
    let u = small.user(index)
    u._checkInvariants()

    // Window: local midnight of the start date, for `days` days.
    guard case .fixed(let offset) = u.timeZone else {
      Issue.record("expected a fixed offset")
      return
    }
    #expect(
      p.timeZones.contains(
        u.timeZone.description == "UTC" ? "+00:00" : u.timeZone.description))
    let startDay = try #require(SyntheticPopulation.civilDay(p.startDate))
    #expect(u.start + Double(offset) == Double(startDay) * 86_400)
    #expect(u.end - u.start == 7 * 86_400)

    // Apps in order of first appearance, each used.
    var seen: [Int32] = []
    for e in u.events where e.app >= 0 && !seen.contains(e.app) {
      seen.append(e.app)
    }
    #expect(seen == (0..<Int32(u.apps.count)).map { $0 })
    #expect(Set(u.apps).isSubset(of: Set(p.apps.map(\.name))))

    // Opens do not overlap; values in range.
    var lastEnd = -Double.infinity
    for e in u.events where e.kind == .open {
      #expect(e.time >= lastEnd)
      #expect(e.value >= 1 && e.value <= p.sessionMaxSeconds)
      lastEnd = e.time + e.value
    }
    for e in u.events {
      switch e.kind {
      case .wake:
        #expect(e.value >= p.wakeMinSeconds && e.value <= p.wakeMaxSeconds)
        #expect(e.app == -1)
      case .battery: #expect(e.value >= 0 && e.value <= 100)
      case .update: #expect(e.app >= 0 && e.value == 0)
      case .chargeStart, .chargeEnd, .network: #expect(e.app == -1)
      case .location:
        #expect(e.app == -1)
        #expect(e.location.map { $0.region < Int32(u.regions.count) } == true)
      case .open: break
      }
    }

    // Network: first row at the start, then only changes.
    let net = u.events.filter { $0.kind == .network }
    #expect(net.first?.time == u.start)
    for (a, b) in zip(net, net.dropFirst()) { #expect(a.network != b.network) }
    let kinds = Set(net.compactMap(\.network))
    #expect(kinds.contains(.wifi))
    #expect(!kinds.contains(.cellular))  // always a concrete technology

    // Charging alternates start/end, and a battery sample comes with each.
    var charging: Bool?
    for (i, e) in u.events.enumerated()
    where e.kind == .chargeStart || e.kind == .chargeEnd {
      #expect(charging != (e.kind == .chargeStart))
      charging = e.kind == .chargeStart
      #expect(
        i > 0 && u.events[i - 1].kind == .battery
          && u.events[i - 1].time == e.time)
    }
    #expect(u.events.contains { $0.kind == .chargeStart })

    // Updates only for apps among the user's top apps by opens.
    let updated = Set(u.events.filter { $0.kind == .update }.map(\.app))
    #expect(updated.count <= p.updateTopApps)
  }

  @Test func writeRoundTripsThroughTheReader() throws {
    let path = temporaryPath("roundtrip.csv")
    defer { try? FileManager.default.removeItem(atPath: path) }
    let pop = SyntheticPopulation(seed: 9, days: 3)
    let events = try pop.write(to: path, users: 12)

    let text = try String(contentsOfFile: path, encoding: .utf8)
    #expect(text.hasPrefix("# FetchLab synthetic population"))
    #expect(text.contains("\n# seed: 9\n"))
    #expect(text.contains("\n# parameters: {\""))

    let reader = try TraceReader(path: path)
    var i = 0
    var total = 0
    while let u = try reader.next() {
      #expect(u == pop.user(i), "user \(i) changed in the round trip")
      total += u.events.count
      i += 1
    }
    #expect(i == 12)
    #expect(total == events)
  }

  @Test func commentsRecordTheParameters() throws {
    let line = try #require(
      small.commentLines(users: 3).first { $0.hasPrefix("parameters: ") })
    let json = Data(line.dropFirst("parameters: ".count).utf8)
    let decoded = try JSONDecoder().decode(
      SyntheticPopulation.Parameters.self, from: json)
    #expect(decoded == small.parameters)
  }

  @Test func readerParsesSeventeenDigitNumbersExactly() throws {
    // Regression: the reader's fast path used to round 17-digit mantissas
    // twice, so some full-precision values did not round-trip.
    let values = [
      1197157252.9994555, 98.76998701425559, 1805981820.3768742,
      0.30000000000000004, 1767571200.0625,
    ]
    var u = UserTrace(user: "x", start: 0, end: 2e9)
    for (i, v) in values.sorted().enumerated() {
      u.events.append(TraceEvent(time: v, kind: .wake, value: Double(i) + 0.1))
    }
    let path = temporaryPath("digits.csv")
    defer { try? FileManager.default.removeItem(atPath: path) }
    let w = try TraceWriter(path: path)
    try w.write(u)
    try w.commit()
    let back = try #require(try TraceReader(path: path).next())
    #expect(back == u)
  }

  // MARK: Calibration (UbiqLog and ExtraSensory statistics)

  @Test func calibration() throws {
    let p = SyntheticPopulation.Parameters()
    let pop = SyntheticPopulation(seed: 1, days: 14, parameters: p)
    let users = pop.generate(0..<200)

    var opensPerDay: [Double] = []
    var topShare: [Double] = []
    var wifi: [Double] = []
    var plugsPerDay: [Double] = []
    var sessions: [Double] = []
    var hours = [Double](repeating: 0, count: 24)
    var rows = 0
    for u in users {
      rows += u.events.count
      var perDay = [Double](repeating: 0, count: 14)
      var lastEnd = -Double.infinity
      var clock = LocalClock(u.timeZone)
      for e in u.events where e.kind == .open {
        perDay[min(13, Int((e.time - u.start) / 86_400))] += 1
        hours[Int(clock.hourOfDay(e.time))] += 1
        #expect(e.time >= lastEnd, "opens overlap for \(u.user)")
        lastEnd = e.time + e.value
        sessions.append(e.value)
      }
      opensPerDay += perDay.filter { $0 > 0 }
      let counts = u.openCounts()
      topShare.append(
        Double(counts.max() ?? 0) / Double(max(1, counts.reduce(0, +))))

      var onWifi = 0.0
      let net = u.events.filter { $0.kind == .network }
      for (i, e) in net.enumerated() where e.network == .wifi {
        onWifi += (i + 1 < net.count ? net[i + 1].time : u.end) - e.time
      }
      wifi.append(onWifi / (u.end - u.start))
      plugsPerDay.append(
        Double(u.events.filter { $0.kind == .chargeStart }.count) / 14)
    }
    let share = hours.map { $0 / hours.reduce(0, +) }
    let r = correlation(share, p.openHourlyShare)
    let summary =
      "opens/day \(median(opensPerDay)), top share \(median(topShare)), "
      + "wifi \(median(wifi)), plugs/day \(median(plugsPerDay)), "
      + "session \(median(sessions)) s, hourly r \(r), "
      + "rows/user-day \(Double(rows) / 2800)"

    #expect(abs(median(opensPerDay) / 74 - 1) <= 0.2, "\(summary)")
    #expect((0.72...0.9).contains(median(wifi)), "\(summary)")
    #expect(r > 0.9, "\(summary)")
    #expect((0.25...0.45).contains(median(topShare)), "\(summary)")
    #expect((1.5...3.5).contains(median(plugsPerDay)), "\(summary)")
    #expect((20...45).contains(median(sessions)), "\(summary)")
    #expect(Double(rows) / 2800 <= 400, "\(summary)")
  }

  // MARK: Parameters

  @Test func defaultParametersAreValid() throws {
    try SyntheticPopulation.Parameters().validate()
  }

  @Test func parametersDecodeAnySubset() throws {
    let json = #"{"opensPerDayMedian": 50, "timeZones": ["+01:00"]}"#
    let p = try JSONDecoder().decode(
      SyntheticPopulation.Parameters.self, from: Data(json.utf8))
    var expected = SyntheticPopulation.Parameters()
    expected.opensPerDayMedian = 50
    expected.timeZones = ["+01:00"]
    #expect(p == expected)
    let empty = try JSONDecoder().decode(
      SyntheticPopulation.Parameters.self, from: Data("{}".utf8))
    #expect(empty == SyntheticPopulation.Parameters())
  }

  /// A `--params` file's errors name the line of the key at fault and its
  /// key path (real line numbers from the located JSON reader).
  @Test(arguments: [
    ("{\n  \"opensPerDayMedian\": 20,\n  \"apps\": [\n    {\"name\": \"a\", \"weight\": \"x\"}\n  ]\n}", 4, "apps.0.weight", "Double"),
    ("{\n  \"apps\": [\n    {\"name\": \"a\",\n     \"peakHourX\": 3}\n  ]\n}", 4, "peakHourX", "unknown app key"),
    ("{\n  \"timeZones\": [\"UTC\"],\n  \"opensPerDayMedian\": -20\n}", 3, "opensPerDayMedian", "0...5000"),
    ("{\n  \"opensPerDayMedian\": 1,\n  \"opensPerDayMedian\": 2\n}", 3, "opensPerDayMedian", "duplicate key"),
    ("{\n  \"opensPerDayMedian\": 1,\n  nope\n}", 3, "-", "not valid JSON"),
  ])
  func parameterFileErrorsAreLocated(text: String, line: Int, field: String, fragment: String) throws {
    let path = temporaryPath("params.json")
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    do {
      _ = try SyntheticPopulation.Parameters.load(path: path)
      Issue.record("no error")
    } catch let e as TraceFormatError {
      #expect(e.file == path && e.line == line && e.field == field, "\(e)")
      #expect(e.message.contains(fragment), "\(e)")
    }
  }

  @Test func unknownParameterKeysAreAnErrorNamingTheKey() {
    let json = #"{"opensPerDayMedian": 50, "opensPerDayMedain": 60}"#
    #expect {
      _ = try JSONDecoder().decode(
        SyntheticPopulation.Parameters.self, from: Data(json.utf8))
    } throws: { error in
      (error as? SyntheticPopulation.ParameterError)?.key == "opensPerDayMedain"
        && "\(error)".contains("opensPerDayMedain")
    }
    let app = #"{"apps": [{"name": "news", "color": "red"}]}"#
    #expect(throws: SyntheticPopulation.ParameterError.self) {
      _ = try JSONDecoder().decode(
        SyntheticPopulation.Parameters.self, from: Data(app.utf8))
    }
  }

  @Test func validationRejectsBadValues() {
    func rejects(
      _ key: String, _ change: (inout SyntheticPopulation.Parameters) -> Void
    ) {
      var p = SyntheticPopulation.Parameters()
      change(&p)
      #expect {
        try p.validate()
      } throws: { error in
        (error as? SyntheticPopulation.ParameterError)?.key == key
      }
    }
    rejects("openHourlyShare") { $0.openHourlyShare = [1, 2, 3] }
    rejects("startDate") { $0.startDate = "2026-02-30" }
    rejects("timeZones") { $0.timeZones = ["Europe/Vienna"] }
    rejects("appsPerUserMax") { $0.appsPerUserMax = 500 }
    rejects("topAppShareMedian") { $0.topAppShareMedian = 1 }
    rejects("wifiFractionMedian") { $0.wifiFractionMedian = .nan }
    rejects("apps") { $0.apps.append($0.apps[0]) }
    rejects("lowBatteryThresholdRange") {
      $0.lowBatteryThresholdRange = [30, 10]
    }
  }

  // MARK: Building blocks

  @Test func civilDays() {
    #expect(SyntheticPopulation.civilDay("1970-01-01") == 0)
    #expect(SyntheticPopulation.civilDay("2000-03-01") == 11_017)
    #expect(SyntheticPopulation.civilDay("2024-02-29") != nil)
    #expect(SyntheticPopulation.civilDay("2023-02-29") == nil)
    #expect(SyntheticPopulation.civilDay("2026-1-05") == nil)
    // The default start date is a Monday.
    #expect(small.startWeekday == 0)
  }

  @Test(arguments: [0.05, 0.2, 0.34, 0.6])
  func zipfExponentHitsTheTopShare(share: Double) {
    let a = SyntheticPopulation.zipfExponent(topShare: share, count: 25)
    let total = (1...25).reduce(0.0) { $0 + pow(Double($1), -a) }
    #expect(abs(1 / total - share) < 1e-9)
  }

  /// The "any app but the previous one" chain keeps the target shares.
  @Test(arguments: [0.1, 0.3, 0.45])
  func exclusionWeightsKeepShares(top: Double) {
    let n = 12
    var p = (1..<n).map { 1 / Double($0 + 1) }
    let rest = p.reduce(0, +)
    p = [top] + p.map { $0 / rest * (1 - top) }
    let q = SyntheticPopulation.exclusionWeights(p)
    #expect(abs(q.reduce(0, +) - 1) < 1e-9)
    var pi = p
    for _ in 0..<500 {  // one step of the chain from pi
      var next = [Double](repeating: 0, count: n)
      for i in 0..<n {
        for j in 0..<n where j != i { next[j] += pi[i] * q[j] / (1 - q[i]) }
      }
      pi = next
    }
    for (a, b) in zip(pi, p) { #expect(abs(a - b) < 1e-6) }
  }

  @Test func curveInterpolatesBetweenHourCentres() {
    let c = (0..<24).map(Double.init)
    #expect(SyntheticPopulation.curve(c, at: 5.5) == 5)
    #expect(SyntheticPopulation.curve(c, at: 6) == 5.5)
    #expect(SyntheticPopulation.curve(c, at: 23.75) == 23 * 0.75)  // wraps
    #expect(SyntheticPopulation.curve(c, at: -0.5) == 23)
  }
}
