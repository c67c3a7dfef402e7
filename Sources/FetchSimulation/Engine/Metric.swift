import FetchSupport

/// A figure of a replay declared once, in ``Metric/all``: its name, unit
/// and meaning, how it pools, which way is better, whether it is reported
/// per day and with an interval, and the ``AppSummary`` property the
/// engine charges it to.
///
/// The engine charges a stored figure to its ``AppSummary`` property on its
/// hot path (`lanes[j].summary.x += …`); everything after the replay
/// follows from the declaration, by key path, once per replay or row: the
/// device's figures (``DeviceSummary``, its apps pooled by ``MetricValues``),
/// the part records (``AppSummary/recordFields``, `DeviceSample`), the
/// pooled figures (`PolicyAggregate`, `DeviceAggregate`), the result
/// columns (a column's name is a ``MetricFigure``: `<name>`,
/// `<name>_per_day`, `battery_pct_per_day`, with `_lo`, `_hi`), the scores
/// (`ScoreMetric`) and the units that `docs/outputs.md` and the Python
/// loader give (checked by `MetricDeclarationTests`). Each result file
/// keeps its own explicit column order; a metric declared `trailing`
/// follows each file's listed columns, in table order.
package struct Metric: Sendable {
  /// The unit, which also fixes how the metric's figures are written.
  package enum Unit: String, Sendable, CaseIterable {
    case days
    case count
    case seconds = "s"
    case ratio
    case joules = "J"
    case bytes

    /// The unit of a per-day figure: `J/day`, `bytes/day`, `1/day` (counts).
    package var perDay: String { self == .count ? "1/day" : rawValue + "/day" }
    /// Decimals of a figure in the CSVs; nil for a count (an integer).
    var totalDecimals: Int? {
      switch self {
      case .count: nil
      case .bytes: 0
      case .seconds: 3
      case .days, .ratio, .joules: 6
      }
    }
    /// Decimals of a per-day figure.
    var perDayDecimals: Int { self == .bytes ? 3 : 6 }
  }

  /// The samples that a quantile or a mean over samples pools: the ages at
  /// every scored open, or the waits at them.
  package enum Sample: Sendable, Equatable { case ages, waits }

  /// How a figure pools over a device's apps and over a policy's pairs or
  /// devices.
  package enum Pooling: Sendable, Equatable {
    /// Totals add up (counts, days, joules, bytes).
    case sum
    /// A mean over the record's opens: pooled as the mean weighted by opens.
    case opensWeighted
    /// A share of the record's opens (the fresh ones): pooled as Σ of
    /// each record's count (share × opens, rounded) over Σ opens, exact.
    case opensShare
    /// The mean of the pooled samples (every sample of every record).
    case mean(of: Sample)
    /// The `q` quantile (type 7) of the pooled samples: exact over a
    /// device's apps, from an ``AgeHistogram`` sketch over pairs or devices.
    case quantile(Double, of: Sample)
    /// Computed again from the pooled figures (a derived ratio of sums).
    case recomputed
    /// Not pooled (time averages): per pair only.
    case none

    /// How a part record declares the field.
    package var record: RecordPooling {
      switch self {
      case .sum: .sum
      case .opensWeighted, .opensShare: .opensWeighted
      case .mean, .quantile, .recomputed, .none: .none
      }
    }
    /// Whether ``MetricValues/add(_:)`` pools it from the apps' or pairs' figures.
    var fromFigures: Bool { self == .sum || self == .opensWeighted || self == .opensShare }
  }

  /// Which way is better, for readers ranking policies by the metric.
  package enum Direction: Sendable { case lowerIsBetter, higherIsBetter, neither }

  /// Where the figure comes from.
  package enum Source: Sendable {
    /// A stored ``AppSummary`` property, charged by the engine.
    case value(any WritableKeyPath<AppSummary, Double> & Sendable)
    /// A stored count.
    case count(any WritableKeyPath<AppSummary, Int> & Sendable)
    /// Computed from other figures of the same (pooled) record, read
    /// through the function it is given; it pools by recomputing.
    case derived(@Sendable (_ figure: (Metric) -> Double) -> Double)
  }

  /// The key in part records and the column of `summary.csv` (snake_case,
  /// ending in its unit where it has one: `_j`, `_bytes`, `_s`).
  package let name: String
  /// The unit.
  package let unit: Unit
  /// What the metric means (the part records' documentation).
  package let help: String
  /// Where the figure comes from.
  package let source: Source
  /// How it pools.
  package let pooling: Pooling
  /// Whether pooled files give it per day of the window (`<name>_per_day`).
  package let perDay: Bool
  /// Which way is better.
  package let direction: Direction
  /// Whether its pooled per-day figure carries a 95 % interval: the
  /// bootstrap over users of `policies.csv` when scored, the normal
  /// interval over devices of `devices_pooled.csv` (`_lo`, `_hi`).
  package let interval: Bool
  /// Whether the pair records of experiments keep it (what `pooled.csv` needs).
  package let recorded: Bool
  /// Whether its columns follow each file's listed columns, in table order.
  package let trailing: Bool
  /// Decimals in the CSVs when not the unit's.
  let decimals: Int?
  /// Its position in ``all``, the index of its ``MetricValues`` slot.
  package private(set) var index = 0

  /// A declaration; see the properties for each argument.
  package init(
    _ name: String, _ unit: Unit, _ help: String, _ source: Source, pooling: Pooling, perDay: Bool = false,
    direction: Direction = .lowerIsBetter, interval: Bool = false, recorded: Bool = true, trailing: Bool = false,
    decimals: Int? = nil
  ) {
    (self.name, self.unit, self.help, self.source, self.pooling) = (name, unit, help, source, pooling)
    (self.perDay, self.direction, self.interval) = (perDay, direction, interval)
    (self.recorded, self.trailing, self.decimals) = (recorded, trailing, decimals)
  }

  /// The figure in one replay's (or one pooled record's) summary.
  package func value(_ s: AppSummary) -> Double {
    switch source {
    case .value(let p): s[keyPath: p]
    case .count(let p): Double(s[keyPath: p])
    case .derived(let f): f { $0.value(s) }
    }
  }

  /// Sets a stored figure (a count from its exact `Double`); a derived one
  /// has nothing to set.
  package func set(_ s: inout AppSummary, _ x: Double) {
    switch source {
    case .value(let p): s[keyPath: p] = x
    case .count(let p): s[keyPath: p] = Int(x)
    case .derived: break
    }
  }

  /// Whether the figure is stored (not derived).
  package var isStored: Bool {
    if case .derived = source { return false }
    return true
  }

  /// Decimals of its figure in the CSVs (nil: an integer count).
  package var figureDecimals: Int? { decimals ?? unit.totalDecimals }
  /// Decimals of its per-day figure.
  package var perDayDecimals: Int { unit.perDayDecimals }

  /// A pool's reported figure from its pooled value `x` over `days` days:
  /// per day when declared so (0 for an empty window), else `x`.
  package func reported(_ x: Double, days: Double) -> Double {
    perDay ? Metric.perDay(x, days: days) : x
  }

  /// `x` per day of `days` (0 for an empty window).
  package static func perDay(_ x: Double, days: Double) -> Double { days > 0 ? x / days : 0 }

  /// Its field in a part record whose pooled summary `Record` keeps at `path`.
  package func recordField<Record>(in path: WritableKeyPath<Record, AppSummary> & Sendable) -> RecordField<Record> {
    let m = self
    return RecordField(
      name, unit.rawValue, help, pooling.record, get: { m.value($0[keyPath: path]) },
      set: { m.set(&$0[keyPath: path], $1) })
  }
}

