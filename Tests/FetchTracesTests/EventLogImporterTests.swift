import Foundation
import Testing
import FetchTestSupport

@testable import FetchTraces

/// Imports `text` with `options`.
private func importLog(_ text: String, _ options: EventLogImporter.Options = .init(), name: String = "log.csv") throws
  -> EventLogImporter.Output
{
  try EventLogImporter(options: options).read(path: tempFile(text, name: name))
}

/// The opens of a user as (app, time, session) triples.
private func opens(_ u: UserTrace) -> [(String, Double, Double)] {
  u.events.map { (u.apps[Int($0.app)], $0.time, $0.value) }
}

/// The error `body` throws, as a `TraceFormatError`.
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

@Suite("Event-log importer and time text")
struct EventLogImporterTests {
  // 2026-01-05T00:00:00Z = 1767571200 (a Monday).
  static let day = 1_767_571_200.0

  @Test("pairs: sessions are close − open, worked by hand; window is whole UTC days")
  func pairsWorkedExample() throws {
    let log = """
      user,timestamp,app,event
      a,1767571300,news,open
      a,1767571340,news,close
      a,1767575000,chat,open
      b,1767600000,maps,open
      a,1767575090,chat,close
      b,1767600030,maps,close

      """
    let out = try importLog(log)
    #expect(out.rows == 6)
    #expect(out.timeUnit == .seconds)
    #expect(out.users.map(\.user) == ["a", "b"])
    let a = out.users[0]
    #expect(a.start == Self.day && a.end == Self.day + 86_400)
    #expect(opens(a).map(\.0) == ["news", "chat"])
    #expect(opens(a).map(\.1) == [1_767_571_300, 1_767_575_000])
    #expect(opens(a).map(\.2) == [40, 90])
    #expect(opens(out.users[1]).map(\.2) == [30])
    #expect(out.opens == 3 && out.unmatchedCloses == 0 && out.unclosedSessions == 0)
  }

  @Test("repeated open, unmatched close, never-closed session, cap and merge gap")
  func sessionRules() throws {
    let log = """
      user,timestamp,app,event
      a,1767571300,news,close
      a,1767571400,news,open
      a,1767571500,news,open
      a,1767571530,news,close
      a,1767571550,news,open
      a,1767575000,news,close
      a,1767580000,chat,open

      """
    var o = EventLogImporter.Options()
    o.maximumSession = 600
    o.unclosedSession = 5
    let out = try importLog(log, o)
    // 1400 → 1500 (ended by the repeated open), 1500 → 1530, 1550 → 5000 capped at 600, chat never closed: 5 s.
    #expect(opens(out.users[0]).map(\.2) == [100, 30, 600, 5])
    #expect(out.unmatchedCloses == 1 && out.unclosedSessions == 1 && out.cappedSessions == 1)
    o.mergeGap = 60
    let merged = try importLog(log, o)
    // The second open continues the first session; the open 20 s after its close continues it too.
    #expect(opens(merged.users[0]).map(\.1) == [1_767_571_400, 1_767_580_000])
    #expect(opens(merged.users[0]).map(\.2) == [600, 5])
    #expect(merged.mergedOpens == 2)
  }

  @Test("durations in ms, millisecond times detected, unsorted rows sorted per user")
  func durationsAndMilliseconds() throws {
    let log = """
      uid;ts;package;kind;dur
      """.replacingOccurrences(of: ";", with: ",") + "\n"
      + "x,1767571500000,b,start,2500\n"
      + "x,1767571400000,a,start,1000\n"
      + "x,1767571450000,a,scroll,0\n"
    var o = EventLogImporter.Options()
    (o.userColumn, o.timeColumn, o.appColumn, o.eventColumn) = ("uid", "ts", "package", "kind")
    o.durationColumn = "dur"
    o.durationUnit = .milliseconds
    o.openEvents = ["start"]
    o.closeEvents = []
    o.ignoredEvents = ["scroll"]
    let out = try importLog(log, o)
    #expect(out.timeUnit == .milliseconds)
    #expect(opens(out.users[0]).map(\.0) == ["a", "b"])
    #expect(opens(out.users[0]).map(\.1) == [1_767_571_400, 1_767_571_500])
    #expect(opens(out.users[0]).map(\.2) == [1, 2.5])
    #expect(out.ignoredRows == 1)
  }

