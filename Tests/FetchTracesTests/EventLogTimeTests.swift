import FetchSupport
import FetchTestSupport
import Foundation
import Testing

@testable import FetchTraces

/// Imports the CSV `text` with `options`.
private func importCSV(_ text: String, _ options: EventLogImporter.Options = .init()) throws -> EventLogImporter.Output {
  try EventLogImporter(options: options).read(path: tempFile(text, name: "log.csv"))
}

/// The error an import of `text` throws, as text ("" when it succeeds).
private func importError(_ text: String, _ options: EventLogImporter.Options = .init()) -> String {
  do {
    _ = try importCSV(text, options)
    return ""
  } catch {
    return "\(error)"
  }
}

@Suite("Event-log importer: local times that do not exist or occur twice, zones per row, one time unit")
struct EventLogTimeTests {
  static func newYork() -> EventLogImporter.Options {
    var o = EventLogImporter.Options()
    o.timeZone = .named("America/New_York")
    return o
  }

  @Test("a local time in the hour skipped when daylight saving time starts is refused with its line")
  func gapRefused() {
    // New York, 2024-03-10: clocks go from 02:00 EST straight to 03:00 EDT.
    let log = "user,timestamp,app,event\nu,2024-03-10 01:30:00,mail,open\nu,2024-03-10 02:30:00,mail,close\n"
    let e = importError(log, Self.newYork())
    #expect(e.contains("log.csv:3: timestamp: local time '2024-03-10 02:30:00' does not exist in America/New_York"), "\(e)")
    #expect(e.contains("from -05:00 to -04:00"), "\(e)")
    // Either side of the gap reads as before: 01:59 EST = 06:59Z, 03:00 EDT = 07:00Z.
    let ok = "user,timestamp,app,event\nu,2024-03-10 01:59:00,mail,open\nu,2024-03-10 03:00:00,mail,close\n"
    let out = try? importCSV(ok, Self.newYork())
    #expect(out?.users.first?.events.first?.time == 1_710_053_940)
    #expect(out?.users.first?.events.first?.value == 60)
  }

  @Test("a local time in the hour repeated when it ends is read as its first occurrence, warned with its line and counted")
  func foldWarned() throws {
    // New York, 2024-11-03: 01:00–02:00 happens in EDT (-04:00), then again in EST (-05:00).
    let log = "user,timestamp,app,event\nu,2024-11-03 00:50:00,mail,open\nu,2024-11-03 01:30:00,mail,close\n"
      + "u,2024-11-03 01:40:00,news,open\nu,2024-11-03 03:00:00,news,close\n"
    var o = Self.newYork()
    o.maximumSession = 86_400
    let out = try importCSV(log, o)
    #expect(out.ambiguousTimes == 2)
    #expect(out.warnings.count == 1)
    #expect(out.warnings[0].contains("log.csv:3: timestamp: user 'u': local time '2024-11-03 01:30:00' occurs twice in America/New_York"), "\(out.warnings)")
    // 00:50 EDT = 04:50Z; 01:30 EDT (the first) = 05:30Z: a 40 min session.
    #expect(out.users[0].events[0].time == 1_730_609_400 && out.users[0].events[0].value == 2_400)
    // 01:40 EDT = 05:40Z to 03:00 EST = 08:00Z.
    #expect(out.users[0].events[1].value == 8_400)
  }

  @Test("resolving wall-clock times: unique, in a fold (both instants), in a gap (both offsets)")
  func resolveWallClock() {
    var ny = LocalClock(.named("America/New_York"))
    let fold = 1_730_597_400.0  // 2024-11-03 01:30 as wall seconds
    #expect(EventLogImporter.resolveWallClock(fold, &ny) == .ambiguous(fold + 4 * 3600, fold + 5 * 3600))
    let gap = 1_710_037_800.0  // 2024-03-10 02:30
    #expect(EventLogImporter.resolveWallClock(gap, &ny) == .gap(-5 * 3600, -4 * 3600))
    #expect(EventLogImporter.resolveWallClock(gap + 3600, &ny) == .unique(gap + 3600 + 4 * 3600))
    var fixed = LocalClock(.fixed(3600))
    #expect(EventLogImporter.resolveWallClock(gap, &fixed) == .unique(gap - 3600))
  }

