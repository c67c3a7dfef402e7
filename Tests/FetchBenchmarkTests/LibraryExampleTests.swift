import FetchBenchmark
import FetchSimulation
import FetchTestSupport
import FetchTraces
import Foundation
import Testing

/// An embedding workflow run end to end with the package's view of the
/// modules (the public-only example of docs/library-api.md is type-checked
/// by `LibraryAPITests`).
@Suite("Library API example")
struct LibraryExampleTests {
  @Test("convert an event log, replay two policies, read the totals")
  func documentedExample() throws {
    let dir = Scratch.directory("library")
    try "user,timestamp,app,event\nana,1767600000,news,open\nana,1767600045,news,close\nana,1767640000,news,open\nana,1767640010,news,close\n"
      .write(toFile: dir + "/log.csv", atomically: true, encoding: .utf8)
    // 1. An event log to a trace file.
    let log = try EventLogImporter().read(path: dir + "/log.csv")
    let writer = try TraceWriter(path: dir + "/trace.csv")
    for user in log.users { try writer.write(user) }
    try writer.commit()

    // 2. Replay two policies over every user and app.
    let config = RunConfiguration(
      tracePath: dir + "/trace.csv",
      policies: [try PolicySpec(parsing: "never"), try PolicySpec(parsing: "periodic:1h")],
      seed: 1, recordEvents: false)
    let reader = try TraceReader(path: config.tracePath)
    var energy = [Double](repeating: 0, count: config.policies.count)
    var fresh = [Int](repeating: 0, count: config.policies.count)
    var opens = 0
    while let user = try reader.next() {
      let result = replayUser(user, config)
      for app in result.replays {
        opens += app[0].summary.opens
        for (p, replay) in app.enumerated() {
          energy[p] += replay.summary.energyJ
          fresh[p] += Int((replay.summary.freshRatio * Double(replay.summary.opens)).rounded())
        }
      }
    }
    #expect(opens == 2)
    #expect(energy[0] == 0 && energy[1] > 0)
    #expect(fresh[1] >= fresh[0])
  }
}
