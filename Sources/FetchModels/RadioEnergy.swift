/// A time interval during which a radio is connected and busy, in Unix s.
package struct BusyInterval: Sendable, Equatable {
  package var start: Double
  package var end: Double
  package init(start: Double, end: Double) {
    self.start = start
    self.end = end
  }
}

extension RadioProfile {
  /// Radio energy of a set of busy intervals, J, up to a constant that is
  /// the same for any two sets that agree outside the window they cover.
  ///
  /// Overlapping intervals are merged into components. Each component costs
  /// its promotion (from idle for the first; after the preceding quiet gap
  /// otherwise), β for its length, and the tail energy of the gap after it
  /// (the whole tail after the last one). The promotion's time is counted at
  /// promotion power instead of β. Used as a difference
  /// `E(S ∪ {f}) − E(S)`: the marginal energy of a fetch `f` given all other
  /// radio activity `S`, which makes a fetch inside a tail that someone else
  /// paid for cost only the increment.
  ///
  /// - Parameter intervals: sorted by `start`.
  /// - Complexity: O(n).
  package func energy(ofSorted intervals: [BusyInterval]) -> Double {
    var e = 0.0
    var cur: BusyInterval?
    var prevEnd = -Double.infinity
    for iv in intervals {
      if let c = cur, iv.start <= c.end {
        cur!.end = max(c.end, iv.end)
        continue
      }
      if let c = cur {
        e += componentCost(c, after: prevEnd)
        prevEnd = c.end
      }
      cur = iv
    }
    guard let c = cur else { return 0 }
    e += componentCost(c, after: prevEnd)
    return e + tailEnergy(gap: .infinity)
  }

  private func componentCost(_ c: BusyInterval, after prevEnd: Double) -> Double {
    let gap = c.start - prevEnd
    let promo = promotion(afterGap: gap)
    let lead = prevEnd == -.infinity ? 0 : tailEnergy(gap: gap)
    return lead + promo.energyJ - connectedPowerW * min(promo.timeS, c.end - c.start)
      + connectedPowerW * (c.end - c.start)
  }
}
