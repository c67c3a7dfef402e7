// libFuzzer harness for `fetchlab run` (built by scripts/fuzz.sh with
// `swiftc -sanitize=fuzzer`). The first two bytes of each input choose a
// set of policies (one bit per family), the third byte up to three world-
// parameter overrides; the rest is written to `t.csv` and replayed with
// runReplay. The replay must finish or throw a TraceFormatError naming
// this file; a trap, a hang (-timeout) or 2 GB (-rss_limit_mb) is a finding.
import FetchBenchmark
import FetchModels
import FetchSimulation
import FetchTraces
import Foundation

let runFuzzDir: String = {
  let d = NSTemporaryDirectory() + "/fetchlab-fuzz-run-\(getpid())"
  try? FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
  return d
}()
let runFuzzPath = runFuzzDir + "/t.csv"
let families = [
  "never", "periodic:15m", "oracle", "oracle-budget:4", "oracle-budget:50J", "ios-minimum", "ios-custom:1h",
  "silent-push", "android-workmanager:15m", "android-standby", "tailender:30m", "imp",
]
/// Small fixed limits: a fuzz input replays in well under a second.
let runLimits: ResourceLimits = {
  var l = ResourceLimits(maxEventsPerUser: 100_000, maxMemoryBytes: 16e9)
  l.maxWindowDays = 30
  return l
}()
/// Overrides the third byte picks from (each bit one), edge values included.
let overrides: [(String, ParameterValue)] = [
  ("content.rate_per_hour", .number(1e6)), ("content.app_rate_per_hour.news", .number(1e6)),
  ("content.model", .word("diurnal")), ("content.source", .word("trace")), ("fetch.failure_probability", .number(1)),
  ("radio.lte.tail_s", .number(1e12)), ("fetch.budget_s", .number(1e-3)), ("network.default", .word("offline")),
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRun(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  guard size >= 3 else { return 0 }
  let mask = Int(data[0]) | Int(data[1]) << 8
  let policies = families.indices.filter { mask & (1 << $0) != 0 }.map { families[$0] }
  guard !policies.isEmpty else { return 0 }
  var world = WorldParameters()
  for (i, o) in overrides.enumerated() where data[2] & (1 << i) != 0 {
    precondition(world.set(o.0, to: o.1) == nil, "override \(o.0) refused")
  }
  guard let f = fopen(runFuzzPath, "wb") else { fatalError("cannot write \(runFuzzPath)") }
  if size > 3 { precondition(fwrite(data + 3, 1, size - 3, f) == size - 3, "short write") }
  fclose(f)
  let specs = policies.map { try! PolicySpec(parsing: $0) }
  let config = RunConfiguration(
    tracePath: runFuzzPath, policies: specs, seed: 1, world: world, apps: .top(2), recordEvents: true, jobs: 1,
    trainFraction: specs.contains(where: \.learns) ? 0.5 : 0)
  struct Sink: RunSink {
    mutating func consume(_ r: UserResult, config: RunConfiguration) throws {}
  }
  var sink = Sink()
  do {
    try runReplay(config, into: &sink, limits: runLimits)
  } catch let e as TraceFormatError {
    precondition(e.file == runFuzzPath && !e.message.isEmpty, "bad error \(e)")
  } catch {
    fatalError("not a TraceFormatError: \(error)")
  }
  return 0
}
