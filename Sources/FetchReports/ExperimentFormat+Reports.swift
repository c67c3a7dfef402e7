import FetchBenchmark
import FetchSimulation
import Foundation

extension ExperimentFormat {
  /// The format of `fetchlab run`: the report files' columns, rows from
  /// ``CSVReportSink/format(_:config:)`` itself, so experiment rows are the
  /// `run --trace` rows with two leading columns (`dataset,replication`).
  public static var reports: ExperimentFormat {
    ExperimentFormat(
      summaryColumns: SummaryColumn.allCases.map(\.rawValue), deviceColumns: DeviceColumn.allCases.map(\.rawValue),
      openColumns: OpenColumn.allCases.map(\.rawValue), fetchColumns: FetchColumn.allCases.map(\.rawValue),
      policyColumns: PolicyColumn.allCases.map(\.rawValue),
      rows: { results, config, _ in
        // The records CSVReportSink writes, formatted directly (no scratch files).
        var rows = ExperimentRows(summary: "", devices: "", opens: "", fetches: "")
        for r in results {
          let x = CSVReportSink.format(r, config: config)
          rows.summary += x.summary
          rows.devices += x.devices
          rows.opens += x.opens
          rows.fetches += x.fetches
        }
        return rows
      },
      policyRow: pooledRecord, devicePoolColumns: DevicePoolColumn.allCases.map(\.rawValue),
      devicePoolRow: devicePoolRecord)
  }
}
