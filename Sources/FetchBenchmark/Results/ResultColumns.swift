import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces

/// Columns of `summary.csv`: one row per (user, app, policy). Names are
/// stable, snake_case, with units in the name. Declared once; the header and
/// the rows both come from here: the hand-written columns, then each
/// declared metric's total (``AdditiveMetric/all``).
package typealias SummaryColumn = ResultColumn<SummaryFixedColumn>

/// The hand-written columns of ``SummaryColumn``, in file order.
package enum SummaryFixedColumn: String, FixedColumns {
  package typealias Row = (user: String, app: String, policy: String, summary: AppSummary, capacityJ: Double)
  package static let metricColumns = AdditiveMetric.all.map { MetricColumn($0, .total) }

  package static func figure(_ c: MetricColumn, _ r: Row) -> Double { r.summary[keyPath: c.metric.app] }

  case user, app, policy
  case days
  case opens, fetches, new_data, no_data, failed, wasted
  case updates
  case mean_age_s, p50_age_s, p90_age_s, p99_age_s
  case fresh_ratio
  case mean_aoi_s
  case time_avg_age_s, time_fresh_ratio
  case energy_j, energy_j_per_day, battery_pct_per_day, charging_energy_j_per_day
  case fetches_per_day
  case cellular_bytes, cellular_bytes_per_day, wifi_bytes
  case delivered, mean_delivery_delay_s

  /// This column's value for one replay.
  package func value(_ r: Row) -> String {
    let (user, app, policy, s, capacityJ) = r
    return switch self {
    case .user: user
    case .app: app
    case .policy: policy
    case .days: CSV.number(s.days, decimals: 6)
    case .opens: String(s.opens)
    case .fetches: String(s.fetches)
    case .new_data: String(s.newData)
    case .no_data: String(s.noData)
    case .failed: String(s.failed)
    case .wasted: String(s.wasted)
    case .updates: String(s.updates)
    case .mean_age_s: staleness(s.meanAgeS, decimals: 3)
    case .p50_age_s: staleness(s.p50AgeS, decimals: 3)
    case .p90_age_s: staleness(s.p90AgeS, decimals: 3)
    case .p99_age_s: staleness(s.p99AgeS, decimals: 3)
    case .fresh_ratio: staleness(s.freshRatio, decimals: 6)
    case .mean_aoi_s: staleness(s.meanAoiS, decimals: 3)
    case .time_avg_age_s: CSV.number(s.timeAvgAgeS, decimals: 3)
    case .time_fresh_ratio: CSV.number(s.timeFreshRatio, decimals: 6)
    case .energy_j: CSV.number(s.energyJ, decimals: 6)
    case .energy_j_per_day: s.energyJPerDayText
    case .battery_pct_per_day: s.batteryPctPerDayText(capacityJ: capacityJ)
    case .charging_energy_j_per_day: s.chargingEnergyJPerDayText
    case .cellular_bytes_per_day: s.cellularBytesPerDayText
    case .fetches_per_day: CSV.number(s.fetchesPerDay, decimals: 6)
    case .cellular_bytes: CSV.number(s.cellularBytes, decimals: 0)
    case .wifi_bytes: CSV.number(s.wifiBytes, decimals: 0)
    case .delivered: String(s.delivered)
    case .mean_delivery_delay_s: staleness(s.meanDeliveryDelayS, decimals: 3)
    }
  }
}

/// The per-day cost figures that both `summary.csv` (one pair) and
/// `devices.csv` (one device) write.
protocol DailyCosts {
  /// Background energy, J/day.
  var energyJPerDay: Double { get }
  /// Background energy drawn from a battery of `capacityJ` joules, % of it per day.
  func batteryPctPerDay(capacityJ: Double) -> Double
  /// Background energy drawn while charging, J/day.
  var chargingEnergyJPerDay: Double { get }
  /// Background bytes on cellular networks, bytes/day.
  var cellularBytesPerDay: Double { get }
}

