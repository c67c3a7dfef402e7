/// Quantiles, one definition for every figure FetchLab reports: type 7 of
/// Hyndman & Fan (1996), the default of R and NumPy.
///
/// For n values in ascending order x₀ ≤ … ≤ xₙ₋₁ and q ∈ [0, 1], with
/// h = (n − 1)·q:
///
///     Q(q) = x⌊h⌋ + (h − ⌊h⌋)·(x⌊h⌋₊₁ − x⌊h⌋)
///
/// so Q(0) is the minimum, Q(1) the maximum, and Q is continuous and
/// non-decreasing in q. The quantile of no values is NaN.
package enum Quantile {
  /// Type 7 over `n` order statistics given by `x(k)` (ascending in k).
  /// Calls `x` at most twice.
  ///
  /// - Complexity: two calls of `x`.
  package static func type7(count n: Int, _ q: Double, orderStatistic x: (Int) -> Double) -> Double {
    guard n > 0 else { return .nan }
    let h = Double(n - 1) * min(max(q, 0), 1)
    let lo = Int(h.rounded(.down))
    let hi = min(lo + 1, n - 1)
    let a = x(lo)
    return hi == lo ? a : a + (h - Double(lo)) * (x(hi) - a)
  }

  /// Type 7 of ascending `sorted`; NaN when empty.
  ///
  /// - Complexity: O(1).
  package static func type7(sorted v: [Double], _ q: Double) -> Double {
    type7(count: v.count, q) { v[$0] }
  }

  /// Type 7 of `zeros` zeros followed by ascending `sorted` (all ≥ 0),
  /// without building the padded array; NaN when both are empty.
  ///
  /// - Complexity: O(1).
  package static func type7(zeros: Int, thenSorted v: [Double], _ q: Double) -> Double {
    type7(count: zeros + v.count, q) { $0 < zeros ? 0 : v[$0 - zeros] }
  }
}

extension Quantile {
  /// Type 7 quantile `q` of `zeros` zeros followed by the values of `p`
  /// (all ≥ 0, in any order), found by selection instead of a sort: the
  /// same value as sorting `p` and calling ``type7(zeros:thenSorted:_:)``
  /// (order statistics are exact). `p` is reordered; NaN when both are
  /// empty. Works on a buffer, so that nothing is allocated for the
  /// quantiles or the result (a replay asks for a few per app).
  ///
  /// Successive calls on the same buffer take ascending q and share
  /// `placed` (0 at first): the values before it hold nothing larger than
  /// what is still to be selected. Each order statistic is placed by
  /// quickselect (median-of-three pivots, partitions without branches on
  /// the values, insertion sort below 4 elements) in the part of `p` from
  /// `placed` on; the next-larger one that type 7 interpolates with is the
  /// minimum of what lies beyond.
  ///
  /// - Complexity: O(n) expected, O(n²) worst case, for n values (a sort
  ///   is O(n log n), but for the few dozen to few hundred ages of one
  ///   replay its comparisons' mispredicted branches cost more).
  package static func type7(
    zeros: Int, selectingIn p: UnsafeMutableBufferPointer<Double>, _ q: Double, placed from: inout Int
  ) -> Double {
    let n = zeros + p.count
    guard n > 0 else { return .nan }
    let h = Double(n - 1) * min(max(q, 0), 1)
    let lo = Int(h.rounded(.down))
    let hi = min(lo + 1, n - 1)
    func at(_ k: Int, _ placed: Bool) -> Double {
      if k < zeros { return 0 }
      let r = k - zeros
      if !placed {
        select(p, r, from: from, to: p.count)
        from = r
        return p[r]
      }
      // The next order statistic after the one just placed at r - 1.
      var m = p[r]
      for i in (r + 1)..<p.count where p[i] < m { m = p[i] }
      return m
    }
    let a = at(lo, false)
    return hi == lo ? a : a + (h - Double(lo)) * (at(hi, lo >= zeros) - a)
  }

  /// Puts into `p[k]` the value that would be there if `p[lo..<hi]` were
  /// sorted, everything before it in that range no larger and everything
  /// after it no smaller.
  ///
  /// Each round partitions around a median-of-three pivot in two passes
  /// without a branch on the comparison (the element is swapped either
  /// way and the boundary moves by the comparison's result): values below
  /// the pivot first, then, if `k` is not among them, values equal to it.
  /// On short replays' ages and waits a branching partition mispredicts
  /// about every other comparison; the equal-values pass keeps many ties
  /// linear.
  @usableFromInline
  static func select(_ p: UnsafeMutableBufferPointer<Double>, _ k: Int, from lo: Int, to hi: Int) {
    guard let b = p.baseAddress else { return }
    var lo = lo
    var hi = hi  // exclusive
    while hi - lo > 3 {
      let mid = lo + (hi - lo) / 2
      let last = hi - 1
      // The median of three to the end (the pivot, partitioned last), the
      // other two in their places by min and max (no branch).
      let x = b[lo], y = b[mid], z = b[last]
      let pivot = max(min(x, y), min(max(x, y), z))
      b[lo] = min(min(x, y), z)
      b[mid] = max(max(x, y), z)
      b[last] = pivot
      var less = lo
      for i in lo..<last {
        let x = b[i]
        b[i] = b[less]
        b[less] = x
        less &+= Int(unsafeBitCast(x < pivot, to: UInt8.self))
      }
      // b[lo..<less] < pivot <= b[less...last]
      if k < less {
        hi = less
        continue
      }
      var equal = less
      for i in less...last {
        let x = b[i]
        b[i] = b[equal]
        b[equal] = x
        equal &+= Int(unsafeBitCast(!(pivot < x), to: UInt8.self))
      }
      // b[less..<equal] == pivot < b[equal..<hi]; the pivot itself is
      // among the equal ones, so each round shrinks the range.
      if k < equal { return }
      lo = equal
    }
    guard hi - lo > 1 else { return }
    for a in (lo + 1)..<hi {
      let x = b[a]
      var c = a
      while c > lo && x < b[c - 1] {
        b[c] = b[c - 1]
        c -= 1
      }
      b[c] = x
    }
  }
}
