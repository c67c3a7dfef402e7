import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces

/// Columns of `summary.csv`: one row per (user, app, policy). Names are
/// stable, snake_case, with units in the name. Declared once; the header and
/// the rows both come from here: the listed columns, each a declared
/// metric's figure (``MetricFigure``) unless an identifier, then each
/// trailing metric's total (``Metric/trailing``), followed by its per-day
/// figure when the scores give that an interval (`battery_energy_j_per_day`,
/// a ``ScoreMetric`` read per user from this file).
package typealias SummaryColumn = ResultColumn<SummaryFixedColumn>

/// The listed columns of ``SummaryColumn``, in file order.
package enum SummaryFixedColumn: String, FixedColumns {
  package typealias Row = (user: String, app: String, policy: String, summary: AppSummary, capacityJ: Double)
  package static let trailing = Metric.trailing.flatMap { m in
    [MetricFigure(m, .value)] + (m.perDay && m.interval ? [MetricFigure(m, .perDay)] : [])
  }

  package static func figure(_ f: MetricFigure, _ r: Row) -> Double { f.value(r.summary, capacityJ: r.capacityJ) }

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

  /// This identifier's value for one replay.
  package func value(_ r: Row) -> String {
    switch self {
    case .user: r.user
    case .app: r.app
    case .policy: r.policy
    default: preconditionFailure("\(rawValue) is a declared metric's figure")
    }
  }
}

/// Columns of `devices.csv`: one row per (user, policy), the user's device
/// with all its replayed apps. Background figures are the policy's fetches
/// (at `replay.scope=device` on one shared radio, so they are the device's
/// radio energy with the fetches minus without them, plus CPU); the
/// `foreground_*` figures are the user-initiated refreshes at stale opens;
/// `mean_wait_s` and `p90_wait_s` pool the wait over the apps' opens. The
/// trailing metrics that pool (``Metric/trailing``) come last, per day
/// where declared so.
package typealias DeviceColumn = ResultColumn<DeviceFixedColumn>

