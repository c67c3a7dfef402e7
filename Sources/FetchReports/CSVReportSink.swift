import FetchBenchmark
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
  let capacityJ: Double
  let summary: AtomicTextFile
  let devices: AtomicTextFile
  let opens: AtomicTextFile?
  let fetches: AtomicTextFile?

  package init(directory: String, config: RunConfiguration) throws {
    self.directory = directory
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    capacityJ = config.world.batteryCapacityJ
    aggregates = config.policies.map { PolicyAggregate(policy: $0.description) }
    deviceAggregates = config.policies.map { DeviceAggregate(policy: $0.description) }
    summary = try AtomicTextFile(path: directory + "/summary.csv")
    try summary.write(SummaryColumn.headerLine)
    devices = try AtomicTextFile(path: directory + "/devices.csv")
    try devices.write(DeviceColumn.headerLine)
    if config.recordEvents {
      opens = try AtomicTextFile(path: directory + "/opens.csv")
      try opens!.write(OpenColumn.headerLine)
      fetches = try AtomicTextFile(path: directory + "/fetches.csv")
      try fetches!.write(FetchColumn.headerLine)
    } else {
      opens = nil
      fetches = nil
    }
  }

  package mutating func consume(_ r: UserResult, config: RunConfiguration) throws {
    users += 1
    let user = CSV.field(r.trace.user)
    var s = "", o = "", f = "", d = ""
    for (pi, device) in r.devices.enumerated() {
      d += deviceRecord(user: user, policy: CSV.field(aggregates[pi].policy), device, capacityJ: capacityJ)
      let apps = r.replays.map { $0[pi] }
      deviceAggregates[pi].add(DeviceSample(device, apps: apps))
      deviceAggregates[pi].addWaits(of: apps)
    }
    for (ai, app) in r.apps.enumerated() {
      let appName = CSV.field(r.trace.apps[Int(app)])
      for (pi, replay) in r.replays[ai].enumerated() {
        let policy = CSV.field(aggregates[pi].policy)
        aggregates[pi].add(replay)
        if replay.summary.opens == 0 { pairsWithoutOpens += 1 }
        s += SummaryColumn.allCases.map {
          $0.value(user: user, app: appName, policy: policy, replay.summary, capacityJ: capacityJ)
        }.joined(separator: ",") + "\n"
        let prefix = "\(user),\(appName),\(policy),"
        for x in replay.opens {
          o += prefix + "\(CSV.number(x.time, decimals: 3)),\(CSV.number(x.ageS, decimals: 3)),\(CSV.number(x.aoiS, decimals: 3)),\(x.fresh ? 1 : 0)\n"
        }
        for x in replay.fetches {
          f += prefix + [
            CSV.number(x.start, decimals: 3), CSV.number(x.end, decimals: 3), CSV.number(x.end - x.start, decimals: 3),
            x.result.description, x.failure, CSV.number(x.bytes, decimals: 0), CSV.number(x.energyJ, decimals: 6),
            x.network.description,
          ].joined(separator: ",") + "\n"
        }
      }
    }
    try summary.write(s)
    try devices.write(d)
    try opens?.write(o)
    try fetches?.write(f)
  }

  /// Writes `pooled.csv` and `manifest.json`, then moves every file into place.
  package func commit(manifest: [String: Any]) throws {
    let p = try AtomicTextFile(path: directory + "/pooled.csv")
    try p.write(PolicyColumn.headerLine)
    for a in aggregates { try p.write(pooledRecord(a, capacityJ: capacityJ) + "\n") }
    let dp = try AtomicTextFile(path: directory + "/devices_pooled.csv")
    try dp.write(DevicePoolColumn.headerLine)
    for a in deviceAggregates { try dp.write(devicePoolRecord(a, capacityJ: capacityJ) + "\n") }
    try summary.commit()
    try devices.commit()
    try opens?.commit()
    try fetches?.commit()
    try p.commit()
    try dp.commit()
    try JSONText.write(manifest, to: directory + "/manifest.json")
  }
}
