import FetchReports
import FetchSimulation
import FetchSupport
import FetchTestSupport
import FetchTraces
import Foundation
import Testing

/// A hand-made run directory with known numbers: one dataset, 7 policies.
enum NotebookFixture {
  /// policy, family, energy (mean, lo, hi), mean age, cellular B/day, fresh ratio.
  static let rows: [(String, String, [Double], [Double], [Double], [Double])] = [
    ("never", "never", [0, 0, 0], [5000, 4000, 6000], [0, 0, 0], [0.6, 0.5, 0.7]),
    ("periodic:1h", "periodic", [250, 240, 260], [200, 150, 250], [1.5e6, 1.4e6, 1.6e6], [0.8, 0.75, 0.85]),
    ("periodic:4h", "periodic", [60, 55, 65], [900, 800, 1000], [5e5, 4e5, 6e5], [0.7, 0.65, 0.75]),
    ("ios-minimum", "ios-minimum", [6.5, 5.5, 7.5], [1300, 900, 1700], [6e5, 5e5, 7e5], [0.77, 0.74, 0.8]),
    ("ios-minimum:price=0.1", "ios-minimum", [70, 60, 80], [400, 300, 500], [9e5, 8e5, 1e6], [0.82, 0.8, 0.84]),
    ("oracle", "oracle", [5, 4, 6], [0, 0, 0], [5e5, 4e5, 6e5], [1, 1, 1]),
    ("oracle-budget:2", "oracle-budget", [1.8, 1.6, 2], [350, 250, 450], [2e5, 1e5, 3e5], [0.8, 0.78, 0.82]),
  ]
  static let frontier: Set<String> = ["never", "oracle", "oracle-budget:2"]

  static func runDir() throws -> String {
    let dir = Scratch.directory("nb")
    try FileManager.default.createDirectory(atPath: dir + "/run", withIntermediateDirectories: true)
    let metrics = ScoreMetric.allCases.map(\.rawValue)
    var p = (["dataset", "policy", "family", "users"] + metrics.flatMap { [$0, $0 + "_lo", $0 + "_hi"] })
      .joined(separator: ",") + "\n"
    var f = ParetoColumn.allCases.map(\.rawValue).joined(separator: ",") + "\n"
    var pooled = "dataset,replication,policy,p90_age_s\n"
    for (policy, family, e, a, c, fr) in rows {
      let values: [String: [Double]] = [
        "energy_j_per_day": e, "battery_energy_j_per_day": e, "mean_age_s": a, "cellular_bytes_per_day": c, "fresh_ratio": fr,
        "battery_pct_per_day": e.map { $0 / 467 }, "fetches_per_day": e.map { $0 / 10 }, "p90_age_s": a.map { $0 * 2 },
        "mean_aoi_s": a.map { $0 + 100 },
      ]
      p += (["ds", policy, family, "12"] + metrics.flatMap { m in values[m]!.map(CSV.number) }).joined(separator: ",") + "\n"
      f += "ds,mean_age_s,battery_energy_j_per_day,\(policy),\(family),\(CSV.number(e[0])),\(CSV.number(a[0])),"
      f += (frontier.contains(policy) ? "1" : "0") + "\n"
      for r in 0..<2 { pooled += "ds,\(r),\(policy),\(CSV.number(a[0] * 2 + Double(r)))\n" }
    }
    try p.write(toFile: dir + "/run/policies.csv", atomically: true, encoding: .utf8)
    try f.write(toFile: dir + "/run/pareto.csv", atomically: true, encoding: .utf8)
    try pooled.write(toFile: dir + "/run/pooled.csv", atomically: true, encoding: .utf8)
    let manifest = #"{"command": "fetchlab run fixture.json --out run", "seed": 1, "train_fraction": 0.75, "#
      + #""event_files": false, "policies": ["never"], "started_at": "2026-01-01T00:00:00Z", "elapsed_s": 1.5}"#
    try manifest.write(toFile: dir + "/run/manifest.json", atomically: true, encoding: .utf8)
    return dir
  }
}

