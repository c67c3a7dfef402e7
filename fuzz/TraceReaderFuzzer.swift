// libFuzzer harness for the trace reader (built by scripts/fuzz.sh with
// `swiftc -sanitize=fuzzer`). Each input is written to a file and read to
// the end: it must give users or a TraceFormatError naming this file, a
// known field and a line within the input; anything else aborts, and
// libFuzzer keeps the input as a crash.
import FetchTraces
import Foundation

let fuzzPath = NSTemporaryDirectory() + "/fetchlab-fuzz-trace-\(getpid()).csv"
let fields: Set<String> = ["-", "user", "time", "event", "app", "value"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTraceReader(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  guard let f = fopen(fuzzPath, "wb") else { fatalError("cannot write \(fuzzPath)") }
  if size > 0 { precondition(fwrite(data, 1, size, f) == size, "short write") }
  fclose(f)
  var lines = 1
  for i in 0..<size where data[i] == 10 { lines += 1 }
  do {
    let reader = try TraceReader(path: fuzzPath)
    while let u = try reader.next() {
      u._checkInvariants()
      for e in u.events {
        precondition(e.time.isFinite && e.value.isFinite && e.time >= u.start && e.time <= u.end, "bad event \(e)")
      }
    }
  } catch let e as TraceFormatError {
    precondition(e.file == fuzzPath, "wrong file in \(e)")
    precondition(fields.contains(e.field), "unknown field in \(e)")
    precondition(e.line >= 0 && e.line <= lines, "line \(e.line) of \(lines) in \(e)")
    precondition(!e.message.isEmpty, "empty message")
  } catch {
    fatalError("not a TraceFormatError: \(error)")
  }
  return 0
}