extension AppSummary: DailyCosts {}
extension DeviceSummary: DailyCosts {}

/// The ``DailyCosts`` columns' texts, rounded once for both files.
extension DailyCosts {
  var energyJPerDayText: String { CSV.number(energyJPerDay, decimals: 6) }
  func batteryPctPerDayText(capacityJ: Double) -> String { CSV.number(batteryPctPerDay(capacityJ: capacityJ), decimals: 8) }
  var chargingEnergyJPerDayText: String { CSV.number(chargingEnergyJPerDay, decimals: 6) }
  var cellularBytesPerDayText: String { CSV.number(cellularBytesPerDay, decimals: 3) }
}

/// Columns of `devices.csv`: one row per (user, policy), the user's device
/// with all its replayed apps. Background figures are the policy's fetches
/// (at `replay.scope=device` on one shared radio, so they are the device's
/// radio energy with the fetches minus without them, plus CPU); the
/// `foreground_*` figures are the user-initiated refreshes at stale opens;
/// `mean_wait_s` and `p90_wait_s` pool the wait over the apps' opens. The
/// declared metrics that pool (``AdditiveMetric/pooled``) come last, per day
/// where declared so.
package typealias DeviceColumn = ResultColumn<DeviceFixedColumn>

/// The hand-written columns of ``DeviceColumn``, in file order.
package enum DeviceFixedColumn: String, FixedColumns {
  package typealias Row = (user: String, policy: String, device: DeviceSummary, capacityJ: Double)
  package static let metricColumns = MetricColumn.pooled(intervals: false)

  package static func figure(_ c: MetricColumn, _ r: Row) -> Double { c.metric.reported(r.device.metrics[c.metric], days: r.device.days) }

  case user, policy, apps, days, opens, fetches
  case energy_j_per_day, battery_pct_per_day, charging_energy_j_per_day, cellular_bytes_per_day, wifi_bytes_per_day
  case foreground_refreshes, foreground_energy_j_per_day, foreground_bytes_per_day
  case mean_wait_s, p90_wait_s
  case delivered, mean_delivery_delay_s

  package func value(_ r: Row) -> String {
    let (user, policy, d, capacityJ) = r
    return switch self {
    case .user: user
    case .policy: policy
    case .apps: String(d.apps)
    case .days: CSV.number(d.days, decimals: 6)
    case .opens: String(d.opens)
    case .fetches: String(d.fetches)
    case .energy_j_per_day: d.energyJPerDayText
    case .battery_pct_per_day: d.batteryPctPerDayText(capacityJ: capacityJ)
    case .charging_energy_j_per_day: d.chargingEnergyJPerDayText
    case .cellular_bytes_per_day: d.cellularBytesPerDayText
    case .wifi_bytes_per_day: CSV.number(d.wifiBytesPerDay, decimals: 3)
    case .foreground_refreshes: String(d.foregroundRefreshes)
    case .foreground_energy_j_per_day: CSV.number(d.foregroundEnergyJPerDay, decimals: 6)
    case .foreground_bytes_per_day: CSV.number(d.foregroundBytesPerDay, decimals: 3)
    case .mean_wait_s: CSV.number(d.meanWaitS, decimals: 6)
    case .p90_wait_s: CSV.number(d.p90WaitS, decimals: 6)
    case .delivered: String(d.delivered)
    case .mean_delivery_delay_s: staleness(d.meanDeliveryDelayS, decimals: 3)
    }
  }
}

/// One `devices.csv` record (with LF), fields quoted where needed.
package func deviceRecord(user: String, policy: String, _ d: DeviceSummary, capacityJ: Double) -> String {
  DeviceColumn.allCases.map { $0.value((user, policy, d, capacityJ)) }.joined(separator: ",") + "\n"
}