  @Test("LSApp shape: TSV, ISO times without zone read in the given zone, local-midnight window")
  func lsappShapeInAZone() throws {
    let log = "user_id\tsession_id\ttimestamp\tapp_name\tevent_type\n"
      + "7\t1\t2026-01-05 08:00:00\tFacebook\tOpened\n"
      + "7\t1\t2026-01-05 08:00:10\tFacebook\tUser Interaction\n"
      + "7\t1\t2026-01-05 08:02:00\tFacebook\tClosed\n"
    var o = EventLogImporter.Options()
    (o.userColumn, o.timeColumn, o.appColumn, o.eventColumn) = ("user_id", "timestamp", "app_name", "event_type")
    (o.openEvents, o.closeEvents, o.ignoredEvents) = (["Opened"], ["Closed"], ["User Interaction", "Broken"])
    o.timeZone = .fixed(3600)
    let out = try importLog(log, o, name: "lsapp.tsv")
    #expect(out.timeUnit == .iso8601)
    let u = out.users[0]
    // 08:00 at +01:00 is 07:00 UTC; the window starts at local midnight, 23:00 UTC the day before.
    #expect(opens(u).map(\.1) == [Self.day + 7 * 3600])
    #expect(opens(u).map(\.2) == [120])
    #expect(u.start == Self.day - 3600 && u.end == Self.day + 23 * 3600)
    #expect(u.timeZone == .fixed(3600))
  }

  @Test("quotes, BOM, CRLF and blank lines are read like the plain file")
  func quotesBomCrlf() throws {
    let plain = "user,timestamp,app,event\nu,1767571300,\"news, daily\",open\nu,1767571310,\"news, daily\",close\n"
    let fancy = "\u{FEFF}user,timestamp,app,event\r\n\r\n\"u\",1767571300,\"news, daily\",\"open\"\r\nu,1767571310,\"news, daily\",close\r\n"
    let a = try importLog(plain), b = try importLog(fancy)
    #expect(a.users == b.users)
    #expect(a.users[0].apps == ["news, daily"])
  }

  @Test("bad input: file:line: field for unknown events, missing columns, bad times, ms under --time-unit s")
  func errors() throws {
    let unknown = formatError { _ = try importLog("user,timestamp,app,event\nu,1767571300,a,open\nu,1767571400,a,Broken\n") }
    #expect(unknown?.line == 3 && unknown?.field == "event")
    #expect(unknown?.message.contains("--ignore-event") == true)
    let missing = formatError { _ = try importLog("user,time,app,event\n") }
    #expect(missing?.line == 1 && missing?.field == "timestamp")
    #expect(missing?.message.contains("--time-column") == true)
    let badTime = formatError { _ = try importLog("user,timestamp,app,event\nu,yesterday,a,open\n") }
    #expect(badTime?.line == 2 && badTime?.field == "timestamp")
    var o = EventLogImporter.Options()
    o.timeUnit = .seconds
    let ms = formatError { _ = try importLog("user,timestamp,app,event\nu,1767571300000,a,open\n", o) }
    #expect(ms?.message.contains("looks like milliseconds (2026-01-05T00:01:40Z): divide by 1000") == true, "\(String(describing: ms))")
    let fields = formatError { _ = try importLog("user,timestamp,app,event\nu,1767571300,a\n") }
    #expect(fields?.line == 2)
    let quote = formatError { _ = try importLog("user,timestamp,app,event\nu,1767571300,\"a,open\n") }
    #expect(quote?.message.contains("unterminated") == true)
    o = EventLogImporter.Options()
    o.closeEvents = ["open"]
    #expect(o.problem != nil)
    #expect(formatError { _ = try importLog("user,timestamp,app,event\n", o) }?.line == 0)
  }

  @Test("a quoted app name with a line break is one record; later errors keep their line numbers")
  func quotedLineBreak() throws {
    let out = try importLog("user,timestamp,app,event\nu,1767571300,\"two\nlines\",open\nu,1767571400,a,open\n")
    let u = try #require(out.users.first)
    #expect(u.apps.contains("two\nlines") && u.apps.contains("a"))
    let bad = formatError { _ = try importLog("user,timestamp,app,event\nu,1767571300,\"two\nlines\",open\nu,yesterday,a,open\n") }
    #expect(bad?.line == 4 && bad?.field == "timestamp")
  }

