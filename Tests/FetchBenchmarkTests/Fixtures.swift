import FetchTestSupport
import Foundation

/// A file of the test fixtures (`Fixtures/`, a copy of the report tests'
/// tiny trace).
func goldenURL(_ name: String) -> URL {
  Bundle.module.url(forResource: "Fixtures/" + name, withExtension: nil)
    ?? Bundle.module.resourceURL!.appendingPathComponent("Fixtures/" + name)
}

/// A fresh scratch directory, removed when the test process exits.
func tempDir() -> String {
  Scratch.directory("run")
}
