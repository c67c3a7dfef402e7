import Dispatch
import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces
import FetchWorld
import Foundation

/// The rule `fetchlab bench` times over the `external` pipe and in Swift:
/// fetch when the app's last open is `ageS` seconds old, and again every
/// `ageS` while it stays unopened (an open restarts the wait). The Python
/// twin is ``StaleAfterFamily/pythonSource``: asked only at the window's
/// start and at its own ask-again times, and told only of opens (not of
/// its fetches' outcomes), it reads the opens since its last decision from
/// the message and moves its time on when one came, so it fetches when
/// this rule does and their replays are the same.
package struct StaleAfterPolicy: FetchPolicy {
  package static var observedEvents: ObservedEvents { .all }
  let ageS: Double
  var lastOpen: Double

  package mutating func start(_ ctx: inout PolicyContext) {
    if ctx.now >= lastOpen + ageS {
      ctx.requestFetch()
      ctx.setTimer(at: ctx.now + ageS)
    } else {
      ctx.setTimer(at: max(lastOpen + ageS, ctx.now + 1))
    }
  }

  package mutating func observe(_ event: TraceEvent, _ ctx: inout PolicyContext) {
    guard event.kind == .open, event.app == ctx.app else { return }
    lastOpen = event.time
    ctx.setTimer(at: event.time + ageS)
  }

  package mutating func timerFired(_ ctx: inout PolicyContext) {
    ctx.requestFetch()
    ctx.setTimer(at: ctx.now + ageS)
  }
}

