import ArgumentParser
import Foundation

/// `--jobs`, declared and checked once for the commands that work in
/// parallel (`run`, `merge`, `fit`, `bench`).
struct JobsOption: ParsableArguments {
  @Option(
    name: .long,
    parsing: .unconditional, help: "Worker threads (results do not depend on it), 1 to \(JobsOption.maximum) (4 × the cores, at least 8); 1 runs everything, the input hash included, on one thread.")
  var jobs: Int = ProcessInfo.processInfo.activeProcessorCount

  /// The most worker threads a command accepts: 4 × the cores, at least 8.
  /// More threads than that only add memory (a thread's stack and its
  /// chunks in flight) and wake-ups, never speed.
  static let maximum = max(8, 4 * ProcessInfo.processInfo.activeProcessorCount)

  func validate() throws {
    guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
    guard jobs <= Self.maximum else {
      throw ValidationError(
        "--jobs \(jobs) is more than \(Self.maximum) (4 × the \(ProcessInfo.processInfo.activeProcessorCount) cores, at least 8); "
          + "more threads than that add memory, not speed")
    }
  }
}
