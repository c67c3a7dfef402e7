import ArgumentParser
import FetchSupport
import FetchTraces
import Foundation

@main
struct FetchLab: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "fetchlab",
    abstract: "Replay phone usage traces against background-fetch policies; score staleness at app open against energy and cellular data.",
    version: fetchLabVersion,
    subcommands: [
      Validate.self,
      Synth.self,
      Run.self,
      Policies.self,
      Merge.self,
      Params.self,
      ImportUbiqLog.self,
      ImportEvents.self,
      Fit.self,
      Predict.self,
      Compare.self,
      Report.self,
      Bench.self,
    ]
  )

  /// The subcommand names, for "did you mean".
  static var subcommandNames: [String] { configuration.subcommands.map { $0._commandName } + ["help"] }

  /// Runs the command line, first catching a mistyped subcommand (which the
  /// parser would report only as an unexpected argument) with a suggestion.
  static func main() {
    let args = Array(CommandLine.arguments.dropFirst())
    if let first = args.first, !first.hasPrefix("-"), !subcommandNames.contains(first) {
      log(
        "Error: unknown command '\(first)'." + Suggestion.didYouMean(first, among: subcommandNames)
          + "\nCommands: " + subcommandNames.joined(separator: ", ") + " (see 'fetchlab --help').")
      Foundation.exit(ExitCode.validationFailure.rawValue)
    }
    main(nil)
  }
}

/// The version recorded in outputs, and part of every experiment's
/// configuration hash: a run never resumes from
/// parts another version computed. Bump it whenever results change.
let fetchLabVersion = "0.3.0"

/// A failure caused by the input (not the usage): printed as `Error: ...`, exit 1.
struct CommandError: Error, CustomStringConvertible {
  let description: String
  init(_ s: String) { description = s }
}

/// Writes a line to standard error (progress, warnings, logs).
func log(_ s: String) {
  FileHandle.standardError.write(Data((s + "\n").utf8))
}