  @Test("--zone-column: each row's local time is read in its own row's zone; the change is warned with both offsets")
  func zonePerRow() throws {
    let log = """
      user,timestamp,app,event,tz
      a,2024-07-01 09:00:00,mail,open,Europe/Berlin
      a,2024-07-01 09:10:00,mail,close,Europe/Berlin
      a,2024-07-02 09:00:00,news,open,America/New_York
      a,2024-07-02 09:05:00,news,close,America/New_York

      """
    var o = EventLogImporter.Options()
    o.zoneColumn = "tz"
    let out = try importCSV(log, o)
    let a = try #require(out.users.first)
    #expect(a.timeZone == .named("Europe/Berlin"))
    // 09:00 CEST = 07:00Z on 07-01; 09:00 EDT = 13:00Z on 07-02 (read in Berlin it would be 07:00Z).
    #expect(a.events.map(\.time) == [1_719_817_200, 1_719_925_200])
    #expect(a.events.map(\.value) == [600, 300])
    #expect(out.warnings.count == 1)
    #expect(out.warnings[0].contains("log.csv:4: tz: user 'a' changes zone from Europe/Berlin (+02:00 at 2024-07-02T13:00:00Z) to America/New_York (-04:00)"), "\(out.warnings)")
  }

  @Test("one unit per log: a row in seconds after rows in milliseconds is refused, naming the first row's line")
  func mixedUnits() {
    let log = "user,timestamp,app,event\nu,1704067200000,a,open\nu,1704067260,a,close\n"
    let e = importError(log)
    #expect(e.contains("log.csv:3: timestamp: time '1704067260' read as milliseconds (the unit of the log's first time, line 2) is 1970-01-20"), "\(e)")
    #expect(e.contains("it looks like seconds (2024-01-01T00:01:00Z)"), "\(e)")
    var ms = EventLogImporter.Options()
    ms.timeUnit = .milliseconds
    #expect(importError(log, ms).contains("log.csv:3: timestamp: time '1704067260' read as milliseconds is 1970-01-20"))
    // The other order: a row in milliseconds after rows in seconds is past 2100 as seconds.
    let reverse = "user,timestamp,app,event\nu,1704067200,a,open\nu,1704067260000,a,close\n"
    #expect(importError(reverse).contains("log.csv:3: timestamp: time 1704067260000 is not a plausible Unix time in seconds: it looks like milliseconds"))
  }

  @Test("the number grammar: hexadecimal times and durations are refused")
  func hexRefused() {
    #expect(importError("user,timestamp,app,event\nu,0x69594D00,a,open\n").contains("log.csv:2: timestamp: expected a number of seconds, found '0x69594D00'"))
    // A week date is no number either: the message names the accepted time forms.
    let week = importError("user,timestamp,app,event\nu,2024-W10-1,a,open\n")
    #expect(week.contains("log.csv:2: timestamp: expected a number of seconds, found '2024-W10-1': '2024-W10-1' is not a time: the accepted forms"), "\(week)")
    var iso = EventLogImporter.Options()
    iso.timeUnit = .iso8601
    #expect(importError("user,timestamp,app,event\nu,2024-W10-1 08:00,a,open\n", iso).contains("(week dates such as 2026-W02-1"))
    var o = EventLogImporter.Options()
    o.durationColumn = "d"
    o.closeEvents = []
    #expect(importError("user,timestamp,app,event,d\nu,1767571200,a,open,0x10\n", o).contains("log.csv:2: d: expected a duration"))
  }
}
