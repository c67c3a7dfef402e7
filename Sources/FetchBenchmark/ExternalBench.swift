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
/// twin is ``StaleAfterFamily/pythonSource``; both see the same decision
/// opportunities (the start, the app's opens, the ask-again time, fetch
/// ends), so their replays are the same.
package struct StaleAfterPolicy: FetchPolicy {
  package static var observedEvents: ObservedEvents { .all }
  let ageS: Double
  var lastOpen: Double

  package mutating func start(_ ctx: inout PolicyContext) {
    if ctx.now - lastOpen >= ageS {
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
    for line in sys.stdin:
        m = json.loads(line)
        t = m["type"]
        if t == "hello":
            out.write('{"version":1}\n'); out.flush()
        elif t == "device":
            tr = m["training"]["opens"]
            last = {a: (tr[a][-1] if tr[a] else float("-inf")) for a in m["apps"]}
        elif t == "decide":
            a, now, why = m["app"], m["now"], m["why"]
            if why == "open":
                last[a] = now
                r = '{"fetch":false,"next":%r}' % (now + AGE)
            elif why == "timer":
                r = '{"fetch":true,"next":%r}' % (now + AGE)
            elif why == "start":
                if now - last[a] >= AGE:
                    r = '{"fetch":true,"next":%r}' % (now + AGE)
                else:
                    r = '{"fetch":false,"next":%r}' % max(last[a] + AGE, now + 1.0)
            else:
                r = '{"fetch":false}'
            out.write(r + "\n"); out.flush()
    """#
}

/// The names of ``externalPipeMetrics(_:progress:)``, in order.
package let externalPipeMetricNames = [
  "external_pipe_decisions", "external_pipe_decisions_per_s", "external_swift_rule_s", "external_pipe_s",
  "external_pipe_slowdown",
]

/// The `external` pipe's speed: the rule of ``StaleAfterPolicy`` (1 h)
/// replayed on the bundled UbiqLog trace (`datasets/ubiqlog/ubiqlog-opens.csv`
/// from the working directory; else the bench's trace) over the pipe to
/// `python3` and in Swift, with the bench's jobs and split: decisions per
/// second, both wall times and their ratio (target ≤ 5×). Empty, with a
/// note on stderr, when `python3` cannot run.
package func externalPipeMetrics(_ config: BenchConfiguration, progress: (BenchProgress) -> Void) throws -> [BenchMetric] {
  let ubiqlog = "datasets/ubiqlog/ubiqlog-opens.csv"
  let trace = FileManager.default.fileExists(atPath: ubiqlog) ? ubiqlog : config.tracePath
  let script = config.directory + "/stale-after.py"
  try StaleAfterFamily.pythonSource.write(toFile: script, atomically: true, encoding: .utf8)
  defer { try? FileManager.default.removeItem(atPath: script) }
  let external = try PolicySpec(parsing: "external:cmd=python3 " + script + " 3600")
  let swift = PolicySpec(StaleAfterFamily.self, 3600)
  func time(_ spec: PolicySpec) throws -> (s: Double, days: Double) {
    let cfg = RunConfiguration(
      tracePath: trace, policies: [spec], seed: 1, world: WorldParameters(), apps: .top(3), recordEvents: false,
      jobs: config.jobs, trainFraction: config.trainFraction)
    var sink = PipeBenchSink()
    let t0 = DispatchTime.now()
    try runReplay(cfg, into: &sink) { p in progress(BenchProgress(stage: "external pipe", done: p.users, total: 0)) }
    return (Double(DispatchTime.now().uptimeNanoseconds - t0.uptimeNanoseconds) / 1e9, sink.days)
  }
  let before = ExternalProcessPool.decisionsAsked
  let pipe: (s: Double, days: Double)
  do {
    pipe = try time(external)
  } catch let e as ExternalPolicyError {
    FileHandle.standardError.write(Data("note: external pipe not measured: \(e)\n".utf8))
    return []
  }
  let decisions = Double(ExternalProcessPool.decisionsAsked - before)
  let rule = try time(swift)
  return [
    .init(name: "external_pipe_decisions", value: decisions, unit: "decisions"),
    .init(name: "external_pipe_decisions_per_s", value: decisions / pipe.s, unit: "decisions/s"),
    .init(name: "external_swift_rule_s", value: rule.s, unit: "s"),
    .init(name: "external_pipe_s", value: pipe.s, unit: "s"),
    .init(name: "external_pipe_slowdown", value: pipe.s / rule.s, unit: "x", goal: .atMost(5)),
  ]
}

/// Counts the replayed user-days.
private struct PipeBenchSink: RunSink {
  var days = 0.0
  mutating func consume(_ result: UserResult, config: RunConfiguration) throws {
    days += (result.trace.end - result.trace.start) / 86_400
  }
}
