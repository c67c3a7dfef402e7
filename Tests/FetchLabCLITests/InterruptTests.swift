import Foundation
import Testing

/// Ctrl-C (SIGINT) during `run`: the result directory keeps its old
/// complete result or, resumed, gets the new one; the staging directory is
/// gone; stderr says what was kept and the command that resumes.
@Suite("Ctrl-C during run", .serialized)
struct InterruptTests {
  /// One synthetic dataset of 12 users in units of 2, 2 replications: 12 units.
  static let experiment = """
    {"name": "interrupt",
     "datasets": [{"name": "syn", "synthetic": {"users": 12, "days": 2, "seed": 3}}],
     "apps": "top:2", "policies": ["never", "periodic:{15m,1h}", "oracle"],
     "replications": 2, "seed": 5, "unit_users": 2}
    """

  /// The command after "resume with: " (or "run again with: ") in `stderr`.
  static func resumeLine(_ stderr: String, _ prefix: String) -> String? {
    stderr.split(separator: "\n").first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
  }

  @Test("experiment: SIGINT after 3 units keeps them, prints the resume line; resumed, the bytes of a run never interrupted")
  func experimentResumes() throws {
    let d = scratch()
    let file = try write(Self.experiment, d, "e.json")
    let out = d + "/out"
    let cut = try CLI.run(
      ["run", file, "--out", out, "--jobs", "2"], environment: ["FETCHLAB_TEST_SIGINT_AFTER_UNITS": "3"])
    #expect(cut.status == 130, "\(cut.stderr)")
    #expect(cut.stderr.contains("interrupted: "), "\(cut.stderr)")
    #expect(cut.stderr.contains(" of 12 units finished and kept in \(out)/parts/"), "\(cut.stderr)")
    #expect(cut.stderr.contains("\(out) holds no result yet"), "\(cut.stderr)")
    #expect(leftovers(out).isEmpty, "\(leftovers(out))")
    #expect(!FileManager.default.fileExists(atPath: out + "/manifest.json"))
    let kept = ((try? FileManager.default.contentsOfDirectory(atPath: out + "/parts")) ?? []).filter { $0.hasSuffix(".state") }
    #expect(kept.count >= 3 && kept.count < 12, "\(kept)")

    let resume = try #require(Self.resumeLine(cut.stderr, "resume with: "), "\(cut.stderr)")
    let again = try shell(resume)
    #expect(again.status == 0, "\(again.stderr)")
    #expect(again.stdout.contains("reused"), "\(again.stdout)")
    let whole = try CLI.run(["run", file, "--out", d + "/whole", "--jobs", "1"])
    #expect(whole.status == 0, "\(whole.stderr)")
    for f in allResultFiles {
      #expect(
        FileManager.default.contents(atPath: out + "/" + f) == FileManager.default.contents(atPath: d + "/whole/" + f),
        "\(f) differs from the uninterrupted run's")
    }
  }

  @Test("run --trace: SIGINT leaves the previous result byte for byte, no staging, and the command to run again")
  func traceRunKeepsOldResult() throws {
    let d = scratch()
    let old = try write(fiveUserTrace, d, "t.csv")
    let out = d + "/out"
    let first = try CLI.run(["run", "--trace", old, "--policy", "never", "--policy", "periodic:1h", "--out", out])
    #expect(first.status == 0, "\(first.stderr)")
    let before = results(out)
    #expect(!before.isEmpty)

    let synth = try CLI.run(["synth", "--users", "8", "--days", "2", "--seed", "2", "--out", d + "/big.csv"])
    #expect(synth.status == 0, "\(synth.stderr)")
    let cut = try CLI.run(
      ["run", "--trace", d + "/big.csv", "--policy", "oracle", "--out", out, "--force", "--jobs", "1"],
      environment: ["FETCHLAB_TEST_SIGINT_AFTER_USERS": "1"])
    #expect(cut.status == 130, "\(cut.stderr)")
    #expect(cut.stderr.contains("nothing of this run is kept; \(out) holds its previous result, unchanged"), "\(cut.stderr)")
    #expect(Self.resumeLine(cut.stderr, "run again with: ")?.contains("--policy oracle") == true, "\(cut.stderr)")
    #expect(leftovers(out).isEmpty, "\(leftovers(out))")
    #expect(results(out) == before)
  }
}
