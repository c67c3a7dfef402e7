@testable import FetchBenchmark
import FetchSupport
import Foundation
import Testing

@testable import FetchSimulation

/// Every declared metric (``AdditiveMetric/all``) is wired everywhere its
/// declaration says, so a declaration cannot be half-wired: its columns
/// and part-record fields exist with its unit, and each pooled file holds
/// the figure its pooling gives.
@Suite("Declared metrics")
struct MetricDeclarationTests {
  static let days = 2.0

  /// Three apps of one device, each metric a distinct value per app; one
  /// app without opens (it weighs nothing in an opens-weighted mean).
  static func replays(scale: Double = 1) -> [AppReplay] {
    [3, 0, 5].enumerated().map { i, opens in
      var s = AppSummary()
      (s.days, s.opens) = (days, opens)
      for m in AdditiveMetric.all { s[keyPath: m.app] = scale * (Double(m.index + 1) * 1_234.5 + Double(i) * 17.25) }
      return AppReplay(summary: s, opens: [], fetches: [], staleAges: [], freshOpens: 0)
    }
  }

  /// What `m` pools to over `apps`: the sum, or the mean weighted by opens.
  static func pooled(_ m: AdditiveMetric, _ apps: [AppReplay]) -> Double {
    let values = apps.map { ($0.summary[keyPath: m.app], Double($0.summary.opens)) }
    switch m.pooling {
    case .sum: return values.reduce(0) { $0 + $1.0 }
    case .opensWeighted: return values.reduce(0) { $0 + $1.0 * $1.1 } / values.reduce(0) { $0 + $1.1 }
    case .none: return .nan
    }
  }

  /// `column`'s value in a one-row CSV (`header`, `record`) as a number.
  static func number(_ column: String, header: [String], record: String) throws -> Double {
    let fields = record.trimmingCharacters(in: .newlines).split(separator: ",", omittingEmptySubsequences: false)
    let i = try #require(header.firstIndex(of: column), "\(column) missing")
    return try #require(Double(String(fields[i])), "\(column): \(fields[i])")
  }

  /// Within half a step of the column's last decimal.
  static func close(_ got: Double, _ want: Double, decimals: Int) -> Bool {
    abs(got - want) <= 0.5 * pow(10, -Double(decimals)) + 1e-12 * abs(want)
  }

  @Test("each declaration is well formed: a unique snake_case name ending in its unit, a meaning, its own property")
  func declarations() {
    let all = AdditiveMetric.all
    #expect(!all.isEmpty)
    #expect(Set(all.map(\.name)).count == all.count)
    #expect(Set(all.map { $0.app as AnyKeyPath }).count == all.count, "two metrics charged to one property")
    for (i, m) in all.enumerated() {
      #expect(m.index == i)
      #expect(m.name.allSatisfy { $0.isLowercase || $0 == "_" || $0.isNumber }, "\(m.name)")
      #expect(m.name.hasSuffix(m.unit == .joules ? "_j" : "_bytes"), "\(m.name): unit \(m.unit.rawValue) not in the name")
      #expect(!m.help.isEmpty, "\(m.name)")
      #expect(m.pooledName == (m.perDay && m.pooling == .sum ? m.name + "_per_day" : m.name))
      #expect(m.pooling != .opensWeighted || !m.perDay, "\(m.name): an opens-weighted mean is not per day")
    }
  }

