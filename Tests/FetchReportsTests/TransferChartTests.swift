import FetchTestSupport
import Foundation
import Testing

@testable import FetchReports

/// The background-transfer charts read `pooled.csv` and appear only for
/// runs whose transfers moved bytes.
@Suite("Transfer charts")
struct TransferChartTests {
  static let header =
    "dataset,replication,policy,energy_j_per_day,cellular_bytes_per_day,updates,delivered,mean_delivery_delay_s,"
    + "transfer_energy_j_per_day,transfer_cellular_bytes_per_day,transfer_wifi_bytes_per_day\n"

  static func write(_ body: String) throws -> String {
    let path = Scratch.directory("transfer-charts") + "/pooled.csv"
    try (header + body).write(toFile: path, atomically: true, encoding: .utf8)
    return path
  }

  @Test("replications are averaged per (dataset, policy); a policy that delivered nothing has no delay")
  func readsAndAverages() throws {
    let path = try Self.write(
      "d,1,silent-push,100,2000000,10,5,7200,0,0,0\n"
        + "d,2,silent-push,300,4000000,10,5,3600,0,0,0\n"
        + "d,1,transfer:immediate,200,1000000,10,10,100,150,1000000,3000000\n"
        + "d,2,transfer:immediate,200,1000000,10,8,300,150,1000000,5000000\n"
        + "d,1,never,0,0,10,0,,0,0,0\n")
    let rows = try RunReport.readDeliveries(path: path)
    #expect(rows.map(\.policy) == ["silent-push", "transfer:immediate", "never"])
    #expect(rows[0].energyJPerDay == 200 && rows[0].cellularMBPerDay == 3 && rows[0].meanDeliveryDelayS == 5400)
    #expect(rows[1].transferWifiMBPerDay == 4 && rows[1].deliveredShare == 0.9 && rows[1].meanDeliveryDelayS == 200)
    #expect(rows[2].meanDeliveryDelayS == nil)
    let plot = SVGPlot.deliveryTradeoff(dataset: "d", rows: rows, cellular: false)
    #expect(plot.series.map(\.name) == ["silent-push", "transfer:immediate"])
    #expect(plot.notes.contains { $0.contains("never") })
    #expect(SVGPlot.transferBytes(dataset: "d", rows: rows).series.map { $0.points.count } == [1, 1])
  }

  @Test("no chart data when no transfer moved bytes (existing runs' reports are unchanged)")
  func noneWithoutTransfers() throws {
    let path = try Self.write("d,1,silent-push,100,2000000,10,5,7200,0,0,0\n")
    #expect(try RunReport.readDeliveries(path: path).isEmpty)
  }
}
