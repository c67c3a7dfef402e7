import FetchSupport
import FetchTestSupport
import Foundation
import Testing

@testable import FetchTraces

/// Writes `text` to a temporary file and returns its path.
func tempFile(_ text: String, name: String = "trace.csv") -> String {
  let path = Scratch.directory("trace") + "/" + name
  try! text.write(toFile: path, atomically: true, encoding: .utf8)
  return path
}

/// Reads every user of a trace file.
func readAll(_ path: String) throws -> [UserTrace] {
  let r = try TraceReader(path: path)
  var out: [UserTrace] = []
  while let u = try r.next() { out.append(u) }
  return out
}

@Suite("Trace reader")
struct TraceReaderTests {
  static let good = """
    # a comment
    user,time,event,app,value
    u1,1000,begin,,+01:00
    u1,1000,network,,wifi
    u1,1010.5,open,news,35
    u1,1020,wake,,3
    u1,1030,battery,,54.5
    u1,1040,charge_start,,
    u1,1050,update,news,
    u1,1060,charge_end,,
    u1,1070,network,,lte
    u1,1080,open,"mail, work",0
    u1,2000,end,,
    u2,500,begin,,Europe/Vienna
    u2,600,end,,

    """

  @Test("reads every event kind, quoted fields and comments")
  func readsGoodTrace() throws {
    let users = try readAll(tempFile(Self.good))
    #expect(users.count == 2)
    let u = users[0]
    #expect(u.user == "u1" && u.start == 1000 && u.end == 2000)
    #expect(u.timeZone == .fixed(3600))
    #expect(u.apps == ["news", "mail, work"])
    #expect(u.events.map(\.kind) == [.network, .open, .wake, .battery, .chargeStart, .update, .chargeEnd, .network, .open])
    #expect(u.events[0].network == .wifi && u.events[7].network == .lte)
    #expect(u.events[1].value == 35 && u.events[1].time == 1010.5)
    #expect(u.events[2].app == -1 && u.events[3].value == 54.5)
    #expect(users[1].timeZone == .named("Europe/Vienna") && users[1].events.isEmpty)
    u._checkInvariants()
  }

  @Test("writer and reader round-trip exactly")
  func roundTrip() throws {
    let users = try readAll(tempFile(Self.good))
    let out = tempFile("", name: "out.csv")
    let w = try TraceWriter(path: out, comments: ["round trip", "second line"])
    for u in users { try w.write(u) }
    try w.commit()
    #expect(try readAll(out) == users)
  }

  @Test("names with commas, quotes and line breaks round-trip (one CSV quoting rule for writer and reader)")
  func quotedNamesRoundTrip() throws {
    var u = UserTrace(user: "user \"one\",\nsecond line", start: 1_767_571_200, end: 1_767_657_600)
    let app = u.appIndex("news,\r\nand \"more\"")
    u.events = [TraceEvent(time: 1_767_575_000, kind: .open, app: app, value: 3)]
    let out = tempFile("", name: "quoted.csv")
    let w = try TraceWriter(path: out)
    try w.write(u)
    try w.write(UserTrace(user: "u2", start: 1_767_571_200, end: 1_767_657_600))
    try w.commit()
    let back = try readAll(out)
    #expect(back.count == 2 && back[0] == u && back[1].user == "u2")
  }

  @Test("an uncommitted writer leaves no file")
  func atomicWriter() throws {
    let path = tempFile("", name: "never.csv")
    try FileManager.default.removeItem(atPath: path)
    do {
      let w = try TraceWriter(path: path)
      try w.write(UserTrace(user: "x", start: 0, end: 1))
    }
    #expect(!FileManager.default.fileExists(atPath: path))
  }

