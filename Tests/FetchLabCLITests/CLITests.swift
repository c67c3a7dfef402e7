import Foundation
import Testing
import FetchTestSupport

/// Runs the built `fetchlab` executable.
struct CLI {
  static let executable: URL = {
    var candidates: [URL] = []
    if let b = Bundle.main.executableURL { candidates.append(b.deletingLastPathComponent()) }
    candidates.append(Bundle.main.bundleURL)
    candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
    candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
    for c in candidates {
      let u = c.appendingPathComponent("fetchlab")
      if FileManager.default.isExecutableFile(atPath: u.path) { return u }
    }
    fatalError("fetchlab executable not found near \(candidates)")
  }()

  struct Result {
    var status: Int32
    var stdout: String
    var stderr: String
  }

  /// Runs it with `args`, `environment` added to this process's.
  static func run(_ args: [String], environment: [String: String] = [:]) throws -> Result {
    let p = Process()
    p.executableURL = executable
    p.arguments = args
    if !environment.isEmpty { p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    try p.run()
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return Result(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
  }
}

func scratch() -> String {
  Scratch.directory("cli")
}

let smallTrace = """
  user,time,event,app,value
  u1,1767571200,begin,,UTC
  u1,1767571200,network,,lte
  u1,1767575000,open,news,40
  u1,1767580000,open,news,10
  u1,1767590000,network,,wifi
  u1,1767600000,open,chat,20
  u1,1767610000,open,news,30
  u1,1767657600,end,,

  """

@Suite("fetchlab command line", .serialized)
struct CLITests {
  @Test("validate: ok on a good trace, file:line: field: message and exit 1 on a bad one")
  func validate() throws {
    let dir = scratch()
    try smallTrace.write(toFile: dir + "/t.csv", atomically: true, encoding: .utf8)
    let ok = try CLI.run(["validate", dir + "/t.csv"])
    #expect(ok.status == 0)
    #expect(ok.stdout.contains("ok: 1 users"))
    let bad = smallTrace.replacingOccurrences(of: "u1,1767580000,open", with: "u1,1767000000,open")
    try bad.write(toFile: dir + "/bad.csv", atomically: true, encoding: .utf8)
    let r = try CLI.run(["validate", dir + "/bad.csv"])
    #expect(r.status == 1)
    #expect(r.stderr.contains("\(dir)/bad.csv:5: time: "), "\(r.stderr)")
  }

  @Test("run --jobs 2, trace parsed in small chunks: a bad row deep in the file gives the --jobs 1 error, exit 1, no results")
  func parallelReaderErrors() throws {
    let dir = scratch()
    // 30 users; each bad variant breaks one row of user 20 (or splits it).
    var rows = ["user,time,event,app,value"]
    for u in 1...30 {
      rows += [
        "u\(u),1767571200,begin,,UTC", "u\(u),1767575000,open,news,40", "u\(u),1767580000,open,chat,10",
        "u\(u),1767657600,end,,",
      ]
    }
    let good = rows.joined(separator: "\n") + "\n"
    let bad = [
      good.replacingOccurrences(of: "u20,1767580000,open", with: "u20,1767000000,open"),  // unsorted time
      good.replacingOccurrences(of: "u20,1767657600,end,,\n", with: ""),  // no end row
      good.replacingOccurrences(of: "u20,1767575000,open,news,40", with: "u20,1767575000,open,\"news,40"),
      good + "u7,1767571200,begin,,UTC\nu7,1767657600,end,,\n",  // a user again
      String(good.dropLast(30)),  // truncated
    ]
    for (k, text) in bad.enumerated() {
      let path = dir + "/bad\(k).csv"
      try text.write(toFile: path, atomically: true, encoding: .utf8)
      var errors: [String] = []
      for (jobs, chunk) in [("1", "2097152"), ("2", "150"), ("2", "700")] {
        let out = dir + "/out\(k)-\(jobs)-\(chunk)"
        let r = try runFetchlab(
          ["run", "--trace", path, "--policy", "never", "--policy", "ios-minimum", "--out", out, "--jobs", jobs],
          env: ["FETCHLAB_READ_CHUNK_BYTES": chunk])
        #expect(r.status == 1, "bad\(k), --jobs \(jobs): \(r.stderr)")
        #expect(r.stderr.contains(path + ":"), "bad\(k): \(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out + "/summary.csv"), "bad\(k): results written")
        errors.append(r.stderr)
      }
      #expect(Set(errors).count == 1, "bad\(k): \(errors)")
    }
  }

  @Test("run: writes every file, prints the comparison, and is byte-identical for the same seed")
  func runTwice() throws {
    let dir = scratch()
    try smallTrace.write(toFile: dir + "/t.csv", atomically: true, encoding: .utf8)
    var outputs: [[Data?]] = []
    for (i, jobs) in ["1", "2"].enumerated() {
      let r = try CLI.run([
        "run", "--trace", dir + "/t.csv", "--policy", "never", "--policy", "periodic:30m", "--policy", "oracle",
        "--seed", "3", "--jobs", jobs, "--out", dir + "/out\(i)",
      ])
      #expect(r.status == 0, "\(r.stderr)")
      #expect(r.stdout.contains("periodic:30m") && r.stdout.contains("J/day") && r.stdout.contains("oracle"))
      outputs.append(["summary.csv", "opens.csv", "fetches.csv", "pooled.csv", "policies.csv", "pareto.csv"].map {
        FileManager.default.contents(atPath: dir + "/out\(i)/" + $0)
      })
      #expect(FileManager.default.fileExists(atPath: dir + "/out\(i)/manifest.json"))
    }
    #expect(outputs[0].allSatisfy { $0 != nil })
    #expect(outputs[0] == outputs[1])
  }

  @Test("bad input exits non-zero with a clear message and writes no report", arguments: [
    (["--policy", "sometimes"], Int32(64), "unknown policy 'sometimes'"),
    (["--policy", "periodic:soon"], Int32(64), "bad interval"),
    (["--apps", "best:3"], Int32(64), "bad app selection"),
    (["--set", "radio.lte.tail_s=-1"], Int32(64), "radio.lte.tail_s"),
    (["--config", "MISSING.json"], Int32(1), "cannot read config"),
  ])
  func badInput(args: [String], status: Int32, fragment: String) throws {
    let dir = scratch()
    try smallTrace.write(toFile: dir + "/t.csv", atomically: true, encoding: .utf8)
    let r = try CLI.run(["run", "--trace", dir + "/t.csv", "--out", dir + "/out"] + args)
    #expect(r.status == status, "\(r.stderr)")
    #expect(r.stderr.contains(fragment), "\(r.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir + "/out/summary.csv"))
  }

  @Test("params lists every parameter with a source")
  func params() throws {
    let r = try CLI.run(["params"])
    #expect(r.status == 0)
    #expect(r.stdout.contains("`radio.lte.tail_s` | 10.12 | s |"))
    #expect(r.stdout.contains("`device.battery_wh` | 12.98 | Wh |"))
    // docs/parameters.md is this table under a short preface: keep them in step.
    let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .appendingPathComponent("../../docs/parameters.md").standardized.path
    let text = try String(contentsOfFile: docs, encoding: .utf8)
    #expect(text.hasSuffix(r.stdout), "docs/parameters.md is stale: regenerate it from 'fetchlab params'")
  }
}
