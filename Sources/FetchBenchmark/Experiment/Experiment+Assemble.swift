import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation

/// The sums of an experiment's part records (see ``assembleParts``).
struct PartTotals {
  /// Per dataset: `[replication][policy]` aggregates.
  var aggregates: [[[PolicyAggregate]]]
  /// Per dataset: `[policy]` aggregates pooled over replications.
  var pooled: [[PolicyAggregate]]
  /// Per dataset: `[replication][policy]` device aggregates.
  var deviceAggregates: [[[DeviceAggregate]]]
  var counts: [ExperimentCounts]
  /// The units read, in order, with their records' sizes and SHA-256.
  var states: [ShardRecord.Unit] = []

  /// Empty totals of `e`'s datasets, replications and policies.
  init(_ e: Experiment) {
    let empty = e.policies.map { PolicyAggregate(policy: $0.description) }
    aggregates = [[[PolicyAggregate]]](
      repeating: [[PolicyAggregate]](repeating: empty, count: e.replications), count: e.datasets.count)
    pooled = [[PolicyAggregate]](repeating: empty, count: e.datasets.count)
    let noDevices = e.policies.map { DeviceAggregate(policy: $0.description) }
    deviceAggregates = [[[DeviceAggregate]]](
      repeating: [[DeviceAggregate]](repeating: noDevices, count: e.replications), count: e.datasets.count)
    counts = [ExperimentCounts](repeating: ExperimentCounts(), count: e.datasets.count)
  }

  /// Adds the record of a unit of dataset `di`, replication `r`; users,
  /// pairs and opens are counted once (replication 0), fetches in every
  /// replication.
  mutating func add(_ rec: PartRecord, dataset di: Int, replication r: Int) {
    for p in rec.pairs {
      aggregates[di][r][p.policy].add(p)
      pooled[di][p.policy].add(p)
      counts[di].fetches += p.fetches
      if r == 0, p.policy == 0 {
        counts[di].pairs += 1
        counts[di].opens += p.opens
      }
    }
    for (p, h) in rec.ages.enumerated() {
      aggregates[di][r][p].ages.merge(h)
      pooled[di][p].ages.merge(h)
    }
    for d in rec.devices { deviceAggregates[di][r][d.policy].add(d.sample) }
    for (p, h) in rec.waits.enumerated() { deviceAggregates[di][r][p].waitHistogram.merge(h) }
    if r == 0 { counts[di].users += rec.users }
  }
}

/// Assembles the final files in `staging` from the parts, in unit order
/// (`units`: per dataset, the unit ids in output order), and sums the
/// records; with `assemble` false (a shard) it only checks the parts and
/// sums them.
///
/// - Throws: ``ExperimentError`` for a missing or damaged part.
func assembleParts(
  _ e: Experiment, units: [[String]], hash: String, parts: String, staging: String, assemble: Bool
) throws -> (totals: PartTotals, files: [AtomicTextFile]) {
  let userFiles =
    try assemble ? UserFile.open(in: staging, events: e.eventFiles, leadingColumns: experimentLeadingColumns) : []
  let P = e.policies.count
  var totals = PartTotals(e)
  for (di, ids) in units.enumerated() {
    for id in ids {
      let statePath = parts + "/" + id + ".state"
      guard let stateData = FileManager.default.contents(atPath: statePath),
        let rec = String(validating: stateData, as: UTF8.self).flatMap(PartRecord.decode), rec.config == hash,
        rec.unit == id, rec.ages.count == P, rec.pairs.allSatisfy({ (0..<P).contains($0.policy) }),
        rec.waits.count == P, rec.devices.allSatisfy({ (0..<P).contains($0.policy) })
      else {
        throw ExperimentError(.damagedParts, "\(statePath) is missing or damaged; delete it and run again")
      }
      totals.states.append(ShardRecord.Unit(id: id, stateBytes: stateData.count, stateSHA256: SHA256.hex([UInt8](stateData))))
      for f in rec.files {
        let target = userFiles.first { $0.kind.rawValue == f.kind }?.file
        let body = try verifiedPart(parts + "/" + id + partSuffix(f.kind), record: f)
        if let target { try target.write(body) }
      }
      totals.add(rec, dataset: di, replication: replicationOf(id))
    }
  }
  var files = userFiles.map(\.file)
  if assemble { files += try writePooledFiles(e, totals: totals, staging: staging) }
  return (totals, files)
}

/// Writes `pooled.csv` and `devices_pooled.csv` into `staging`: one row per
/// dataset, replication and policy, in that order.
func writePooledFiles(_ e: Experiment, totals: PartTotals, staging: String) throws -> [AtomicTextFile] {
  [
    try writePooled(e, path: staging + "/pooled.csv", PolicyColumn.self, rows: totals.aggregates, pooledRecord),
    try writePooled(
      e, path: staging + "/devices_pooled.csv", DevicePoolColumn.self, rows: totals.deviceAggregates, devicePoolRecord),
  ]
}

/// One pooled file: `dataset,replication,` and the `columns`, then per
/// dataset and replication the records of `rows[dataset][replication]` as
/// `row` writes them with the dataset's battery capacity, J.
private func writePooled<A, Columns: FixedColumns>(
  _ e: Experiment, path: String, _ columns: ResultColumn<Columns>.Type, rows: [[[A]]], _ row: (A, Double) -> String
) throws -> AtomicTextFile {
  let file = try AtomicTextFile(path: path)
  try file.write(experimentLeadingColumns + columns.headerLine)
  for (di, d) in e.datasets.enumerated() {
    let capacityJ = e.world(of: d).device.batteryCapacityJ
    for r in 0..<e.replications {
      for a in rows[di][r] {
        try file.write(CSV.field(d.name) + ",\(r)," + row(a, capacityJ) + "\n")
      }
    }
  }
  return file
}
