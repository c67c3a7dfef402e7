import FetchBenchmark
import FetchSimulation
import FetchTraces
import Foundation
import Testing

/// The streaming runner (reader, workers and sink overlapping) on enough
/// users that results finish out of order: the report files are the same
/// bytes for any thread count and number of users in flight.
@Suite("Run pipeline", .serialized)
struct RunPipelineTests {
  static let trace: String = {
    let path = tempDir() + "/pipeline-trace.csv"
    try! SyntheticPopulation(seed: 5, days: 3).write(to: path, users: 24)
    return path
  }()

  func run(jobs: Int, batch: Int, chunk: Int = 4 << 20, policies: [PolicySpec]? = nil) throws -> String {
    let out = tempDir()
    var cfg = RunConfiguration(
      tracePath: Self.trace, policies: policies ?? [.never, .periodic(interval: 1800), .oracle], seed: 3,
      apps: .top(2), recordEvents: true, jobs: jobs, batchUsers: batch, trainFraction: 0.5)
    cfg.readChunkBytes = chunk
    var sink = try CSVReportSink(directory: out, config: cfg)
    try runReplay(cfg, into: &sink)
    try sink.commit(manifest: ["test": true])
    return out
  }

  @Test("24 users: the same bytes for 1, 2, 3 and 8 jobs and 1, 5 and 64 users in flight")
  func sameBytes() throws {
    let a = try run(jobs: 1, batch: 64)
    // Chunks of the parallel reader from part of a user to the whole file.
    for (jobs, batch, chunk) in [(2, 1, 1 << 22), (2, 5, 1_000), (3, 64, 30_000), (8, 5, 100_000), (2, 64, 1)] {
      let b = try run(jobs: jobs, batch: batch, chunk: chunk)
      for f in resultFiles {
        let x = FileManager.default.contents(atPath: a + "/" + f)
        #expect(
          x != nil && x == FileManager.default.contents(atPath: b + "/" + f),
          "\(f), jobs \(jobs), batch \(batch), chunks of \(chunk) bytes")
      }
    }
  }

  @Test("a learning run (population pass, then replay) is the same bytes with the trace parsed on 2 threads")
  func sameBytesLearning() throws {
    let policies: [PolicySpec] = [.never, try PolicySpec(parsing: "ios-minimum")]
    let a = try run(jobs: 1, batch: 64, policies: policies)
    let b = try run(jobs: 2, batch: 4, chunk: 20_000, policies: policies)
    for f in resultFiles {
      let x = FileManager.default.contents(atPath: a + "/" + f)
      #expect(x != nil && x == FileManager.default.contents(atPath: b + "/" + f), "\(f)")
    }
  }
}