/// Columns of `devices_pooled.csv`: one row per policy (experiments: per
/// dataset × replication × policy), pooled over devices (``DeviceAggregate``).
/// Cost columns are means over devices of each device's per-day figure with
/// a normal-approximation 95 % CI (`_lo`, `_hi`; empty with fewer than two
/// devices); `device_mean_wait_s` is the mean over devices of each device's
/// mean wait; `mean_wait_s` and `p90_wait_s` pool every scored open.
/// `mean_delivery_delay_s` pools every delivered update (empty without
/// one); the `transfer_` columns are means over devices of per-day figures.
/// Data is in bytes per day, as in every other file. The declared metrics
/// that pool come last: means over devices, with `_lo` and `_hi` where
/// declared with an interval.
package typealias DevicePoolColumn = ResultColumn<DevicePoolFixedColumn>

/// The hand-written columns of ``DevicePoolColumn``, in file order.
package enum DevicePoolFixedColumn: String, FixedColumns {
  package typealias Row = (aggregate: DeviceAggregate, capacityJ: Double)
  package static let metricColumns = MetricColumn.pooled(intervals: true)

  package static func figure(_ c: MetricColumn, _ r: Row) -> Double { r.aggregate.metrics[c.metric.index][c.figure] }

  case policy, devices, days, fetches
  case energy_j_per_day, energy_j_per_day_lo, energy_j_per_day_hi
  case battery_pct_per_day, battery_pct_per_day_lo, battery_pct_per_day_hi
  case charging_energy_j_per_day
  case cellular_bytes_per_day, cellular_bytes_per_day_lo, cellular_bytes_per_day_hi
  case wifi_bytes_per_day
  case foreground_energy_j_per_day, foreground_bytes_per_day
  case device_mean_wait_s, device_mean_wait_s_lo, device_mean_wait_s_hi
  case waits, mean_wait_s, p90_wait_s
  case updates, delivered, mean_delivery_delay_s

  package func value(_ r: Row) -> String {
    let (a, capacityJ) = r
    let pct = 100 / capacityJ
    return switch self {
    case .policy: a.policy
    case .devices: String(a.devices)
    case .days: CSV.number(a.days, decimals: 6)
    case .fetches: String(a.fetches)
    case .energy_j_per_day: number(a.energyJPerDay.value, 6)
    case .energy_j_per_day_lo: number(a.energyJPerDay.low, 6)
    case .energy_j_per_day_hi: number(a.energyJPerDay.high, 6)
    case .battery_pct_per_day: number(a.batteryJPerDay.value * pct, 8)
    case .battery_pct_per_day_lo: number(a.batteryJPerDay.low * pct, 8)
    case .battery_pct_per_day_hi: number(a.batteryJPerDay.high * pct, 8)
    case .charging_energy_j_per_day: number(a.chargingEnergyJPerDay.value, 6)
    case .cellular_bytes_per_day: number(a.cellularBytesPerDay.value, 3)
    case .cellular_bytes_per_day_lo: number(a.cellularBytesPerDay.low, 3)
    case .cellular_bytes_per_day_hi: number(a.cellularBytesPerDay.high, 3)
    case .wifi_bytes_per_day: number(a.wifiBytesPerDay.value, 3)
    case .foreground_energy_j_per_day: number(a.foregroundEnergyJPerDay.value, 6)
    case .foreground_bytes_per_day: number(a.foregroundBytesPerDay.value, 3)
    case .device_mean_wait_s: number(a.deviceMeanWaitS.value, 6)
    case .device_mean_wait_s_lo: number(a.deviceMeanWaitS.low, 6)
    case .device_mean_wait_s_hi: number(a.deviceMeanWaitS.high, 6)
    case .waits: String(a.waits)
    case .mean_wait_s: number(a.meanWaitS, 6)
    case .p90_wait_s: number(a.p90WaitS, 6)
    case .updates: String(a.deliveries.updates)
    case .delivered: String(a.deliveries.delivered)
    case .mean_delivery_delay_s: number(a.deliveries.meanDelayS, 3)
    }
  }
}

