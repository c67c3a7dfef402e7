import FetchSupport
import FetchTestSupport
import Foundation
import Testing

@testable import FetchTraces

/// Imports the CSV `text` with `options`.
private func importCSV(_ text: String, _ options: EventLogImporter.Options = .init()) throws -> EventLogImporter.Output {
  try EventLogImporter(options: options).read(path: tempFile(text, name: "log.csv"))
}

@Suite("Event-log importer: a zone per user, clean durations, bounded names")
struct EventLogZoneTests {
  @Test("two users whose ISO times carry different constant offsets get those offsets as zones and local-midnight windows")
  func offsetsPerUser() throws {
    let log = """
      user,timestamp,app,event
      ny,2024-03-11T09:00:00-05:00,mail,open
      ny,2024-03-11T09:05:00-05:00,mail,close
      vie,2024-03-11T09:00:00+01:00,news,open
      vie,2024-03-11T09:02:00+01:00,news,close

      """
    let out = try importCSV(log)
    #expect(out.warnings.isEmpty)
    let ny = try #require(out.users.first { $0.user == "ny" })
    let vie = try #require(out.users.first { $0.user == "vie" })
    #expect(ny.timeZone == .fixed(-5 * 3600) && vie.timeZone == .fixed(3600))
    // 2024-03-11T14:00:00Z = 1710165600: the same instant as written.
    #expect(ny.events[0].time == 1_710_165_600 && ny.events[0].value == 300)
    // Windows start at local midnight: 2024-03-11T00:00-05:00 and T00:00+01:00.
    #expect(ny.start == 1_710_115_200 + 5 * 3600 && vie.start == 1_710_115_200 - 3600)
  }

  @Test("an IANA --time-zone that agrees with offsets across daylight saving time is kept; one that disagrees is not")
  func ianaZoneKept() throws {
    // New York: EST (-05:00) until 2024-03-10, EDT (-04:00) after.
    let log = """
      user,timestamp,app,event
      u,2024-03-08T09:00:00-05:00,mail,open
      u,2024-03-08T09:01:00-05:00,mail,close
      u,2024-03-12T09:00:00-04:00,mail,open
      u,2024-03-12T09:01:00-04:00,mail,close

      """
    var o = EventLogImporter.Options()
    o.timeZone = .named("America/New_York")
    let kept = try importCSV(log, o)
    #expect(kept.users[0].timeZone == .named("America/New_York") && kept.warnings.isEmpty)
    o.timeZone = .named("Europe/Vienna")
    let other = try importCSV(log, o)
    #expect(other.users[0].timeZone == .fixed(-5 * 3600))
    #expect(other.warnings.count == 1)
    #expect(other.warnings[0].contains("log.csv:4: timestamp: user 'u': the offset changes from -05:00 to -04:00"), "\(other.warnings)")
  }

  @Test("--zone-column: each user's zone is its first row's; a change is a warning with its line; an unknown zone an error")
  func zoneColumn() throws {
    let log = """
      user,timestamp,app,event,tz
      a,2024-03-11 09:00:00,mail,open,America/New_York
      a,2024-03-11 09:05:00,mail,close,America/New_York
      b,2024-03-11 09:00:00,news,open,+05:30
      b,2024-03-11 09:01:00,news,close,+05:30
      a,2024-03-11 10:00:00,mail,open,Europe/Vienna

      """
    var o = EventLogImporter.Options()
    o.zoneColumn = "tz"
    let out = try importCSV(log, o)
    let a = try #require(out.users.first { $0.user == "a" })
    let b = try #require(out.users.first { $0.user == "b" })
    #expect(a.timeZone == .named("America/New_York") && b.timeZone == .fixed(5 * 3600 + 1800))
    // Wall-clock times read in each row's zone: 09:00 EDT = 13:00Z, 09:00 +05:30 = 03:30Z, and a's
    // last row 10:00 in Vienna = 09:00Z, its first open.
    #expect(a.events.map(\.time) == [1_710_147_600, 1_710_162_000] && b.events[0].time == 1_710_127_800)
    #expect(out.warnings.count == 1 && out.warnings[0].contains("log.csv:6: tz: user 'a' changes zone"), "\(out.warnings)")
    let bad = log.replacingOccurrences(of: "+05:30", with: "Mars/Olympus")
    #expect(throws: TraceFormatError.self) { try importCSV(bad, o) }
    do {
      _ = try importCSV(bad, o)
    } catch {
      #expect("\(error)".contains("log.csv:4: tz: unknown time zone 'Mars/Olympus'"), "\(error)")
    }
    o.zoneColumn = "zone"
    #expect(throws: TraceFormatError.self) { try importCSV(log, o) }
  }

  @Test("sessions from millisecond times are written to the millisecond, without binary noise")
  func durationsToTheMillisecond() throws {
    let log = "user,timestamp,app,event\nu,1767571200123,a,open\nu,1767571494973,a,close\n"
    let out = try importCSV(log)
    #expect(out.users[0].events[0].value == 294.85)
    #expect(CSV.number(out.users[0].events[0].value) == "294.85")
  }

  @Test("the importer refuses what the reader would: a long or control-character name, a CR-only file, with a short excerpt")
  func refusesWhatTheReaderRefuses() throws {
    let long = String(repeating: "x", count: 300)
    for (log, expected) in [
      ("user,timestamp,app,event\nu,1767571200,\(long),open\n", "log.csv:2: app: app name of 300 bytes is longer than 256"),
      ("user,timestamp,app,event\nu,1767571200,\"a\u{0}\",open\n", "log.csv:2: app: app name 'a\\u{0}' contains a control character"),
      ("user,timestamp,app,event\r" + String(repeating: "u,1767571200,a,open\r", count: 5000), "log.csv:1: lines end in CR alone"),
      ("user,timestamp,app,event\nu,1e300,a,open\n", "log.csv:2: timestamp: time '1e300' ms is outside"),
    ] {
      do {
        _ = try importCSV(log)
        Issue.record("accepted: \(log.prefix(60))")
      } catch {
        #expect("\(error)".contains(expected), "\(error)")
        #expect("\(error)".count < 500)
      }
    }
  }
}
