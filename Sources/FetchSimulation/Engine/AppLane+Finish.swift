import FetchModels
import FetchSupport
import FetchTraces

extension ReplayEngine {
  mutating func finish(_ j: Int) -> AppReplay {
    lanes[j].integrate(to: u.trace.end)
    return lanes[j].finish(span: u.trace.end - u.trace.start)
  }
}

extension AppLane {
  /// The app's replay: its figures worked out over a window of `span` s,
  /// its records moved out of the lane (not copied: the lane is spent).
  mutating func finish(span: Double) -> AppReplay {
    var s = summary
    var ages: [Double] = []
    var waits: [Double] = []
    var opens: [OpenRecord] = []
    var fetches: [FetchRecord] = []
    var chunks: [TransferChunkRecord] = []
    swap(&ages, &self.ages)
    swap(&waits, &self.waits)
    swap(&opens, &self.opens)
    swap(&fetches, &self.fetches)
    swap(&chunks, &transferChunks)
    if unseenNewData { s.wasted += 1 }
    let n = s.opens
    let fresh = n - ages.count
    if n == 0 {
      // No scored opens: staleness is undefined, not zero.
      s.meanAgeS = .nan
      s.p50AgeS = .nan
      s.p90AgeS = .nan
      s.p99AgeS = .nan
      s.freshRatio = .nan
      s.meanAoiS = .nan
    } else {
      // Fresh opens have age 0 (they add nothing to the sum); the stale
      // ages are summed in time order, their quantiles found by selection
      // (a sort cost a fifth of a `never` replay).
      s.meanAgeS = ages.reduce(0, +) / Double(n)
      ages.withUnsafeMutableBufferPointer { p in
        var placed = 0
        s.p50AgeS = Quantile.type7(zeros: fresh, selectingIn: p, 0.5, placed: &placed)
        s.p90AgeS = Quantile.type7(zeros: fresh, selectingIn: p, 0.9, placed: &placed)
        s.p99AgeS = Quantile.type7(zeros: fresh, selectingIn: p, 0.99, placed: &placed)
      }
      s.freshRatio = Double(fresh) / Double(n)
      s.meanAoiS = aoiSum / Double(n)
    }
    if zeroWaits + waits.count > 0 {
      s.meanWaitS = waits.reduce(0, +) / Double(zeroWaits + waits.count)
      // Selected in a copy on the stack: the waits stay in time order.
      s.p90WaitS = withUnsafeTemporaryAllocation(of: Double.self, capacity: waits.count) { p in
        _ = p.initialize(fromContentsOf: waits)
        var placed = 0
        return Quantile.type7(zeros: zeroWaits, selectingIn: p, 0.9, placed: &placed)
      }
    }
    if span > 0 {
      s.timeAvgAgeS = ageIntegral / span
      s.timeFreshRatio = freshTime / span
    }
    return AppReplay(
      summary: s, opens: opens, fetches: fetches, staleAges: ages, freshOpens: fresh, waits: waits,
      zeroWaits: zeroWaits, transferChunks: chunks)
  }
}
