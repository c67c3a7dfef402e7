import FetchTraces
import Foundation
import Testing
import FetchTestSupport

/// A fresh temporary directory for one test.
private func temporaryDirectory() throws -> String {
  Scratch.directory("ubiqlog")
}

/// Writes `text` to `dir/name` and returns the path.
private func write(_ text: String, _ name: String, in dir: String) throws -> String {
  let path = dir + "/" + name
  try Data(text.utf8).write(to: URL(fileURLWithPath: path))
  return path
}

/// Tab-joined rows under the standard header, LF line ends.
private func tsv(_ rows: [[String]]) -> String {
  (["user_dir\tprocess_name\tstart_local\tend_local\tduration_s"] + rows.map { $0.joined(separator: "\t") })
    .joined(separator: "\n") + "\n"
}

/// The error `body` throws, if it is a TraceFormatError.
private func formatError(_ body: () throws -> Void) -> TraceFormatError? {
  do {
    try body()
    return nil
  } catch let e as TraceFormatError {
    return e
  } catch {
    return nil
  }
}

/// 2013-11-29 00:00:00 as wall-clock seconds since 1970 (the adapter's encoding).
private let nov29: Double = 1_385_683_200
private let dec01: Double = 1_385_856_000
private let dec02: Double = 1_385_942_400

/// The hand-made fixture: each row's comment says what the adapter must do.
private let fixtureRows: [[String]] = [
  ["19_F", "com.android.mms", "2013-11-29 08:00:00", "2013-11-29 08:05:00", "300"],  // open 1 starts
  ["19_F", "com.android.nfc", "2013-11-29 08:00:00", "2013-11-29 09:00:00", "3600"],  // platform prefix
  ["19_F", "com.tencent.mm:push", "2013-11-29 08:00:00", "2013-11-29 08:05:00", "300"],  // ':' secondary
  ["19_F", "com.sec.android.app.launcher", "2013-11-29 08:00:00", "2013-11-29 08:05:00", "300"],  // launcher
  ["19_F", "com.android.mms", "2013-11-29 08:05:59", "2013-11-29 08:10:00", "241"],  // 59 s after: merge
  ["19_F", "com.android.mms", "2013-11-29 08:11:00", "2013-11-29 08:12:00", "60"],  // 60 s after: open 2
  ["19_F", "com.android.mms", "2013-11-29 08:11:30", "2013-11-29 08:13:00", "90"],  // overlaps: merge
  ["19_F", "com.whatsapp", "1980-01-06 10:00:00", "1980-01-06 10:01:00", "60"],  // clock reset
  ["19_F", "com.whatsapp", "2013-11-29 23:50:00", "2013-11-30 01:00:00", "4200"],  // capped at 1800
  ["19_F", "com.whatsapp", "2013-11-29 09:00:00", "2013-11-29 08:59:00", "-60"],  // end < start
  ["5_F", "com.viber.voip", "2011-01-01 10:00:00", "2011-01-01 10:00:10", "10"],  // clock reset
  ["5_F", "com.viber.voip", "2013-12-01 10:00:00", "2013-12-01 10:00:00", "0"],  // zero-length open
  ["9_M", "com.android.nfc", "2013-12-01 10:00:00", "2013-12-01 10:00:10", "10"],  // no opens at all
]

@Suite struct UbiqLogAdapterTests {
  @Test(arguments: [
    ("com.android.mms", true),
    ("com.android.htcdialer", true),
    ("com.sec.android.app.camera", true),
    ("com.htc.album", true),
    ("com.android.vending", true),
    ("com.android.chrome", true),
    ("com.whatsapp", true),
    ("com.google.android.googlequicksearchbox", true),
    ("com.android.nfc", false),
    ("com.google.android.gms", false),
    ("com.google.android.gms.unstable", false),
    ("com.tencent.mm:push", false),
    ("com.android.settings:remote", false),
    ("com.sec.android.app.launcher", false),
    ("com.anddoes.launcher", false),
    ("com.sec.android.widgetapp.dualclock", false),
    ("com.android.providers.calendar", false),
    ("com.sec.spp.push", false),
    ("com.android.deskclock", false),
    ("com.google.android.deskclock", false),
    ("jp.naver.android.npush", false),
    ("COM.SEC.ANDROID.APP.LAUNCHER", false),
  ])
  func nameFilter(name: String, kept: Bool) {
    #expect(UbiqLogAdapter.Options().keeps(process: name) == kept, "\(name)")
  }

  @Test func dropReasonsNameTheRule() {
    let o = UbiqLogAdapter.Options()
    #expect(o.dropReason(process: "com.tencent.mm:push") == "secondary process (':')")
    #expect(o.dropReason(process: "com.sec.android.app.launcher") == "contains 'launcher'")
    #expect(o.dropReason(process: "com.android.exchange") == "platform prefix 'com.android.'")
    #expect(o.dropReason(process: "com.android.mms") == nil)
  }

