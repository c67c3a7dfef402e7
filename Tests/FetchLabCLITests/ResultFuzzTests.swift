import FetchSupport
import Foundation
import Testing

/// Runs the built `fetchlab` with a deadline: killed (and reported with
/// status -1) when it takes longer than `seconds`.
func runWithDeadline(_ args: [String], seconds: Double) throws -> CLI.Result {
  let p = Process()
  p.executableURL = CLI.executable
  p.arguments = args
  let err = Pipe()
  p.standardOutput = FileHandle.nullDevice
  p.standardError = err
  try p.run()
  // SIGKILL: a child may inherit a blocked SIGTERM from the test runner.
  let timer = DispatchWorkItem { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
  DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: timer)
  let e = err.fileHandleForReading.readDataToEndOfFile()
  p.waitUntilExit()
  let timedOut = !timer.isCancelled && p.terminationReason == .uncaughtSignal
  timer.cancel()
  return CLI.Result(status: timedOut ? -1 : p.terminationStatus, stdout: "", stderr: String(decoding: e, as: UTF8.self))
}

@Suite("report and compare on tampered result directories", .serialized)
struct ResultFuzzTests {
  /// The files report and compare write; every other file must survive a command unchanged.
  static let written: Set<String> = ["paired.csv", "report.html", "report.md"]

  /// One tampering of `dir`, drawn from `rng`: truncate, garble, remove or
  /// duplicate a file, edit the manifest, or leave a damaged journal.
  static func tamper(_ dir: String, _ rng: inout SplitMix64) throws -> String {
    let fm = FileManager.default
    let files = ["summary.csv", "policies.csv", "pareto.csv", "opens.csv", "fetches.csv", "manifest.json", "pooled.csv"]
    let name = files[Int(rng.next() % UInt64(files.count))]
    let path = dir + "/" + name
    var data = [UInt8](fm.contents(atPath: path) ?? Data())
    switch rng.next() % 7 {
    case 0:
      data = Array(data.prefix(Int(rng.next() % UInt64(data.count + 1))))
      try Data(data).write(to: URL(fileURLWithPath: path))
      return "truncated \(name) at \(data.count)"
    case 1 where !data.isEmpty:
      let bytes: [UInt8] = [0, 10, 13, 34, 44, 0xFF, 0x2D, 0x39, 0x6E, 0x7B]
      for _ in 0..<(1 + rng.next() % 4) {
        data[Int(rng.next() % UInt64(data.count))] = bytes[Int(rng.next() % UInt64(bytes.count))]
      }
      try Data(data).write(to: URL(fileURLWithPath: path))
      return "garbled \(name)"
    case 2:
      try? fm.removeItem(atPath: path)
      return "removed \(name)"
    case 3:
      let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
      guard lines.count > 2 else { return "nothing" }
      var l = Array(lines)
      l.insert(l[1 + Int(rng.next() % UInt64(l.count - 2))], at: 1 + Int(rng.next() % UInt64(l.count - 1)))
      try l.joined(separator: "\n").write(toFile: path, atomically: false, encoding: .utf8)
      return "duplicated a line of \(name)"
    case 4:
      let m = dir + "/manifest.json"
      guard let d = fm.contents(atPath: m), var o = (try? JSONSerialization.jsonObject(with: d)) as? [String: Any] else {
        return "nothing"
      }
      let keys = o.keys.sorted()
      let key = keys[Int(rng.next() % UInt64(keys.count))]
      let values: [Any] = [NSNull(), "x", -1, 1e300, ["a"], ["k": 1], [String]()]
      o[key] = rng.next() % 3 == 0 ? nil : values[Int(rng.next() % UInt64(values.count))]
      try JSONSerialization.data(withJSONObject: o).write(to: URL(fileURLWithPath: m))
      return "manifest \(key) edited"
    case 5:
      let j = dir + "/.commit"
      try? fm.createDirectory(atPath: j, withIntermediateDirectories: false)
      let lists = ["", "+summary.csv", "+ghost.csv\n", "-summary.csv\n", "+a/b\n", "=\n", "+summary.csv\n+x\n"]
      try lists[Int(rng.next() % UInt64(lists.count))].write(toFile: j + "/.names", atomically: false, encoding: .utf8)
      return "damaged journal"
    default:
      try Data().write(to: URL(fileURLWithPath: path))
      return "emptied \(name)"
    }
  }

  @Test("seeded tampering (truncated, garbled, missing files, manifest edits, damaged journals): a clear error or success, never a crash, hang or loss")
  func tampered() throws {
    let d = scratch()
    let t = try write(fiveUserTrace, d, "t.csv")
    let base = d + "/base"
    let run = try CLI.run(["run", "--trace", t, "--policy", "never", "--policy", "periodic:1h", "--policy", "oracle", "--out", base])
    #expect(run.status == 0, "\(run.stderr)")
    var rng = SplitMix64(seed: 20_261_128)
    var failures = 0, successes = 0
    for i in 0..<200 {
      let dir = d + "/c\(i)"
      try FileManager.default.copyItem(atPath: base, toPath: dir)
      var done: [String] = []
      for _ in 0...(rng.next() % 2) { done.append(try Self.tamper(dir, &rng)) }
      let args = i % 2 == 0 ? ["report", dir, "--no-timeline"] : ["compare", dir, "--baseline", "never"]
      let before = snapshot(dir).filter { !$0.key.hasPrefix(".") && !$0.key.hasPrefix("plots") && !Self.written.contains($0.key) }
      let r = try runWithDeadline(args, seconds: 60)
      let label = "case \(i) (\(done.joined(separator: "; "))), \(args[0])"
      #expect(r.status == 0 || r.status == 1, "\(label): status \(r.status) \(r.stderr)")
      if r.status == 1 {
        failures += 1
        #expect(r.stderr.hasPrefix("Error: "), "\(label): \(r.stderr)")
        for bad in ["Domain=", "could not be completed", "Fatal error", "Swift runtime"] {
          #expect(!r.stderr.contains(bad), "\(label): \(r.stderr)")
        }
      } else {
        successes += 1
      }
      let after = snapshot(dir).filter { !$0.key.hasPrefix(".") && !$0.key.hasPrefix("plots") && !Self.written.contains($0.key) }
      #expect(after == before, "\(label): files changed: \(Set(before.keys).symmetricDifference(after.keys).sorted())")
      try? FileManager.default.removeItem(atPath: dir)
    }
    #expect(failures > 20 && successes > 5, "\(failures) failures, \(successes) successes")
  }
}
