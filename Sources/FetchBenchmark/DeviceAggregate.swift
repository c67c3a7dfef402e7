import FetchSimulation
import FetchSupport
import Foundation

/// One device under one policy, as ``DeviceAggregate`` pools it: the
/// device's figures over its window (``DeviceSummary``, those of
/// ``metrics``) and the sum and count of its waits. Read and set a figure
/// as on an app's summary (`sample.energyJ`).
@dynamicMemberLookup
package struct DeviceSample: Sendable, Equatable {
  /// The device's pooled figures; a sample read back from a part record
  /// has those of ``metrics``.
  package var pooled = AppSummary()
  /// Foreground refresh bytes over all networks (the device record keeps
  /// their sum, not the two networks).
  package var foregroundBytes = 0.0
  /// Scored opens with a wait (fresh opens count as 0 s) and the sum of their waits, s.
  package var waits = 0
  package var waitSumS = 0.0

  /// The declared metrics a device's part record keeps, in record order
  /// (its own figures, ``foregroundBytes`` and the waits, sit after the
  /// first seven), the trailing ones that pool last.
  static let metrics: [Metric] =
    ["days", "fetches", "energy_j", "charging_energy_j", "cellular_bytes", "wifi_bytes", "foreground_energy_j",
     "updates", "delivered", "delivery_delay_sum_s"].map(Metric.declared) + Metric.trailing.filter { $0.isStored && $0.pooling != .none }

  /// The figures that ``DeviceAggregate`` averages per day over devices:
  /// the kept ones declared per day, and the derived ones.
  static let perDayMetrics = Metric.all.filter { m in m.perDay && (!m.isStored || metrics.contains { $0.index == m.index }) }

  /// The fields a part record keeps, by name; one declaration each.
  static let recordFields: [RecordField<DeviceSample>] = {
    let kept = metrics.map { $0.recordField(in: \DeviceSample.pooled) }
    return kept.prefix(7) + [
      RecordField("foreground_bytes", "bytes", "foreground refresh bytes, all networks", .sum, \.foregroundBytes),
      RecordField("waits", "scored opens with a wait (fresh ones count as 0 s)", count: \.waits),
      RecordField("wait_sum_s", "s", "sum of the waits", .sum, \.waitSumS),
    ] + kept.dropFirst(7)
  }()

  package init() {}

  /// A pooled figure, named as on ``AppSummary``.
  package subscript<T>(dynamicMember path: WritableKeyPath<AppSummary, T>) -> T {
    get { pooled[keyPath: path] }
    set { pooled[keyPath: path] = newValue }
  }

  /// The device's figures and the waits of its apps' opens.
  package init(_ d: DeviceSummary, apps: [AppReplay]) {
    pooled = d.pooled
    foregroundBytes = d.foregroundCellularBytes + d.foregroundWifiBytes
    for a in apps {
      waits += a.zeroWaits + a.waits.count
      waitSumS += a.waits.reduce(0, +)
    }
  }
}

/// A running mean with a normal-approximation 95 % confidence interval
/// (mean ± 1.96 · s / √n, s the sample standard deviation; Welford's
/// update, so the result depends only on the order of the values).
package struct MeanCI: Sendable, Equatable {
  package private(set) var count = 0
  package private(set) var mean = 0.0
  var m2 = 0.0

  package init() {}

  package mutating func add(_ x: Double) {
    count += 1
    let d = x - mean
    mean += d / Double(count)
    m2 += d * (x - mean)
  }

  /// Half-width of the 95 % interval; NaN with fewer than 2 values.
  package var halfWidth: Double { count > 1 ? 1.96 * (m2 / Double(count - 1)).squareRoot() / Double(count).squareRoot() : .nan }
  /// The mean, NaN when empty.
  package var value: Double { count > 0 ? mean : .nan }
  package var low: Double { value - halfWidth }
  package var high: Double { value + halfWidth }
}

/// One policy's devices pooled (`devices_pooled.csv`).
///
/// Cost figures are means over devices of each device's per-day figure,
/// with a normal-approximation 95 % CI (``MeanCI``; `policies.csv` uses a
/// bootstrap over users instead, which needs every value at once); totals
/// (days, fetches, updates, delivered) are sums over devices. Waits are
/// pooled over every scored open of every device: the mean is Σ wait /
/// Σ opens and the p90 comes from an ``AgeHistogram`` of the waits (±0.6 %).
/// Delivery delays: the mean is Σ delay / Σ delivered (the replays keep
/// only sums and counts, so there is no quantile).
package struct DeviceAggregate: Sendable, Equatable {
  package var policy: String
  package var devices = 0
  /// The devices' kept figures (``DeviceSample/metrics``) summed.
  package var sums = MetricValues()
  /// Per device: each of ``DeviceSample/perDayMetrics`` per day, by
  /// ``Metric/index``.
  package var perDay = [MeanCI](repeating: MeanCI(), count: Metric.all.count)
  /// Per device: foreground refresh bytes per day, all networks.
  package var foregroundBytesPerDay = MeanCI()
  /// Per device with at least one scored open: its mean wait, s.
  package var deviceMeanWaitS = MeanCI()
  package var waits = 0
  package var waitSumS = 0.0
  /// Every wait, s (fresh opens as 0).
  package var waitHistogram = AgeHistogram()

  package init(policy: String) { self.policy = policy }

  /// Adds one device (its waits go in with ``addWaits(of:)``).
  package mutating func add(_ s: DeviceSample) {
    devices += 1
    sums.add(s.pooled, DeviceSample.metrics)
    let days = s.pooled.days
    for m in DeviceSample.perDayMetrics { perDay[m.index].add(Metric.perDay(m.value(s.pooled), days: days)) }
    foregroundBytesPerDay.add(Metric.perDay(s.foregroundBytes, days: days))
    if s.waits > 0 { deviceMeanWaitS.add(s.waitSumS / Double(s.waits)) }
    waits += s.waits
    waitSumS += s.waitSumS
  }

  /// Adds the waits of one device's apps to the histogram.
  package mutating func addWaits(of apps: [AppReplay]) {
    for a in apps {
      for _ in 0..<a.zeroWaits { waitHistogram.add(0) }
      for w in a.waits { waitHistogram.add(w) }
    }
  }

  /// The devices' totals (Σ over devices of the kept figures).
  package var totals: AppSummary { sums.pooled(DeviceSample.metrics) }

  /// A declared figure as `devices_pooled.csv` gives it, against a battery
  /// of `capacityJ` joules: a per-day figure (or its bound) as the mean
  /// over devices, the waits pooled over every open (NaN without one), a
  /// total summed over devices.
  package func figure(_ f: MetricFigure, capacityJ: Double) -> Double {
    if f.kind != .value {
      let ci = perDay[f.metric.index]
      let x = f.bound == .low ? ci.low : f.bound == .high ? ci.high : ci.value
      return f.kind == .batteryPct ? x * (100 / capacityJ) : x
    }
    switch f.metric.pooling {
    case .mean(of: .waits): return waits > 0 ? waitSumS / Double(waits) : .nan
    case .quantile(let q, of: .waits): return waitHistogram.quantile(q)
    default: return f.metric.value(totals)
    }
  }
}
