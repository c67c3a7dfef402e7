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
