import FetchTestSupport
import FetchTraces
import FetchWorld
import Testing


/// A trace's `update` rows decide an app's content times for the whole
/// window: the held-out part of a train/test split must not fall back to
/// modelled Poisson updates because its own part holds none of the rows.
@Suite("Trace updates across a train/test split")
struct ContentSplitTests {
  /// Ten days; app "a" updates hourly in the first six only, app "b" never.
  static func trace() -> UserTrace {
    var t = UserTrace(user: "u", start: 0, end: 10 * 86_400)
    let a = t.appIndex("a")
    _ = t.appIndex("b")
    t.events = stride(from: 3_600.0, to: 6 * 86_400, by: 3_600).map { TraceEvent(time: $0, kind: .update, app: a) }
    return t
  }

  @Test("held-out part without rows of its own keeps the trace's (none), not the model's")
  func heldOutKeepsTraceSource() {
    let world = WorldParameters()  // auto source, 1 update per hour modelled
    let (train, test) = Self.trace().split(at: 7.5 * 86_400)
    let held = ContentTimeline(trace: test, app: 0, world: world, seed: 1)
    #expect(held.fromTrace)
    #expect(held.updates.isEmpty)  // the trace says: no updates after day 6
    let trained = ContentTimeline(trace: train, app: 0, world: world, seed: 1)
    #expect(trained.fromTrace && trained.updates.count == 6 * 24 - 1)
    // An app without rows anywhere is still modelled in both parts.
    let b = ContentTimeline(trace: test, app: 1, world: world, seed: 1)
    #expect(!b.fromTrace && !b.updates.isEmpty)
  }

  @Test("rows on both sides: the held-out part has exactly the trace's rows in its window")
  func bothSides() {
    var t = Self.trace()
    t.events.append(TraceEvent(time: 9 * 86_400, kind: .update, app: 0))
    let (_, test) = t.split(at: 7.5 * 86_400)
    let held = ContentTimeline(trace: test, app: 0, world: WorldParameters(), seed: 1)
    #expect(held.fromTrace && held.updates == [9 * 86_400])
  }

  @Test("content.source = model still ignores the rows in either part")
  func modelIgnoresRows() throws {
    var world = WorldParameters()
    world.content.source = .model
    let (_, test) = Self.trace().split(at: 7.5 * 86_400)
    let held = ContentTimeline(trace: test, app: 0, world: world, seed: 1)
    #expect(!held.fromTrace && !held.updates.isEmpty)
  }
}