  @Test("each metric is in the headers of summary.csv, devices.csv, pooled.csv, devices_pooled.csv and the part records, with its unit")
  func headers() {
    let summary = SummaryColumn.allCases.map(\.rawValue), devices = DeviceColumn.allCases.map(\.rawValue)
    let pooled = PolicyColumn.allCases.map(\.rawValue), devicesPooled = DevicePoolColumn.allCases.map(\.rawValue)
    for header in [summary, devices, pooled, devicesPooled] { #expect(Set(header).count == header.count) }
    for m in AdditiveMetric.all {
      #expect(summary.contains(m.name), "summary.csv lacks \(m.name)")
      let app = AppSummary.recordFields.first { $0.name == m.name }
      #expect(app?.unit == m.unit.rawValue && app?.pooling == m.pooling, "pair record: \(m.name)")
      let device = DeviceSample.recordFields.first { $0.name == m.name }
      guard m.pooling != .none else {
        #expect(device == nil && !devices.contains(m.pooledName) && !pooled.contains(m.pooledName), "\(m.name) is not pooled")
        continue
      }
      #expect(device?.unit == m.unit.rawValue && device?.pooling == m.pooling, "device record: \(m.name)")
      for (file, header) in [("devices.csv", devices), ("pooled.csv", pooled), ("devices_pooled.csv", devicesPooled)] {
        #expect(header.contains(m.pooledName), "\(file) lacks \(m.pooledName)")
      }
      let bounds = [m.pooledName + "_lo", m.pooledName + "_hi"]
      #expect(bounds.allSatisfy(devicesPooled.contains) == m.interval, "devices_pooled.csv: interval of \(m.name)")
    }
    // The declared metrics follow each file's hand-written columns, in table order.
    #expect(Array(summary.suffix(AdditiveMetric.all.count)) == AdditiveMetric.all.map(\.name))
    #expect(Array(pooled.suffix(AdditiveMetric.pooled.count)) == AdditiveMetric.pooled.map(\.pooledName))
  }

  @Test("each metric pools as declared: apps into the device, devices and pairs into the pooled files, through the part records")
  func pooling() throws {
    let apps = Self.replays(), others = Self.replays(scale: 3)
    let device = DeviceSummary(apps), other = DeviceSummary(others)
    let devicesHeader = DeviceColumn.allCases.map(\.rawValue)
    let deviceRow = deviceRecord(user: "u", policy: "p", device, capacityJ: 1000)
    var policy = PolicyAggregate(policy: "p"), pool = DeviceAggregate(policy: "p")
    for r in apps + others { policy.add(r) }
    // Each device through its part record, as an experiment pools it.
    for (d, a) in [(device, apps), (other, others)] {
      let sample = DeviceSample(d, apps: a), fields = DeviceSample.recordFields
      let positions = try #require(fields.positions(of: fields.map(\.name)))
      pool.add(try #require(fields.record(DeviceSample(), positions: positions, values: fields.values(of: sample))))
    }
    let pooledRow = pooledRecord(policy, capacityJ: 1000), devicesPooledRow = devicePoolRecord(pool, capacityJ: 1000)
    for m in AdditiveMetric.all {
      let row = SummaryColumn.allCases.map { $0.value(("u", "a", "p", apps[2].summary, 1000)) }.joined(separator: ",")
      let total = try Self.number(m.name, header: SummaryColumn.allCases.map(\.rawValue), record: row)
      #expect(Self.close(total, apps[2].summary[keyPath: m.app], decimals: m.totalDecimals), "summary.csv \(m.name)")
      guard m.pooling != .none else { continue }
      let want = Self.pooled(m, apps), wantOther = Self.pooled(m, others)
      #expect(abs(device.metrics[m] - want) <= 1e-9 * abs(want), "device \(m.name): \(device.metrics[m]) vs \(want)")
      let perDevice = [m.reported(want, days: Self.days), m.reported(wantOther, days: Self.days)]
      let inDevices = try Self.number(m.pooledName, header: devicesHeader, record: deviceRow)
      #expect(Self.close(inDevices, perDevice[0], decimals: m.pooledDecimals), "devices.csv \(m.pooledName)")
      // pooled.csv pools pairs: Σ over the pairs / Σ of their days.
      let wantPooled = m.reported(Self.pooled(m, apps + others), days: Double(apps.count + others.count) * Self.days)
      let inPooled = try Self.number(m.pooledName, header: PolicyColumn.allCases.map(\.rawValue), record: pooledRow)
      #expect(Self.close(inPooled, wantPooled, decimals: m.pooledDecimals), "pooled.csv \(m.pooledName)")
      let inDevicesPooled = try Self.number(
        m.pooledName, header: DevicePoolColumn.allCases.map(\.rawValue), record: devicesPooledRow)
      #expect(Self.close(inDevicesPooled, (perDevice[0] + perDevice[1]) / 2, decimals: m.pooledDecimals), "devices_pooled.csv \(m.pooledName)")
    }
  }
}
