import Foundation
import Testing

/// The decimal grammar on every entry that reads numbers with it:
/// hexadecimal, `inf` and `nan` are refused, never read as a value.
@Suite("fetchlab: one number grammar for options and result files", .serialized)
struct NumberGrammarCommandTests {
  static let trace = "user,time,event,app,value\nu1,1767571200,begin,,UTC\nu1,1767575012,open,news,35\nu1,1767657600,end,,\n"

  @Test("--train-fraction and --set refuse hexadecimal; import --max-session takes durations, not hex")
  func options() throws {
    let dir = scratch()
    try Self.trace.write(toFile: dir + "/t.csv", atomically: true, encoding: .utf8)
    let base = ["run", "--trace", dir + "/t.csv", "--policy", "never", "--out", dir + "/r"]
    let fraction = try CLI.run(base + ["--train-fraction", "0x0.8"])
    #expect(fraction.status == 64 && fraction.stderr.contains("--train-fraction: expected a decimal number"), "\(fraction.stderr)")
    let set = try CLI.run(base + ["--set", "radio.lte.tail_s=0x10"])
    #expect(set.status == 64 && set.stderr.contains("--set radio.lte.tail_s: expected a finite number"), "\(set.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir + "/r"))
    try "user,timestamp,app,event\nu,1767571200,a,open\nu,1767571260,a,close\n".write(toFile: dir + "/log.csv", atomically: true, encoding: .utf8)
    let hex = try CLI.run(["import-events", dir + "/log.csv", "--out", dir + "/o.csv", "--max-session", "0x10"])
    #expect(hex.status == 64 && hex.stderr.contains("--max-session: expected a duration"), "\(hex.stderr)")
    let minutes = try CLI.run(["import-events", dir + "/log.csv", "--out", dir + "/o.csv", "--max-session", "30s"])
    #expect(minutes.status == 0 && minutes.stdout.contains("1 capped at 30 s"), "\(minutes.stdout)\(minutes.stderr)")
  }

  @Test("predict --from: Unix seconds are decimal (0x69594D00 is refused)")
  func predictFrom() throws {
    let r = try CLI.run(["predict", "--model", "m.json", "--user", "u", "--app", "a", "--from", "0x69594D00", "--to", "1767657600"])
    #expect(r.status == 64 && r.stderr.contains("--from and --to must be ISO 8601 times"), "\(r.stderr)")
  }

  @Test("compare refuses a summary.csv whose cell is hexadecimal, with the file and line")
  func compareSummary() throws {
    let run = try CompareCommandTests.smallRun()
    let path = run + "/summary.csv"
    var lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let header = lines[0].split(separator: ",").map(String.init)
    let column = try #require(header.firstIndex(of: "mean_age_s"))
    var cells = lines[2].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    cells[column] = "0x10"
    lines[2] = cells.joined(separator: ",")
    try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
    let r = try CLI.run(["compare", run, "--baseline", "never"])
    #expect(r.status == 1 && r.stderr.contains("summary.csv:3: mean_age_s: "), "\(r.stderr)")
    #expect(r.stderr.contains("'0x10'"), "\(r.stderr)")
  }
}
