import FetchSupport

/// The per-user files of a result directory, in the order they are written:
/// the rows `run --trace` writes as users arrive, and that an experiment
/// writes per unit (with `dataset,replication` first) and assembles.
package enum UserFile: String, CaseIterable, Sendable {
  /// `summary.csv`: one row per (user, app, policy) (``SummaryColumn``).
  case summary
  /// `devices.csv`: one row per (user, policy) (``DeviceColumn``).
  case devices
  /// `opens.csv`: one row per open of a replayed app (``OpenColumn``);
  /// only with event files.
  case opens
  /// `fetches.csv`: one row per background fetch (``FetchColumn``); only
  /// with event files.
  case fetches

  /// The files a run writes: all four with event files
  /// (`RunConfiguration.recordEvents`), else `summary` and `devices`.
  static func written(events: Bool) -> [UserFile] { events ? allCases : [.summary, .devices] }

  /// The file's name in a result directory.
  var fileName: String { rawValue + ".csv" }

  /// The file's header line (with LF), as `run --trace` writes it.
  var headerLine: String {
    switch self {
    case .summary: SummaryColumn.headerLine
    case .devices: DeviceColumn.headerLine
    case .opens: OpenColumn.headerLine
    case .fetches: FetchColumn.headerLine
    }
  }

  /// This file's records among one user's (``CSVReportSink/format(_:config:)``).
  func records(_ r: CSVReportSink.Records) -> String {
    switch self {
    case .summary: r.summary
    case .devices: r.devices
    case .opens: r.opens
    case .fetches: r.fetches
    }
  }

  /// Creates the files written with or without `events` in `directory`,
  /// each under a temporary name until committed, and writes their
  /// headers, each after `leadingColumns` (`dataset,replication,` in an
  /// experiment).
  static func open(
    in directory: String, events: Bool, leadingColumns: String = ""
  ) throws -> [(kind: UserFile, file: AtomicTextFile)] {
    try written(events: events).map { kind in
      let file = try AtomicTextFile(path: directory + "/" + kind.fileName)
      try file.write(leadingColumns + kind.headerLine)
      return (kind, file)
    }
  }
}

/// The columns an experiment's files start with: every row of `run
/// --trace` follows the dataset's name and the replication.
let experimentLeadingColumns = "dataset,replication,"
