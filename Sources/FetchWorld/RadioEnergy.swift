/// A time interval during which a radio is connected and busy, in Unix s.
///
/// `@usableFromInline`, like ``RadioEnergySum`` and ``RadioModel``: the
/// `@inlinable` members of a `package` type are inlined into the package's
/// other modules only when the type itself is `@usableFromInline` (Swift
/// 6.3; otherwise they stay calls, and generic ones unspecialized).
@usableFromInline package struct BusyInterval: Sendable, Equatable {
  @usableFromInline package var start: Double
  @usableFromInline package var end: Double
  @inlinable package init(start: Double, end: Double) {
    self.start = start
    self.end = end
  }
}

/// ``RadioModel/energy(ofSorted:)`` computed one interval at a time: feed
/// intervals sorted by start with ``add(_:_:)``, read ``total(_:)``. The
/// state is three numbers, so a caller can fork it (copy) to price the same
/// intervals with and without one more, in one pass and with the same
/// arithmetic, hence the same bits, as two calls of
/// ``RadioModel/energy(ofSorted:)``.
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
  @inlinable package mutating func add(_ iv: BusyInterval, _ radio: RadioModel) {
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
  @inlinable package func total(_ radio: RadioModel) -> Double {
    guard cur.start <= cur.end else { return 0 }
    return sum + radio.componentCost(cur, after: prevEnd) + radio.terms.wholeTailJ
  }
}
