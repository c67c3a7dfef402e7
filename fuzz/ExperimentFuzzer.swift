// libFuzzer harness for experiment files (built by scripts/fuzz.sh with
// `swiftc -sanitize=fuzzer`). Each input is written to `e.json` beside a
// small trace `t.csv` and parsed: it must give an experiment within the
// size limits or a TraceFormatError naming this file, a key path and a line
// within the input; anything else aborts.
import FetchBenchmark
import FetchTraces
import Foundation

let fuzzDir: String = {
  let d = NSTemporaryDirectory() + "/fetchlab-fuzz-experiment-\(getpid())"
  try? FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
  let trace = "user,time,event,app,value\nu1,1767571200,begin,,UTC\nu1,1767575000,open,news,40\nu1,1767657600,end,,\n"
  try? trace.write(toFile: d + "/t.csv", atomically: true, encoding: .utf8)
  return d
}()
let fuzzPath = fuzzDir + "/e.json"
/// Fixed limits, so that results do not depend on the machine.
let limits = ResourceLimits(maxMemoryBytes: 16e9)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzExperiment(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  guard let f = fopen(fuzzPath, "wb") else { fatalError("cannot write \(fuzzPath)") }
  if size > 0 { precondition(fwrite(data, 1, size, f) == size, "short write") }
  fclose(f)
  var lines = 1
  for i in 0..<size where data[i] == 10 { lines += 1 }
  do {
    let e = try Experiment(contentsOf: fuzzPath, currentDirectory: fuzzDir, limits: limits)
    precondition(!e.datasets.isEmpty && !e.configurations.isEmpty && e.configurations.count <= 10_000, "bad experiment")
    precondition(e.replications >= 1 && e.unitUsers >= 1 && e.trainFraction >= 0 && e.trainFraction < 1, "bad experiment")
    precondition(e.check(limits: limits) == nil, "accepted over the limits")
  } catch let e as TraceFormatError {
    precondition(e.file == fuzzPath, "wrong file in \(e)")
    precondition(!e.field.isEmpty && !e.field.contains(where: \.isNewline), "bad field in \(e)")
    precondition(e.line >= 0 && e.line <= lines, "line \(e.line) of \(lines) in \(e)")
    precondition(!e.message.isEmpty, "empty message")
  } catch {
    fatalError("not a TraceFormatError: \(error)")
  }
  return 0
}
