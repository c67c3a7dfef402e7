import Foundation
import Testing

/// The completion scripts `fetchlab --generate-completion-script` writes
/// complete values, not only subcommands and options.
@Suite("shell completion")
struct CompletionTests {
  @Test("bash and fish: traces by extension, directories, policy family names, compare's metrics", arguments: ["bash", "fish"])
  func values(shell: String) throws {
    let r = try CLI.run(["--generate-completion-script", shell])
    #expect(r.status == 0, "\(r.stderr)")
    let script = r.stdout
    for family in ["never", "periodic", "ios-minimum", "oracle-budget", "tailender"] {
      #expect(script.contains(family), "\(shell): no policy family \(family)")
    }
    for metric in ["mean_age_s", "fresh_ratio"] { #expect(script.contains(metric), "\(shell): no metric \(metric)") }
    #expect(script.contains("csv"), "\(shell): no trace extension")
    #expect(script.contains("ipynb"), "\(shell): no notebook extension")
  }
}
