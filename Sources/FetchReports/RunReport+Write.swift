import FetchBenchmark
import FetchSupport
import FetchTraces
import Foundation

// MARK: Writing the report files

extension RunReport {
  /// Writes `plots/*.svg`, `report.html` and `report.md` from the run in
  /// `runDir` into `outputDir` (default `runDir`; the CLI passes a staging
  /// directory and swaps the three names in as a whole). Throws
  /// ``TraceFormatError`` (file:line) on a missing or malformed input and
  /// ``TimelineError`` for a bad explicit timeline request; the report files
  /// are then not changed (SVGs are written last-but-two, after every input
  /// has been read). ``Output/files`` names the files as they will stand in
  /// `runDir`.
  @discardableResult
  package static func write(runDir: String, options: Options, into outputDir: String? = nil) throws -> Output {
    let (figures, notes, rows) = try figures(runDir: runDir, options: options)
    let manifest = try readManifest(path: runDir + "/manifest.json")
    let pairedPath = runDir + "/paired.csv"
    let paired = FileManager.default.fileExists(atPath: pairedPath) ? try readPaired(path: pairedPath) : []
    let robustness = try robustnessTables(runDir: runDir)
    let outDir = outputDir ?? runDir
    var out = Output(files: [], notes: notes)
    out.files += try writePlots(figures, into: outDir + "/plots", runDir: runDir)
    var datasets: [String] = [], seen = Set<String>()
    for r in rows where seen.insert(r.dataset).inserted { datasets.append(r.dataset) }
    let page = ReportPage(
      name: URL(fileURLWithPath: runDir).standardizedFileURL.lastPathComponent, manifest: manifest, figures: figures,
      notes: notes, rows: rows, datasets: datasets, paired: paired, robustness: robustness, basis: options.basis)

    let html = try AtomicTextFile(path: outDir + "/report.html")
    try html.write(reportHTML(page))
    let mdFile = try AtomicTextFile(path: outDir + "/report.md")
    try mdFile.write(reportMarkdown(page))
    try html.commit()
    try mdFile.commit()
    out.files += [runDir + "/report.html", runDir + "/report.md"]
    return out
  }

  /// Writes each figure's SVG into `plots` (created when missing); returns
  /// their paths as they will stand in `runDir`.
  private static func writePlots(_ figures: [Figure], into plots: String, runDir: String) throws -> [String] {
    do {
      try FileManager.default.createDirectory(atPath: plots, withIntermediateDirectories: true)
    } catch {
      throw TraceFormatError(file: plots, line: 0, field: "-", message: "cannot create directory")
    }
    var files: [String] = []
    for c in figures {
      let f = try AtomicTextFile(path: plots + "/" + c.file)
      try f.write(c.svg)
      try f.commit()
      files.append(runDir + "/plots/" + c.file)
    }
    return files
  }

  /// What `report.html` and `report.md` show: the run directory's name,
  /// the text of `manifest.json`, the charts and the notes on skipped ones,
  /// the policy rows with their datasets (in order of first appearance),
  /// the paired comparisons and the robustness tables.
  private struct ReportPage {
    var name, manifest: String
    var figures: [Figure], notes: [String]
    var rows: [PolicyRow], datasets: [String], paired: [PairedRow]
    var robustness: [RobustnessTable]?
    var basis: EnergyBasis
  }

  /// How a report page writes its parts: as HTML or as Markdown.
  private struct PageFormat {
    /// Text escaped for the page.
    var escape: (String) -> String
    /// A heading of a level (2 or 3) with escaped text.
    var heading: (Int, String) -> String
    var table: ([String], [[String]]) -> String
    /// The line before a paired table, naming its (escaped) baseline.
    var pairedIntro: (String) -> String

    static var html: PageFormat {
      PageFormat(
        escape: SVGPlot.escape, heading: { "<h\($0)>\($1)</h\($0)>\n" }, table: RunReport.htmlTable,
        pairedIntro: { "<p>Paired against <b>\($0)</b> (per user, from paired.csv; negative: younger content):</p>\n" })
    }

    static var markdown: PageFormat {
      PageFormat(
        escape: RunReport.md, heading: { String(repeating: "#", count: $0) + " \($1)\n\n" },
        table: RunReport.markdownTable,
        pairedIntro: { "Paired against **\($0)** (per user, from paired.csv; negative: younger content):\n\n" })
    }
  }

  /// Per dataset (under a heading when it has a name): the headline table
  /// and the paired comparison when `paired.csv` has one.
  private static func headlineSections(_ p: ReportPage, _ f: PageFormat) -> String {
    var s = ""
    let byDataset = Dictionary(grouping: p.rows, by: \.dataset)
    for d in p.datasets {
      if !d.isEmpty { s += f.heading(3, "Dataset \(f.escape(d))") }
      let t = headlineTable(byDataset[d] ?? [])
      s += f.table(t.header, t.rows)
      if let q = pairedTable(p.paired, dataset: d, basis: p.basis) {
        s += f.pairedIntro(f.escape(q.baseline)) + f.table(q.header, q.rows)
      }
    }
    return s
  }

  /// Per dataset (under a heading when it has a name): the table of every
  /// policy's scores.
  private static func policySections(_ p: ReportPage, _ f: PageFormat) -> String {
    var s = ""
    let byDataset = Dictionary(grouping: p.rows, by: \.dataset)
    for d in p.datasets {
      if !d.isEmpty { s += f.heading(3, "Dataset \(f.escape(d))") }
      let t = policyTable(tableOrder(byDataset[d] ?? []))
      s += f.table(t.header, t.rows)
    }
    return s
  }

