import ArgumentParser
import FetchLinearAlgebra
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
  ///
  /// The one error path of the CLI: every error a command throws ends here,
  /// Foundation file errors made readable (``readable(_:)``), and leaves
  /// through ArgumentParser's `exit(withError:)`: usage errors
  /// (`ValidationError`) with exit code 64, everything else (library errors
  /// such as `TraceFormatError`, ``CommandError``) as `Error: …` with 1.
  static func main() {
    // Before anything else: OpenBLAS's idle workers would otherwise poll a
    // second core for about 0.1 s in every command (see the method).
    LinearAlgebra.setSingleThreaded()
    // Past a file-size limit (ulimit -f) a write fails with EFBIG and the
    // command removes its temporary file and says so, instead of dying of
    // SIGXFSZ with the temporary file left behind.
    signal(SIGXFSZ, SIG_IGN)
    let args = Array(CommandLine.arguments.dropFirst())
    if let first = args.first, !first.hasPrefix("-"), !subcommandNames.contains(first) {
      log(
        "Error: unknown command '\(first)'." + Suggestion.didYouMean(first, among: subcommandNames)
          + "\nCommands: " + subcommandNames.joined(separator: ", ") + " (see 'fetchlab --help').")
      Foundation.exit(ExitCode.validationFailure.rawValue)
    }
    do {
      var command = try parseAsRoot(nil)
      try command.run()
    } catch {
      exit(withError: readable(error))
    }
  }
}

/// The version recorded in outputs, and part of every experiment's
/// configuration hash: a run never resumes from
/// parts another version computed. Bump it whenever results change.
let fetchLabVersion = "0.4.1"

/// Writes a line to standard error (progress, warnings, logs).
func log(_ s: String) {
  FileHandle.standardError.write(Data((s + "\n").utf8))
}
