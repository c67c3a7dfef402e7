import FetchBenchmark
import FetchSimulation
import FetchTraces
import Foundation
import Testing

@Suite("external policies against their Swift twin", .serialized)
struct ExternalTwinTests {
  static let trace: String = {
    let path = tempDir() + "/twin-trace.csv"
    try! SyntheticPopulation(seed: 9, days: 4).write(to: path, users: 6)
    return path
  }()

  /// The results of `policies` on ``trace`` (`replay.scope` device, the top
  /// two apps, half the window for training).
  func run(_ policies: [PolicySpec], jobs: Int) throws -> String {
    let out = tempDir()
    let cfg = RunConfiguration(
      tracePath: Self.trace, policies: policies, seed: 4, apps: .top(2), recordEvents: true, jobs: jobs,
      trainFraction: 0.5)
    var sink = try CSVReportSink(directory: out, config: cfg)
    try runReplay(cfg, into: &sink)
    try sink.commit(manifest: ["test": true])
    return out
  }

  /// A file's rows with the policy column (the third) removed.
  func rows(_ dir: String, _ file: String) throws -> [String] {
    try String(contentsOfFile: dir + "/" + file, encoding: .utf8).split(separator: "\n").dropFirst().map { line in
      var f = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
      if f.count > 2 { f.remove(at: 2) }
      return f.joined(separator: ",")
    }
  }

  @Test("the stale-after rule over the pipe to Python replays exactly as the same rule in Swift")
  func pipeEqualsSwift() throws {
    let script = tempDir() + "/stale.py"
    try StaleAfterFamily.pythonSource.write(toFile: script, atomically: true, encoding: .utf8)
    let external = try PolicySpec(parsing: "external:cmd=python3 \(script) 3600")
    let swift = PolicySpec(StaleAfterFamily.self, 3600)
    let a = try run([external], jobs: 2)
    let b = try run([swift], jobs: 1)
    for f in ["summary.csv", "fetches.csv", "opens.csv"] {
      let (x, y) = (try rows(a, f), try rows(b, f))
      #expect(!x.isEmpty && x == y, "\(f): \(x.count) rows against \(y.count)")
    }
    #expect(try rows(a, "fetches.csv").count > 20)
  }

  @Test("the bench's Python rule is docs/examples/stale_after.py's program, so the example and the benchmarked rule cannot drift apart")
  func benchRuleIsTheDocsExample() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized
    let example = try String(contentsOf: root.appendingPathComponent("docs/examples/stale_after.py"), encoding: .utf8)
    #expect(example.hasSuffix("\n" + StaleAfterFamily.pythonSource + "\n"))
  }
}
