import FetchModels
import FetchTraces
import FetchWorld
import Foundation
import Testing

@testable import FetchSimulation

/// Periodic sync every I under Poisson(λ) changes (Cho & Garcia-Molina, TODS 2003):
///   F̄ = (1 − e^(−λI)) / (λI)
///   Ā = I·(1/2 − 1/(λI) + (1 − e^(−λI))/(λI)²)
///   AoI (content stamped at its last change) = 1/λ + I/2
@Suite("Closed forms: periodic sync under Poisson changes")
struct ReplayClosedFormTests {
  static func expected(lambda: Double, interval i: Double) -> (fresh: Double, age: Double, aoi: Double) {
    let x = lambda * i
    let f = (1 - exp(-x)) / x
    let a = i * (0.5 - 1 / x + (1 - exp(-x)) / (x * x))
    return (f, a, 1 / lambda + i / 2)
  }

  @Test("reference check values λ = 1/h, I = 30 min: F̄ = 0.787, Ā = 133 s")
  func referenceCheckValues() {
    let e = Self.expected(lambda: 1.0 / 3600, interval: 1800)
    #expect(abs(e.fresh - 0.787) < 0.0005)
    #expect(abs(e.age - 133) < 0.5)
  }

  @Test(
    "engine reproduces F̄, Ā and AoI with foreground refresh off",
    arguments: [(1.0, 1800.0), (2.0, 3600.0), (0.5, 900.0), (4.0, 600.0)])
  func engineMatchesClosedForm(ratePerHour: Double, interval: Double) {
    var world = TestTraces.instantWorld
    world.replay.foregroundRefresh = false
    world.content.ratePerHour = ratePerHour
    let days = 300.0
    let trace = TestTraces.user(seed: 7, days: days, opensPerHour: 3)
    let user = PreparedUser(trace: trace, world: world)
    let app = Int32(trace.apps.firstIndex(of: "a")!)
    let content = ContentTimeline(trace: trace, app: app, world: world, seed: 11)
    var p = PeriodicPolicy(interval: interval)
    let r = replay(&p, user: user, app: app, content: content, options: ReplayOptions(recordEvents: false)).summary
    let e = Self.expected(lambda: ratePerHour / 3600, interval: interval)
    // Sampling error: ~days·86400/I independent intervals; 5 standard errors.
    let n = days * 86_400 / interval
    let freshTol = 5 * (e.fresh * (1 - e.fresh) / n).squareRoot() + 0.002
    #expect(abs(r.timeFreshRatio - e.fresh) < freshTol, "time-averaged F̄ \(r.timeFreshRatio) vs \(e.fresh)")
    #expect(abs(r.timeAvgAgeS - e.age) < 0.05 * e.age + 2, "time-averaged Ā \(r.timeAvgAgeS) vs \(e.age)")
    // Open-sampled (Poisson opens, PASTA) agree within the opens' sampling error.
    let opensTolF = 5 * (e.fresh * (1 - e.fresh) / Double(r.opens)).squareRoot() + freshTol
    #expect(abs(r.freshRatio - e.fresh) < opensTolF, "open-sampled fresh \(r.freshRatio) vs \(e.fresh)")
    #expect(abs(r.meanAgeS - e.age) < 0.1 * e.age + 2, "open-sampled age \(r.meanAgeS) vs \(e.age)")
    #expect(abs(r.meanAoiS - e.aoi) < 0.05 * e.aoi, "open-sampled AoI \(r.meanAoiS) vs \(e.aoi)")
  }

  @Test("never: age grows as the time since the first missed update; F̄ = e^(−λt) decays")
  func neverIsAlwaysStaleEventually() {
    var world = TestTraces.instantWorld
    world.replay.foregroundRefresh = false
    let trace = TestTraces.user(seed: 3, days: 5, opensPerHour: 2)
    let user = PreparedUser(trace: trace, world: world)
    let content = ContentTimeline(trace: trace, app: 0, world: world, seed: 1)
    var p = NeverPolicy()
    let r = replay(&p, user: user, app: 0, content: content)
    for o in r.opens {
      let firstUpdate = content.updates.first ?? .infinity
      #expect(o.fresh == (o.time < firstUpdate))
      if !o.fresh { #expect(abs(o.ageS - (o.time - firstUpdate)) < 1e-6) }
    }
  }
}