/// One `devices_pooled.csv` record, fields joined by commas, without LF.
package func devicePoolRecord(_ a: DeviceAggregate, capacityJ: Double) -> String {
  DevicePoolColumn.allCases.map { CSV.field($0.value((a, capacityJ))) }.joined(separator: ",")
}

/// Columns of `opens.csv`: one row per open of a replayed app.
package enum OpenColumn: String, CaseIterable, Sendable {
  case user, app, policy, time, age_s, aoi_s, fresh
}

/// Columns of `fetches.csv`: one row per background fetch.
package enum FetchColumn: String, CaseIterable, Sendable {
  case user, app, policy, time, end_time, duration_s, result, failure, bytes, energy_j, network
}

/// Columns of `pooled.csv`: one row per policy, pooled over (user, app) pairs
/// (per-day figures Σ/Σdays, age quantiles from the pooled histogram). The
/// per-user statistics with confidence intervals are in `policies.csv`
/// (`writeScores(runDir:)`). The declared metrics that pool come last
/// (``PolicyAggregate/metric(_:)``).
package typealias PolicyColumn = ResultColumn<PolicyFixedColumn>

/// The hand-written columns of ``PolicyColumn``, in file order.
package enum PolicyFixedColumn: String, FixedColumns {
  package typealias Row = (aggregate: PolicyAggregate, capacityJ: Double)
  package static let metricColumns = MetricColumn.pooled(intervals: false)

  package static func figure(_ c: MetricColumn, _ r: Row) -> Double { r.aggregate.metric(c.metric) }

  case policy, pairs, days, opens, fetches, fetches_per_day
  case new_data, no_data, failed, wasted
  case energy_j_per_day, battery_pct_per_day, charging_energy_j_per_day, cellular_bytes_per_day
  case fresh_ratio, mean_age_s, p50_age_s, p90_age_s, p99_age_s, mean_aoi_s
  case updates, delivered, mean_delivery_delay_s

  package func value(_ r: Row) -> String {
    let (a, capacityJ) = r
    return switch self {
    case .policy: a.policy
    case .pairs: String(a.pairs)
    case .days: CSV.number(a.days, decimals: 6)
    case .opens: String(a.opens)
    case .fetches: String(a.fetches)
    case .fetches_per_day: CSV.number(a.fetchesPerDay, decimals: 6)
    case .new_data: String(a.newData)
    case .no_data: String(a.noData)
    case .failed: String(a.failed)
    case .wasted: String(a.wasted)
    case .energy_j_per_day: CSV.number(a.energyJPerDay, decimals: 6)
    case .battery_pct_per_day: CSV.number(a.batteryPctPerDay(capacityJ: capacityJ), decimals: 8)
    case .charging_energy_j_per_day: CSV.number(a.chargingEnergyJPerDay, decimals: 6)
    case .cellular_bytes_per_day: CSV.number(a.cellularBytesPerDay, decimals: 3)
    case .fresh_ratio: staleness(a.freshRatio, decimals: 6)
    case .mean_age_s: staleness(a.meanAgeS, decimals: 3)
    case .p50_age_s: staleness(a.ages.quantile(0.5), decimals: 3)
    case .p90_age_s: staleness(a.ages.quantile(0.9), decimals: 3)
    case .p99_age_s: staleness(a.ages.quantile(0.99), decimals: 3)
    case .mean_aoi_s: staleness(a.meanAoiS, decimals: 3)
    case .updates: String(a.deliveries.updates)
    case .delivered: String(a.deliveries.delivered)
    case .mean_delivery_delay_s: staleness(a.deliveries.meanDelayS, decimals: 3)
    }
  }
}

/// An open-sampled staleness figure: empty when undefined (NaN: no opens).
func staleness(_ x: Double, decimals: Int) -> String {
  x.isNaN ? "" : CSV.number(x, decimals: decimals)
}

