import FetchSupport

/// A per-app figure of a replay declared once, in ``AdditiveMetric/all``:
/// its name, unit and meaning, how it pools, and how it is reported.
///
/// The engine charges the figure to a stored ``AppSummary`` property on its
/// hot path (`lanes[j].summary.x += …`); everything after the replay
/// follows from the declaration, by key path, once per replay or row: the
/// device's figure in ``DeviceSummary`` (``MetricValues``), the part records
/// (``AppSummary/recordFields``, `DeviceSample.recordFields`), the pooled
/// figures (`PolicyAggregate`, `DeviceAggregate`), and the columns of
/// `summary.csv` (`<name>`), `devices.csv`, `pooled.csv` and
/// `devices_pooled.csv` (`<name>_per_day` when reported per day), which
/// come after each file's hand-written columns, in table order.
package struct AdditiveMetric: Sendable {
  /// The unit, which also fixes how the metric's figures are written.
  package enum Unit: String, Sendable {
    case joules = "J"
    case bytes

    /// Decimals of a total (`summary.csv`).
    var totalDecimals: Int { self == .joules ? 6 : 0 }
    /// Decimals of a per-day figure (the pooled files).
    var perDayDecimals: Int { self == .joules ? 6 : 3 }
  }

  /// Which way is better, for readers ranking policies by the metric.
  package enum Direction: Sendable { case lowerIsBetter, higherIsBetter }

  /// The key in part records and the column of `summary.csv` (snake_case,
  /// ending in its unit: `_j`, `_bytes`).
  package let name: String
  /// The unit.
  package let unit: Unit
  /// What the metric means (the part records' documentation).
  package let help: String
  /// How it pools over a device's apps and over a policy's pairs: summed,
  /// or the mean weighted by opens; `.none`: only in `summary.csv`.
  package let pooling: RecordPooling
  /// Whether the pooled files give it per day of the window (sums only).
  package let perDay: Bool
  /// Which way is better.
  package let direction: Direction
  /// Whether `devices_pooled.csv` gives it a 95 % interval (`_lo`, `_hi`).
  package let interval: Bool
  /// The ``AppSummary`` property the engine charges it to.
  package let app: any WritableKeyPath<AppSummary, Double> & Sendable
  /// Its position in ``all``, the index of its ``MetricValues`` slot.
  package private(set) var index = 0

  init(
    _ name: String, _ unit: Unit, _ help: String, _ app: any WritableKeyPath<AppSummary, Double> & Sendable,
    pooling: RecordPooling, perDay: Bool, direction: Direction, interval: Bool
  ) {
    (self.name, self.unit, self.help, self.app) = (name, unit, help, app)
    (self.pooling, self.perDay, self.direction, self.interval) = (pooling, perDay, direction, interval)
  }

  /// Every declared metric, in column order. Adding one here (and charging
  /// its ``AppSummary`` property in the engine) is all a new additive
  /// metric takes. The older figures (energy_j, charging, bytes by network,
  /// foreground refreshes, delivery) keep hand-written columns: their
  /// places among the other columns, intervals and derived figures
  /// (battery %, mean delay) predate this table.
  package static let all: [AdditiveMetric] = [
    AdditiveMetric("transfer_energy_j", .joules, "background transfer energy (also in energy_j)", \.transferEnergyJ, pooling: .sum, perDay: true, direction: .lowerIsBetter, interval: false),
    AdditiveMetric("transfer_cellular_bytes", .bytes, "background transfer bytes on cellular networks", \.transferCellularBytes, pooling: .sum, perDay: true, direction: .lowerIsBetter, interval: false),
    AdditiveMetric("transfer_wifi_bytes", .bytes, "background transfer bytes on WiFi", \.transferWifiBytes, pooling: .sum, perDay: true, direction: .lowerIsBetter, interval: false),
    AdditiveMetric("monitoring_energy_j", .joules, "location monitoring energy (also in energy_j)", \.monitoringEnergyJ, pooling: .sum, perDay: true, direction: .lowerIsBetter, interval: false),
  ].enumerated().map { i, m in
    var m = m
    m.index = i
    return m
  }

  /// The declared metrics that pool (everything but `summary.csv` has these).
  package static var pooled: [AdditiveMetric] { all.filter { $0.pooling != .none } }

  /// Its column in the pooled files: `<name>_per_day` when per day.
  package var pooledName: String { reportsPerDay ? name + "_per_day" : name }
  /// Decimals of its figure in `summary.csv` and in the pooled files.
  package var totalDecimals: Int { unit.totalDecimals }
  package var pooledDecimals: Int { reportsPerDay ? unit.perDayDecimals : unit.totalDecimals }
  /// Whether pooled figures are per day (a sum declared per day).
  var reportsPerDay: Bool { perDay && pooling == .sum }

  /// A pool's reported figure from its pooled value `x` over `days` days:
  /// per day when declared so (0 for an empty window), else `x`.
  package func reported(_ x: Double, days: Double) -> Double {
    reportsPerDay ? (days > 0 ? x / days : 0) : x
  }

  /// Its field in a part record of `Record`, stored at `path`.
  package func recordField<Record>(_ path: any WritableKeyPath<Record, Double> & Sendable) -> RecordField<Record> {
    RecordField(name, unit.rawValue, help, pooling, path)
  }
}

/// The declared metrics' values for one record that pools replays (a
/// device, a policy), one slot per ``AdditiveMetric`` in table order.
package struct MetricValues: Sendable, Equatable {
  /// By ``AdditiveMetric/index``.
  package var values = [Double](repeating: 0, count: AdditiveMetric.all.count)

  package init() {}

  package subscript(_ m: AdditiveMetric) -> Double {
    get { values[m.index] }
    set { values[m.index] = newValue }
  }

  /// Adds one replay: its figure to a sum, its figure × opens to an
  /// opens-weighted metric (read back with ``pooled(_:opens:)``).
  package mutating func add(_ s: AppSummary) {
    for m in AdditiveMetric.all {
      switch m.pooling {
      case .sum: values[m.index] += s[keyPath: m.app]
      case .opensWeighted: if s.opens > 0 { values[m.index] += s[keyPath: m.app] * Double(s.opens) }
      case .none: break
      }
    }
  }

  /// The pooled figure of `m` over replays added with ``add(_:)`` that had
  /// `opens` opens in all: the sum, or the opens-weighted mean (NaN
  /// without opens).
  package func pooled(_ m: AdditiveMetric, opens: Int) -> Double {
    guard m.pooling == .opensWeighted else { return self[m] }
    return opens > 0 ? self[m] / Double(opens) : .nan
  }

  /// Every slot as ``pooled(_:opens:)`` reads it.
  package func pooled(opens: Int) -> MetricValues {
    var r = self
    for m in AdditiveMetric.all { r[m] = pooled(m, opens: opens) }
    return r
  }
}
