import FetchSimulation
import FetchSupport
import Foundation

/// One device under one policy, as ``DeviceAggregate`` pools it: the
/// device's totals over its window and the sum and count of its waits.
package struct DeviceSample: Sendable, Equatable {
  /// Window length, days.
  package var days = 0.0
  /// Background (policy) fetches and their energy, J.
  package var fetches = 0
  package var energyJ = 0.0
  /// The part of `energyJ` drawn while charging, J.
  package var chargingEnergyJ = 0.0
  /// Background bytes, by network.
  package var cellularBytes = 0.0
  package var wifiBytes = 0.0
  /// User-initiated foreground refreshes: radio energy, J, and bytes (all networks).
  package var foregroundEnergyJ = 0.0
  package var foregroundBytes = 0.0
  /// Scored opens with a wait (fresh opens count as 0 s) and the sum of their waits, s.
  package var waits = 0
  package var waitSumS = 0.0
  /// Content updates of the device's apps in the window, those whose
  /// content reached the device, and their delivery delays.
  package var deliveries = Deliveries()
  /// The device's declared metrics (``DeviceSummary/metrics``).
  package var metrics = MetricValues()

  /// The fields a part record keeps, by name; one declaration each, the
  /// declared metrics that pool (``AdditiveMetric/pooled``) last.
  static let recordFields: [RecordField<DeviceSample>] = [
    RecordField("days", "days", "length of the scored window", .sum, \.days),
    RecordField("fetches", "background fetches of all the apps", count: \.fetches),
    RecordField("energy_j", "J", "background fetch energy", .sum, \.energyJ),
    RecordField("charging_energy_j", "J", "the part of energy_j drawn while charging", .sum, \.chargingEnergyJ),
    RecordField("cellular_bytes", "bytes", "background bytes on cellular networks", .sum, \.cellularBytes),
    RecordField("wifi_bytes", "bytes", "background bytes on WiFi", .sum, \.wifiBytes),
    RecordField("foreground_energy_j", "J", "radio energy of the foreground refreshes", .sum, \.foregroundEnergyJ),
    RecordField("foreground_bytes", "bytes", "foreground refresh bytes, all networks", .sum, \.foregroundBytes),
    RecordField("waits", "scored opens with a wait (fresh ones count as 0 s)", count: \.waits),
    RecordField("wait_sum_s", "s", "sum of the waits", .sum, \.waitSumS),
    RecordField("updates", "content updates of the apps in the window", count: \.deliveries.updates),
    RecordField("delivered", "updates whose content reached the device", count: \.deliveries.delivered),
    RecordField("delivery_delay_sum_s", "s", "sum of the delivery delays (publication → on the device)", .sum, \.deliveries.delaySumS),
  ] + AdditiveMetric.pooled.map { $0.recordField(\DeviceSample.metrics.values[$0.index]) }

  /// Background energy drawn from the battery (not while charging), J.
  var batteryEnergyJ: Double { energyJ - chargingEnergyJ }

  package init() {}

  /// The device's totals and the waits of its apps' opens.
  package init(_ d: DeviceSummary, apps: [AppReplay]) {
    days = d.days
    fetches = d.fetches
    energyJ = d.energyJ
    chargingEnergyJ = d.chargingEnergyJ
    cellularBytes = d.cellularBytes
    wifiBytes = d.wifiBytes
    foregroundEnergyJ = d.foregroundEnergyJ
    foregroundBytes = d.foregroundCellularBytes + d.foregroundWifiBytes
    deliveries.delivered = d.delivered
    deliveries.delaySumS = d.deliveryDelaySumS
    for m in AdditiveMetric.pooled { metrics[m] = d.metrics[m] }
    for a in apps {
      waits += a.zeroWaits + a.waits.count
      waitSumS += a.waits.reduce(0, +)
      deliveries.updates += a.summary.updates
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
/// bootstrap over users instead, which needs every value at once). Waits
/// are pooled over every scored open of every device: the mean is Σ wait /
/// Σ opens and the p90 comes from an ``AgeHistogram`` of the waits (±0.6 %).
/// Delivery delays: the mean is Σ delay / Σ delivered (the replays keep
/// only sums and counts, so there is no quantile).
package struct DeviceAggregate: Sendable, Equatable {
  package var policy: String
  package var devices = 0
  package var days = 0.0
  package var fetches = 0
  /// Per device: background J/day, cellular and WiFi bytes/day, foreground J/day and bytes/day.
  package var energyJPerDay = MeanCI()
  /// Per device: background energy drawn from the battery, J/day.
  package var batteryJPerDay = MeanCI()
  /// Per device: background energy drawn while charging, J/day.
  package var chargingEnergyJPerDay = MeanCI()
  package var cellularBytesPerDay = MeanCI()
  package var wifiBytesPerDay = MeanCI()
  package var foregroundEnergyJPerDay = MeanCI()
  package var foregroundBytesPerDay = MeanCI()
  /// Per device with at least one scored open: its mean wait, s.
  package var deviceMeanWaitS = MeanCI()
  package var waits = 0
  package var waitSumS = 0.0
  /// Every wait, s (fresh opens as 0).
  package var waitHistogram = AgeHistogram()
  /// Content updates, those delivered, and their delays, over the devices.
  package var deliveries = Deliveries()
  /// Per device: each declared metric's figure (per day when declared
  /// so), by ``AdditiveMetric/index``.
  package var metrics = [MeanCI](repeating: MeanCI(), count: AdditiveMetric.all.count)

  package init(policy: String) { self.policy = policy }

  /// Each per-device cost figure and the device total it divides by the
  /// device's days (0 for a device without days).
  static let perDayFigures: [(WritableKeyPath<DeviceAggregate, MeanCI> & Sendable, KeyPath<DeviceSample, Double> & Sendable)] = [
    (\.energyJPerDay, \.energyJ), (\.batteryJPerDay, \.batteryEnergyJ), (\.chargingEnergyJPerDay, \.chargingEnergyJ),
    (\.cellularBytesPerDay, \.cellularBytes), (\.wifiBytesPerDay, \.wifiBytes),
    (\.foregroundEnergyJPerDay, \.foregroundEnergyJ), (\.foregroundBytesPerDay, \.foregroundBytes),
  ]

  /// Adds one device (its waits go in with ``addWaits(of:)``).
  package mutating func add(_ s: DeviceSample) {
    devices += 1
    days += s.days
    fetches += s.fetches
    for (mean, total) in Self.perDayFigures { self[keyPath: mean].add(s.days > 0 ? s[keyPath: total] / s.days : 0) }
    if s.waits > 0 { deviceMeanWaitS.add(s.waitSumS / Double(s.waits)) }
    waits += s.waits
    waitSumS += s.waitSumS
    deliveries.add(s.deliveries)
    for m in AdditiveMetric.pooled { metrics[m.index].add(m.reported(s.metrics[m], days: s.days)) }
  }

  /// Adds the waits of one device's apps to the histogram.
  package mutating func addWaits(of apps: [AppReplay]) {
    for a in apps {
      for _ in 0..<a.zeroWaits { waitHistogram.add(0) }
      for w in a.waits { waitHistogram.add(w) }
    }
  }

  /// Pooled mean wait over every scored open, s; NaN without opens.
  package var meanWaitS: Double { waits > 0 ? waitSumS / Double(waits) : .nan }
  /// Pooled 90th-percentile wait, s (histogram); NaN without opens.
  package var p90WaitS: Double { waitHistogram.quantile(0.9) }
}

/// Content updates, those whose content reached the device, and the sum of
/// their delivery delays (publication → on the device), pooled over pairs
/// or devices: the `updates`, `delivered` and `mean_delivery_delay_s`
/// columns of the pooled files. The replays keep only sums and counts, so
/// there is no quantile.
package struct Deliveries: Sendable, Equatable {
  /// Content updates published in the windows.
  package var updates = 0
  /// Updates whose content reached the device.
  package var delivered = 0
  /// Σ delivery delay over the delivered updates, s.
  package var delaySumS = 0.0

  /// Adds another tally's counts and delays.
  package mutating func add(_ o: Deliveries) {
    updates += o.updates
    delivered += o.delivered
    delaySumS += o.delaySumS
  }

  /// Mean delivery delay over every delivered update (Σ delay / Σ
  /// delivered), s; NaN without one.
  package var meanDelayS: Double { delivered > 0 ? delaySumS / Double(delivered) : .nan }
}
