// guide:begin
import FetchSimulation
import FetchTraces

/// Fetches `delay` seconds after each open of the app (a later open moves
/// the fetch), so the next open finds content refreshed since the last one.
struct AfterOpenPolicy: FetchPolicy {
  static var observedEvents: ObservedEvents { .appOpens }
  let delay: Double

  mutating func observe(_ event: TraceEvent, _ ctx: inout PolicyContext) {
    ctx.setTimer(at: event.time + delay)
  }

  mutating func timerFired(_ ctx: inout PolicyContext) {
    ctx.requestFetch()
  }
}

/// `after-open:<delay>`: everything FetchLab needs to know about the policy.
enum AfterOpenFamily: PolicyFamily {
  static let info = FamilyInfo(
    "after-open", .other(":<delay>"), example: "after-open:10m",
    style: PolicyStyle(color: "#44AA99", marker: .hexagon),
    summary: "one fetch <delay> after each open of the app; a later open moves it")

  static func parse(_ argument: String?, spec: String) throws -> Double {
    guard let a = argument, let delay = parseDuration(a), delay >= 1 else {
      throw PolicySpecError("policy '\(spec)': needs a delay of at least 1 s, e.g. after-open:10m")
    }
    return delay
  }

  static func describe(_ delay: Double) -> String { "after-open:" + formatDuration(delay) }

  static func expectedFetchesPerDay(_ delay: Double) -> Double { 10 }

  static func makePolicies(_ delay: Double, _ device: DeviceReplayInput) -> (Int32, ContentTimeline) -> AfterOpenPolicy {
    { _, _ in AfterOpenPolicy(delay: delay) }
  }
}
// guide:end

import FetchModels
import FetchWorld
import Foundation
import Testing

private let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
  .deletingLastPathComponent().path

/// `docs/adding-a-policy.md`, followed to the letter: the policy above is
/// the guide's example, registered the way the guide says.
@Suite("Adding a policy (the guide's example)")
struct AddingAPolicyTests {
  /// Registers the example once per test process.
  static let registration: Void = PolicyRegistry.register(AfterOpenFamily.self)

  @Test("the registered policy parses, prints canonically, is suggested, and replays as hand-computed")
  func registeredPolicyWorks() throws {
    _ = Self.registration
    let spec = try PolicySpec(parsing: "after-open:600")
    #expect(spec.description == "after-open:10m")
    #expect(PolicySpec.syntax.contains("after-open:<delay>"))
    #expect(throws: PolicySpecError.self) { try PolicySpec(parsing: "after-open") }
    do { _ = try PolicySpec(parsing: "after-opn:5m") } catch { #expect("\(error)".contains("did you mean 'after-open'?")) }
    // Opens at T0 + 100, 200 and 5000 s: the open at 200 moves the first
    // fetch from 700 to 800; the open at 5000 brings one at 5600.
    let t0 = 1_700_000_000.0
    var trace = UserTrace(user: "u", timeZone: .utc, start: t0, end: t0 + 86_400)
    let app = trace.appIndex("news")
    trace.events = [100.0, 200, 5000].map { TraceEvent(time: t0 + $0, kind: .open, app: app, value: 30) }
    let world = TestTraces.instantWorld
    let user = PreparedUser(trace: trace, world: world)
    let content = ContentTimeline(trace: trace, app: app, world: world, seed: 1)
    let r = spec.replay(user: user, app: app, content: content, seed: 1, recordEvents: true)
    #expect(r.fetches.map { $0.start - t0 } == [800, 5600])
  }

  @Test("the guide's code is this file's code, word for word")
  func guideMatchesTest() throws {
    let guide = try String(contentsOfFile: packageRoot + "/docs/adding-a-policy.md", encoding: .utf8)
    let test = try String(contentsOfFile: #filePath, encoding: .utf8)
    func between(_ s: String, _ a: String, _ b: String) throws -> String {
      let r = try #require(s.range(of: a))
      let e = try #require(s.range(of: b, range: r.upperBound..<s.endIndex))
      return String(s[r.upperBound..<e.lowerBound])
    }
    let shown = try between(guide, "<!-- example:begin -->\n```swift\n", "```\n<!-- example:end -->")
    let code = try between(test, "// guide:begin\n", "// guide:end\n")
    #expect(shown == code)
  }
}