  /// An HTML table (escaped cells, in a scrolling box). A cell's 95 % CI
  /// (`mean [lo, hi]`) goes on a second, smaller line, so that the table
  /// fits the page's width.
  private static func htmlTable(_ header: [String], _ body: [[String]]) -> String {
    let e = SVGPlot.escape
    func cell(_ s: String) -> String {
      guard s.hasSuffix("]"), let open = s.range(of: " [") else { return e(s) }
      return e(String(s[..<open.lowerBound])) + "<span class=\"ci\">[" + e(String(s[open.upperBound...].dropLast())) + "]"
        + "</span>"
    }
    return "<div class=\"scroll\"><table>\n<tr>" + header.map { "<th>\(e($0))</th>" }.joined() + "</tr>\n"
      + body.map { "<tr>" + $0.map { "<td>\(cell($0))</td>" }.joined() + "</tr>\n" }.joined() + "</table></div>\n"
  }

  /// `report.html`: one self-contained file. The headline first, then the
  /// charts (the overview), then the tables with every number; notes on
  /// skipped charts after the charts.
  private static func reportHTML(_ p: ReportPage) -> String {
    let e = SVGPlot.escape
    let title = "FetchLab report: \(e(p.name))"
    var h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    h += "<title>\(title)</title>\n<style>\n" + styleSheet + "</style>\n</head>\n<body>\n<h1>\(title)</h1>\n"
    if !p.rows.isEmpty {
      h += "<h2>Headline</h2>\n<p class=\"note\">\(e(headlineNote(p.basis)))</p>\n" + headlineSections(p, .html)
    }
    if let robustness = p.robustness { h += robustnessHTML(robustness, table: htmlTable) }
    if p.rows.isEmpty { h += "<h2>Fit</h2>\n<p>\(e(fitNote))</p>\n" }
    h += "<h2>Charts</h2>\n"
    for c in p.figures {
      h += "<figure id=\"\(e(c.file))\">\n" + c.svg + "<figcaption>plots/\(e(c.file))</figcaption>\n</figure>\n"
    }
    for n in p.notes { h += "<p class=\"note\">Note: \(e(n))</p>\n" }
    if !p.rows.isEmpty { h += "<h2>Policies</h2>\n<p class=\"note\">\(e(tableNote(p.basis)))</p>\n" }
    h += policySections(p, .html)
    h += "<details>\n<summary>Manifest (manifest.json)</summary>\n<pre>\(e(p.manifest))</pre>\n</details>\n</body>\n</html>\n"
    return h
  }

  /// The style sheet of `report.html`.
  private static let styleSheet = """
    body{font-family:Helvetica,Arial,sans-serif;margin:2em auto;padding:0 1em;max-width:1100px;color:#111}
    div.scroll{overflow-x:auto;max-width:100%}
    @media (max-width:600px){body{margin:.5em auto;padding:0 .5em}h1{font-size:1.4em}figure{overflow-x:auto}figure svg{min-width:640px}}
    table{border-collapse:collapse;font-size:13px;margin-bottom:.5em}
    th,td{border:1px solid #ccc;padding:3px 6px;text-align:right;white-space:nowrap}
    th{white-space:normal;vertical-align:bottom}
    th:first-child,td:first-child{text-align:left}
    th{background:#f3f3f3}
    figure{margin:1.5em 0}
    figure svg{display:block;width:100%;max-width:960px;height:auto}
    figure figcaption{font-size:12px;color:#555}
    pre{background:#f7f7f7;padding:1em;overflow:auto;font-size:12px}
    p.note{font-size:13px;color:#555}
    td span.ci{display:block;font-size:11px;color:#555}
    summary{cursor:pointer;font-weight:bold}

    """

  /// `s` inert in Markdown (``MarkdownText/escape(_:)``).
  private static func md(_ s: String) -> String { MarkdownText.escape(s) }

  /// A Markdown table, numbers right-aligned (all but the first column).
  private static func markdownTable(_ header: [String], _ body: [[String]]) -> String {
    "| " + header.map(md).joined(separator: " | ") + " |\n"
      + "|" + header.indices.map { $0 == 0 ? "---|" : "---:|" }.joined() + "\n"
      + body.map { "| " + $0.map(md).joined(separator: " | ") + " |\n" }.joined() + "\n"
  }

  /// `report.md`: links to the SVGs, then the tables.
  private static func reportMarkdown(_ p: ReportPage) -> String {
    var m = "# FetchLab report: \(md(p.name))\n\n"
    if !p.rows.isEmpty {
      m += "## Headline\n\n\(headlineNote(p.basis))\n\n" + headlineSections(p, .markdown)
    } else {
      m += "## Fit\n\n\(fitNote)\n\n"
    }
    if let robustness = p.robustness { m += robustnessMarkdown(robustness, table: markdownTable) }
    m += "## Charts\n\n"
    for c in p.figures { m += "![\(md(c.title))](plots/\(c.file))\n\n" }
    for n in p.notes { m += "Note: \(md(n))\n\n" }
    if !p.rows.isEmpty { m += "## Policies\n\n\(tableNote(p.basis))\n\n" }
    m += policySections(p, .markdown)
    m += "Manifest: [manifest.json](manifest.json)\n"
    return m
  }
}
