import Foundation
import Testing

/// One version everywhere a reader or a citation sees one: the CLI's
/// `--version` (the version outputs record), `CITATION.cff`, the Python
/// package and the exported notebook.
@Suite("one version")
struct VersionTests {
  /// The first capture of `pattern` in the file at `path` (from the package root).
  func version(in path: String, _ pattern: String) throws -> String {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    let re = try NSRegularExpression(pattern: pattern, options: [.anchorsMatchLines])
    let m = try #require(re.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)), "\(path): no version")
    return String(text[try #require(Range(m.range(at: 1), in: text))])
  }

  @Test func citationPythonAndNotebookCarryTheCLIsVersion() throws {
    let cli = try CLI.run(["--version"])
    #expect(cli.status == 0)
    let cliVersion = cli.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(cliVersion.split(separator: ".").count == 3, "fetchlab --version: '\(cliVersion)'")
    #expect(try version(in: "CITATION.cff", #"^version: "([^"]+)""#) == cliVersion)
    #expect(try version(in: "python/fetchlab/__init__.py", #"^__version__ = "([^"]+)""#) == cliVersion)
    for notebook in ["default", "story"] {
      #expect(try version(in: "notebooks-export/\(notebook).ipynb", #"FetchLab version: ([0-9][0-9.]*[0-9])"#) == cliVersion)
    }
    #expect(
      try version(in: "notebooks-export/default-data/manifest.json", #""fetchlab_version" ?: "([^"]+)""#) == cliVersion)
  }
}