  @Test func optionsAreEditable() {
    var o = UbiqLogAdapter.Options()
    o.keepAppNames.append("nfc")
    o.dropSubstrings.removeAll { $0 == "nfc" }
    #expect(o.keeps(process: "com.android.nfc"))
    o.dropPrefixes.append("com.whatsapp")
    #expect(!o.keeps(process: "com.whatsapp"))
    o.dropSecondaryProcesses = false
    #expect(o.keeps(process: "com.tencent.mm:tools"))
  }

  @Test func derivesOpensFromFixture() throws {
    let dir = try temporaryDirectory()
    let out = try UbiqLogAdapter().read(path: try write(tsv(fixtureRows), "apps.tsv", in: dir))

    #expect(out.rows == 13)
    #expect(out.droppedBeforeMinimumYear == 2)
    #expect(out.droppedInconsistentTimes == 1)
    #expect(out.droppedByName == 4)
    #expect(out.keptRecords == 6)
    #expect(out.opens == 4)
    #expect(out.usersWithoutOpens == ["9_M"])
    #expect(out.droppedNames["com.android.nfc"] == 2)
    #expect(out.users.map(\.user) == ["19_F", "5_F"])

    let u = out.users[0]
    #expect(u.timeZone == .utc)
    #expect(u.start == nov29)  // midnight of the first valid record (the filtered nfc row counts)
    #expect(u.end == dec01)  // midnight after the last valid end, 2013-11-30 01:00
    #expect(u.apps == ["com.android.mms", "com.whatsapp"])
    #expect(
      u.events == [
        TraceEvent(time: nov29 + 8 * 3600, kind: .open, app: 0, value: 600),  // 08:00–08:10 merged
        TraceEvent(time: nov29 + 8 * 3600 + 660, kind: .open, app: 0, value: 120),  // 08:11–08:13 merged
        TraceEvent(time: nov29 + 23 * 3600 + 3000, kind: .open, app: 1, value: 1800),  // capped
      ])

