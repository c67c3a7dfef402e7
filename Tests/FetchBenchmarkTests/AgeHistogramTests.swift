import FetchBenchmark
import FetchSupport
import Foundation
import Testing

/// Pooled quantiles come from a constant-memory sketch; they follow the
/// same type-7 definition as every other quantile, within the stated error.
@Suite("Pooled age quantiles")
struct AgeHistogramTests {
  @Test("the sketch's type-7 quantiles are within 0.58 % of the exact ones", arguments: 1...12)
  func withinStatedError(seed: UInt64) {
    var rng = SplitMix64(seed: seed, keys: "ages")
    let n = 1 + Int(rng.uniform() * 3000)
    // A fresh mass and log-uniform stale ages from 1 ms to about 10^7 s.
    let ages = (0..<n).map { _ in rng.uniform() < 0.3 ? 0 : pow(10, -3 + 10 * rng.uniform()) }.sorted()
    var h = AgeHistogram()
    for a in ages { h.add(a) }
    for q in [0, 0.1, 0.25, 0.5, 0.9, 0.99, 1] {
      let exact = Quantile.type7(sorted: ages, q)
      let sketch = h.quantile(q)
      // Each order statistic is its bin's centre, within a factor 10^(±1/400);
      // interpolating between two such values keeps the bound.
      #expect(abs(sketch - exact) <= (pow(10, 1.0 / 400) - 1) * exact + 1e-12, "n \(n), q \(q): \(sketch) vs \(exact)")
    }
    #expect(AgeHistogram().quantile(0.5).isNaN)
  }
}