@Suite("Notebook export")
struct NotebookTests {
  @Test("format: 3 significant digits like the report, – for nil and non-finite")
  func format() {
    #expect(Notebook.format(0) == "0")
    #expect(Notebook.format(1234.5) == "1235")
    #expect(Notebook.format(0.012345) == "0.0123")
    #expect(Notebook.format(-2.5) == "-2.5")
    #expect(Notebook.format(77.00000000000001) == "77")
    #expect(Notebook.format(nil) == "–")
    #expect(Notebook.format(.nan) == "–")
    #expect(Notebook.format(.infinity) == "–")
  }

  @Test("relativePath: from the notebook's folder to the run directory")
  func relativePath() {
    #expect(Notebook.relativePath(from: "/a/b", to: "/a/c/d") == "../c/d")
    #expect(Notebook.relativePath(from: "/a/b", to: "/a/b") == ".")
    #expect(Notebook.relativePath(from: "/a", to: "/a/b/") == "b")
    #expect(Notebook.relativePath(from: "/a/b/c", to: "/x") == "../../../x")
  }

  @Test("the interpretation is derived from policies.csv and pareto.csv")
  func interpretation() throws {
    let dir = try NotebookFixture.runDir()
    let got = try Notebook.interpretation(runDir: dir + "/run")
    #expect(got.map(\.dataset) == ["ds"])
    let expected = [
      "- Pareto frontier (mean age against J/day): 3 of 7 configurations: `never` (0 J/day, 5000 s), "
        + "`oracle-budget:2` (1.8 J/day, 350 s), `oracle` (5 J/day, 0 s).",
      "- 2 of the 3 frontier points are oracle configurations, which know the future opens and updates: no real "
        + "scheduler reaches them.",
      "- Without the oracles, the frontier is: `never` (0 J/day, 5000 s), `ios-minimum` (6.5 J/day, 1300 s), "
        + "`periodic:4h` (60 J/day, 900 s), `ios-minimum:price=0.1` (70 J/day, 400 s), `periodic:1h` (250 J/day, 200 s).",
      "- Under 10 J/day, the freshest configuration without oracles is `ios-minimum`: mean age 1300 s [900, 1700] at "
        + "6.5 J/day.",
      "- Under 100 J/day, the freshest configuration without oracles is `ios-minimum:price=0.1`: mean age 400 s "
        + "[300, 500] at 70 J/day.",
      "- The oracle's mean age is 0 s at 5 J/day. At that energy or less, the freshest configuration without oracles "
        + "is `never` at 5000 s, 5000 s more. The freshest configuration without oracles, `periodic:1h` (200 s), "
        + "spends 250 J/day, 50× the oracle's energy.",
      "- `ios-minimum` against `periodic:1h`: 6.5 J/day [5.5, 7.5] against 250 [240, 260] (0.026× the energy); mean "
        + "age 1300 s [900, 1700] against 200 s [150, 250]; fresh opens 77 % against 80 %. The energy CIs do not "
        + "overlap. The mean-age CIs do not overlap.",
      "- No configuration without oracles that is at least as fresh as `periodic:1h` (mean age ≤ 200 s) uses less "
        + "cellular data than its 1.5 MB/day.",
    ]
    let lines = try #require(got.first).lines
    #expect(lines.count == expected.count)
    for (g, e) in zip(lines, expected) { #expect(g == e) }

    // Change the numbers: the statements follow.
    let path = dir + "/run/policies.csv"
    let text = try String(contentsOfFile: path, encoding: .utf8)
      .replacingOccurrences(of: "ds,ios-minimum,ios-minimum,12,6.5,5.5,7.5,6.5,5.5,7.5", with: "ds,ios-minimum,ios-minimum,12,9.5,8.5,9.9,9.5,8.5,9.9")
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    let again = try #require(try Notebook.interpretation(runDir: dir + "/run").first).lines
    #expect(again[3].contains("at 9.5 J/day"))
    #expect(again[6].contains("9.5 J/day [8.5, 9.9] against 250 [240, 260] (0.038× the energy)"))
    #expect(!again.contains { $0.hasPrefix("- Only ") })
  }

  @Test("fewer users than compare's small-sample threshold: the interpretation ends with compare's warning")
  func smallSampleStatement() throws {
    let dir = try NotebookFixture.runDir()
    let path = dir + "/run/policies.csv"
    let text = try String(contentsOfFile: path, encoding: .utf8)
    for (users, warned) in [(4, true), (PairedComparison.reliableUsers - 1, true), (PairedComparison.reliableUsers, false)] {
      try text.replacingOccurrences(of: "ds,periodic:1h,periodic,12,", with: "ds,periodic:1h,periodic,\(users),")
        .write(toFile: path, atomically: true, encoding: .utf8)
      let last = try #require(try Notebook.interpretation(runDir: dir + "/run").first?.lines.last)
      #expect(last.hasPrefix("- Only \(users) users in this dataset (fewer than 10): its bootstrap CIs") == warned, "\(last)")
    }
    // The Python package applies the same threshold.
    let python = try String(contentsOfFile: Self.repository + "/python/fetchlab/notebook.py", encoding: .utf8)
    #expect(python.contains("\nRELIABLE_USERS = \(PairedComparison.reliableUsers)\n"))
  }

  /// The notebook's JSON, parsed.
  static func parse(_ text: String) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
  }