  /// (trace body after the header, expected line, field, message fragment)
  static let bad: [(String, Int, String, String)] = [
    ("u1,10,begin,,UTC\nu1,5,open,a,1\nu1,20,end,,\n", 3, "time", "earlier than the previous"),
    ("u1,10,begin,,UTC\nu1,x,open,a,1\nu1,20,end,,\n", 3, "time", "decimal number"),
    ("u1,10,begin,,UTC\nu1,11,open,a,NaN\nu1,20,end,,\n", 3, "value", "decimal number"),
    ("u1,10,begin,,UTC\nu1,11,open,a,-1\nu1,20,end,,\n", 3, "value", "outside"),
    ("u1,10,begin,,UTC\nu1,11,open,,5\nu1,20,end,,\n", 3, "app", "needs an app"),
    ("u1,10,begin,,UTC\nu1,11,fly,a,5\nu1,20,end,,\n", 3, "event", "unknown event"),
    ("u1,10,begin,,UTC\nu1,11,network,,satellite\nu1,20,end,,\n", 3, "value", "unknown network"),
    ("u1,10,begin,,UTC\nu1,11,battery,,140\nu1,20,end,,\n", 3, "value", "outside 0...100"),
    ("u1,10,begin,,Mars/Olympus\nu1,20,end,,\n", 2, "value", "unknown time zone"),
    ("u1,10,begin,,UTC\nu1,11,open,a\nu1,20,end,,\n", 3, "-", "expected 5 fields"),
    ("u1,10,begin,,UTC\nu2,11,open,a,1\n", 3, "user", "before user 'u1' has its 'end' row"),
    ("u1,10,begin,,UTC\nu1,20,end,,\nu1,30,begin,,UTC\nu1,40,end,,\n", 4, "user", "appears again"),
    ("u1,10,open,a,1\n", 2, "event", "before any 'begin'"),
    ("u1,10,begin,,UTC\nu1,11,open,a,1\n", 3, "-", "no 'end' row"),
    ("u1,10,begin,,UTC\nu1,11,open,\"a,1\nu1,20,end,,\n", 3, "-", "unterminated quoted field"),
    ("u1,10,begin,,UTC\nu1,11,charge_start,,1\nu1,20,end,,\n", 3, "value", "takes no value"),
    ("u1,10,begin,,UTC\nu1,11,update,a,-5\nu1,20,end,,\n", 3, "value", "item size"),
    ("u1,10,begin,,UTC\nu1,11,update,a,big\nu1,20,end,,\n", 3, "value", "decimal number"),
    ("u1,10,begin,,UTC\nu1,11,update,a,2e12\nu1,20,end,,\n", 3, "value", "outside 0...1e12"),
    ("u1,10,begin,,UTC\nu1,1e300,open,a,1\nu1,20,end,,\n", 3, "time", "is outside 1970-01-01...2100-01-01"),
  ]

  @Test("malformed traces give file:line: field: message", arguments: bad.indices)
  func malformed(_ i: Int) {
    let (body, line, field, fragment) = Self.bad[i]
    let path = tempFile("user,time,event,app,value\n" + body)
    do {
      _ = try readAll(path)
      Issue.record("no error for case \(i)")
    } catch let e as TraceFormatError {
      #expect(e.file == path)
      #expect(e.line == line, "case \(i): \(e)")
      #expect(e.field == field, "case \(i): \(e)")
      #expect(e.message.contains(fragment), "case \(i): \(e)")
      #expect(e.description.hasPrefix(location(path, line, field)))
    } catch {
      Issue.record("unexpected error \(error)")
    }
  }

  @Test("missing header, empty file, invalid UTF-8 and over-long lines are errors")
  func structuralErrors() throws {
    #expect(throws: TraceFormatError.self) { try readAll(tempFile("")) }
    #expect(throws: TraceFormatError.self) { try readAll(tempFile("a,b,c\n")) }
    let bytes: [UInt8] = Array("user,time,event,app,value\nu1,10,begin,,UTC\nu1,11,open,".utf8) + [0xFF, 0xFE] + Array(",1\nu1,20,end,,\n".utf8)
    let p = tempFile("")
    try Data(bytes).write(to: URL(fileURLWithPath: p))
    #expect(throws: TraceFormatError.self) { try readAll(p) }
    let long = "user,time,event,app,value\nu1,10,begin,,UTC\nu1,11,open," + String(repeating: "x", count: TraceReader.maxLineBytes + 10) + ",1\n"
    do {
      _ = try readAll(tempFile(long))
      Issue.record("no error for a long line")
    } catch let e as TraceFormatError {
      #expect(e.line == 3 && e.message.contains("longer than"))
    }
  }

