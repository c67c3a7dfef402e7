import ArgumentParser
import FetchReports
import FetchSimulation

/// What the shell completes for each kind of argument (the scripts of
/// `fetchlab --generate-completion-script bash|zsh|fish`).
extension CompletionKind {
  /// A canonical trace (CSV).
  static var trace: CompletionKind { .file(extensions: ["csv"]) }
  /// A JSON input: an experiment, a world configuration, a model file.
  static var json: CompletionKind { .file(extensions: ["json"]) }
  /// A policy: the family names (`fetchlab policies` lists their settings).
  static var policy: CompletionKind { .list(PolicyRegistry.names) }
  /// A metric of `compare`.
  static var metric: CompletionKind { .list(ScoreMetric.allCases.map(\.rawValue)) }
}