/// The listed columns of ``DeviceColumn``, in file order.
package enum DeviceFixedColumn: String, FixedColumns {
  package typealias Row = (user: String, policy: String, device: DeviceSummary, capacityJ: Double)
  package static let trailing = MetricFigure.pooled(intervals: false)

  package static func figure(_ f: MetricFigure, _ r: Row) -> Double { f.value(r.device.pooled, capacityJ: r.capacityJ) }

  case user, policy, apps, days, opens, fetches
  case energy_j_per_day, battery_pct_per_day, charging_energy_j_per_day, cellular_bytes_per_day, wifi_bytes_per_day
  case foreground_refreshes, foreground_energy_j_per_day, foreground_bytes_per_day
  case mean_wait_s, p90_wait_s
  case delivered, mean_delivery_delay_s

  package func value(_ r: Row) -> String {
    let d = r.device
    return switch self {
    case .user: r.user
    case .policy: r.policy
    case .apps: String(d.apps)
    case .foreground_bytes_per_day:
      CSV.number(Metric.perDay(d.foregroundCellularBytes + d.foregroundWifiBytes, days: d.days), decimals: 3)
    default: preconditionFailure("\(rawValue) is a declared metric's figure")
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
/// Data is in bytes per day, as in every other file. The trailing metrics
/// that pool come last: means over devices, with `_lo` and `_hi` where
/// declared with an interval.
package typealias DevicePoolColumn = ResultColumn<DevicePoolFixedColumn>

/// The listed columns of ``DevicePoolColumn``, in file order.
package enum DevicePoolFixedColumn: String, FixedColumns {
  package typealias Row = (aggregate: DeviceAggregate, capacityJ: Double)
  package static let trailing = MetricFigure.pooled(intervals: true)

  package static func figure(_ f: MetricFigure, _ r: Row) -> Double { r.aggregate.figure(f, capacityJ: r.capacityJ) }

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
    let a = r.aggregate
    return switch self {
    case .policy: a.policy
    case .devices: String(a.devices)
    case .foreground_bytes_per_day: number(a.foregroundBytesPerDay.value, 3)
    case .device_mean_wait_s: number(a.deviceMeanWaitS.value, 6)
    case .device_mean_wait_s_lo: number(a.deviceMeanWaitS.low, 6)
    case .device_mean_wait_s_hi: number(a.deviceMeanWaitS.high, 6)
    case .waits: String(a.waits)
    default: preconditionFailure("\(rawValue) is a declared metric's figure")
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
/// (`writeScores(runDir:)`). The trailing metrics that pool come last
/// (``PolicyAggregate/pooled``).
package typealias PolicyColumn = ResultColumn<PolicyFixedColumn>

/// The listed columns of ``PolicyColumn``, in file order.
package enum PolicyFixedColumn: String, FixedColumns {
  package typealias Row = (aggregate: PolicyAggregate, capacityJ: Double)
  package static let trailing = MetricFigure.pooled(intervals: false)

  package static func figure(_ f: MetricFigure, _ r: Row) -> Double { f.value(r.aggregate.pooled, capacityJ: r.capacityJ) }

  case policy, pairs, days, opens, fetches, fetches_per_day
  case new_data, no_data, failed, wasted
  case energy_j_per_day, battery_pct_per_day, charging_energy_j_per_day, cellular_bytes_per_day
  case fresh_ratio, mean_age_s, p50_age_s, p90_age_s, p99_age_s, mean_aoi_s
  case updates, delivered, mean_delivery_delay_s

  package func value(_ r: Row) -> String {
    switch self {
    case .policy: r.aggregate.policy
    case .pairs: String(r.aggregate.pairs)
    default: preconditionFailure("\(rawValue) is a declared metric's figure")
    }
  }
}

/// A figure: empty when undefined (NaN, ±∞).
func number(_ x: Double, _ decimals: Int) -> String {
  x.isFinite ? CSV.number(x, decimals: decimals) : ""
}

/// One `pooled.csv` record (without LF), fields quoted where needed.
package func pooledRecord(_ a: PolicyAggregate, capacityJ: Double) -> String {
  let row = (a, capacityJ)
  return PolicyColumn.allCases.map { CSV.field($0.value(row)) }.joined(separator: ",")
}

extension RawRepresentable where Self: CaseIterable, RawValue == String {
  /// The CSV header line of this column set.
  package static var headerLine: String { allCases.map(\.rawValue).joined(separator: ",") + "\n" }
}

/// A result file's columns: its listed columns (`Fixed`, in file order),
/// each a declared metric's figure when its name is one (``MetricFigure``),
/// then the trailing metrics' (``Metric/trailing``), which `Fixed` chooses.
/// The header and the rows both come from here.
package enum ResultColumn<Fixed: FixedColumns>: RawRepresentable, CaseIterable, Sendable {
  /// A column the file computes itself (identifiers, device-only figures).
  case fixed(Fixed)
  /// A declared metric's figure.
  case figure(MetricFigure)

  package static var allCases: [Self] {
    Fixed.allCases.map { c in MetricFigure(column: c.rawValue).map(Self.figure) ?? .fixed(c) }
      + Fixed.trailing.map(Self.figure)
  }

  package init?(rawValue: String) {
    guard let c = Self.allCases.first(where: { $0.rawValue == rawValue }) else { return nil }
    self = c
  }

  package var rawValue: String {
    switch self {
    case .fixed(let c): c.rawValue
    case .figure(let f): f.column
    }
  }

  /// This column's value in one row.
  func value(_ row: Fixed.Row) -> String {
    switch self {
    case .fixed(let c): c.value(row)
    case .figure(let f): f.text(Fixed.figure(f, row))
    }
  }
}

/// One result file's listed columns, and how the declared metrics' figures
/// among and after them read a row.
package protocol FixedColumns: RawRepresentable<String>, CaseIterable, Sendable where AllCases == [Self] {
  /// What one row is written from.
  associatedtype Row
  /// The trailing metrics' figures, after the listed columns.
  static var trailing: [MetricFigure] { get }
  /// A declared metric's figure in `row`.
  static func figure(_ figure: MetricFigure, _ row: Row) -> Double
  /// The value in `row` of a listed column that is no declared metric's figure.
  func value(_ row: Row) -> String
}

extension MetricFigure {
  /// The trailing metrics that pool, each as its pooled figure (per day
  /// where declared so) and, where declared with an interval and
  /// `intervals` is set, its bounds.
  static func pooled(intervals: Bool) -> [MetricFigure] {
    Metric.trailing.filter { $0.pooling != .none }.flatMap { m -> [MetricFigure] in
      let kind: Kind = m.perDay ? .perDay : .value
      return (intervals && m.interval ? [Bound.none, .low, .high] : [.none]).map { MetricFigure(m, kind, $0) }
    }
  }
}
