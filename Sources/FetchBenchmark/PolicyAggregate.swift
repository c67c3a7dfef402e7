import FetchModels
import FetchSimulation
import FetchSupport
import Foundation

/// Ages pooled over many opens in constant memory: an exact count of fresh
/// opens (age 0) and log-spaced bins (200 per decade, 1 ms to 10^10 s:
/// beyond the 4.1·10^9 s of the plausible dates a replay accepts), so
/// quantiles are within ±0.6 % of the exact value.
package struct AgeHistogram: Sendable, Equatable {
  static let perDecade = 200.0
  static let minAge = 1e-3
  static let bins = 2600
  package private(set) var zeros = 0
  package private(set) var count = 0
  var counts = [Int](repeating: 0, count: AgeHistogram.bins)

  package init() {}

  package mutating func add(_ age: Double) {
    count += 1
    guard age > 0 else { zeros += 1; return }
    let b = Int((log10(max(age, Self.minAge) / Self.minAge) * Self.perDecade).rounded(.down))
    counts[min(max(b, 0), Self.bins - 1)] += 1
  }

  /// Adds one replay's ages: its fresh opens (age 0) and its stale ones.
  package mutating func add(_ r: AppReplay) {
    count += r.freshOpens
    zeros += r.freshOpens
    for a in r.staleAges { add(a) }
  }

  package mutating func merge(_ o: AgeHistogram) {
    zeros += o.zeros
    count += o.count
    for i in 0..<Self.bins { counts[i] += o.counts[i] }
  }

  /// Quantile `q` ∈ [0, 1], type 7 like every other quantile FetchLab
  /// reports (``Quantile/type7(count:_:orderStatistic:)``), with each order
  /// statistic taken as its bin's geometric centre (0 for fresh opens,
  /// exact): within 10^(1/400) − 1 ≈ 0.58 % of the exact type-7 value for
  /// ages of at least 1 ms (tested). NaN when empty.
  ///
  /// - Complexity: O(bins).
  package func quantile(_ q: Double) -> Double {
    Quantile.type7(count: count, q) { orderStatistic($0) }
  }

  /// The `k`-th smallest age (0-based), as its bin's geometric centre.
  func orderStatistic(_ k: Int) -> Double {
    if k < zeros { return 0 }
    var seen = zeros
    for (i, c) in counts.enumerated() where c > 0 {
      seen += c
      if k < seen { return Self.minAge * pow(10, (Double(i) + 0.5) / Self.perDecade) }
    }
    return Self.minAge * pow(10, Double(Self.bins) / Self.perDecade)
  }
}

/// One policy's results pooled over all (user, app) pairs.
///
/// The pairs' recorded figures (``Metric/recorded``) pool as the metric
/// table declares: per-day figures are pooled ratios (Σ energy / Σ days
/// over pairs), means and shares are weighted by opens; age quantiles pool
/// all opens (see ``AgeHistogram``). Read a pooled figure as on an app's
/// summary (`aggregate.opens`, `aggregate.energyJPerDay`).
@dynamicMemberLookup
package struct PolicyAggregate: Sendable, Equatable {
  package var policy: String
  package var pairs = 0
  /// The pairs' figures pooled (``MetricValues/add(_:_:)``).
  package var sums = MetricValues()
  package var ages = AgeHistogram()

  package init(policy: String) { self.policy = policy }

  /// Adds one replay.
  package mutating func add(_ r: AppReplay) {
    add(summary: r.summary)
    ages.add(r)
  }

  /// Adds one pair's figures (not its ages).
  mutating func add(summary s: AppSummary) {
    pairs += 1
    sums.add(s, Metric.recorded)
  }

  /// A pooled figure, named as on ``AppSummary`` (each read pools anew:
  /// O(metrics + histogram bins)).
  package subscript<T>(dynamicMember path: KeyPath<AppSummary, T>) -> T { pooled[keyPath: path] }

  /// The pooled figures as a summary: sums, means and shares over every
  /// pooled open, and the age quantiles of the pooled histogram.
  ///
  /// - Complexity: O(metrics + histogram bins).
  package var pooled: AppSummary {
    var p = sums.pooled(Metric.recorded)
    for m in Metric.recorded {
      if case .quantile(let q, of: .ages) = m.pooling { m.set(&p, ages.quantile(q)) }
    }
    return p
  }
}
