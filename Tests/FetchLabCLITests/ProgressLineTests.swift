import Foundation
import Testing

@testable import fetchlab

/// The progress line's figures on worked examples: the ETA comes from the
/// share of the run's estimated work, not from the units counted.
@Suite("Progress line")
struct ProgressLineTests {
  let start = Date(timeIntervalSince1970: 1_000_000)

  func line(done: Int, work: Double, computed: Double? = nil, updateAt: Double, now: Double) -> String {
    let s = ProgressLine.State(
      done: done, total: 12, unit: "units", workDone: work, workComputed: computed ?? work,
      at: start + updateAt)
    return ProgressLine.text(label: "experiment", s, elapsed: now, now: start + now, start: start)
  }

  @Test("ETA from the work estimate: 3 of 12 units holding half the work, 30 s in: 30 s left, not 90 s")
  func etaFromWorkEstimate() {
    // 25 % of the work in 30 s: 75 % takes 90 s more.
    #expect(line(done: 3, work: 0.25, updateAt: 30, now: 30) == "experiment: 3 of 12 units, 30 s, 25 %, ETA 1 min 30 s")
    // The same 3 units, estimated to hold half of the run's work: 30 s left
    // (a count of units would say 90 s).
    #expect(line(done: 3, work: 0.5, updateAt: 30, now: 30) == "experiment: 3 of 12 units, 30 s, 50 %, ETA 30 s")
    // Half the work done, but half of that reused from an earlier run (it
    // took no time): the 25 % computed in 30 s gives 60 s for the 50 % left.
    #expect(line(done: 3, work: 0.5, computed: 0.25, updateAt: 30, now: 30) == "experiment: 3 of 12 units, 30 s, 50 %, ETA 60 s")
  }

  @Test("between updates the ETA counts down; past it, the rate of the whole run so far")
  func etaCountsDown() {
    // 10 s after the update of the first example: 90 − 10 = 80 s.
    #expect(line(done: 3, work: 0.25, updateAt: 30, now: 40) == "experiment: 3 of 12 units, 40 s, 25 %, ETA 80 s")
    // 100 s after it (slower than estimated): 130 s × 0.75 / 0.25 = 390 s.
    #expect(line(done: 3, work: 0.25, updateAt: 30, now: 130) == "experiment: 3 of 12 units, 2 min 10 s, 25 %, ETA 6 min 30 s")
    // No work computed yet: no ETA.
    #expect(line(done: 0, work: 0, updateAt: 5, now: 5) == "experiment: 0 of 12 units, 5 s, 0 %")
  }
}
