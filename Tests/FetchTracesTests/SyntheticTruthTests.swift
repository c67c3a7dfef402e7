import FetchSupport
import Testing

@testable import FetchTraces

/// The generator's truth (``SyntheticTruth``) against the events it draws:
/// integrated over the window, the intensities give the counts.
@Suite("Synthetic generator truth")
struct SyntheticTruthTests {
  /// Σ over the window of `rate(t)` × 300 s: exact for rates constant in
  /// 15-min bins and local hours.
  static func integral(from a: Double, to b: Double, _ rate: (Double) -> Double) -> Double {
    stride(from: a, to: b, by: 300).reduce(0) { $0 + rate($1 + 150) * 300 }
  }

  @Test("the open intensity and the update rate integrate to the opens and updates drawn")
  func integrals() {
    let pop = SyntheticPopulation(seed: 3, days: 14)
    var opens = (seen: 0.0, expected: 0.0), updates = (seen: 0.0, expected: 0.0)
    var top = (seen: 0.0, expected: 0.0)
    for i in 0..<40 {
      let u = pop.user(i)
      let truth = pop.truth(i)
      #expect(truth.user == u.user)
      var counts = [Double](repeating: 0, count: u.apps.count), ups = counts
      for e in u.events where e.app >= 0 {
        if e.kind == .open { counts[Int(e.app)] += 1 } else if e.kind == .update { ups[Int(e.app)] += 1 }
      }
      let most = counts.indices.max { counts[$0] < counts[$1] }!
      for (a, name) in u.apps.enumerated() {
        let x = Self.integral(from: u.start, to: u.end) { truth.openIntensity(app: name, at: $0) }
        opens.seen += counts[a]
        opens.expected += x
        if a == most { (top.seen, top.expected) = (top.seen + counts[a], top.expected + x) }
        if truth.updateRate(app: name, at: u.start) != nil {
          updates.seen += ups[a]
          updates.expected += Self.integral(from: u.start, to: u.end) { truth.updateRate(app: name, at: $0)! }
        } else {
          #expect(ups[a] == 0, "\(u.user) \(name): update rows without a rate")
        }
      }
    }
    // Poisson counts of about 10^4 (opens) and 10^4 (updates): a few % is
    // several standard errors; the opens lose the pickups pushed past the
    // window's end by a session.
    #expect(abs(opens.seen / opens.expected - 1) < 0.03, "opens \(opens)")
    #expect(abs(top.seen / top.expected - 1) < 0.05, "top apps \(top)")
    #expect(abs(updates.seen / updates.expected - 1) < 0.03, "updates \(updates)")
  }

  @Test("the truth of a user id is the user's; other ids have none")
  func ids() {
    let pop = SyntheticPopulation(seed: 3, days: 2)
    #expect(pop.truth(user: "u00003")?.user == "u00003")
    for id in ["x", "u0", "u00000", "u3", "v00001", "u-0001"] { #expect(pop.truth(user: id) == nil, "\(id)") }
    let t = pop.truth(2)
    #expect(t.openIntensity(app: "no-such-app", at: pop.user(2).start + 3600) == 0)
    #expect(t.openIntensity(app: pop.user(2).apps[0], at: pop.user(2).start - 1) == 0)
  }
}
