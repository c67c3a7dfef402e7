import Foundation
import Testing

/// What comes from a trace (user, app and policy names) is text in every
/// output, never markup.
@Suite("Names from a trace in report.md and the notebook", .serialized)
struct ReportEscapingTests {
  static let hostileTrace = """
    user,time,event,app,value
    <b>u</b>,1767571200,begin,,UTC
    <b>u</b>,1767571200,network,,lte
    <b>u</b>,1767575000,open,<script>alert(1)</script>,40
    <b>u</b>,1767580000,open,<script>alert(1)</script>,10
    <b>u</b>,1767590000,network,,wifi
    <b>u</b>,1767600000,open,[x](javascript:alert(1)),20
    <b>u</b>,1767610000,open,<img src=x onerror=alert(1)>,30
    <b>u</b>,1767620000,open,[x](javascript:alert(1)),20
    <b>u</b>,1767657600,end,,

    """

  @Test("report.md: no raw HTML, no javascript: link, escaped alt text, whatever the names; the notebook's Markdown likewise")
  func hostileNames() throws {
    let dir = scratch()
    try Self.hostileTrace.write(toFile: dir + "/t.csv", atomically: true, encoding: .utf8)
    let run = try CLI.run([
      "run", "--trace", dir + "/t.csv", "--policy", "never", "--policy", "per-app:[x](javascript:alert(1))=periodic:1h;*=never",
      "--apps", "top:3", "--train-fraction", "0", "--out", dir + "/r",
    ])
    #expect(run.status == 0, "\(run.stderr)")
    let rep = try CLI.run(["report", dir + "/r", "--notebook", dir + "/r.ipynb"])
    #expect(rep.status == 0, "\(rep.stderr)")
    let md = try String(contentsOfFile: dir + "/r/report.md", encoding: .utf8)
    for raw in ["<script", "<b>", "<img", "](javascript:", "onerror=alert(1)>"] {
      #expect(!md.contains(raw), "report.md holds '\(raw)'")
    }
    // The names are still there, escaped: the timeline's alt text and the tables.
    #expect(md.contains("![One day of user &lt;b&gt;u&lt;/b&gt;, app "), "\(md)")
    #expect(md.contains("per-app:\\[x\\]\\(javascript:alert\\(1\\)\\)=periodic:1h;\\*=never"), "\(md)")
    // Every image is one of ours, under plots/.
    let images = md.components(separatedBy: "![").dropFirst()
    #expect(!images.isEmpty && images.allSatisfy { $0.contains("](plots/") })
    let nb = try String(contentsOfFile: dir + "/r.ipynb", encoding: .utf8)
    let o = try #require(try JSONSerialization.jsonObject(with: Data(nb.utf8)) as? [String: Any])
    let cells = try #require(o["cells"] as? [[String: Any]])
    let markdown = cells.filter { $0["cell_type"] as? String == "markdown" }
      .map { (($0["source"] as? [String]) ?? []).joined() }.joined(separator: "\n")
    // Names go into code spans there, where nothing is markup: outside them, none is left.
    let outside = markdown.replacingOccurrences(of: "(`+)[^`]*?\\1", with: "", options: .regularExpression)
    #expect(markdown.contains("`per-app:[x](javascript:alert(1))=periodic:1h;*=never`"), "\(markdown)")
    for raw in ["<script", "<b>", "<img", "javascript:"] {
      #expect(!outside.contains(raw), "the notebook's Markdown holds '\(raw)' outside a code span")
    }
  }
}