  @Test("comments only before the header: a user id may start with '#'")
  func hashUser() throws {
    let users = try readAll(tempFile("# comment\nuser,time,event,app,value\n#u,10,begin,,UTC\n#u,20,end,,\n"))
    #expect(users.map(\.user) == ["#u"])
  }

  @Test("CRLF line endings and a missing final newline are accepted")
  func lineEndings() throws {
    let users = try readAll(tempFile("user,time,event,app,value\r\nu1,10,begin,,UTC\r\nu1,11,open,a,1\r\nu1,20,end,,"))
    #expect(users.count == 1 && users[0].events.count == 1)
  }

  @Test("fast decimal parsing agrees with Double(String)", arguments: ["0", "1", "-2.5", "1700000000.123", "0.000001", "123456789012345678", "9007199254740993"])
  func fastDecimal(_ s: String) throws {
    let parsed = TraceReader.fastDecimal(Array(s.utf8))
    if let parsed { #expect(parsed == Double(s)!) }
  }
}

@Suite("Time zones and CSV")
struct TimeZoneAndCSVTests {
  @Test("offsets parse and print canonically")
  func offsets() {
    #expect(TraceTimeZone(parsing: "+05:30") == .fixed(19_800))
    #expect(TraceTimeZone(parsing: "-08:00")?.description == "-08:00")
    #expect(TraceTimeZone(parsing: "UTC") == .utc)
    #expect(TraceTimeZone(parsing: "+25:00") == nil)
    #expect(TraceTimeZone(parsing: "Nowhere/City") == nil)
  }

  @Test("local clock: hour of day and day of week, with DST for IANA zones")
  func localClock() {
    var c = LocalClock(.fixed(3600))
    // 1970-01-05 00:00 UTC was a Monday; +01:00 makes it 01:00 local.
    #expect(c.dayOfWeek(4 * 86_400) == 0)
    #expect(abs(c.hourOfDay(4 * 86_400) - 1) < 1e-9)
    var v = LocalClock(.named("Europe/Vienna"))
    // 2026-01-15 12:00 UTC is 13:00 CET; 2026-07-15 12:00 UTC is 14:00 CEST.
    #expect(abs(v.hourOfDay(1_768_478_400) - 13) < 1e-9)
    #expect(abs(v.hourOfDay(1_784_116_800) - 14) < 1e-9)
  }

  @Test("local clock: an offset holds until the zone's next change (New York, 2026-03-08 07:00 UTC), for ever when fixed")
  func offsetSpan() {
    var ny = LocalClock(.named("America/New_York"))
    let change = 1_772_953_200.0
    let before = ny.offsetSpan(at: change - 3 * 86_400)
    #expect(before.offset == -18_000 && before.until == change)
    #expect(ny.offset(at: change - 1) == -18_000 && ny.offset(at: change) == -14_400)
    // Asked again inside the span (the clock's cached answer), the same span.
    let again = ny.offsetSpan(at: change - 60)
    #expect(again.offset == -18_000 && again.until == change)
    let after = ny.offsetSpan(at: change)
    #expect(after.offset == -14_400 && after.until > change + 200 * 86_400)
    var fixed = LocalClock(.fixed(-18_000))
    #expect(fixed.offsetSpan(at: change) == (offset: -18_000, until: .infinity))
  }

  @Test("CSV quoting follows RFC 4180; numbers are locale-free")
  func csv() {
    #expect(CSV.field("plain") == "plain")
    #expect(CSV.field("a,b") == "\"a,b\"")
    #expect(CSV.field("say \"hi\"") == "\"say \"\"hi\"\"\"")
    #expect(CSV.field("two\r\nlines") == "\"two\r\nlines\"")
    #expect(CSV.number(42) == "42")
    #expect(CSV.number(-0.5) == "-0.5")
    #expect(CSV.number(1.0 / 3, decimals: 3) == "0.333")
    #expect(CSV.number(.nan) == "NaN" && CSV.number(nil) == "")
  }