  @Test("notebook: nbformat 4.5, unique ids, SVGs as RunReport writes them, same bytes twice")
  func structure() throws {
    let dir = try NotebookFixture.runDir()
    let run = dir + "/run"
    let path = try Notebook.write(runDir: run, to: dir + "/nb/run.ipynb", options: RunReport.Options(timeline: nil))
    let text = try String(contentsOfFile: path, encoding: .utf8)
    let nb = try Self.parse(text)
    #expect(nb["nbformat"] as? Int == 4)
    #expect(nb["nbformat_minor"] as? Int == 5)
    let meta = try #require(nb["metadata"] as? [String: Any])
    #expect((meta["kernelspec"] as? [String: Any])?["name"] as? String == "python3")
    #expect((meta["language_info"] as? [String: Any])?["name"] as? String == "python")
    let cells = try #require(nb["cells"] as? [[String: Any]])
    let ids = cells.compactMap { $0["id"] as? String }
    #expect(ids.count == cells.count)
    #expect(Set(ids).count == ids.count)
    for id in ids {
      #expect((1...64).contains(id.count))
      #expect(id.range(of: "^[a-zA-Z0-9-_]+$", options: .regularExpression) != nil)
    }
    #expect(ids.first == "cell-0001")
    func source(_ c: [String: Any]) -> String { (c["source"] as? [String] ?? []).joined() }
    let code = cells.filter { $0["cell_type"] as? String == "code" }
    #expect(source(code[0]).contains("RUN_DIR = \"../run\""))
    for c in code {
      #expect(c["outputs"] is [Any])
      #expect(c["execution_count"] is Int)
    }
    // The charts: exactly the SVGs RunReport writes.
    try RunReport.write(runDir: run, options: RunReport.Options(timeline: nil))
    var svgs: [String] = []
    var tables = 0
    for c in code {
      for o in c["outputs"] as? [[String: Any]] ?? [] {
        let data = o["data"] as? [String: Any] ?? [:]
        if let s = data["image/svg+xml"] as? [String] { svgs.append(s.joined()) }
        if data["text/html"] != nil, o["output_type"] as? String == "execute_result" { tables += 1 }
      }
    }
    let files = try FileManager.default.contentsOfDirectory(atPath: run + "/plots").sorted()
    #expect(files == ["fresh-energy-ds.svg", "staleness-cellular-ds.svg", "staleness-energy-ds.svg"])
    let written = try files.map { try String(contentsOfFile: run + "/plots/" + $0, encoding: .utf8) }
    #expect(svgs.count == written.count && Set(svgs) == Set(written))
    #expect(tables == 1)
    // The interpretation is in a Markdown cell and in the stored output of interpret("ds").
    let lines = try #require(try Notebook.interpretation(runDir: run).first).lines
    let md = cells.filter { $0["cell_type"] as? String == "markdown" }.map(source)
    #expect(md.contains { $0.hasPrefix("### Interpretation") && $0.hasSuffix(lines.joined(separator: "\n")) })
    let interpret = try #require(code.first { source($0) == "nb.interpret(\"ds\")" })
    let out = try #require((interpret["outputs"] as? [[String: Any]])?.first)
    #expect((out["text"] as? [String])?.joined() == lines.joined(separator: "\n") + "\n")
    // No timestamps from the manifest; the run is described.
    #expect(!text.contains("2026-01-01T00:00:00Z") && !text.contains("elapsed"))
    #expect(md[0].contains("`fetchlab run fixture.json --out run`"))
    // Same run, same bytes; RUN_DIR "." when the notebook sits in the run directory.
    try Notebook.write(runDir: run, to: dir + "/nb/run.ipynb", options: RunReport.Options(timeline: nil))
    #expect(try String(contentsOfFile: path, encoding: .utf8) == text)
    let inside = try Notebook.render(runDir: run, runDirReference: ".", options: RunReport.Options(timeline: nil))
    #expect(inside.contains(#""RUN_DIR = \".\"""#))
  }