extension Metric {
  /// Every declared figure. Counts and stored figures first, in the order
  /// of the pair records; the figures the records leave out after them.
  /// Adding one here (and charging its ``AppSummary`` property in the
  /// engine, unless derived) is all a new metric takes; its columns follow
  /// each file's listed ones when declared `trailing`, or take the place a
  /// file lists for them by name.
  package static let all: [Metric] = [
    Metric("days", .days, "length of the scored window", .value(\.days), pooling: .sum, direction: .neither),
    Metric("opens", .count, "scored opens of the app", .count(\.opens), pooling: .sum, direction: .neither),
    Metric("fetches", .count, "background fetches", .count(\.fetches), pooling: .sum, perDay: true, interval: true),
    Metric("new_data", .count, "fetches that found new content", .count(\.newData), pooling: .sum, direction: .neither),
    Metric("no_data", .count, "fetches that found none", .count(\.noData), pooling: .sum),
    Metric("failed", .count, "fetches that failed", .count(\.failed), pooling: .sum),
    Metric("wasted", .count, "NewData fetches superseded before an open", .count(\.wasted), pooling: .sum),
    Metric("mean_age_s", .seconds, "mean age at open (NaN without opens)", .value(\.meanAgeS), pooling: .opensWeighted, interval: true),
    Metric("p50_age_s", .seconds, "median age at open", .value(\.p50AgeS), pooling: .quantile(0.5, of: .ages)),
    Metric("p90_age_s", .seconds, "90th percentile of the age at open", .value(\.p90AgeS), pooling: .quantile(0.9, of: .ages), interval: true),
    Metric("p99_age_s", .seconds, "99th percentile of the age at open", .value(\.p99AgeS), pooling: .quantile(0.99, of: .ages)),
    Metric("fresh_ratio", .ratio, "share of opens that showed fresh content", .value(\.freshRatio), pooling: .opensShare, direction: .higherIsBetter, interval: true),
    Metric("mean_aoi_s", .seconds, "mean Age of Information at open", .value(\.meanAoiS), pooling: .opensWeighted, interval: true),
    Metric("time_avg_age_s", .seconds, "time-averaged age over the window", .value(\.timeAvgAgeS), pooling: .none),
    Metric("time_fresh_ratio", .ratio, "share of the window with fresh content", .value(\.timeFreshRatio), pooling: .none, direction: .higherIsBetter),
    Metric("energy_j", .joules, "background fetch energy, CPU and marginal radio", .value(\.energyJ), pooling: .sum, perDay: true, interval: true),
    Metric("charging_energy_j", .joules, "the part of energy_j drawn while charging", .value(\.chargingEnergyJ), pooling: .sum, perDay: true),
    Metric("cellular_bytes", .bytes, "background bytes on cellular networks", .value(\.cellularBytes), pooling: .sum, perDay: true, interval: true),
    Metric("wifi_bytes", .bytes, "background bytes on WiFi", .value(\.wifiBytes), pooling: .sum, perDay: true),
    Metric("updates", .count, "content updates of the app in the window", .count(\.updates), pooling: .sum, direction: .neither),
    Metric("delivered", .count, "updates whose content reached the device", .count(\.delivered), pooling: .sum, direction: .higherIsBetter),
    Metric("delivery_delay_sum_s", .seconds, "sum of the delivery delays (publication → on the device)", .value(\.deliveryDelaySumS), pooling: .sum),
    Metric("transfers_completed", .count, "background transfers that completed", .count(\.transfersCompleted), pooling: .sum, direction: .higherIsBetter),
    Metric("transfer_energy_j", .joules, "background transfer energy (also in energy_j)", .value(\.transferEnergyJ), pooling: .sum, perDay: true, trailing: true),
    Metric("transfer_cellular_bytes", .bytes, "background transfer bytes on cellular networks", .value(\.transferCellularBytes), pooling: .sum, perDay: true, trailing: true),
    Metric("transfer_wifi_bytes", .bytes, "background transfer bytes on WiFi", .value(\.transferWifiBytes), pooling: .sum, perDay: true, trailing: true),
    Metric("monitoring_energy_j", .joules, "location monitoring energy (also in energy_j)", .value(\.monitoringEnergyJ), pooling: .sum, perDay: true, trailing: true),
    // Not in the pair records.
    Metric("foreground_refreshes", .count, "foreground refreshes at stale opens (user-initiated)", .count(\.foregroundRefreshes), pooling: .sum, recorded: false),
    Metric("foreground_energy_j", .joules, "radio energy of the foreground refreshes", .value(\.foregroundEnergyJ), pooling: .sum, perDay: true, recorded: false),
    Metric("foreground_cellular_bytes", .bytes, "foreground refresh bytes on cellular networks", .value(\.foregroundCellularBytes), pooling: .sum, perDay: true, recorded: false),
    Metric("foreground_wifi_bytes", .bytes, "foreground refresh bytes on WiFi", .value(\.foregroundWifiBytes), pooling: .sum, perDay: true, recorded: false),
    Metric("mean_wait_s", .seconds, "mean wait at an open until fresh content is on screen", .value(\.meanWaitS), pooling: .mean(of: .waits), recorded: false, decimals: 6),
    Metric("p90_wait_s", .seconds, "90th percentile of the wait at open", .value(\.p90WaitS), pooling: .quantile(0.9, of: .waits), recorded: false, decimals: 6),
    // Derived from the figures above, in each record and in each pool.
    Metric("battery_energy_j", .joules, "the part of energy_j drawn from the battery (not while charging)", .derived { $0(energy) - $0(chargingEnergy) }, pooling: .sum, perDay: true, interval: true, recorded: false, trailing: true),
    Metric("mean_delivery_delay_s", .seconds, "mean delivery delay over the delivered updates (NaN when none)", .derived { $0(delivered) > 0 ? $0(deliveryDelaySum) / $0(delivered) : .nan }, pooling: .recomputed, recorded: false),
  ].enumerated().map { i, m in
    var m = m
    m.index = i
    return m
  }

