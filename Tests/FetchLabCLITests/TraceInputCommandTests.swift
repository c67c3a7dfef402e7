import FetchTestSupport
import Foundation
import Testing

@Suite("fetchlab trace input: synth, importers and validate agree on what a trace may hold", .serialized)
struct TraceInputCommandTests {
  static let b = 1_767_571_200

  @Test("a 1 MB app name is refused by validate and run with file:line: field, before any output")
  func hugeAppName() throws {
    let dir = scratch()
    let name = String(repeating: "A", count: 1_000_000)
    try "user,time,event,app,value\nu1,\(Self.b),begin,,UTC\nu1,\(Self.b + 100),open,\(name),5\nu1,\(Self.b + 30 * 86_400),end,,\n"
      .write(toFile: dir + "/t.csv", atomically: true, encoding: .utf8)
    let v = try CLI.run(["validate", dir + "/t.csv"])
    #expect(v.status == 1)
    #expect(v.stderr.contains("t.csv:3: app: app name of 1000000 bytes is longer than 256"), "\(v.stderr.prefix(300))")
    #expect(v.stderr.utf8.count < 1_000)
    let r = try CLI.run(["run", "--trace", dir + "/t.csv", "--policy", "periodic:15m", "--train-fraction", "0", "--out", dir + "/res"])
    #expect(r.status == 1)
    #expect(!FileManager.default.fileExists(atPath: dir + "/res/fetches.csv"))
  }

  @Test("synth: --seed defaults to 1 (the same bytes as --seed 1); a window past 2100 is refused with exit 64")
  func synthSeedAndDates() throws {
    let dir = scratch()
    let a = try CLI.run(["synth", "--users", "2", "--days", "2", "--out", dir + "/a.csv"])
    #expect(a.status == 0, "\(a.stderr)")
    let b = try CLI.run(["synth", "--users", "2", "--days", "2", "--seed", "1", "--out", dir + "/b.csv"])
    #expect(b.status == 0)
    #expect(FileManager.default.contents(atPath: dir + "/a.csv") == FileManager.default.contents(atPath: dir + "/b.csv"))
    try #"{"startDate":"2099-12-25"}"#.write(toFile: dir + "/p.json", atomically: true, encoding: .utf8)
    let late = try CLI.run(["synth", "--users", "2", "--days", "30", "--params", dir + "/p.json", "--out", dir + "/late.csv"])
    #expect(late.status == 64)
    #expect(late.stderr.contains("p.json: startDate 2099-12-25 with 30 days runs from"), "\(late.stderr)")
    #expect(late.stderr.contains("outside 1970-01-01...2100-01-01"))
    #expect(!FileManager.default.fileExists(atPath: dir + "/late.csv"))
    let fits = try CLI.run(["synth", "--users", "1", "--days", "6", "--params", dir + "/p.json", "--out", dir + "/fits.csv"])
    #expect(fits.status == 0, "\(fits.stderr)")
    #expect(try CLI.run(["validate", dir + "/fits.csv"]).status == 0)
  }

  @Test("import-ubiqlog: a row dated 9999 and a CR-only file are refused with the line, exit 1")
  func ubiqlogRefusals() throws {
    let dir = scratch()
    let header = "user_dir\tprocess_name\tstart_local\tend_local"
    let row = "p1\tcom.mail\t2014-03-02 10:00:00\t2014-03-02 10:01:00"
    try [header, row, "p1\tcom.mail\t9999-12-31 10:00:00\t9999-12-31 10:01:00", ""].joined(separator: "\n")
      .write(toFile: dir + "/far.tsv", atomically: true, encoding: .utf8)
    let far = try CLI.run(["import-ubiqlog", "--input", dir + "/far.tsv", "--out", dir + "/far.csv"])
    #expect(far.status == 1)
    #expect(far.stderr.contains("far.tsv:3: start_local: 9999-12-31 10:00:00 is outside 1970-01-01...2099-12-31"), "\(far.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir + "/far.csv"))
    try [header, row, row, ""].joined(separator: "\r").write(toFile: dir + "/cr.tsv", atomically: true, encoding: .utf8)
    let cr = try CLI.run(["import-ubiqlog", "--input", dir + "/cr.tsv", "--out", dir + "/cr.csv"])
    #expect(cr.status == 1)
    #expect(cr.stderr.contains("cr.tsv:1: lines end in CR alone"), "\(cr.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir + "/cr.csv"))
  }

  @Test("validate on an app-usage log points to import-events")
  func validateSuggestsImport() throws {
    let dir = scratch()
    try "user_id,timestamp,app_name,event_type\nu1,1767571200,mail,Opened\n".write(toFile: dir + "/log.csv", atomically: true, encoding: .utf8)
    let v = try CLI.run(["validate", dir + "/log.csv"])
    #expect(v.status == 1)
    #expect(v.stderr.contains("fetchlab import-events") && v.stderr.contains("docs/own-data.md"), "\(v.stderr)")
  }

  @Test("import-events: two users in different zones are written with their zones; changing offsets warn with the line")
  func importZones() throws {
    let dir = scratch()
    try """
      user,timestamp,app,event
      ny,2024-03-11T09:00:00-05:00,mail,open
      ny,2024-03-11T09:05:00-05:00,mail,close
      vie,2024-03-11T09:00:00+01:00,news,open
      vie,2024-03-11T09:02:00+01:00,news,close
      trip,2024-03-11T09:00:00+01:00,news,open
      trip,2024-03-12T09:00:00-05:00,news,open

      """.write(toFile: dir + "/log.csv", atomically: true, encoding: .utf8)
    let r = try CLI.run(["import-events", dir + "/log.csv", "--out", dir + "/t.csv"])
    #expect(r.status == 0, "\(r.stderr)")
    let trace = try String(contentsOfFile: dir + "/t.csv", encoding: .utf8)
    #expect(trace.contains("\nny,1710133200,begin,,-05:00\n"), "\(trace)")
    #expect(trace.contains("\nvie,1710111600,begin,,+01:00\n"))
    #expect(r.stderr.contains("warning: \(dir)/log.csv:7: timestamp: user 'trip': the offset changes from +01:00 to -05:00"), "\(r.stderr)")
    #expect(try CLI.run(["validate", dir + "/t.csv"]).status == 0)
  }
}
