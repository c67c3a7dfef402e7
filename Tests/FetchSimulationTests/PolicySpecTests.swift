import FetchModels
import FetchTraces
import FetchWorld
import Testing

@testable import FetchSimulation

@Suite("Policy strings and the whole zoo")
struct PolicySpecTests {
  static let specs = [
    "never", "periodic:30m", "oracle", "oracle-budget:3", "oracle-budget:20J", "ios-minimum", "ios-minimum:price=0.1",
    "ios-custom:1h", "silent-push", "silent-push:rate=2", "android-workmanager:15m", "android-workmanager:1h,unmetered=1",
    "android-standby", "tailender:30m", "tailender:1h,deadline=20m", "imp", "imp:energy_budget_pct=1",
  ]

  @Test("every policy string parses, prints canonically and round-trips", arguments: specs)
  func roundTrip(_ s: String) throws {
    let p = try PolicySpec(parsing: s)
    #expect(p.description == s)
    #expect(try PolicySpec(parsing: p.description) == p)
  }

  @Test("bad policy strings are errors naming the string", arguments: [
    "android-workmanager", "tailender:soon", "oracle-budget:lots", "silent-push:rate=x", "imp:unknown=1", "zoo",
  ])
  func bad(_ s: String) {
    do {
      _ = try PolicySpec(parsing: s)
      Issue.record("no error for \(s)")
    } catch let e as PolicySpecError {
      #expect(e.description.contains(s.split(separator: ":").first.map(String.init) ?? s))
    } catch {
      Issue.record("unexpected \(error)")
    }
  }

  @Test("bad policy strings have a stable code and locate the string", arguments: [
    ("zoo", "unknown-policy"), ("periodic", "missing-argument"), ("never:1h", "unexpected-argument"),
    ("periodic:soon", "bad-value"), ("ios-minimum:price=-1", "bad-value"), ("imp:unknown=1", "unknown-setting"),
    ("ios-minimum:price=1,price=2", "repeated-setting"),
  ])
  func codes(_ s: String, _ code: String) {
    do {
      _ = try PolicySpec(parsing: s)
      Issue.record("no error for \(s)")
    } catch let e as PolicySpecError {
      #expect(e.code.description == code, "\(s): \(e)")
      #expect(e.location == InputLocation(field: s))
      #expect(e.description == e.message)
    } catch {
      Issue.record("unexpected \(error)")
    }
  }

  @Test("every policy replays a random week with sane results", arguments: specs)
  func replays(_ s: String) throws {
    let spec = try PolicySpec(parsing: s)
    let trace = TestTraces.user(seed: 17, days: 10, opensPerHour: 1.5, networkChangesPerDay: 6)
    var w = WorldParameters()
    w.content.ratePerHour = 2
    let (train, test) = trace.split(at: trace.start + 5 * 86_400)
    let user = PreparedUser(trace: test, world: w)
    let content = ContentTimeline(trace: test, app: 0, world: w, seed: 2)
    let population = try HabitFitter().fitPopulation([HabitSample(trace: train, app: 0)])
    let r = spec.replay(
      user: user, app: 0, content: content, seed: 2, recordEvents: true,
      learning: LearningContext(training: train, population: population))
    let oracle = PolicySpec.oracle.replay(user: user, app: 0, content: content, seed: 2, recordEvents: true)
    #expect(r.summary.opens == oracle.summary.opens)
    #expect(r.summary.energyJ >= 0 && r.summary.fetches == r.fetches.count)
    #expect(r.summary.newData + r.summary.noData + r.summary.failed == r.summary.fetches)
    for (a, b) in zip(r.opens, oracle.opens) { #expect(a.ageS >= b.ageS, "\(s) fresher than the oracle at \(a.time)") }
    for f in r.fetches { #expect(f.start >= test.start && f.energyJ >= 0) }
  }
}
