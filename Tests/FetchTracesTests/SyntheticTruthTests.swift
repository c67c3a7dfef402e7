import FetchSupport
import Foundation
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

  /// Point-process log-likelihood of `app`'s opens in `trace` under `rate`
  /// (which may read the state `record` keeps): Σ log λ(tᵢ) − ∫ λ, the
  /// integral by midpoints of at most 30 s, per open of the app.
  static func logLikelihood(
    _ trace: UserTrace, app: Int32, rate: (Double) -> Double, record: (TraceEvent) -> Void
  ) -> Double {
    var ll = 0.0, count = 0, t = trace.start
    for e in trace.events where e.kind == .open {
      let n = max(1, Int(((e.time - t) / 30).rounded(.up)))
      let h = (e.time - t) / Double(n)
      for k in 0..<n { ll -= rate(t + (Double(k) + 0.5) * h) * h }
      if e.app == app {
        ll += log(max(rate(e.time), 1e-300))
        count += 1
      }
      record(e)
      t = e.time
    }
    return ll / Double(max(1, count))
  }

  @Test("given the opens seen, the conditional intensity explains each app's opens better than the marginal one")
  func conditionalLikelihood() {
    let pop = SyntheticPopulation(seed: 5, days: 14)
    var gains: [Double] = []
    for i in 0..<8 {
      let u = pop.user(i)
      let truth = pop.truth(i)
      var counts = [Int](repeating: 0, count: u.apps.count)
      for e in u.events where e.kind == .open { counts[Int(e.app)] += 1 }
      for a in counts.indices.sorted(by: { counts[$0] > counts[$1] }).prefix(3) {
        let name = u.apps[a]
        let marginal = Self.logLikelihood(u, app: Int32(a), rate: { truth.openIntensity(app: name, at: $0) }, record: { _ in })
        var opens = ConditionalOpens(truth: truth)
        let conditional = Self.logLikelihood(
          u, app: Int32(a), rate: { opens.intensity(app: name, at: $0) },
          record: { opens.record(openAt: $0.time, length: $0.value, app: u.apps[Int($0.app)]) })
        gains.append(conditional - marginal)
      }
    }
    let mean = gains.reduce(0, +) / Double(gains.count)
    #expect(mean > 0.3, "mean gain \(mean) nats per open")
    #expect(gains.filter { $0 > 0 }.count >= gains.count * 9 / 10, "\(gains)")
  }
}
