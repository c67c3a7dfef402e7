/// A time interval during which a radio is connected and busy, in Unix s.
///
/// `@usableFromInline`, like ``RadioEnergySum`` and
/// ``RadioComponentCosts``: the `@inlinable` members of a `package` type
/// are inlined into the package's other modules only when the type itself
/// is `@usableFromInline` (Swift 6.3; otherwise they stay calls, and
/// generic ones unspecialized).
@usableFromInline package struct BusyInterval: Sendable, Equatable {
  @usableFromInline package var start: Double
  @usableFromInline package var end: Double
  @inlinable package init(start: Double, end: Double) {
    self.start = start
    self.end = end
  }
}

/// What ``RadioEnergySum`` reads of a radio: the cost of one merged
/// component and the whole tail's energy. ``RadioProfile`` is the
/// reference; the replay engine prices from a stage table with the same
/// operations in the same order, hence the same bits.
@usableFromInline package protocol RadioComponentCosts {
  /// The cost of one merged component `c` after a quiet gap that ended the
  /// previous component at `prevEnd` (`-∞` for the first), J.
  func componentCost(_ c: BusyInterval, after prevEnd: Double) -> Double
  /// The tail's energy after the last component, J.
  var wholeTailEnergyJ: Double { get }
}

extension RadioProfile: RadioComponentCosts {
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
    var e = RadioEnergySum()
    for iv in intervals { e.add(iv, self) }
    return e.total(self)
  }

  /// The cost of one merged component `c` after a quiet gap that ended the
  /// previous component at `prevEnd` (`-∞` for the first): the tail spent
  /// in the gap, the promotion, and β for the component's length, the
  /// promotion's own time counted at promotion power instead.
  package func componentCost(_ c: BusyInterval, after prevEnd: Double) -> Double {
    let gap = c.start - prevEnd
    let promo = promotion(afterGap: gap)
    let lead = prevEnd == -.infinity ? 0 : tailEnergy(gap: gap)
    return lead + promo.energyJ - connectedPowerW * min(promo.timeS, c.end - c.start)
      + connectedPowerW * (c.end - c.start)
  }
  /// The whole tail's energy, J: ``tailEnergy(gap:)`` at ∞.
  package var wholeTailEnergyJ: Double { tailEnergy(gap: .infinity) }

}

/// ``RadioProfile/energy(ofSorted:)`` computed one interval at a time: feed
/// intervals sorted by start with ``add(_:_:)``, read ``total(_:)``. The
/// state is three numbers, so a caller can fork it (copy) to price the same
/// intervals with and without one more, in one pass and with the same
/// arithmetic, hence the same bits, as two calls of
/// ``RadioProfile/energy(ofSorted:)``.
@usableFromInline package struct RadioEnergySum: Sendable {
  /// Costs of the finished components, J, summed in order.
  @usableFromInline var sum = 0.0
  /// The component being merged (`start > end` while there is none).
  @usableFromInline var cur = BusyInterval(start: .infinity, end: -.infinity)
  /// The end of the last finished component, `-∞` before the first.
  @usableFromInline var prevEnd = -Double.infinity

  @inlinable package init() {}

  /// Adds `iv`, whose start is at or after every earlier interval's start.
  ///
  /// - Complexity: O(tail stages).
  @inlinable package mutating func add<R: RadioComponentCosts>(_ iv: BusyInterval, _ radio: R) {
    if cur.start <= cur.end {
      if iv.start <= cur.end {
        cur.end = max(cur.end, iv.end)
        return
      }
      sum += radio.componentCost(cur, after: prevEnd)
      prevEnd = cur.end
    }
    cur = iv
  }

  /// The energy of everything added, J (0 for nothing).
  @inlinable package func total<R: RadioComponentCosts>(_ radio: R) -> Double {
    guard cur.start <= cur.end else { return 0 }
    return sum + radio.componentCost(cur, after: prevEnd) + radio.wholeTailEnergyJ
  }
}
