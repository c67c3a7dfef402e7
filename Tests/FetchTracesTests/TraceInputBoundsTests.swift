import FetchSupport
import FetchTestSupport
import Foundation
import Testing

@testable import FetchTraces

/// The error reading the trace `text` throws, as its description (nil when
/// it reads).
private func readError(_ text: String) -> String? {
  do {
    _ = try readAll(tempFile(text))
    return nil
  } catch {
    return "\(error)"
  }
}

@Suite("Trace input bounds")
struct TraceInputBoundsTests {
  static let b = 1_767_571_200

  /// A one-user trace whose middle rows are `rows`.
  static func trace(_ rows: [String], user: String = "u1") -> String {
    "user,time,event,app,value\n\(user),\(b),begin,,UTC\n" + rows.map { $0 + "\n" }.joined()
      + "\(user),\(b + 86_400),end,,\n"
  }

  @Test("names up to 256 bytes are read; a longer user id or app name is refused at its field")
  func nameLength() throws {
    let ok = String(repeating: "a", count: TraceReader.maxNameBytes)
    let users = try readAll(tempFile(Self.trace(["\(ok),\(Self.b + 10),open,\(ok),5"], user: ok)))
    #expect(users[0].user == ok && users[0].apps == [ok])
    let long = ok + "b"
    let app = try #require(readError(Self.trace(["u1,\(Self.b + 10),open,\(long),5"])))
    #expect(app.contains("trace.csv:3: app: app name of 257 bytes is longer than 256"), "\(app)")
    #expect(app.count < 400)
    let user = try #require(readError(Self.trace([], user: long)))
    #expect(user.contains("trace.csv:2: user: user id of 257 bytes is longer than 256"), "\(user)")
    let region = try #require(readError(Self.trace(["u1,\(Self.b + 10),location,,enter:\(String(repeating: "r", count: 65))"])))
    #expect(region.contains("trace.csv:3: value: region id of 65 bytes is longer than 64"), "\(region)")
  }

  @Test("a control character (not a tab or line break) in an app name or user id, any in a region id, is refused; ids shown escaped on one line")
  func controlCharacters() throws {
    let nul = try #require(readError(Self.trace(["u1,\(Self.b + 10),open,a\u{0}b,5"])))
    #expect(nul.contains("trace.csv:3: app: app name 'a\\u{0}b' contains a control character"), "\(nul)")
    let esc = try #require(readError(Self.trace([], user: "u\u{1B}1")))
    #expect(esc.contains("trace.csv:2: user: user id 'u\\u{1B}1' contains a control character"), "\(esc)")
    // A line break is quoted by every CSV writer: a name may hold one, and a message shows it escaped.
    let newline = try #require(readError(Self.trace(["\"u\n1\",\(Self.b + 10),open,a,5"], user: "\"u\n1\"") + "u2,1,open,a,1\n"))
    #expect(newline.contains("'open' row before any 'begin' row for user 'u2'"), "\(newline)")
    let after = try #require(readError(Self.trace([], user: "\"u\n1\"") + "\"u\n1\",\(Self.b + 86_400),open,a,4\n"))
    #expect(after.contains("row after the 'end' row of user 'u\\u{A}1'") && !after.contains("\n"), "\(after)")
    let region = try #require(readError(Self.trace(["u1,\(Self.b + 10),location,,\"enter:a\tb\""])))
    #expect(region.contains("trace.csv:3: value: region id 'a\\u{9}b' contains"), "\(region)")
    // A row of another user whose id has a line break: the message stays on one line.
    let other = try #require(readError(Self.trace(["\"x\ny\",\(Self.b + 10),open,a,5"])))
    #expect(other.contains("user 'x\\u{A}y' starts before user 'u1'") && !other.contains("\n"), "\(other)")
  }

