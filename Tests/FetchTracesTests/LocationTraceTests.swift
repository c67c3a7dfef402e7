import FetchSupport
import FetchTestSupport
import Foundation
import Testing

@testable import FetchTraces

/// `location` rows: read, written and validated like every
/// event; and the synthetic population's location wakes.
@Suite("Location rows")
struct LocationTraceTests {
  static let good = """
    user,time,event,app,value
    u1,1000,begin,,UTC
    u1,1010,location,,exit:home
    u1,1400,location,,significant
    u1,1800,location,,enter:work
    u1,1900,location,,enter
    u1,2000,location,,exit:work
    u1,2100,location,,exit
    u1,2200,location,,enter:home
    u1,3000,end,,
    u2,1000,begin,,UTC
    u2,1100,location,,enter:gym
    u2,3000,end,,

    """

  @Test("location rows decode to a transition and a region of the user's own table")
  func reads() throws {
    let users = try readAll(tempFile(Self.good, name: "location.csv"))
    let u = users[0]
    #expect(u.regions == ["home", "work"])
    let changes = u.events.map { $0.location }
    #expect(changes == [
      LocationChange(.exit, region: 0), LocationChange(.significant), LocationChange(.enter, region: 1),
      LocationChange(.enter), LocationChange(.exit, region: 1), LocationChange(.exit), LocationChange(.enter, region: 0),
    ])
    #expect(u.events.allSatisfy { $0.kind == .location && $0.app == -1 })
    // Codes: transition + 3 · (region + 1).
    #expect(u.events.map(\.value) == [5, 0, 7, 1, 8, 2, 4])
    // Region tables are per user.
    #expect(users[1].regions == ["gym"] && users[1].events[0].location == LocationChange(.enter, region: 0))
    u._checkInvariants()
  }

  @Test("a region read before is found by its bytes; an id equal as text in other bytes (NFC, NFD) is the same region")
  func regionSpellings() throws {
    let nfc = "caf\u{E9}"
    let nfd = "cafe\u{301}"
    let body = """
      user,time,event,app,value
      u1,1000,begin,,UTC
      u1,1010,location,,enter:\(nfc)
      u1,1020,location,,exit:\(nfd)
      u1,1030,location,,enter:\(nfd)
      u1,1040,location,,exit:\(nfc)
      u1,1050,location,,enter:home
      u1,1060,location,,exit:home
      u1,1070,location,,enter:\(nfd)
      u1,3000,end,,

      """
    let u = try readAll(tempFile(body, name: "location-spellings.csv"))[0]
    #expect(u.regions.count == 2 && u.regions[0] == nfc && Array(u.regions[0].utf8) == Array(nfc.utf8))
    #expect(u.regions[1] == "home")
    #expect(u.events.map { $0.location } == [
      LocationChange(.enter, region: 0), LocationChange(.exit, region: 0), LocationChange(.enter, region: 0),
      LocationChange(.exit, region: 0), LocationChange(.enter, region: 1), LocationChange(.exit, region: 1),
      LocationChange(.enter, region: 0),
    ])
  }

  @Test("writer and reader round-trip location rows exactly")
  func roundTrip() throws {
    let users = try readAll(tempFile(Self.good, name: "location.csv"))
    let out = tempFile("", name: "location-out.csv")
    let w = try TraceWriter(path: out)
    for u in users { try w.write(u) }
    try w.commit()
    let text = try String(contentsOfFile: out, encoding: .utf8)
    #expect(text == Self.good)
    #expect(try readAll(out) == users)
  }

  /// (trace body after the header, expected line, field, message fragment)
  static let bad: [(String, Int, String, String)] = [
    ("u1,10,begin,,UTC\nu1,11,location,,\nu1,20,end,,\n", 3, "value", "unknown location change ''"),
    ("u1,10,begin,,UTC\nu1,11,location,,teleport\nu1,20,end,,\n", 3, "value", "unknown location change 'teleport'"),
    ("u1,10,begin,,UTC\nu1,11,location,,Enter:home\nu1,20,end,,\n", 3, "value", "unknown location change"),
    ("u1,10,begin,,UTC\nu1,11,location,,significant:home\nu1,20,end,,\n", 3, "value", "'significant' takes no region id"),
    ("u1,10,begin,,UTC\nu1,11,location,,enter:\nu1,20,end,,\n", 3, "value", "empty region id"),
    ("u1,10,begin,,UTC\nu1,11,location,,exit:" + String(repeating: "r", count: 65) + "\nu1,20,end,,\n", 3, "value", "longer than 64"),
    ("u1,10,begin,,UTC\nu1,11,location,,\"enter:a,b\"\nu1,20,end,,\n", 3, "value", "contains a comma"),
    ("u1,10,begin,,UTC\nu1,11,location,news,enter\nu1,20,end,,\n", 3, "app", "'location' takes no app"),
    ("u1,10,begin,,UTC\nu1,12,location,,enter\nu1,11,location,,exit\nu1,20,end,,\n", 4, "time", "earlier than the previous"),
    ("u1,10,begin,,UTC\nu1,11,locations,,enter\nu1,20,end,,\n", 3, "event", "unknown event"),
  ]

  @Test("bad location rows give file:line: field: message", arguments: bad.indices)
  func malformed(_ i: Int) {
    let (body, line, field, fragment) = Self.bad[i]
    let path = tempFile("user,time,event,app,value\n" + body, name: "bad-location.csv")
    do {
      _ = try readAll(path)
      Issue.record("no error for case \(i)")
    } catch let e as TraceFormatError {
      #expect(e.file == path)
      #expect(e.line == line, "case \(i): \(e)")
      #expect(e.field == field, "case \(i): \(e)")
      #expect(e.message.contains(fragment), "case \(i): \(e)")
    } catch {
      Issue.record("unexpected error \(error)")
    }
  }

  @Test("location codes decode only from their own encoding")
  func codes() {
    for t in LocationTransition.allCases {
      for r: Int32 in [-1, 0, 1, 41] {
        let c = LocationChange(t, region: r)
        #expect(LocationChange(code: c.code) == c)
      }
    }
    #expect(LocationChange(code: -1) == nil)
    #expect(LocationChange(code: 1.5) == nil)
    #expect(LocationChange(code: .nan) == nil)
  }

  static func population(locations: Bool, users: Int = 12) -> [UserTrace] {
    var p = SyntheticPopulation.Parameters()
    p.locationWakes = locations
    return SyntheticPopulation(seed: 7, days: 14, parameters: p).generate(0..<users)
  }

  @Test("synthetic location rows leave every other row as it was, in the same order")
  func otherRowsUnchanged() {
    let with = Self.population(locations: true)
    let without = Self.population(locations: false)
    var locationRows = 0
    for (a, b) in zip(with, without) {
      #expect(a.events.filter { $0.kind != .location } == b.events)
      #expect(a.apps == b.apps && a.start == b.start && a.end == b.end)
      #expect(b.regions.isEmpty)
      locationRows += a.events.count - b.events.count
    }
    #expect(locationRows > 0)
  }

  @Test("synthetic location rows follow the day: home and work regions around commutes, significant changes at least 5 min apart")
  func followsTheDay() throws {
    var significantPerDay: [Double] = []
    var commuters = 0
    for u in Self.population(locations: true, users: 40) {
      u._checkInvariants()
      let rows = u.events.filter { $0.kind == .location }
      let changes = rows.compactMap(\.location)
      #expect(changes.count == rows.count)
      // Significant changes are at least 5 min apart.
      let sig = rows.filter { $0.location?.transition == .significant }.map(\.time)
      for (a, b) in zip(sig, sig.dropFirst()) { #expect(b - a >= 300, "\(u.user): \(a) \(b)") }
      significantPerDay.append(Double(sig.count) / u.days)
      // Region transitions alternate: after exit:X the next region row is enter:Y (the trip's end), and the
      // next exit leaves the region last entered.
      var inside: Int32? = nil
      var first = true
      for c in changes where c.transition != .significant {
        #expect(c.region >= 0)
        if c.transition == .exit {
          if !first { #expect(inside == c.region, "\(u.user): exits a region it is not in") }
          inside = nil
        } else {
          #expect(inside == nil, "\(u.user): enters twice")
          inside = c.region
        }
        first = false
      }
      if u.regions.contains("work") { commuters += 1 }
      #expect(u.regions.first == "home" || u.regions.isEmpty)
      // Leaving for work happens in the morning, local time.
      let offset: Double = if case .fixed(let o) = u.timeZone { Double(o) } else { 0 }
      for e in rows where e.location == LocationChange(.enter, region: 1) {
        let hour = ((e.time + offset).truncatingRemainder(dividingBy: 86_400)) / 3600
        #expect(hour > 3 && hour < 16, "\(u.user): arrives at work at \(hour) h")
      }
    }
    // The default commuter share is 65 %.
    #expect(commuters >= 15 && commuters <= 38, "\(commuters) commuters of 40")
    let mean = significantPerDay.reduce(0, +) / Double(significantPerDay.count)
    #expect(mean > 2 && mean < 40, "\(mean) significant changes a day")
  }

  @Test("bad location parameters are refused with their key")
  func parameters() throws {
    var p = SyntheticPopulation.Parameters()
    p.significantChangeMinMinutes = 0.5
    #expect(throws: SyntheticPopulation.ParameterError.self) { try p.validate() }
    let json = #"{"locationWakes": false, "outingMovingMinutes": 5}"#
    let q = try JSONDecoder().decode(SyntheticPopulation.Parameters.self, from: Data(json.utf8))
    #expect(q.locationWakes == false && q.outingMovingMinutes == 5)
  }
}