/// `stale-after:<age>` (not registered: the benchmark's and the tests'
/// Swift twin of the external rule).
package enum StaleAfterFamily: PolicyFamily {
  package static let info = FamilyInfo(
    "stale-after", .interval, learning: .usage, style: PolicyStyle(color: "#777777", marker: .pentagon),
    summary: "fetch once the app's last open is <interval> old, and every <interval> while it stays unopened")

  package static func parse(_ argument: String?, spec: String) throws -> Double {
    guard let a = argument, let s = parseDuration(a), s >= 60 else {
      throw PolicySpecError("policy '\(spec)': needs an age of at least 60 s, e.g. stale-after:1h")
    }
    return s
  }
  package static func describe(_ c: Double) -> String { "stale-after:" + formatDuration(c) }
  package static func makePolicies(_ c: Double, _ device: DeviceReplayInput) -> (Int32, ContentTimeline) -> StaleAfterPolicy {
    let training = device.training
    return { app, _ in
      StaleAfterPolicy(ageS: c, lastOpen: training.events.last { $0.kind == .open && $0.app == app }?.time ?? -.infinity)
    }
  }

  /// The same rule as a self-contained Python program speaking the
  /// `external` protocol directly (standard library only).
  package static let pythonSource = #"""
    import json, sys
    AGE = float(sys.argv[1]) if len(sys.argv) > 1 else 3600.0
    last = {}
    out = sys.stdout
    for line in sys.stdin.buffer:
        m = json.loads(line)
        t = m["type"]
        if t == "decide":  # at the window's start and at the times asked for
            a, now = m["app"], m["now"]
            if "opens" in m:  # the app's opens since its last decision
                last[a] = m["opens"][-1]
            if now >= last[a] + AGE:
                out.write('{"fetch":true,"next":%r}\n' % (now + AGE))
            else:
                out.write('{"fetch":false,"next":%r}\n' % max(last[a] + AGE, now + 1.0))
            out.flush()
        elif t == "device":
            tr = m["training"]["opens"]
            last = {a: (tr[a][-1] if tr[a] else float("-inf")) for a in m["apps"]}
        elif t == "hello":  # version 3: asked at no open and no fetch end, told of opens only
            out.write('{"version":3,"ask":[],"tell":["opens"]}\n'); out.flush()
    """#
}

/// The names of ``externalPipeMetrics(_:progress:)``, in order.
package let externalPipeMetricNames = [
  "external_pipe_decisions", "external_pipe_decisions_per_s", "external_swift_rule_s", "external_pipe_s",
  "external_pipe_slowdown", "external_swift_run_s", "external_pipe_run_s", "external_pipe_run_slowdown",
]

/// The `external` pipe's speed: the rule of ``StaleAfterPolicy`` (1 h)
/// replayed on the bundled UbiqLog trace (`datasets/ubiqlog/ubiqlog-opens.csv`
/// from the working directory; else the bench's trace) over the pipe to
/// `python3` (``pythonInterpreter()``) and in Swift, with the bench's jobs
/// and split, in ``externalPipePairs`` interleaved pairs (pipe, Swift, …) so that
/// a drift of the machine's speed hits both alike: the decisions and their
/// rate, and the median of each time and of the pairs' ratios. Two ratios:
/// the replay alone (reading, replay and the policies' decisions; target
/// ≤ 5×), and the whole run (the same and every CSV of `fetchlab run`
/// written to a scratch directory; no target, it only dilutes the pipe's
/// share). Empty, with a note on stderr, when `python3` cannot run.
package func externalPipeMetrics(_ config: BenchConfiguration, progress: (BenchProgress) -> Void) throws -> [BenchMetric] {
  let ubiqlog = "datasets/ubiqlog/ubiqlog-opens.csv"
  let trace = FileManager.default.fileExists(atPath: ubiqlog) ? ubiqlog : config.tracePath
  let script = config.directory + "/stale-after.py"
  try StaleAfterFamily.pythonSource.write(toFile: script, atomically: true, encoding: .utf8)
  let scratch = config.directory + "/external-run"
  defer {
    try? FileManager.default.removeItem(atPath: script)
    try? FileManager.default.removeItem(atPath: scratch)
  }
  let external = try PolicySpec(parsing: "external:cmd=" + pythonInterpreter() + " " + script + " 3600")
  let swift = PolicySpec(StaleAfterFamily.self, 3600)
  func time(_ spec: PolicySpec, whole: Bool) throws -> Double {
    let cfg = RunConfiguration(
      tracePath: trace, policies: [spec], seed: 1, world: WorldParameters(), apps: .top(3), recordEvents: whole,
      jobs: config.jobs, trainFraction: config.trainFraction)
    let t0 = DispatchTime.now()
    let report = { (p: RunProgress) in progress(BenchProgress(stage: "external pipe", done: p.users, total: 0)) }
    if whole {
      try? FileManager.default.removeItem(atPath: scratch)
      var sink = try CSVReportSink(directory: scratch, config: cfg)
      try runReplay(cfg, into: &sink, progress: report)
      try sink.commit(manifest: ["bench": true])
    } else {
      var sink = CountingSink()
      try runReplay(cfg, into: &sink, progress: report)
    }
    return Double(DispatchTime.now().uptimeNanoseconds - t0.uptimeNanoseconds) / 1e9
  }
  var pipe: [Double] = [], rule: [Double] = [], pipeRun: [Double] = [], ruleRun: [Double] = []
  var decisions = 0.0
  do {
    for _ in 0..<externalPipePairs {
      let before = ExternalProcessPool.decisionsAsked
      pipe.append(try time(external, whole: false))
      decisions = Double(ExternalProcessPool.decisionsAsked - before)
      rule.append(try time(swift, whole: false))
    }
    for _ in 0..<externalPipePairs {
      pipeRun.append(try time(external, whole: true))
      ruleRun.append(try time(swift, whole: true))
    }
  } catch let e as ExternalPolicyError {
    FileHandle.standardError.write(Data("note: external pipe not measured: \(e)\n".utf8))
    return []
  }
  func median(_ x: [Double]) -> Double {
    let s = x.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
  }
  return [
    .init(name: "external_pipe_decisions", value: decisions, unit: "decisions"),
    .init(name: "external_pipe_decisions_per_s", value: decisions / median(pipe), unit: "decisions/s"),
    .init(name: "external_swift_rule_s", value: median(rule), unit: "s"),
    .init(name: "external_pipe_s", value: median(pipe), unit: "s"),
    .init(name: "external_pipe_slowdown", value: median(zip(pipe, rule).map(/)), unit: "x", goal: .atMost(5)),
    .init(name: "external_swift_run_s", value: median(ruleRun), unit: "s"),
    .init(name: "external_pipe_run_s", value: median(pipeRun), unit: "s"),
    .init(name: "external_pipe_run_slowdown", value: median(zip(pipeRun, ruleRun).map(/)), unit: "x"),
  ]
}

/// The interpreter that `python3` starts (its `sys.executable`), so that
/// the timing holds no version manager's launcher: a pyenv shim runs a
/// shell and a dozen processes before Python, 0.2 s of every process's
/// start on the project's 2-core machine, against 0.1 s for Python
/// itself. `python3` when it cannot be asked, or when the path holds a
/// character that a policy string or the shell would change.
private func pythonInterpreter() -> String {
  let p = Process()
  p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
  p.arguments = ["python3", "-c", "import sys; print(sys.executable)"]
  let out = Pipe()
  p.standardOutput = out
  p.standardError = FileHandle.nullDevice
  guard (try? p.run()) != nil else { return "python3" }
  let data = out.fileHandleForReading.readDataToEndOfFile()
  p.waitUntilExit()
  let path = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
  let plain = path.unicodeScalars.allSatisfy { $0.isASCII && !",;'\" \\$`|&<>()*?!#~".unicodeScalars.contains($0) }
  guard p.terminationStatus == 0, path.hasPrefix("/"), plain else { return "python3" }
  return path
}

/// The interleaved pairs of runs of ``externalPipeMetrics(_:progress:)``.
package let externalPipePairs = 3

/// Takes the results and keeps nothing.
private struct CountingSink: RunSink {
  mutating func consume(_ result: UserResult, config: RunConfiguration) throws {}
}
