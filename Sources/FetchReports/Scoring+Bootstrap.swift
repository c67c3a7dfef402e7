import FetchSupport
import FetchTraces
import Foundation

/// A two-sided confidence interval `[lower, upper]`.
public struct ConfidenceInterval: Sendable, Equatable, CustomStringConvertible {
  /// Lower bound.
  public var lower: Double
  /// Upper bound.
  public var upper: Double

  package init(lower: Double, upper: Double) {
    self.lower = lower
    self.upper = upper
  }

  /// Whether `x` lies in the closed interval.
  public func contains(_ x: Double) -> Bool { lower <= x && x <= upper }

  /// `[lower, upper]`.
  public var description: String { "[\(lower), \(upper)]" }
}

/// The nonparametric bootstrap of a mean, users as the resampling unit.
///
/// Percentile interval (Efron & Tibshirani, *An Introduction to the
/// Bootstrap*, 1993, ch. 13; DOI 10.1201/9780429246593): draw `n` of the `n`
/// values with replacement `B` times, take each resample's mean, and report
/// the `(1 − level)/2` and `(1 + level)/2` quantiles of the `B` means (type 7,
/// linear interpolation between order statistics). For a mean of `n` = 50
/// roughly normal values it covers the truth about 94 % of the time at
/// `level` 0.95: it behaves like `x̄ ± 1.96 σ̂/√n` with the `1/n` variance.
///
/// Resampling draws come from a SplitMix64 stream seeded by one draw of the
/// caller's ``SplitMix64`` (which ``generator(_:)`` keys by stable names), so
/// intervals are the same on every machine and for every thread count.
///
/// - Complexity: O(B·n·k) for k columns, O(k·B log B) to sort.
public enum Bootstrap {
  /// Default number of resamples.
  public static let defaultResamples = 2000

  /// Default confidence level.
  package static let defaultLevel = 0.95

  /// The generator for the stream named by `keys` (e.g. dataset and policy).
  package static func generator(_ keys: String...) -> SplitMix64 {
    var h: UInt64 = 0x5EED_B007_57A9_0001
    for k in keys { h = StableHash.combine(h, StableHash.fnv1a(k)) }
    return SplitMix64(seed: h)
  }

  /// Percentile intervals of the mean of each column, resampling rows jointly
  /// (the same drawn users for every column).
  ///
  /// `columns[c][i]` is user `i`'s value of column `c`; NaN values are left
  /// out of the means (a resample that draws none of a column's values is
  /// skipped for that column). A column with no finite value gets nil; one
  /// with a single value gets a zero-width interval at it.
  package static func meanIntervals(
    _ columns: [[Double]], resamples: Int = defaultResamples, level: Double = defaultLevel,
    using rng: inout SplitMix64
  ) -> [ConfidenceInterval?] {
    precondition(resamples >= 1, "resamples must be at least 1")
    precondition(level > 0 && level < 1, "level must be in (0, 1)")
    let k = columns.count
    guard let n = columns.first?.count else { return [] }
    precondition(columns.allSatisfy { $0.count == n }, "columns must have one value per user")
    guard n > 0 else { return Array(repeating: nil, count: k) }
    // Row-major copy for cache-friendly resampling.
    var flat = [Double](repeating: .nan, count: n * k)
    for c in 0..<k { for i in 0..<n { flat[i * k + c] = columns[c][i] } }
    var means = [[Double]](repeating: [], count: k)
    for c in 0..<k { means[c].reserveCapacity(resamples) }
    var sums = [Double](repeating: 0, count: k)
    var counts = [Int](repeating: 0, count: k)
    var draws = SplitMix64(seed: rng.next())  // one draw from the caller's stream seeds the resampling
    let un = UInt64(n)
    flat.withUnsafeBufferPointer { values in
      sums.withUnsafeMutableBufferPointer { sum in
        counts.withUnsafeMutableBufferPointer { count in
          // `while` loops: this runs B·n·k times, and debug builds do not
          // inline range iterators.
          var b = 0
          while b < resamples {
            var c = 0
            while c < k {
              sum[c] = 0
              count[c] = 0
              c += 1
            }
            var i = 0
            while i < n {
              let z = draws.next()
              let base = Int(truncatingIfNeeded: un.multipliedFullWidth(by: z).high) * k
              c = 0
              while c < k {
                let x = values[base + c]
                if !x.isNaN {
                  sum[c] += x
                  count[c] += 1
                }
                c += 1
              }
              i += 1
            }
            for c in 0..<k where count[c] > 0 { means[c].append(sum[c] / Double(count[c])) }
            b += 1
          }
        }
      }
    }
    let alpha = (1 - level) / 2
    return means.map { m -> ConfidenceInterval? in
      guard !m.isEmpty else { return nil }
      let s = m.sorted()
      return ConfidenceInterval(lower: Quantile.type7(sorted: s, alpha), upper: Quantile.type7(sorted: s, 1 - alpha))
    }
  }

  /// Percentile interval of the mean of `values` (NaN values left out).
  package static func meanInterval(
    _ values: [Double], resamples: Int = defaultResamples, level: Double = defaultLevel,
    using rng: inout SplitMix64
  ) -> ConfidenceInterval? {
    meanIntervals([values], resamples: resamples, level: level, using: &rng)[0]
  }

}

/// Mean of the non-NaN values, NaN when there are none.
func nanMean(_ xs: [Double]) -> Double {
  var s = 0.0, n = 0
  for x in xs where !x.isNaN {
    s += x
    n += 1
  }
  return n > 0 ? s / Double(n) : .nan
}

/// The exact two-sided sign test (Conover, *Practical Nonparametric
/// Statistics*, 3rd ed., 1999, §3.4).
package enum SignTest {
  /// Two-sided p-value for `wins` against `losses` (ties already dropped):
  ///
  ///     p = min(1, 2 · Σ_{j ≤ min(w, l)} C(n, j) / 2^n),  n = w + l
  ///
  /// Exact for n ≤ 50 (integer binomial coefficients). Above, the largest
  /// term comes from `lgamma`; the others by the ratio
  /// `C(n, j−1)/C(n, j) = j/(n − j + 1)`, summed downward until negligible,
  /// so it is accurate to ~1e-13 relative and stable for n up to 10^5 and
  /// beyond (p underflows to 0 only below ~1e-308). p = 1 when n = 0;
  /// symmetric in wins and losses.
  /// - Complexity: O(min(w, l)) at worst, usually far fewer terms.
  package static func twoSidedP(wins: Int, losses: Int) -> Double {
    precondition(wins >= 0 && losses >= 0, "wins and losses must be non-negative")
    let n = wins + losses
    let k = min(wins, losses)
    guard n > 0, 2 * k < n else { return 1 }
    if n <= 50 {  // exact: C(50, j) < 2^53 and the scaling by 2^(1-n) is exact
      var c: UInt64 = 1, sum: UInt64 = 1
      for j in stride(from: 1, through: k, by: 1) {
        c = c * UInt64(n - j + 1) / UInt64(j)
        sum += c
      }
      return Double(sum) * pow(2, Double(1 - n))
    }
    let logTop =
      lgamma(Double(n + 1)) - lgamma(Double(k + 1)) - lgamma(Double(n - k + 1)) - Double(n) * M_LN2
    var sum = 1.0, term = 1.0
    var j = k
    while j > 0 {
      term *= Double(j) / Double(n - j + 1)
      sum += term
      if term < sum * 1e-17 { break }
      j -= 1
    }
    return min(1, 2 * exp(logTop + log(sum)))
  }
}
