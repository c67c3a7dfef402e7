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
    let command: ParsableCommand
    do {
      command = try parseAsRoot(nil)
    } catch {
      // A command's own checks run before the parser reports options it does
      // not know; a mistyped option would then surface as a misleading
      // complaint about the others.
      if let message = unknownOption(in: args) { exit(withError: ValidationError(message)) }
      exit(withError: readable(error))
    }
    do {
      var command = command
      try command.run()
    } catch {
      exit(withError: readable(error))
    }
  }

  /// "unknown option '--polcy'. Did you mean '--policy'?" for the first
  /// `--name` of `args` (after the subcommand, before any `--`) that the
  /// subcommand does not declare; nil when every option is known.
  static func unknownOption(in args: [String]) -> String? {
    guard let name = args.first,
      let sub = configuration.subcommands.first(where: { $0._commandName == name })
    else { return nil }
    let declared = longOptionNames(of: sub)
    guard !declared.isEmpty else { return nil }
    let known = declared + ["help", "version"]
    for a in args.dropFirst() {
      if a == "--" { break }
      guard a.hasPrefix("--"), a.count > 2 else { continue }
      let option = String(a.dropFirst(2).prefix { $0 != "=" })
      if known.contains(option) { continue }
      let hint = Suggestion.closest(to: option, among: known).map { " Did you mean '--\($0)'?" } ?? ""
      return "unknown option '--\(escaped(option))' for '\(name)'.\(hint) See 'fetchlab \(name) --help'."
    }
    return nil
  }

  /// The long option and flag names `command` declares, without dashes
  /// (from ArgumentParser's JSON description of the command).
  static func longOptionNames(of command: ParsableCommand.Type) -> [String] {
    guard let json = try? JSONSerialization.jsonObject(with: Data(command._dumpHelp().utf8)) as? [String: Any],
      let info = json["command"] as? [String: Any], let arguments = info["arguments"] as? [[String: Any]]
    else { return [] }
    return arguments.flatMap { a in
      ((a["names"] as? [[String: Any]]) ?? []).compactMap { n in
        (n["kind"] as? String) == "long" ? n["name"] as? String : nil
      }
    }
  }
}

/// The version recorded in outputs, and part of every experiment's
/// configuration hash: a run never resumes from
/// parts another version computed. Bump it whenever results change.
let fetchLabVersion = "0.7.0"

/// Writes a line to standard error (progress, warnings, logs), after what
/// standard output holds so far, so the two keep their order when both go to
/// one file.
func log(_ s: String, terminator: String = "\n") {
  fflush(nil)
  FileHandle.standardError.write(Data((s + terminator).utf8))
}
