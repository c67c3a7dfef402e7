import Foundation
import Testing

@Suite("schedule: fetch requests from a file", .serialized)
struct SchedulePolicyTests {
  @Test("each listed request is one fetch at its time; users and apps not replayed are ignored")
  func replaysRequests() throws {
    let d = scratch()
    let t = try write(fiveUserTrace, d, "t.csv")
    // User a's scored window (train fraction 0) is the whole day.
    let csv = try write(
      "user,app,time\na,news,1767576000\na,news,2026-01-05T06:00:00Z\na,news,1767600000.5\nzz,news,1767576000\na,unknown,1767576000\n",
      d, "s.csv")
    let r = try CLI.run([
      "run", "--trace", t, "--policy", "schedule:file=\(csv)", "--out", d + "/o", "--train-fraction", "0",
      "--apps", "names:news",
    ])
    #expect(r.status == 0, "\(r.stderr)")
    let fetches = try String(contentsOfFile: d + "/o/fetches.csv", encoding: .utf8).split(separator: "\n").dropFirst()
      .filter { $0.hasPrefix("a,") }
    // 2026-01-05T06:00:00Z is 1767592800.
    let starts = fetches.map { $0.split(separator: ",")[3] }
    #expect(fetches.count == 3, "\(fetches)")
    #expect(starts.contains("1767576000") && starts.contains("1767592800") && starts.contains("1767600000.5"), "\(starts)")
  }

  @Test("a request in the training part or outside the window is refused with its line; no result is written")
  func refusesOutsideWindow() throws {
    let d = scratch()
    let t = try write(fiveUserTrace, d, "t.csv")
    let training = try write("user,app,time\na,news,1767640000\na,news,1767572000\n", d, "train.csv")
    let r = try CLI.run(["run", "--trace", t, "--policy", "schedule:file=\(training)", "--out", d + "/o"])
    #expect(r.status == 1)
    #expect(r.stderr.contains("train.csv:3: time:") && r.stderr.contains("before the user's scored window"), "\(r.stderr)")
    #expect(!FileManager.default.fileExists(atPath: d + "/o"))
    let late = try write("user,app,time\na,news,1767657600\n", d, "late.csv")
    let r2 = try CLI.run(["run", "--trace", t, "--policy", "schedule:file=\(late)", "--out", d + "/o"])
    #expect(r2.status == 1 && r2.stderr.contains("late.csv:2: time:") && r2.stderr.contains("at or after the end of the user's scored window"), "\(r2.stderr)")
    let bad = try write("user,app,time\na,news,soon\n", d, "bad.csv")
    let r3 = try CLI.run(["run", "--trace", t, "--policy", "schedule:file=\(bad)", "--out", d + "/o"])
    #expect(r3.status != 0 && r3.stderr.contains("bad.csv:2: time:") && r3.stderr.contains("'soon' is not a time"), "\(r3.stderr)")
    #expect(!FileManager.default.fileExists(atPath: d + "/o"))
  }
}
