import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation

/// Writes a run's CSVs into a directory as users arrive, and pools per-policy
/// aggregates. Files are written under temporary names and moved into place
/// only by ``commit(manifest:)``, so a failed run leaves no half-written report.
///
/// Sizes: `summary.csv` has users × apps × policies rows (~250 B each),
/// `devices.csv` users × policies rows (~150 B each);
/// `opens.csv` ~60 B per open and `fetches.csv` ~110 B per fetch, per policy.
/// At 10,000 users × 28 days × 3 apps × 12 policies that is ~1 GB of
/// `opens.csv`; pass `recordEvents: false` (`--no-event-files`) at that scale.
package struct CSVReportSink: RunSink {
  package let directory: String
  package private(set) var aggregates: [PolicyAggregate]
  /// Per policy: the devices pooled (`devices_pooled.csv`).
  package private(set) var deviceAggregates: [DeviceAggregate]
  package private(set) var users = 0
  /// (user, app, policy) pairs without a scored open: their staleness is
  /// undefined and written as empty fields.
  package private(set) var pairsWithoutOpens = 0
  /// Opens in the trace and scored, apps replayed and left out, over users.
  package private(set) var coverage = RunCoverage()
  let capacityJ: Double
  /// The per-user files written, in ``UserFile`` order.
  let files: [(kind: UserFile, file: AtomicTextFile)]

  package init(directory: String, config: RunConfiguration) throws {
    self.directory = directory
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    capacityJ = config.world.device.batteryCapacityJ
    aggregates = config.policies.map { PolicyAggregate(policy: $0.description) }
    deviceAggregates = config.policies.map { DeviceAggregate(policy: $0.description) }
    files = try UserFile.open(in: directory, events: config.recordEvents)
  }

  /// One user's results with their CSV records, formatted on a worker thread.
  package struct Records: Sendable {
    package var result: UserResult
    package var summary: String
    package var devices: String
    package var opens: String
    package var fetches: String
  }

  package typealias Prepared = Records

  /// ``format(_:config:)``, run by the runner's workers in parallel.
  package var prepare: @Sendable (_ result: UserResult, _ config: RunConfiguration) -> Records {
    { r, config in CSVReportSink.format(r, config: config) }
  }

  /// The `summary.csv`, `devices.csv`, `opens.csv` and `fetches.csv`
  /// records of one user (the last two empty unless `config.recordEvents`).
  ///
  /// - Complexity: O(apps × policies + opens + fetches).
  package static func format(_ r: UserResult, config: RunConfiguration) -> Records {
    let capacityJ = config.world.device.batteryCapacityJ
    let policies = config.policies.map { CSV.field($0.description) }
    let user = CSV.field(r.trace.user)
    let summaryColumns = SummaryColumn.allCases
    var s = "", d = ""
    // The event files are most of a run's output: their records are built
    // as bytes (CSV.appendNumber), not as strings joined.
    var o: [UInt8] = [], f: [UInt8] = []
    for (pi, device) in r.devices.enumerated() {
      d += deviceRecord(user: user, policy: policies[pi], device, capacityJ: capacityJ)
    }
    for (ai, app) in r.apps.enumerated() {
      let appName = CSV.field(r.trace.apps[Int(app)])
      for (pi, replay) in r.replays[ai].enumerated() {
        let policy = policies[pi]
        s += summaryColumns.map {
          $0.value((user, appName, policy, replay.summary, capacityJ))
        }.joined(separator: ",") + "\n"
        guard config.recordEvents else { continue }
        let prefix = Array("\(user),\(appName),\(policy),".utf8)
        for x in replay.opens {
          o += prefix
          o.appendCSVNumber(x.time, decimals: 3, then: ",")
          o.appendCSVNumber(x.ageS, decimals: 3, then: ",")
          o.appendCSVNumber(x.aoiS, decimals: 3, then: ",")
          o.append(x.fresh ? UInt8(ascii: "1") : UInt8(ascii: "0"))
          o.append(UInt8(ascii: "\n"))
        }
        for x in replay.fetches {
          f += prefix
          f.appendCSVNumber(x.start, decimals: 3, then: ",")
          f.appendCSVNumber(x.end, decimals: 3, then: ",")
          f.appendCSVNumber(x.end - x.start, decimals: 3, then: ",")
          f.append(contentsOf: x.result.description.utf8)
          f.append(UInt8(ascii: ","))
          f.append(contentsOf: x.failure.utf8)
          f.append(UInt8(ascii: ","))
          f.appendCSVNumber(x.bytes, decimals: 0, then: ",")
          f.appendCSVNumber(x.energyJ, decimals: 6, then: ",")
          f.append(contentsOf: x.network.description.utf8)
          f.append(UInt8(ascii: "\n"))
        }
      }
    }
    return Records(
      result: r, summary: s, devices: d, opens: String(decoding: o, as: UTF8.self),
      fetches: String(decoding: f, as: UTF8.self))
  }

  /// Pools one user's results and appends its records.
  package mutating func consume(_ records: Records, config: RunConfiguration) throws {
    users += 1
    let r = records.result
    if let c = r.coverage { coverage.add(c) }
    for pi in r.devices.indices {
      let apps = r.replays.map { $0[pi] }
      deviceAggregates[pi].add(DeviceSample(r.devices[pi], apps: apps))
      deviceAggregates[pi].addWaits(of: apps)
    }
    for replays in r.replays {
      for (pi, replay) in replays.enumerated() {
        aggregates[pi].add(replay)
        if replay.summary.opens == 0 { pairsWithoutOpens += 1 }
      }
    }
    for (kind, file) in files { try file.write(kind.records(records)) }
  }

  /// Pools one user's results and appends its records, formatted here.
  package mutating func consume(_ r: UserResult, config: RunConfiguration) throws {
    try consume(CSVReportSink.format(r, config: config), config: config)
  }

  /// Writes `pooled.csv` and `manifest.json`, then moves every file into place.
  package func commit(manifest: [String: Any]) throws {
    let p = try AtomicTextFile(path: directory + "/pooled.csv")
    try p.write(PolicyColumn.headerLine)
    for a in aggregates { try p.write(pooledRecord(a, capacityJ: capacityJ) + "\n") }
    let dp = try AtomicTextFile(path: directory + "/devices_pooled.csv")
    try dp.write(DevicePoolColumn.headerLine)
    for a in deviceAggregates { try dp.write(devicePoolRecord(a, capacityJ: capacityJ) + "\n") }
    for (_, file) in files { try file.commit() }
    try p.commit()
    try dp.commit()
    try JSONText.write(manifest, to: directory + "/manifest.json")
  }
}

extension [UInt8] {
  /// Appends `value` formatted by ``CSV/appendNumber(_:decimals:to:)``, then
  /// `separator`.
  fileprivate mutating func appendCSVNumber(_ value: Double, decimals: Int, then separator: Unicode.Scalar) {
    CSV.appendNumber(value, decimals: decimals, to: &self)
    append(UInt8(ascii: separator))
  }
}
