import ArgumentParser
import Foundation

/// `--jobs`, declared and checked once for the commands that work in
/// parallel (`run`, `merge`, `fit`, `bench`).
struct JobsOption: ParsableArguments {
  @Option(name: .long, help: "Worker threads (results do not depend on it); 1 runs everything, the input hash included, on one thread.")
  var jobs: Int = ProcessInfo.processInfo.activeProcessorCount

  func validate() throws {
    guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
  }
}