  @Test("SplitMix64 streams are stable and keyed")
  func rng() {
    var a = SplitMix64(seed: 1, keys: "x", "y")
    var b = SplitMix64(seed: 1, keys: "x", "y")
    var c = SplitMix64(seed: 1, keys: "x", "z")
    let va = (0..<4).map { _ in a.next() }
    #expect(va == (0..<4).map { _ in b.next() })
    #expect(va != (0..<4).map { _ in c.next() })
    // Fixed value: guards against accidental changes to the generator.
    var d = SplitMix64(seed: 0)
    #expect(d.next() == 0xE220_A839_7B1D_CDAF)
    #expect(StableHash.fnv1a("") == 0xCBF2_9CE4_8422_2325)
  }

  @Test("error locations: file:line: field: message; no line 0 and no field '-' in a message")
  func errorLocations() {
    #expect(TraceFormatError(file: "t.csv", line: 3, field: "time", message: "m").description == "t.csv:3: time: m")
    #expect(TraceFormatError(file: "t.csv", line: 3, field: "-", message: "m").description == "t.csv:3: m")
    #expect(TraceFormatError(file: "t.csv", line: 0, field: "-", message: "m").description == "t.csv: m")
    #expect(TraceFormatError(file: "t\u{1B}.csv", line: 0, field: "a", message: "m").description == "t\\u{1B}.csv: a: m")
  }
}

/// The location prefix of a ``TraceFormatError`` description:
/// `file:line: field: `, without `line` when 0 and without `field` when `-`.
func location(_ file: String, _ line: Int, _ field: String) -> String {
  (line > 0 ? "\(file):\(line): " : "\(file): ") + (field == "-" ? "" : "\(field): ")
}

@Suite("Trace reader fast paths")
struct TraceReaderFastPathTests {
  @Test("decimals of every length and dot position parse exactly like Double(String)")
  func decimals() {
    var rng = SplitMix64(seed: 13, keys: "decimals")
    for _ in 0..<20_000 {
      let digits = 1 + Int(rng.uniform() * 17)
      var s = (0..<digits).map { _ in String(Int(rng.uniform() * 10)) }.joined()
      if rng.uniform() < 0.7 { s.insert(".", at: s.index(s.startIndex, offsetBy: Int(rng.uniform() * Double(digits + 1)))) }
      if rng.uniform() < 0.2 { s = "-" + s }
      // nil (the slow path) only where the mantissa may exceed 2^53.
      let parsed = TraceReader.fastDecimal(Array(s.utf8))
      #expect(parsed == Double(s) || (parsed == nil && digits >= 16), "\(s)")
      if parsed != nil && parsed != Double(s) { return }
    }
    // Fractions of 1 to 8 digits in fields of at least 8 bytes are read a
    // word at a time: a wrong byte anywhere in them is still refused.
    for good in ["1700000000.5", "17000000.12345678", "12345.678", "1234567.8", "-1700000000.042", "12345678."] {
      #expect(TraceReader.fastDecimal(Array(good.utf8)) == Double(good)!, "\(good)")
    }
    for bad in [
      "1234567a", "12345678a", "1234 5678", "12345678.9.1", "-", ".", "1e5", "12345678-", "1700000000.12x",
      "1700000000.x23", "17000000.1-3", "1234567.8/", "1234567.:", "12345.6789012a",
    ] {
      #expect(TraceReader.fastDecimal(Array(bad.utf8)) == nil, "\(bad)")
    }
  }