  @Test("a row after a user's end row says so; an invalid ISO date is not called a number")
  func messages() throws {
    let after = try #require(readError(Self.trace([]) + "u1,\(Self.b + 86_400),open,a,4\n"))
    #expect(after.contains("trace.csv:4: event: 'open' row after the 'end' row of user 'u1'"), "\(after)")
    let before = try #require(readError("user,time,event,app,value\nu1,\(Self.b),open,a,4\n"))
    #expect(before.contains("'open' row before any 'begin' row for user 'u1'"), "\(before)")
    let iso = try #require(readError(Self.trace(["u1,2026-02-30T00:00:00Z,open,a,4"])))
    #expect(iso.contains("trace.csv:3: time: '2026-02-30T00:00:00Z' is not a time: the accepted forms are Unix seconds"), "\(iso)")
    #expect(!iso.contains("finite number"))
    // Week and ordinal dates get the accepted forms, not a number's message.
    for text in ["2024-W10-1", "2024-W10-1T08:00:00Z", "2024-070T08:00:00Z"] {
      let week = try #require(readError(Self.trace(["u1,\(text),open,a,4"])))
      #expect(week.contains("trace.csv:3: time: '\(text)' is not a time: the accepted forms are Unix seconds"), "\(week)")
      #expect(week.contains("ISO 8601 calendar date-times") && week.contains("week dates (2026-W02-1)"), "\(week)")
      #expect(!week.contains("decimal number") && !week.contains("finite number"), "\(week)")
    }
  }

  @Test("seconds of the year 9999 are out of range, not milliseconds; real milliseconds still are")
  func farFutureSeconds() {
    let y9999 = 253_402_300_799.0  // 9999-12-31T23:59:59Z
    let m = TimeText.outOfRangeMessage(y9999)
    #expect(m.contains("(9999-12-31T23:59:59Z) is outside 1970-01-01...2100-01-01"), "\(m)")
    #expect(!m.contains("milliseconds"))
    #expect(TimeText.outOfRangeMessage(1_767_571_200_000).contains("looks like milliseconds (2026-01-05T00:00:00Z)"))
    #expect(TimeText.outOfRangeMessage(1e300) == "time 1e+300 is outside 1970-01-01...2100-01-01, the dates a trace may hold (times are Unix seconds or ISO 8601)")
  }

  @Test("a header that is not a trace's: an event log points to import-events, a UbiqLog export to import-ubiqlog")
  func foreignHeaders() throws {
    let log = try #require(readError("user_id,timestamp,app_name,event_type\nu1,1767571200,mail,Opened\n"))
    #expect(log.contains("expected header 'user,time,event,app,value'") && log.contains("fetchlab import-events"), "\(log)")
    #expect(log.contains("docs/own-data.md"))
    let ubiq = try #require(readError("user_dir\tprocess_name\tstart_local\tend_local\n"))
    #expect(ubiq.contains("fetchlab import-ubiqlog"), "\(ubiq)")
    let numbers = try #require(readError("1,2,3\n"))
    #expect(!numbers.contains("import"))
  }

  /// The name-table probes reading one user with `n` distinct names, made
  /// by `name` from their index, each opened once (apps) or entered once
  /// (regions).
  static func probes(_ n: Int, regions: Bool) throws -> Int {
    var text = "user,time,event,app,value\nu1,\(b),begin,,UTC\n"
    for i in 0..<n {
      // Names alike in length and first and last 8 bytes.
      let name = String(format: "com.example.%07d.app", i)
      text += regions ? "u1,\(b + i),location,,enter:\(name)\n" : "u1,\(b + i),open,\(name),1\n"
    }
    text += "u1,\(b + 86_400),end,,\n"
    let r = try TraceReader(path: tempFile(text))
    let user = try #require(try r.next())
    #expect(regions ? user.regions.count == n : user.apps.count == n)
    return r.lastNameProbes
  }

  @Test("interning names is linear: 8× the distinct app names or region ids costs about 8× the probes", arguments: [false, true])
  func internScaling(regions: Bool) throws {
    let small = try Self.probes(2_000, regions: regions)
    let large = try Self.probes(16_000, regions: regions)
    // Linear: 8×; a linear search per name would be 64×.
    #expect(Double(large) / Double(small) < 12, "\(small) → \(large)")
    #expect(large < 16_000 * 4)
  }

  @Test("name hashes differ for names alike in their first and last bytes and length")
  func nameHash() {
    func h(_ s: String) -> UInt64 { var s = s; return s.withUTF8 { NameTable.hash($0) } }
    #expect(h("com.example.0000001.app") != h("com.example.0000002.app"))
    #expect(h("abcdefghijklmnopq") != h("abcdefghXjklmnopq"))
    #expect(h("a") != h("b") && h("") == 0)
  }
}
