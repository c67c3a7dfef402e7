import FetchReports
import FetchTestSupport
import FetchTraces
import Foundation
import Testing

/// The hour-of-day chart counts each user's opens in the user's local time.
@Suite("Hour of day in local time")
struct LocalHourTests {
  @Test("two users opening at 09:00 local, 8 h apart in UTC, both count at hour 9; without zones, UTC")
  func localHours() throws {
    let dir = Scratch.directory("local-hours")
    // 2026-01-05 09:00 in UTC+8 is 01:00 UTC; in UTC-5 (New York, winter) 14:00 UTC.
    let day = 1_767_571_200.0  // 2026-01-05T00:00:00Z
    let rows = [
      "user,app,policy,time,age_s,aoi_s,fresh",
      "east,a,never,\(day + 1 * 3600),0,0,1",
      "west,a,never,\(day + 14 * 3600),0,0,1",
    ]
    try (rows.joined(separator: "\n") + "\n").write(toFile: dir + "/opens.csv", atomically: true, encoding: .utf8)
    let zones: [String: [String: TraceTimeZone]] = ["": ["east": .fixed(8 * 3600), "west": .named("America/New_York")]]
    let local = try RunReport.readEvents(opensPath: dir + "/opens.csv", fetchesPath: nil, timeZones: zones)
    #expect(local.opensByHour[""]![9] == 2)
    let utc = try RunReport.readEvents(opensPath: dir + "/opens.csv", fetchesPath: nil)
    #expect(utc.opensByHour[""]![1] == 1 && utc.opensByHour[""]![14] == 1 && utc.opensByHour[""]![9] == 0)
  }
}
