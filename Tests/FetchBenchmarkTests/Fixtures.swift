import FetchBenchmark
import FetchSimulation
import FetchTestSupport
import Foundation

/// A file of the test fixtures (`Fixtures/`, a copy of the report tests'
/// tiny trace).
func goldenURL(_ name: String) -> URL {
  Bundle.module.url(forResource: "Fixtures/" + name, withExtension: nil)
    ?? Bundle.module.resourceURL!.appendingPathComponent("Fixtures/" + name)
}

/// A fresh scratch directory, removed when the test process exits.
func tempDir() -> String {
  Scratch.directory("run")
}

/// The files of a `run --trace` result directory that hold results.
let resultFiles = ["summary.csv", "devices.csv", "opens.csv", "fetches.csv", "pooled.csv", "devices_pooled.csv"]

/// Runs the tiny fixture through ``CSVReportSink`` (four policies, seed 7,
/// the top two apps) and returns the result directory.
func runTiny(jobs: Int, batch: Int, events: Bool = true) throws -> String {
  let out = tempDir()
  let cfg = RunConfiguration(
    tracePath: goldenURL("tiny-trace.csv").path,
    policies: [.never, .periodic(interval: 3600), .periodic(interval: 900), .oracle], seed: 7,
    apps: .top(2), recordEvents: events, jobs: jobs, batchUsers: batch)
  var sink = try CSVReportSink(directory: out, config: cfg)
  try runReplay(cfg, into: &sink)
  try sink.commit(manifest: ["test": true])
  return out
}
