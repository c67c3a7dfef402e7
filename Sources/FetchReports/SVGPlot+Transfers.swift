import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation

/// The background-transfer charts of a run report (docs/background-transfers.md):
/// drawn from `pooled.csv` when some policy of the run moved bytes through
/// the transfer queue, so runs without large content get none.
extension RunReport {
  /// One policy's pooled delivery and cost figures (`pooled.csv`), the mean
  /// over the replications of one dataset.
  package struct DeliveryRow: Sendable, Equatable {
    package var dataset: String
    package var policy: String
    /// Background energy (fetches and transfers), J/day.
    package var energyJPerDay: Double
    /// Background cellular data (fetches and transfers), MB/day.
    package var cellularMBPerDay: Double
    /// Transfer data by network, MB/day.
    package var transferCellularMBPerDay: Double
    package var transferWifiMBPerDay: Double
    /// Mean delivery delay over the delivered updates, s (nil: none delivered).
    package var meanDeliveryDelayS: Double?
    /// Share of the updates delivered in the window, in [0, 1].
    package var deliveredShare: Double

    package var family: String { String(policy.prefix { $0 != ":" }) }
  }

  /// The rows of `pooled.csv` (with or without the experiment's `dataset`
  /// and `replication` columns), averaged over replications per (dataset,
  /// policy), in order of first appearance; empty when no policy moved
  /// bytes through the transfer queue or the file predates the columns.
  ///
  /// - Throws: ``StrictCSV`` syntax errors and non-numeric cells, naming the
  ///   file, line and column.
  /// - Complexity: O(rows).
  package static func readDeliveries(path: String) throws -> [DeliveryRow] {
    var col: [String: Int] = [:]
    var sums: [[String]: (row: DeliveryRow, delayed: Int, n: Int)] = [:]
    var order: [[String]] = []
    let needed = ["policy", "energy_j_per_day", "cellular_bytes_per_day", "updates", "delivered", "mean_delivery_delay_s",
      "transfer_cellular_bytes_per_day", "transfer_wifi_bytes_per_day"]
    var missing = false
    try StrictCSV.read(
      path: path, header: { h in for (i, n) in h.enumerated() { col[n] = i }; missing = needed.contains { col[$0] == nil } },
      record: { line, f in
        guard !missing else { return }
        func num(_ c: String) throws -> Double? {
          try number(f[col[c]!], file: path, line: line, column: c)
        }
        let dataset = col["dataset"].map { f[$0] } ?? ""
        let policy = f[col["policy"]!]
        let key = [dataset, policy]
        let updates = try num("updates") ?? 0
        let delivered = try num("delivered") ?? 0
        let delay = try num("mean_delivery_delay_s")
        var r = DeliveryRow(
          dataset: dataset, policy: policy, energyJPerDay: try num("energy_j_per_day") ?? 0,
          cellularMBPerDay: (try num("cellular_bytes_per_day") ?? 0) * 1e-6,
          transferCellularMBPerDay: (try num("transfer_cellular_bytes_per_day") ?? 0) * 1e-6,
          transferWifiMBPerDay: (try num("transfer_wifi_bytes_per_day") ?? 0) * 1e-6,
          meanDeliveryDelayS: delay, deliveredShare: updates > 0 ? delivered / updates : 0)
        if var s = sums[key] {
          s.row.energyJPerDay += r.energyJPerDay
          s.row.cellularMBPerDay += r.cellularMBPerDay
          s.row.transferCellularMBPerDay += r.transferCellularMBPerDay
          s.row.transferWifiMBPerDay += r.transferWifiMBPerDay
          s.row.deliveredShare += r.deliveredShare
          if let d = delay {
            s.row.meanDeliveryDelayS = (s.row.meanDeliveryDelayS ?? 0) + d
            s.delayed += 1
          }
          s.n += 1
          sums[key] = s
        } else {
          if delay == nil { r.meanDeliveryDelayS = nil }
          sums[key] = (r, delay == nil ? 0 : 1, 1)
          order.append(key)
        }
      })
    guard !missing else { return [] }
    let rows = order.map { k -> DeliveryRow in
      let s = sums[k]!
      var r = s.row
      let n = Double(s.n)
      r.energyJPerDay /= n
      r.cellularMBPerDay /= n
      r.transferCellularMBPerDay /= n
      r.transferWifiMBPerDay /= n
      r.deliveredShare /= n
      r.meanDeliveryDelayS = s.delayed > 0 ? r.meanDeliveryDelayS.map { $0 / Double(s.delayed) } : nil
      return r
    }
    return rows.contains { $0.transferCellularMBPerDay + $0.transferWifiMBPerDay > 0 } ? rows : []
  }
}