  /// The declared metric named `name`, or nil.
  package static func named(_ name: String) -> Metric? { byName[name].map { all[$0] } }
  private static let byName = Dictionary(uniqueKeysWithValues: all.enumerated().map { ($1.name, $0) })

  /// The metric named `name`, which the table declares.
  package static func declared(_ name: String) -> Metric {
    guard let m = named(name) else { preconditionFailure("no metric '\(name)' in Metric.all") }
    return m
  }

  /// The figures the code names.
  package static let days = declared("days"), opens = declared("opens"), energy = declared("energy_j")
  package static let chargingEnergy = declared("charging_energy_j"), batteryEnergy = declared("battery_energy_j")
  package static let delivered = declared("delivered"), deliveryDelaySum = declared("delivery_delay_sum_s")

  /// The metrics the pair records keep, in record order.
  package static let recorded = all.filter(\.recorded)
  /// The metrics whose columns follow each file's listed ones, in table order.
  package static let trailing = all.filter(\.trailing)
}

/// The declared metrics' values for one record that pools replays (a
/// device, a policy, a device sample), one slot per ``Metric`` in table
/// order: sums, or Σ figure × opens for an opens-weighted mean, or Σ fresh
/// opens for an opens share, until ``pooled()`` divides.
package struct MetricValues: Sendable, Equatable {
  /// By ``Metric/index``.
  package var values = [Double](repeating: 0, count: Metric.all.count)

  package init() {}

  package subscript(_ m: Metric) -> Double {
    get { values[m.index] }
    set { values[m.index] = newValue }
  }

  /// Adds one replay's figures of `metrics` (all by default) that pool
  /// from figures: a sum's figure, an opens-weighted mean's figure ×
  /// opens, an opens share's count (share × opens, rounded).
  ///
  /// - Complexity: O(metrics).
  package mutating func add(_ s: AppSummary, _ metrics: [Metric] = Metric.all) {
    let opens = Double(s.opens)
    for m in metrics {
      switch m.pooling {
      case .sum where m.isStored: values[m.index] += m.value(s)
      case .opensWeighted: if s.opens > 0 { values[m.index] += m.value(s) * opens }
      case .opensShare: if s.opens > 0 { values[m.index] += (m.value(s) * opens).rounded() }
      default: break
      }
    }
  }

  /// The pooled figures of the slots that ``add(_:_:)`` filled, as a
  /// summary: sums, and the means and shares over the pooled opens (NaN
  /// without opens). Derived metrics are read from it; the others stay at
  /// `AppSummary()`'s values.
  package func pooled(_ metrics: [Metric] = Metric.all) -> AppSummary {
    var s = AppSummary()
    let opens = self[Metric.opens]
    for m in metrics where m.isStored {
      switch m.pooling {
      case .sum: m.set(&s, values[m.index])
      case .opensWeighted, .opensShare: m.set(&s, opens > 0 ? values[m.index] / opens : .nan)
      default: break
      }
    }
    return s
  }
}

