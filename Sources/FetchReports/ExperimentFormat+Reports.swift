import FetchBenchmark
import FetchSimulation
import Foundation

extension ExperimentFormat {
  /// The format of `fetchlab run`: the report files' columns, rows from
  /// ``CSVReportSink`` itself, so experiment rows are the `run --trace` rows
  /// with two leading columns (`dataset,replication`).
  public static var reports: ExperimentFormat {
    ExperimentFormat(
      summaryColumns: SummaryColumn.allCases.map(\.rawValue), deviceColumns: DeviceColumn.allCases.map(\.rawValue),
      openColumns: OpenColumn.allCases.map(\.rawValue), fetchColumns: FetchColumn.allCases.map(\.rawValue),
      policyColumns: PolicyColumn.allCases.map(\.rawValue),
      rows: { results, config, scratch in
        var sink = try CSVReportSink(directory: scratch, config: config)
        for r in results { try sink.consume(r, config: config) }
        try sink.commit(manifest: [:])
        func body(_ name: String) throws -> String {
          let text = try String(contentsOfFile: scratch + "/" + name, encoding: .utf8)
          guard let nl = text.firstIndex(of: "\n") else { return "" }
          return String(text[text.index(after: nl)...])
        }
        return ExperimentRows(
          summary: try body("summary.csv"), devices: try body("devices.csv"), opens: config.recordEvents ? try body("opens.csv") : "",
          fetches: config.recordEvents ? try body("fetches.csv") : "")
      },
      policyRow: pooledRecord, devicePoolColumns: DevicePoolColumn.allCases.map(\.rawValue),
      devicePoolRow: devicePoolRecord)
  }
}
