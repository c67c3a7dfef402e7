import FetchBenchmark
import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation
import Testing

/// The up-front checks of a run: its policy strings, its output, and the
/// work its policies' settings imply for a whole device.
@Suite("Run estimates")
struct RunEstimateTests {
  /// A user of `days` days with `apps` apps opened round-robin every
  /// `gap` s, and a WiFi change every hour.
  static func user(days: Double, apps: Int, gap: Double) -> UserTrace {
    var u = UserTrace(user: "u", start: 1_767_571_200, end: 1_767_571_200 + days * 86_400)
    let names = (0..<apps).map { u.appIndex("a\($0)") }
    var t = u.start + 1, k = 0
    while t < u.end {
      u.events.append(TraceEvent(time: t, kind: .open, app: names[k % apps], value: 10))
      if k % Int(3600 / gap) == 0 { u.events.append(TraceEvent(time: t, kind: .network, value: Double(NetworkKind.wifi.rawValue))) }
      t += gap
      k += 1
    }
    return u
  }

  static func config(_ policies: [String], apps: AppSelection) throws -> RunConfiguration {
    RunConfiguration(tracePath: "t.csv", policies: try policies.map { try PolicySpec(parsing: $0) }, apps: apps)
  }

  @Test("--policy strings: at most 10,000, each at most 4,096 bytes, as in experiment files")
  func policyStrings() {
    #expect(RunConfiguration.refusal(policyStrings: Array(repeating: "never", count: 10_000)) == nil)
    let many = RunConfiguration.refusal(policyStrings: Array(repeating: "never", count: 10_001))
    #expect(many?.contains("10001 --policy options are more than 10000") == true, "\(String(describing: many))")
    let long = String(repeating: "x", count: 4_097)
    let m = RunConfiguration.refusal(policyStrings: ["never", long])
    #expect(m?.contains("--policy #2 of 4097 bytes is longer than 4096 bytes") == true && m?.contains(long) == false)
  }

  @Test("the output estimate grows with each row's policy name, and without event files only the summary counts")
  func outputEstimate() throws {
    let short = try Self.config(["periodic:1m"], apps: .top(3)).estimatedOutput(traceBytes: 1e6)
    let named = "per-app:" + (0..<300).map { "a\($0)=never" }.joined(separator: ";") + ";*=periodic:1m"
    let long = try Self.config([named], apps: .top(3)).estimatedOutput(traceBytes: 1e6)
    #expect(long.eventBytes > 10 * short.eventBytes, "\(short) → \(long)")
    var none = try Self.config(["periodic:1m"], apps: .top(3))
    none.recordEvents = false
    #expect(none.estimatedOutput(traceBytes: 1e6).eventBytes == 0)
    var limits = ResourceLimits()
    limits.maxOutputBytes = 1e6
    #expect(try Self.config(["periodic:1m"], apps: .top(3)).checkOutput(traceBytes: 1e6, limits: limits) != nil)
    #expect(none.checkOutput(traceBytes: 1e6, limits: limits) == nil)
  }

  @Test("a policy's work sums every app's checks and decision opportunities: a day's check refuses at every other app's open")
  func deviceWork() throws {
    let u = Self.user(days: 2, apps: 3, gap: 600)
    let limits = ResourceLimits()
    let cfg = try Self.config(["planner:horizon=7d,step=1m,check=1d"], apps: .top(3))
    // 10,080² steps a decision; ≈ 192 opportunities an app a day.
    #expect(throws: TraceFormatError.self) {
      try checkReplayBudget(u, cfg, limits: limits, file: "t.csv", line: 9)
    }
    do {
      try checkReplayBudget(u, cfg, limits: limits, file: "t.csv", line: 9)
    } catch let e as TraceFormatError {
      #expect(e.description.contains("for 3 apps") && e.description.contains("per device"), "\(e)")
    }
    // One app's checks alone (2 a window) stay far under the limit.
    let work = try #require(cfg.policies[0].settingWork)
    #expect(work.stepsPerDay * 2 < limits.maxPolicySteps)
    // The defaults fit a year of 20 apps opened every 5 minutes.
    let busy = Self.user(days: 365, apps: 20, gap: 300)
    let defaults = try Self.config(["planner", "ios-minimum", "imp", "ios-custom:1h", "bg-app-refresh"], apps: .top(20))
    #expect(throws: Never.self) { try checkReplayBudget(busy, defaults, limits: limits, file: "t.csv", line: 9) }
  }

  @Test("bg-app-refresh at earliest=0s, spacing=0s: fetches estimated at one a decision, within the limit")
  func zeroSpacing() throws {
    let u = Self.user(days: 7, apps: 3, gap: 600)
    let cfg = try Self.config(["bg-app-refresh:earliest=0s,spacing=0s"], apps: .top(3))
    #expect(throws: Never.self) { try checkReplayBudget(u, cfg, file: "t.csv", line: 9) }
  }
}