  @Test("JSON is written as nbformat writes it: sorted keys, 1-space indent, lines as arrays")
  func encoding() throws {
    let dir = try NotebookFixture.runDir()
    let text = try Notebook.render(runDir: dir + "/run", runDirReference: "run", options: RunReport.Options(timeline: nil))
    #expect(text.hasPrefix("{\n \"cells\": [\n  {\n   \"cell_type\": \"markdown\",\n   \"id\": \"cell-0001\",\n"))
    #expect(text.hasSuffix("\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}\n"))
    #expect(text.contains("\"metadata\": {},\n"))
    #expect(!text.contains("\\/"), "slashes are not escaped")
    let nb = try Self.parse(text)
    let cells = try #require(nb["cells"] as? [[String: Any]])
    for c in cells {
      let src = try #require(c["source"] as? [String])
      for l in src.dropLast() { #expect(l.hasSuffix("\n")) }
      #expect(!(src.last ?? "").hasSuffix("\n"))
    }
  }

  @Test("the analysis cells use the fetchlab Python package: no helper code pasted into the notebook")
  func usesThePackage() throws {
    let dir = try NotebookFixture.runDir()
    let text = try Notebook.render(runDir: dir + "/run", runDirReference: "run", options: RunReport.Options(timeline: nil))
    let cells = try #require(try Self.parse(text)["cells"] as? [[String: Any]])
    let code = cells.filter { $0["cell_type"] as? String == "code" }.map { ($0["source"] as? [String] ?? []).joined() }
    #expect(code[1].contains("from fetchlab.notebook import NotebookRun\n"))
    #expect(code[1].hasSuffix("nb = NotebookRun(RUN_DIR)"))
    for c in code {
      #expect(!c.contains("def ") && !c.contains("import pandas") && !c.contains("import matplotlib"), "\(c.prefix(60))")
    }
    for c in code.dropFirst(2) { #expect(c.hasPrefix("nb."), "\(c)") }
  }

  /// The root of this checkout.
  static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path
  /// `python/fetchlab/style.py` of this checkout.
  static let pythonStyle = repository + "/python/fetchlab/style.py"

  @Test("the Python package draws every registry family in its registry colour and marker")
  func pythonFamilyStyles() throws {
    let text = try String(contentsOfFile: Self.pythonStyle, encoding: .utf8)
    var table: [String: String] = [:]
    let entry = try Regex(#"^    "([a-z0-9-]+)": \("(#[0-9A-Fa-f]{6})", "([A-Za-z]+)"\),$"#)
    for line in text.split(separator: "\n") {
      if let m = try entry.wholeMatch(in: String(line)) {
        table[String(m.output[1].substring!)] = String(m.output[2].substring!) + " " + String(m.output[3].substring!)
      }
    }
    // The built-in families: those docs/policies.md describes (other tests register more).
    let docs = try String(contentsOfFile: Self.repository + "/docs/policies.md", encoding: .utf8)
    let builtIn = Set(docs.split(separator: "\n").compactMap { l in
      l.hasPrefix("### `") ? String(l.dropFirst(5).prefix { $0 != "`" }) : nil
    })
    var want: [String: String] = [:]
    for f in PolicyRegistry.families where builtIn.contains(f.name) {
      want[f.name] = f.style.color + " " + "\(f.style.marker)"
    }
    #expect(want.count == builtIn.count && builtIn.count >= 19)
    #expect(table == want)
  }
}