/// A column name read as a declared metric's figure: `<name>` (the figure
/// itself), `<name>_per_day`, `battery_pct_per_day` (the battery energy per
/// day as % of the battery's capacity), each maybe with `_lo` or `_hi`
/// (the bounds of its 95 % interval).
package struct MetricFigure: Sendable {
  /// Which figure of the metric.
  package enum Kind: Sendable, Equatable { case value, perDay, batteryPct }
  /// The bound, or the figure itself.
  package enum Bound: Sendable, Equatable { case none, low, high }

  package let metric: Metric
  package let kind: Kind
  package let bound: Bound

  package init(_ metric: Metric, _ kind: Kind, _ bound: Bound = .none) {
    (self.metric, self.kind, self.bound) = (metric, kind, bound)
  }

  /// The figure a column name shows, or nil when it is no declared
  /// metric's (identifiers, and figures a file computes itself).
  package init?(column: String) {
    var name = Substring(column)
    var bound = Bound.none
    if name.hasSuffix("_lo") { (bound, name) = (.low, name.dropLast(3)) }
    if name.hasSuffix("_hi") { (bound, name) = (.high, name.dropLast(3)) }
    if name == "battery_pct_per_day" {
      self.init(Metric.batteryEnergy, .batteryPct, bound)
      return
    }
    if let m = Metric.named(String(name)) {
      guard bound == .none else { return nil }
      self.init(m, .value)
      return
    }
    guard name.hasSuffix("_per_day"), let m = Metric.named(String(name.dropLast(8))), m.perDay else { return nil }
    self.init(m, .perDay, bound)
  }

  /// The column's name.
  package var column: String {
    let base =
      switch kind {
      case .value: metric.name
      case .perDay: metric.name + "_per_day"
      case .batteryPct: "battery_pct_per_day"
      }
    return base + (bound == .low ? "_lo" : bound == .high ? "_hi" : "")
  }

  /// The figure's unit as the docs give it (`J/day`, `%/day`, `s`, ...).
  package var unit: String {
    switch kind {
    case .value: metric.unit.rawValue
    case .perDay: metric.unit.perDay
    case .batteryPct: "%/day"
    }
  }

  /// Decimals in the CSVs; nil for a count (an integer).
  package var decimals: Int? {
    switch kind {
    case .value: metric.figureDecimals
    case .perDay: metric.perDayDecimals
    case .batteryPct: 8
    }
  }

  /// The figure of a pooled record `s` (a pair, a device, a policy's
  /// pairs), against a battery of `capacityJ` joules: per day Σ / days.
  package func value(_ s: AppSummary, capacityJ: Double) -> Double {
    switch kind {
    case .value: metric.value(s)
    case .perDay: Metric.perDay(metric.value(s), days: s.days)
    case .batteryPct: Metric.perDay(metric.value(s), days: s.days) / capacityJ * 100
    }
  }

  /// `x` as the column writes it: an integer for a count, else rounded
  /// to the figure's decimals; empty when undefined (NaN, ±∞).
  package func text(_ x: Double) -> String {
    guard x.isFinite else { return "" }
    guard let d = decimals else { return String(Int(x)) }
    return CSV.number(x, decimals: d)
  }
}