/// A declared metric's figure: empty when undefined (NaN, ±∞).
func number(_ x: Double, _ decimals: Int) -> String {
  x.isFinite ? CSV.number(x, decimals: decimals) : ""
}

/// One `pooled.csv` record (without LF), fields quoted where needed.
package func pooledRecord(_ a: PolicyAggregate, capacityJ: Double) -> String {
  PolicyColumn.allCases.map { CSV.field($0.value((a, capacityJ))) }.joined(separator: ",")
}

extension RawRepresentable where Self: CaseIterable, RawValue == String {
  /// The CSV header line of this column set.
  package static var headerLine: String { allCases.map(\.rawValue).joined(separator: ",") + "\n" }
}

/// A result file's columns: its hand-written columns (`Fixed`, in file
/// order), then the declared metrics' (``AdditiveMetric``), which `Fixed`
/// chooses and reads. The header and the rows both come from here.
package enum ResultColumn<Fixed: FixedColumns>: RawRepresentable, CaseIterable, Sendable {
  case fixed(Fixed)
  case metric(MetricColumn)

  package static var allCases: [Self] { Fixed.allCases.map(Self.fixed) + Fixed.metricColumns.map(Self.metric) }

  package init?(rawValue: String) {
    guard let c = Self.allCases.first(where: { $0.rawValue == rawValue }) else { return nil }
    self = c
  }

  package var rawValue: String {
    switch self {
    case .fixed(let c): c.rawValue
    case .metric(let c): c.name
    }
  }

  /// This column's value in one row.
  func value(_ row: Fixed.Row) -> String {
    switch self {
    case .fixed(let c): c.value(row)
    case .metric(let c): number(Fixed.figure(c, row), c.decimals)
    }
  }
}

/// One result file's hand-written columns, and how the declared metrics'
/// columns after them read a row.
package protocol FixedColumns: RawRepresentable<String>, CaseIterable, Sendable where AllCases == [Self] {
  /// What one row is written from.
  associatedtype Row
  /// The declared metrics' columns, after the hand-written ones.
  static var metricColumns: [MetricColumn] { get }
  /// A declared metric's figure in `row`.
  static func figure(_ column: MetricColumn, _ row: Row) -> Double
  /// This hand-written column's value in `row`.
  func value(_ row: Row) -> String
}

/// A declared metric's column: its total over the window (`summary.csv`),
/// its pooled figure (per day where declared so), or a bound of that
/// figure's 95 % interval (`devices_pooled.csv`).
package struct MetricColumn: Sendable {
  package enum Figure: Sendable { case total, pooled, low, high }

  package let metric: AdditiveMetric
  package let figure: Figure

  init(_ metric: AdditiveMetric, _ figure: Figure) { (self.metric, self.figure) = (metric, figure) }

  /// The declared metrics that pool, each as its pooled figure and, where
  /// declared with an interval and `intervals` is set, its bounds.
  static func pooled(intervals: Bool) -> [MetricColumn] {
    AdditiveMetric.pooled.flatMap { m in
      (intervals && m.interval ? [Figure.pooled, .low, .high] : [.pooled]).map { MetricColumn(m, $0) }
    }
  }

  /// The column's name: `<name>`, `<name>_per_day` (pooled, per day), with `_lo` or `_hi`.
  var name: String {
    switch figure {
    case .total: metric.name
    case .pooled: metric.pooledName
    case .low: metric.pooledName + "_lo"
    case .high: metric.pooledName + "_hi"
    }
  }

  var decimals: Int { figure == .total ? metric.totalDecimals : metric.pooledDecimals }
}

extension MeanCI {
  /// The mean or a bound of its interval, as `figure` asks.
  subscript(_ figure: MetricColumn.Figure) -> Double {
    switch figure {
    case .total, .pooled: value
    case .low: low
    case .high: high
    }
  }
}
