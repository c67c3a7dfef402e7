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

extension Array where Element == Double {
  /// Sorts ascending in place, as `sort()` does for values that are not NaN
  /// (equal values are bit-identical here, so stability does not matter),
  /// but faster for the short arrays of one replay: an unstable quicksort
  /// (median of three) that finishes short ranges by insertion.
  ///
  /// - Precondition: no element is NaN.
  /// - Complexity: O(n log n) expected; O(n²) only on adversarial input.
  @inlinable package mutating func sortAscending() {
    withUnsafeMutableBufferPointer { p in
      guard let base = p.baseAddress, p.count > 1 else { return }
      quicksortAscending(base, 0, p.count - 1)
    }
  }
}

@usableFromInline func quicksortAscending(_ a: UnsafeMutablePointer<Double>, _ lo: Int, _ hi: Int) {
  var lo = lo, hi = hi
  while hi - lo > 16 {
    let mid = lo + (hi - lo) / 2
    // Median of three to a[mid], then Hoare partition around it.
    if a[mid] < a[lo] { exchange(a, mid, lo) }
    if a[hi] < a[lo] { exchange(a, hi, lo) }
    if a[hi] < a[mid] { exchange(a, hi, mid) }
    let pivot = a[mid]
    var i = lo, j = hi
    while i <= j {
      while a[i] < pivot { i += 1 }
      while pivot < a[j] { j -= 1 }
      if i <= j {
        exchange(a, i, j)
        i += 1
        j -= 1
      }
    }
    // Recurse into the smaller side, loop on the larger (O(log n) stack).
    if j - lo < hi - i {
      if lo < j { quicksortAscending(a, lo, j) }
      lo = i
    } else {
      if i < hi { quicksortAscending(a, i, hi) }
      hi = j
    }
  }
  guard lo < hi else { return }
  for k in (lo + 1)...hi {
    let x = a[k]
    var m = k - 1
    while m >= lo && x < a[m] {
      a[m + 1] = a[m]
      m -= 1
    }
    a[m + 1] = x
  }
}

@inline(__always) @usableFromInline func exchange(_ a: UnsafeMutablePointer<Double>, _ i: Int, _ j: Int) {
  let t = a[i]
  a[i] = a[j]
  a[j] = t
}