    let v = out.users[1]
    #expect(v.start == dec01 && v.end == dec02)
    #expect(v.events == [TraceEvent(time: dec01 + 10 * 3600, kind: .open, app: 0, value: 0)])
  }

  @Test func mergeGapAndSessionCapAreConfigurable() throws {
    let dir = try temporaryDirectory()
    let path = try write(tsv(fixtureRows), "apps.tsv", in: dir)
    // A gap of 61 s also merges the 08:11 record: one mms open 08:00–08:13.
    let wide = try UbiqLogAdapter(options: .init(mergeGap: 61, maximumSession: 3600)).read(path: path)
    #expect(wide.users[0].events.map(\.value) == [780, 3600])
    // A gap of 0 merges only overlapping records: 08:00, 08:05:59, 08:11(+08:11:30).
    let none = try UbiqLogAdapter(options: .init(mergeGap: 0)).read(path: path)
    #expect(none.users[0].events.count == 4)
  }

  @Test func crlfGivesTheSameResult() throws {
    let dir = try temporaryDirectory()
    let lf = tsv(fixtureRows)
    let crlf = lf.replacingOccurrences(of: "\n", with: "\r\n")
    let a = try UbiqLogAdapter().read(path: try write(lf, "lf.tsv", in: dir))
    let b = try UbiqLogAdapter().read(path: try write(crlf, "crlf.tsv", in: dir))
    #expect(a == b)
    // No final line ending is fine too.
    let c = try UbiqLogAdapter().read(path: try write(String(crlf.dropLast(2)), "noeol.tsv", in: dir))
    #expect(a == c)
  }

  @Test func headerColumnsMayBeReorderedAndExtra() throws {
    let dir = try temporaryDirectory()
    let text = "end_local\textra\tuser_dir\tstart_local\tprocess_name\n"
      + "2013-12-01 10:05:00\tx\t2_F\t2013-12-01 10:00:00\tcom.whatsapp\n"
    let out = try UbiqLogAdapter().read(path: try write(text, "reordered.tsv", in: dir))
    #expect(out.users.count == 1)
    #expect(out.users[0].events == [TraceEvent(time: dec01 + 36_000, kind: .open, app: 0, value: 300)])
  }

  @Test(arguments: [
    // (row, field, message fragment)
    ("19_F\tcom.whatsapp\t2013-11-29 8:00:00\t2013-11-29 08:00:00\t0", "start_local", "YYYY-MM-DD HH:MM:SS"),
    ("19_F\tcom.whatsapp\t2013-11-29 08:00:00\t2013-02-30 08:00:00\t0", "end_local", "2013-02-30"),
    ("19_F\tcom.whatsapp\t2013-11-29 08:00:00", "end_local", "missing field"),
    ("\tcom.whatsapp\t2013-11-29 08:00:00\t2013-11-29 08:00:00\t0", "user_dir", "empty"),
    ("19_F\t\t2013-11-29 08:00:00\t2013-11-29 08:00:00\t0", "process_name", "empty"),
    ("19_F\tcom.whatsapp\t2013-11-29 08:00:00\t2013-11-29 08:00:00\t0\tx", "-", "more than 5"),
  ])
  func malformedRowNamesFileLineAndField(row: String, field: String, fragment: String) throws {
    let dir = try temporaryDirectory()
    let good = "19_F\tcom.whatsapp\t2013-11-29 08:00:00\t2013-11-29 08:01:00\t60"
    let path = try write(tsv([]) + good + "\r\n" + row + "\r\n" + good + "\n", "bad.tsv", in: dir)
    let e = formatError { _ = try UbiqLogAdapter().read(path: path) }
    #expect(e?.file == path)
    #expect(e?.line == 3)
    #expect(e?.field == field)
    #expect(e?.message.contains(fragment) == true, "\(e?.message ?? "no error")")
    #expect(e?.description.hasPrefix(location(path, 3, field)) == true)
  }

  @Test func missingColumnAndEmptyFileAreErrors() throws {
    let dir = try temporaryDirectory()
    let noColumn = try write("user_dir\tprocess\tstart_local\tend_local\n", "nocol.tsv", in: dir)
    let e = formatError { _ = try UbiqLogAdapter().read(path: noColumn) }
    #expect(e?.line == 1 && e?.field == "process_name")
    let empty = try write("", "empty.tsv", in: dir)
    #expect(formatError { _ = try UbiqLogAdapter().read(path: empty) }?.message.contains("no header") == true)
    let missing = dir + "/does-not-exist.tsv"
    #expect(formatError { _ = try UbiqLogAdapter().read(path: missing) }?.file == missing)
  }

  @Test func readsXzThroughXzProcess() throws {
    let dir = try temporaryDirectory()
    let plain = try write(tsv(fixtureRows), "apps.tsv", in: dir)
    let xz = Process()
    xz.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    xz.arguments = ["xz", "-k", "-f", plain]
    try xz.run()
    xz.waitUntilExit()
    try #require(xz.terminationStatus == 0, "xz is needed for this test")
    let a = try UbiqLogAdapter().read(path: plain)
    let b = try UbiqLogAdapter().read(path: plain + ".xz")
    #expect(a == b)

    // A file that is not xz data: the error names the file and xz's failure.
    let fake = try write(tsv(fixtureRows), "fake.tsv.xz", in: dir)
    let e = formatError { _ = try UbiqLogAdapter().read(path: fake) }
    #expect(e?.file == fake)
    #expect(e?.message.contains("xz -dc") == true)
  }

  @Test func malformedRowInXzStopsCleanly() throws {
    let dir = try temporaryDirectory()
    // Enough rows that xz is still writing when the bad row stops the reader.
    var rows = [[String]](
      repeating: ["1_M", "com.whatsapp", "2013-11-29 08:00:00", "2013-11-29 08:00:10", "10"], count: 2)
    rows.append(["1_M", "com.whatsapp", "bad", "2013-11-29 08:00:10", "10"])
    rows += [[String]](repeating: rows[0], count: 200_000)
    let plain = try write(tsv(rows), "big.tsv", in: dir)
    let xz = Process()
    xz.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    xz.arguments = ["xz", "-0", "-f", plain]
    try xz.run()
    xz.waitUntilExit()
    try #require(xz.terminationStatus == 0)
    let e = formatError { _ = try UbiqLogAdapter().read(path: plain + ".xz") }
    #expect(e?.line == 4 && e?.field == "start_local")
  }

  @Test func writtenTraceReadsBackUnchanged() throws {
    let dir = try temporaryDirectory()
    let adapter = UbiqLogAdapter()
    let out = try adapter.read(path: try write(tsv(fixtureRows), "apps.tsv", in: dir))
    let csv = dir + "/opens.csv"
    let writer = try TraceWriter(path: csv, comments: adapter.commentLines(input: "apps.tsv", output: out))
    for u in out.users { try writer.write(u) }
    try writer.commit()
    let text = try String(contentsOfFile: csv, encoding: .utf8)
    #expect(text.hasPrefix("# FetchLab trace"))
    #expect(text.contains("licensed CC BY 4.0"))
    #expect(text.contains("mergeGap=60s maximumSession=1800s"))
    let reader = try TraceReader(path: csv)
    var back: [UserTrace] = []
    while let u = try reader.next() { back.append(u) }
    #expect(back == out.users)
  }

  @Test func statisticsOfAHandMadeTrace() {
    let day = 86_400.0, h = 3600.0
    let u = UserTrace(
      user: "u", start: 0, end: 2 * day, apps: ["a", "b"],
      events: [
        TraceEvent(time: 0.5 * h, kind: .open, app: 0, value: 10),
        TraceEvent(time: 1.5 * h, kind: .open, app: 1, value: 20),
        TraceEvent(time: 2.5 * h, kind: .open, app: 0, value: 30),
        TraceEvent(time: day + 10 * h, kind: .open, app: 0, value: 40),
      ])
    let s = UbiqLogAdapter.Statistics(users: [u, UserTrace(user: "empty", start: 0, end: day)])
    #expect(s.participants == 1)
    #expect(s.activeUserDays == 2)
    #expect(s.opens == 4)
    #expect(s.opensPerActiveDay.median == 2)  // days with 3 and 1 opens
    #expect(s.opensPerActiveDay.mean == 2)
    #expect(s.sameAppGapMinutes.count == 2)  // a: 120 min, 1890 min
    #expect(s.sameAppGapMinutes.median == 1005)
    #expect(s.anyAppGapMinutes.median == 60)  // 60, 60, 1890
    #expect(s.topApps.map(\.app) == ["a", "b"])
    #expect(s.topApps.map(\.share) == [0.75, 0.25])
    #expect(s.topTenShare == 1)
    #expect(s.participantTopAppShare.median == 0.75)
    #expect(s.sessionSeconds.median == 25)
    #expect(s.hourShare[0] == 0.25 && s.hourShare[1] == 0.25 && s.hourShare[2] == 0.25 && s.hourShare[10] == 0.25)
    #expect(s.hourShare.reduce(0, +) == 1)
    #expect(s.markdownComparison().contains("| Opens | 96,140 | 4 |"))
    #expect(s.markdownComparison().hasPrefix("| Statistic | Published statistics (UbiqLog) | This adapter |\n"))
  }

  @Test func statisticsQuantilesAndEmptyInput() {
    let q = UbiqLogAdapter.Statistics.Summary([4, 1, 3, 2])
    #expect(abs(q.p10 - 1.3) < 1e-12 && q.median == 2.5 && abs(q.p90 - 3.7) < 1e-12)
    let s = UbiqLogAdapter.Statistics(users: [])
    #expect(s.participants == 0 && s.opens == 0 && s.activeUserDays == 0)
    #expect(s.opensPerActiveDay.median.isNaN && s.topTenShare.isNaN && s.topApps.isEmpty)
  }

  /// The shared parsed file, found relative to the package: `../shared/datasets/...`.
  static let fullDataPath: String = {
    let package = URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    return package.deletingLastPathComponent()
      .appendingPathComponent("shared/datasets/ubiqlog-apps/ubiqlog_application_parsed.tsv.xz").path
  }()

  /// The full data against the published UbiqLog statistics: 24 participants, 1,086 active
  /// user-days, 96,140 opens, 74 opens per active day (median), top-10 share
  /// 57 %, same-app gap median 25 min. Tolerances: counts ±15 %, medians
  /// ±20 %, top-10 share ±5 points.
  @Test(.enabled(
    if: FileManager.default.fileExists(atPath: UbiqLogAdapterTests.fullDataPath),
    "skipped: ../shared/datasets/ubiqlog-apps/ubiqlog_application_parsed.tsv.xz not found"))
  func fullDataMatchesReference() throws {
    let out = try UbiqLogAdapter().read(path: UbiqLogAdapterTests.fullDataPath)
    #expect(out.rows == 458_084)
    let s = UbiqLogAdapter.Statistics(users: out.users)
    #expect(s.participants == 24)
    #expect(abs(Double(s.opens) / 96_140 - 1) <= 0.15, "opens \(s.opens)")
    #expect(abs(Double(s.activeUserDays) / 1_086 - 1) <= 0.15, "active user-days \(s.activeUserDays)")
    #expect(abs(s.opensPerActiveDay.median / 74 - 1) <= 0.20, "median opens/day \(s.opensPerActiveDay.median)")
    #expect(abs(s.sameAppGapMinutes.median / 25 - 1) <= 0.20, "same-app gap \(s.sameAppGapMinutes.median)")
    #expect(abs(s.topTenShare - 0.57) <= 0.05, "top-10 share \(s.topTenShare)")
    #expect(s.topApps.first?.app == "com.android.mms")
    for u in out.users { u._checkInvariants() }
  }
}
