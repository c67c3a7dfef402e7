import FetchSupport
import FetchTraces
import Foundation
import Testing

@testable import FetchModels

@Suite("HabitOpenBound")
struct HabitOpenBoundTests {
  /// Habit models of synthetic users (fitted), and models with larger and
  /// opposite-signed shape and recency coefficients.
  static func models() -> [HabitModel] {
    var out: [HabitModel] = []
    for u in 0..<3 {
      let trace = SyntheticPopulation(seed: 21, days: 8).user(u)
      var counts: [Int32: Int] = [:]
      for e in trace.events where e.kind == .open { counts[e.app, default: 0] += 1 }
      for app in counts.sorted(by: { ($0.value, $1.key) > ($1.value, $0.key) }).prefix(2).map(\.key) {
        out.append(HabitFitter().fit(HabitSample(trace: trace, app: app, from: trace.start, to: trace.end), prior: nil))
      }
    }
    var rng = SplitMix64(seed: 5)
    for _ in 0..<6 {
      out.append(HabitModel(coefficients: (0..<12).map { j in (rng.uniform() * 2 - 1) * (j == 0 ? 4 : 2.5) }))
    }
    return out
  }

  /// Sunday 2026-11-01 00:00 UTC: New York's clocks go back at 06:00 UTC.
  static let dstEnd = 1_793_491_200.0

  @Test(
    "the bound is at least the open probability the memo computes, at checks, opportunities and extreme recencies",
    arguments: [TraceTimeZone.named("America/New_York"), .fixed(19_800), .utc])
  func boundHolds(zone: TraceTimeZone) {
    var rng = SplitMix64(seed: 17)
    var below = 0, count = 0, tight = 0
    for model in Self.models() {
      var memo = HabitOpenMemo(), bound = HabitOpenBound()
      var clockA = LocalClock(zone), clockB = LocalClock(zone)
      var t = Self.dstEnd - 3 * 86_400 + 0.375
      for k in 0..<2_000 {
        let now = k % 4 == 3 ? t + rng.uniform() * 300 : t
        let sinceApp: Double, sinceAny: Double
        switch k % 9 {
        case 0: (sinceApp, sinceAny) = (.infinity, .nan)
        case 1: (sinceApp, sinceAny) = (-30, 0)
        case 2: (sinceApp, sinceAny) = (7 * 86_400 - 400, 86_400 - 100)
        case 3: (sinceApp, sinceAny) = (rng.uniform() * 2, rng.uniform())
        default: (sinceApp, sinceAny) = (exp(rng.uniform() * 14), exp(rng.uniform() * 11))
        }
        let r = Recency(sinceAppOpenS: sinceApp, sinceAnyOpenS: sinceAny)
        let horizon = [900.0, 900, 1800, 300, 137.5, 7200][k % 6]
        let p = memo.probabilityOfOpen(model, within: horizon, from: now, clock: &clockA, recency: r)
        let b = bound.probabilityOfOpen(model, within: horizon, from: now, clock: &clockB, recency: r)
        count += 1
        if !(b >= p && b <= 1) { below += 1 }
        if b <= 3 * p { tight += 1 }
        if k % 4 != 3 { t += 300 }
      }
    }
    #expect(below == 0, "\(below) of \(count) bounds below the probability")
    // Informative: most bounds within 3× of the probability.
    #expect(tight > count / 2, "\(tight) of \(count)")
  }

  @Test("the bound holds at every five-minute slot's ends and between, both weekend flags")
  func slotBoundsHold() {
    var above = 0
    for model in Self.models() {
      let c = model.coefficients
      for w in [0.0, 1] {
        for k in 0..<288 {
          let b = HabitOpenBound.computeSlotBound(c, slot: k, weekend: w)
          for i in 0...16 {
            let a = 2 * Double.pi * (Double(k) + Double(i) / 16) / 288
            let v = HabitModel.timeLinearPredictor(c, weekend: w, sin: sin(a), cos: cos(a))
            if !(v <= b) { above += 1 }
          }
        }
      }
    }
    #expect(above == 0)
  }

  @Test("windows across a change of offset, over a day or of too many steps get the trivial bound")
  func trivialBounds() {
    let model = Self.models()[0]
    var bound = HabitOpenBound()
    var clock = LocalClock(.named("America/New_York"))
    let r = Recency(sinceAppOpenS: 600, sinceAnyOpenS: 60)
    let change = Self.dstEnd + 6 * 3600
    #expect(bound.probabilityOfOpen(model, within: 900, from: change - 600, clock: &clock, recency: r) == 1)
    #expect(bound.probabilityOfOpen(model, within: 90_000, from: change + 600, clock: &clock, recency: r) == 1)
    #expect(bound.probabilityOfOpen(model, within: 900, from: change + 600, clock: &clock, recency: r, step: 0.01) == 1)
    #expect(bound.probabilityOfOpen(model, within: 900, from: change + 600, clock: &clock, recency: r) < 1)
    #expect(bound.trivial == 3 && bound.evaluated == 1)
  }

  @Test("the recency features' bounds enclose the feature at every bucket's ends and between")
  func recencyBounds() {
    for (f, cap, scale) in [
      (RecencyFeatureBounds.app, HabitModel.appRecencyCapS, 3600.0), (RecencyFeatureBounds.any, HabitModel.anyRecencyCapS, 60),
    ] {
      var s = 1e-3
      while s < 2e6 {
        for x in [s.nextDown, s, s.nextUp] {
          let v = HabitModel.cappedLog1p(x, cap: cap, scale: scale)
          #expect(f.upper(x) >= v && f.lower(x) <= v, "s = \(x)")
          // Monotone: the bound at x holds for a larger (upper: smaller) argument.
          #expect(f.upper(x) >= HabitModel.cappedLog1p(x * 0.999, cap: cap, scale: scale))
          #expect(f.lower(x) <= HabitModel.cappedLog1p(x * 1.001, cap: cap, scale: scale))
        }
        s *= 1.013
      }
      #expect(f.upper(.nan) >= HabitModel.cappedLog1p(.nan, cap: cap, scale: scale))
      #expect(f.lower(.infinity) <= HabitModel.cappedLog1p(.infinity, cap: cap, scale: scale))
    }
  }
}