  @Test("fields of every length: commas and quotes anywhere in an 8-byte word")
  func fieldLengths() throws {
    var text = "user,time,event,app,value\n"
    var want: [(user: String, app: String, value: Double)] = []
    for k in 0..<40 {
      let user = "u\(k)" + String(repeating: "x", count: k % 11)
      let app = String(repeating: "a", count: 1 + k % 13) + (k % 5 == 0 ? ",b" : "")
      let value = Double(k % 7) + 0.25
      let appField = app.contains(",") ? "\"" + app + "\"" : app
      text += "\(user),\(1000 + k),begin,,UTC\n\(user),\(1000 + k),open,\(appField),\(value)\n\(user),\(2000 + k),end,,\n"
      want.append((user, app, value))
    }
    let users = try readAll(tempFile(text))
    #expect(users.count == want.count)
    for (u, w) in zip(users, want) {
      #expect(u.user == w.user && u.apps == [w.app] && u.events.map(\.value) == [w.value])
    }
    // Lines of every length from 20 to about 100 bytes (the split reads
    // lines of 8 to 64 bytes by a bit per comma, longer ones word by word),
    // with and without a quoted field, and a comma in the last word.
    text = "user,time,event,app,value\n"
    want = []
    for k in 0..<80 {
      let app = String(repeating: "b", count: 1 + k) + (k % 3 == 0 ? ",c" : "")
      let appField = app.contains(",") ? "\"" + app + "\"" : app
      let value = Double(k) + 0.5
      text += "v\(k),1000,begin,,UTC\nv\(k),1001,open,\(appField),\(value)\nv\(k),1002,end,,\n"
      want.append(("v\(k)", app, value))
    }
    let long = try readAll(tempFile(text))
    #expect(long.count == want.count)
    for (u, w) in zip(long, want) {
      #expect(u.user == w.user && u.apps == [w.app] && u.events.map(\.value) == [w.value], "\(w.user)")
    }
    for (row, message) in [("u1,11,open,abcdefgh", "found 4"), ("u1,11,open,\(String(repeating: "a", count: 60)),1,x", "found more than 5")] {
      let text = "user,time,event,app,value\nu1,10,begin,,UTC\n\(row)\nu1,20,end,,\n"
      do {
        _ = try readAll(tempFile(text))
        Issue.record("\(row) was read")
      } catch let e as TraceFormatError {
        #expect(e.description.contains(":3:") && e.description.contains(message), "\(e)")
      }
    }
    let six = "user,time,event,app,value\nu1,10,begin,,UTC\nu1,11,open,abcdefgh,1,extra\nu1,20,end,,\n"
    #expect(throws: TraceFormatError.self) { try readAll(tempFile(six)) }
    do {
      _ = try readAll(tempFile(six))
    } catch let e as TraceFormatError {
      #expect(e.description.contains(":3:") && e.description.contains("found more than 5"), "\(e)")
    }
  }

  @Test("app names alike in their first and last bytes and their length are told apart")
  func appNames() throws {
    // The reader's search key covers a name's length and its first and
    // last 8 bytes (4 below 8): these names share keys in pairs.
    let names = [
      "aaaaaaaaXbbbbbbbb", "aaaaaaaaYbbbbbbbb", "aaaaaaaaXYbbbbbbbb", "aaaaaaaaYXbbbbbbbb", "a", "ab", "abc", "abcd", "abcde",
      "ab,c", "a\"b",
    ]
    var text = "user,time,event,app,value\n"
    for (k, user) in ["u1", "u2"].enumerated() {
      text += "\(user),1000,begin,,UTC\n"
      // Each name twice in a row, then in turn; the second user reuses the
      // first one's slots for other apps.
      let order = (k == 0 ? names : names.reversed()).flatMap { [$0, $0] } + names
      for (i, name) in order.enumerated() {
        text += "\(user),\(1001 + i),open,\(CSV.field(name)),1\n"
      }
      text += "\(user),2000,end,,\n"
    }
    let users = try readAll(tempFile(text))
    #expect(users.count == 2)
    for (k, u) in users.enumerated() {
      let first = k == 0 ? names : names.reversed()
      #expect(u.apps == first)
      let order = first.flatMap { [$0, $0] } + names
      #expect(u.events.map { u.apps[Int($0.app)] } == order)
    }
  }
}
