import FetchBenchmark
import Foundation

/// Ctrl-C (SIGINT) during a run: removes what the run was writing (its
/// staging directory and temporary files, ``ResultDirectory/abandon(path:)``),
/// says what the result directory holds and how to resume, and exits with
/// 130 (128 + SIGINT, what a shell reports for a process killed by it).
///
/// Finished experiment units stay in `OUT/parts/`: running the same command
/// again computes only the others and writes the same bytes as a run
/// never interrupted. The handler runs on a dispatch queue, not in signal
/// context, while the run's threads go on; it ends the process with
/// `_exit`, so nothing of the run's is flushed or committed after it.
final class InterruptHandler: @unchecked Sendable {
  private let source: DispatchSourceSignal

  /// Installs the handler for a run into `out`. `experiment`: whether
  /// units are kept (an experiment file) or nothing is (`run --trace`).
  init(out: String, experiment: Bool, progress: ProgressLine) {
    signal(SIGINT, SIG_IGN)
    source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
    let hadResult = FileManager.default.fileExists(atPath: out + "/manifest.json")
    source.setEventHandler {
      progress.clear()
      let where_ = ResultDirectory.abandon(path: out)
      let message = Self.message(
        out: out, abandoned: where_, hadResult: hadResult, experiment: experiment,
        finished: ResultDirectory.finishedUnits(path: out), total: progress.units?.total)
      fflush(nil)
      FileHandle.standardError.write(Data(message.utf8))
      _exit(130)
    }
    source.resume()
  }

  /// A test hook: once `count` reaches the number in the environment
  /// variable `name`, sends this process SIGINT and waits for the handler
  /// to end it, so a test interrupts a run at a known point.
  static func testInterrupt(after count: Int, _ name: String) {
    guard let k = ProcessInfo.processInfo.environment[name].flatMap({ Int($0) }), count >= k else { return }
    kill(getpid(), SIGINT)
    while true { pause() }
  }

  /// Stops handling SIGINT (its default action again).
  func cancel() {
    source.cancel()
    signal(SIGINT, SIG_DFL)
  }

  /// What the interrupted run leaves and the command that resumes it.
  static func message(
    out: String, abandoned: ResultDirectory.Abandoned, hadResult: Bool, experiment: Bool, finished: Int, total: Int?
  ) -> String {
    let again = CommandLine.arguments.map(shellQuoted).joined(separator: " ")
    if abandoned == .afterCommit {
      return "\ninterrupted after the new result was committed: \(out) holds it complete "
        + "(the next fetchlab command on \(out) finishes moving it in place)\n"
    }
    var s = "\ninterrupted: "
    if experiment {
      s += "\(finished)" + (total.map { " of \($0)" } ?? "") + " units finished and kept in \(out)/parts/; "
    } else {
      s += "nothing of this run is kept; "
    }
    s += hadResult ? "\(out) holds its previous result, unchanged\n" : "\(out) holds no result yet\n"
    s += (experiment ? "resume with: " : "run again with: ") + again + "\n"
    return s
  }

  /// `s` quoted for a POSIX shell when it holds anything but plain characters.
  static func shellQuoted(_ s: String) -> String {
    let plain = !s.isEmpty && s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_./=:,+@%".contains($0)) }
    return plain ? s : "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
  }
}
