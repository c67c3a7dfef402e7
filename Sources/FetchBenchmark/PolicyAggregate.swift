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
/// Per-day figures are pooled ratios (Σ energy / Σ days over pairs); age
/// quantiles pool all opens (see ``AgeHistogram``).
package struct PolicyAggregate: Sendable, Equatable {
  package var policy: String
  package var pairs = 0
  package var days = 0.0
  package var opens = 0
  package var fetches = 0
  package var newData = 0
  package var noData = 0
  package var failed = 0
  package var wasted = 0
  package var freshOpens = 0
  package var ageSum = 0.0
  package var aoiSum = 0.0
  package var energyJ = 0.0
  /// The part of `energyJ` drawn while charging, J.
  package var chargingEnergyJ = 0.0
  package var cellularBytes = 0.0
  package var ages = AgeHistogram()
  /// Content updates, those delivered and their delivery delays.
  package var deliveries = Deliveries()
  /// The declared metrics over the pairs, as ``MetricValues/add(_:)``
  /// sums them (read with ``metric(_:)``).
  package var metrics = MetricValues()

  package init(policy: String) { self.policy = policy }

  /// Adds one replay.
  package mutating func add(_ r: AppReplay) {
    add(summary: r.summary)
    ages.add(r)
  }

  /// Adds one pair's counters and means (not its ages).
  mutating func add(summary s: AppSummary) {
    pairs += 1
    days += s.days
    opens += s.opens
    fetches += s.fetches
    newData += s.newData
    noData += s.noData
    failed += s.failed
    wasted += s.wasted
    if s.opens > 0 {
      freshOpens += Int((s.freshRatio * Double(s.opens)).rounded())
      ageSum += s.meanAgeS * Double(s.opens)
      aoiSum += s.meanAoiS * Double(s.opens)
    }
    energyJ += s.energyJ
    chargingEnergyJ += s.chargingEnergyJ
    cellularBytes += s.cellularBytes
    deliveries.add(Deliveries(updates: s.updates, delivered: s.delivered, delaySumS: s.deliveryDelaySumS))
    metrics.add(s)
  }

  /// A declared metric pooled over the pairs, as `pooled.csv` gives it:
  /// per day (Σ / Σ days) when declared so, else the sum or the
  /// opens-weighted mean.
  package func metric(_ m: AdditiveMetric) -> Double {
    m.reported(metrics.pooled(m, opens: opens), days: days)
  }

  package var energyJPerDay: Double { days > 0 ? energyJ / days : 0 }
  package var fetchesPerDay: Double { days > 0 ? Double(fetches) / days : 0 }
  package var cellularBytesPerDay: Double { days > 0 ? cellularBytes / days : 0 }
  /// Open-sampled staleness; NaN (undefined) with no opens.
  package var freshRatio: Double { opens > 0 ? Double(freshOpens) / Double(opens) : .nan }
  package var meanAgeS: Double { opens > 0 ? ageSum / Double(opens) : .nan }
  package var meanAoiS: Double { opens > 0 ? aoiSum / Double(opens) : .nan }
  package var newDataRatio: Double { fetches > 0 ? Double(newData) / Double(fetches) : 0 }
  /// Energy drawn from the battery (not while charging) per day, % of `capacityJ`.
  package func batteryPctPerDay(capacityJ: Double) -> Double {
    days > 0 ? (energyJ - chargingEnergyJ) / days / capacityJ * 100 : 0
  }
  package var chargingEnergyJPerDay: Double { days > 0 ? chargingEnergyJ / days : 0 }
}