extension SVGPlot {
  /// Mean delivery delay (publication → on the device) against a cost, one
  /// point per policy configuration (pooled over users; no CIs), log axes;
  /// policies that delivered nothing are left out (named in a note).
  ///
  /// - Parameter cellular: the cost is cellular data (MB/day) instead of
  ///   background energy (J/day); both include the transfers.
  package static func deliveryTradeoff(dataset: String, rows: [RunReport.DeliveryRow], cellular: Bool) -> SVGPlot {
    var xs: [Double] = [], ys: [Double] = []
    var series: [PlotSeries] = []
    var none: [String] = []
    var zeros = 0
    var families: [String] = []
    var byFamily: [String: [RunReport.DeliveryRow]] = [:]
    for r in rows {
      guard r.meanDeliveryDelayS != nil else {
        none.append(r.policy)
        continue
      }
      if byFamily[r.family] == nil { families.append(r.family) }
      byFamily[r.family, default: []].append(r)
    }
    for f in families {
      let members = byFamily[f]!.sorted {
        ((cellular ? $0.cellularMBPerDay : $0.energyJPerDay), $0.policy) < ((cellular ? $1.cellularMBPerDay : $1.energyJPerDay), $1.policy)
      }
      let points = members.map { r -> PlotPoint in
        let x = cellular ? r.cellularMBPerDay : r.energyJPerDay, d = r.meanDeliveryDelayS!
        if x <= 0 { zeros += 1 }
        xs.append(x)
        ys.append(d)
        let tip =
          r.policy + ": " + RunReport.sig(x) + (cellular ? " MB/day" : " J/day") + ", mean delay " + RunReport.sig(d)
          + " s, " + RunReport.sig(100 * r.deliveredShare) + " % of updates delivered"
        return PlotPoint(x: x, y: d, label: members.count > 1 ? shortSetting(r.policy) : nil, tooltip: tip)
      }
      let st = familyStyle(f)
      series.append(
        PlotSeries(
          name: members.count == 1 ? members[0].policy : f + " (" + String(members.count) + ")", points: points,
          line: members.count > 1 ? .straight : .none, marker: st.marker, color: st.color))
    }
    var notes = [
      "Pooled over users (pooled.csv; mean over replications). Delay: content published → on the device, mean over "
        + "the delivered updates; costs include the background transfers."
    ]
    if !none.isEmpty { notes.append("Delivered nothing (not drawn): " + none.joined(separator: ", ") + ".") }
    if zeros > 0 { notes.append("\(zeros) configuration(s) at 0 on the log x axis: drawn at the tick labelled 0.") }
    return SVGPlot(
      title: (cellular ? "Delivery delay vs cellular data" : "Delivery delay vs energy")
        + (dataset.isEmpty ? "" : " (" + dataset + ")"),
      x: .fitting(
        xs, label: cellular ? "cellular data (MB/day, log scale)" : "background energy incl. transfers (J/day, log scale)",
        scale: .log, zeroLane: true),
      y: .fitting(ys, label: "mean delivery delay (s, log scale)", scale: .log, zeroLane: true),
      series: series, notes: notes, width: 800, height: 560)
  }

  /// The background transfers' data per network, MB/day: per policy
  /// configuration (x: its rank) a cellular and a WiFi point, not joined
  /// (the policies are categories, not a scale).
  package static func transferBytes(dataset: String, rows: [RunReport.DeliveryRow]) -> SVGPlot {
    let moved = rows.filter { $0.transferCellularMBPerDay + $0.transferWifiMBPerDay > 0 }
    let idx = moved.indices.map(Double.init)
    let cell = zip(idx, moved).map { i, r in
      PlotPoint(x: i + 1, y: r.transferCellularMBPerDay, label: shortSetting(r.policy), tooltip: r.policy + ": " + RunReport.sig(r.transferCellularMBPerDay) + " cellular MB/day")
    }
    let wifi = zip(idx, moved).map { i, r in
      PlotPoint(x: i + 1, y: r.transferWifiMBPerDay, tooltip: r.policy + ": " + RunReport.sig(r.transferWifiMBPerDay) + " WiFi MB/day")
    }
    let ys = cell.map(\.y) + wifi.map(\.y)
    return SVGPlot(
      title: "Background transfer data by network" + (dataset.isEmpty ? "" : " (" + dataset + ")"),
      x: PlotAxis(label: "policy (labelled at its cellular point)", scale: .linear, lower: 0, upper: Double(moved.count + 1),
        ticks: idx.map { $0 + 1 }),
      y: .fitting(ys, label: "transfer data (MB/day)", scale: .linear, includeZero: true),
      series: [
        PlotSeries(name: "cellular", points: cell, line: .none, marker: .triangle, color: "#D55E00"),
        PlotSeries(name: "WiFi", points: wifi, line: .none, marker: .circle, color: "#0072B2"),
      ],
      notes: [
        "Pooled over users (pooled.csv). Only the policies whose transfers moved bytes, each labelled at its cellular point"
          + " by its setting (transfer:<setting>)."
      ],
      width: 800, height: 560)
  }

  /// A policy's setting without the family and key names, for point
  /// labels: `transfer:discretionary,deadline=6h` → `discretionary,6h`.
  static func shortSetting(_ policy: String) -> String {
    guard policy.contains(":") else { return policy }
    return String(policy.drop { $0 != ":" }.dropFirst()).split(separator: ",").map { kv in
      kv.split(separator: "=", maxSplits: 1).last.map(String.init) ?? String(kv)
    }.joined(separator: ",")
  }
}
