import Foundation
import Testing

@Suite("fetchlab report --notebook", .serialized)
struct NotebookCommandTests {
  /// synth + run with event files and the policies the interpretation compares.
  static func smallRun() throws -> String {
    let dir = scratch()
    let synth = try CLI.run(["synth", "--users", "5", "--days", "4", "--seed", "3", "--out", dir + "/t.csv"])
    #expect(synth.status == 0, "\(synth.stderr)")
    let run = try CLI.run([
      "run", "--trace", dir + "/t.csv", "--policy", "never", "--policy", "periodic:1h", "--policy", "oracle",
      "--policy", "ios-minimum", "--apps", "top:1", "--out", dir + "/run",
    ])
    #expect(run.status == 0, "\(run.stderr)")
    return dir
  }

  static func cells(_ path: String) throws -> (text: String, cells: [[String: Any]]) {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    let nb = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    #expect(nb["nbformat"] as? Int == 4 && nb["nbformat_minor"] as? Int == 5)
    return (String(decoding: data, as: UTF8.self), try #require(nb["cells"] as? [[String: Any]]))
  }

  @Test("report --notebook: valid nbformat 4.5, unique ids, the report's SVGs, relative RUN_DIR, same bytes twice")
  func endToEnd() throws {
    let dir = try Self.smallRun()
    let nbPath = dir + "/notebooks/small.ipynb"
    let r = try CLI.run(["report", dir + "/run", "--notebook", nbPath])
    #expect(r.status == 0, "\(r.stderr)")
    #expect(r.stdout.contains(nbPath))
    let (text, cells) = try Self.cells(nbPath)
    let ids = cells.compactMap { $0["id"] as? String }
    #expect(ids.count == cells.count && Set(ids).count == ids.count)
    #expect(ids.allSatisfy { $0.range(of: "^[a-zA-Z0-9-_]{1,64}$", options: .regularExpression) != nil })
    func source(_ c: [String: Any]) -> String { (c["source"] as? [String] ?? []).joined() }
    let code = cells.filter { $0["cell_type"] as? String == "code" }
    #expect(source(code[0]).contains("RUN_DIR = \"../run\""))
    // Every chart of plots/ is a stored SVG output, byte for byte, and nothing else is.
    var svgs: [String] = []
    for c in code {
      for o in c["outputs"] as? [[String: Any]] ?? [] {
        if let s = (o["data"] as? [String: Any])?["image/svg+xml"] as? [String] { svgs.append(s.joined()) }
      }
    }
    let plots = try FileManager.default.contentsOfDirectory(atPath: dir + "/run/plots")
    #expect(plots.contains("age-cdf.svg") && plots.contains("staleness-energy.svg"))
    let written = try plots.map { try String(contentsOfFile: dir + "/run/plots/" + $0, encoding: .utf8) }
    #expect(Set(svgs) == Set(written))
    #expect(svgs.count == written.count)
    // The analysis is the fetchlab Python package's, called once per table, chart and interpretation.
    #expect(source(code[1]).contains("from fetchlab.notebook import NotebookRun"))
    for call in ["nb.policy_table(\"\")", "nb.plot_staleness_energy(\"\")", "nb.plot_age_cdf(\"\")",
      "nb.per_user_table(\"\")", "nb.interpret(\"\")"]
    {
      #expect(code.contains { source($0) == call }, "\(call)")
    }
    #expect(cells.contains { source($0).hasPrefix("### Interpretation") && source($0).contains("`ios-minimum` against `periodic:1h`") })
    // The same run gives the same bytes.
    let again = try CLI.run(["report", dir + "/run", "--notebook", nbPath])
    #expect(again.status == 0)
    #expect(try Self.cells(nbPath).text == text)

    let bad = try CLI.run(["report", dir + "/run", "--notebook", dir + "/x.json"])
    #expect(bad.status == 64)
  }
}