  @Test("the unit guess: ISO, ≥ 1e11 is milliseconds, else seconds")
  func unitGuess() {
    #expect(EventLogImporter.guessUnit("2018-01-16 06:01:05") == .iso8601)
    #expect(EventLogImporter.guessUnit("1516082465000") == .milliseconds)
    #expect(EventLogImporter.guessUnit("1516082465") == .seconds)
    #expect(EventLogImporter.guessUnit("99999999999") == .seconds)
    #expect(EventLogImporter.guessUnit("100000000000") == .milliseconds)
  }

  @Test(
    "ISO 8601: worked values",
    arguments: [
      ("2026-01-05T00:00:00Z", 1_767_571_200.0 as Double?),
      ("2026-01-05 00:00:00z", 1_767_571_200),
      ("2026-01-05T01:00:00+01:00", 1_767_571_200),
      ("2026-01-04T19:00-0500", 1_767_571_200),
      ("2026-01-05T03:00:00.25+03", 1_767_571_200.25),
      ("2024-02-29T12:00:00,5Z", 1_709_208_000.5),
      ("1969-12-31T23:59:59Z", -1),
    ])
  func isoValues(_ text: String, _ unix: Double?) {
    #expect(TimeText.parseISO8601(text)?.unixSeconds == unix)
  }

  @Test("ISO 8601: rejected forms", arguments: [
    "2026-02-30T00:00:00Z", "2026-01-05T24:00:00Z", "2026-01-05T00:60Z", "2026-01-05", "2026-1-05T00:00Z",
    "2026-01-05T00:00:00.Z", "2026-01-05T00:00:00+1", "2026-01-05T00:00:00 ", "2026-01-05X00:00:00Z",
  ])
  func isoRejects(_ text: String) {
    #expect(TimeText.parseISO8601(text) == nil)
  }

  @Test("ISO without zone keeps wall time and no offset; isoUTC inverts it")
  func isoWallTime() {
    let t = TimeText.parseISO8601("2018-01-16 06:01:05")
    #expect(t?.offset == nil && t?.unixSeconds == nil)
    #expect(t?.wallSeconds == 1_516_082_465)
    #expect(TimeText.isoUTC(1_516_082_465) == "2018-01-16T06:01:05Z")
    #expect(TimeText.isoUTC(-1) == "1969-12-31T23:59:59Z")
  }

  @Test("implausible seconds: the unit each magnitude looks like")
  func implausibleHints() {
    #expect(TimeText.implausibleSecondsMessage(1_767_571_200_000).contains("looks like milliseconds (2026-01-05T00:00:00Z): divide by 1000"))
    #expect(TimeText.implausibleSecondsMessage(1_767_571_200_000_000).contains("microseconds"))
    #expect(TimeText.implausibleSecondsMessage(1_767_571_200_000_000_000).contains("nanoseconds"))
    #expect(!TimeText.implausibleSecondsMessage(1e300).contains("looks like"))
  }

  @Test("trace reader: ISO 8601 times equal Unix seconds; a zoneless ISO time and ms times are refused with a hint")
  func traceReaderTimes() throws {
    let unix = "user,time,event,app,value\nu,1767571200,begin,,UTC\nu,1767571260.5,open,a,3\nu,1767657600,end,,\n"
    let iso = "user,time,event,app,value\nu,2026-01-05T00:00:00Z,begin,,UTC\n"
      + "u,2026-01-05T01:01:00.5+01:00,open,a,3\nu,2026-01-06 00:00:00Z,end,,\n"
    #expect(try readAll(tempFile(unix)) == readAll(tempFile(iso)))
    let zoneless = formatError { _ = try readAll(tempFile(iso.replacingOccurrences(of: "00.5+01:00", with: "00.5"))) }
    #expect(zoneless?.line == 3 && zoneless?.field == "time")
    #expect(zoneless?.message.contains("has no zone") == true)
    let ms = formatError { _ = try readAll(tempFile(unix.replacingOccurrences(of: "1767571260.5", with: "1767571260500"))) }
    #expect(ms?.line == 3 && ms?.field == "time")
    #expect(ms?.message.contains("looks like milliseconds") == true, "\(String(describing: ms))")
  }
}
