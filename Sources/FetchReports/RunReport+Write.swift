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
      notes: notes, rows: rows, datasets: datasets, paired: paired, robustness: robustness,
      pageBytes: options.pageBytes, basis: options.basis)

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
    /// Most bytes of each page (``Options/pageBytes``).
    var pageBytes: Int
    /// The energy the page ranks on.
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

  /// Per dataset of the first ``maxTabledDatasets`` (under a heading when
  /// it has a name): the headline table and the paired comparison when
  /// `paired.csv` has one.
  private static func headlineSections(_ p: ReportPage, _ f: PageFormat) -> [String] {
    let byDataset = Dictionary(grouping: p.rows, by: \.dataset)
    return p.datasets.prefix(maxTabledDatasets).map { d in
      var s = d.isEmpty ? "" : f.heading(3, "Dataset \(f.escape(d))")
      let t = headlineTable(byDataset[d] ?? [])
      s += f.table(t.header, t.rows)
      if let q = pairedTable(p.paired, dataset: d, basis: p.basis) {
        s += f.pairedIntro(f.escape(q.baseline)) + f.table(q.header, q.rows)
      }
      return s
    }
  }

  /// Per dataset of the first ``maxTabledDatasets`` (under a heading when
  /// it has a name): the table of every policy's scores.
  private static func policySections(_ p: ReportPage, _ f: PageFormat) -> [String] {
    let byDataset = Dictionary(grouping: p.rows, by: \.dataset)
    return p.datasets.prefix(maxTabledDatasets).map { d in
      let t = policyTable(tableOrder(byDataset[d] ?? []))
      return (d.isEmpty ? "" : f.heading(3, "Dataset \(f.escape(d))")) + f.table(t.header, t.rows)
    }
  }

  /// Most datasets whose tables `report.html` and `report.md` hold (the
  /// headline and policy tables): the first ones in the run's order;
  /// `policies.csv` holds every dataset's rows.
  package static let maxTabledDatasets = 100

  /// Most bytes of `report.html` (and of `report.md`): 16 MiB, about 50
  /// times the default benchmark's page. The page's parts are added in order while they
  /// fit; one that does not is left out (a chart then links to its SVG
  /// instead of holding it), and the page says how many were.
  package static let maxPageBytes = 16 << 20

  /// Bytes kept free for the summary note.
  static let pageReserve = 4 << 10

  /// Most bytes of `manifest.json` a page shows inline (a grid's manifest
  /// lists every point's inputs); a larger one is linked.
  static let maxInlineManifestBytes = 256 << 10

  /// A page assembled under ``maxPageBytes``: parts are added while they
  /// fit, and what did not fit is counted for the summary note.
  private struct BudgetedPage {
    var limit: Int
    var text = ""
    var linkedCharts = 0
    var leftOutCharts = 0
    var leftOutTables = 0

    /// Adds `part` when it fits; returns whether it did.
    mutating func add(_ part: String) -> Bool {
      guard text.utf8.count + part.utf8.count + RunReport.pageReserve <= limit else { return false }
      text += part
      return true
    }

    /// Adds each table section that fits, counting those left out.
    mutating func addTables(_ sections: [String]) {
      for s in sections where !add(s) { leftOutTables += 1 }
    }
  }

  /// The note that says what a page summarises, or nil when it shows everything.
  private static func summaryNote(_ p: ReportPage, _ page: BudgetedPage) -> String? {
    var parts: [String] = []
    if p.datasets.count > maxChartedDatasets {
      parts.append("charts for the first \(maxChartedDatasets) of the \(p.datasets.count) datasets")
    }
    if p.datasets.count > maxTabledDatasets {
      parts.append("tables for the first \(maxTabledDatasets) of the \(p.datasets.count) datasets")
    }
    let size = p.pageBytes >= 1 << 20 ? "\(p.pageBytes >> 20) MiB" : "\(p.pageBytes >> 10) KiB"
    if page.linkedCharts > 0 { parts.append("\(page.linkedCharts) charts linked to their SVGs in plots/, not drawn here") }
    if page.leftOutCharts > 0 { parts.append("\(page.leftOutCharts) charts left out (their SVGs are in plots/)") }
    if page.leftOutTables > 0 { parts.append("\(page.leftOutTables) tables left out") }
    if p.manifest.utf8.count > maxInlineManifestBytes { parts.append("manifest.json linked, not shown") }
    guard !parts.isEmpty else { return nil }
    return "This report summarises (a report holds at most \(maxChartedDatasets) datasets' charts, "
      + "\(maxTabledDatasets) datasets' tables and \(size)): " + parts.joined(separator: "; ")
      + ". policies.csv, pareto.csv and robustness.csv hold every dataset."
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
    let end =
      p.manifest.utf8.count > maxInlineManifestBytes
      ? "<p>Manifest: <a href=\"manifest.json\">manifest.json</a></p>\n</body>\n</html>\n"
      : "<details>\n<summary>Manifest (manifest.json)</summary>\n<pre>\(e(p.manifest))</pre>\n</details>\n</body>\n</html>\n"
    var b = BudgetedPage(limit: p.pageBytes - h.utf8.count - end.utf8.count)
    if !p.rows.isEmpty {
      _ = b.add("<h2>Headline</h2>\n<p class=\"note\">\(e(headlineNote(p.basis)))</p>\n")
      b.addTables(headlineSections(p, .html))
    }
    if let robustness = p.robustness, !b.add(robustnessHTML(robustness, table: htmlTable)) { b.leftOutTables += 1 }
    if p.rows.isEmpty { _ = b.add("<h2>Fit</h2>\n<p>\(e(fitNote))</p>\n") }
    _ = b.add("<h2>Charts</h2>\n")
    for c in p.figures {
      let caption = "<figcaption>plots/\(e(c.file))</figcaption>\n</figure>\n"
      if !b.add("<figure id=\"\(e(c.file))\">\n" + c.svg + caption) {
        if b.add("<figure id=\"\(e(c.file))\">\n<a href=\"plots/\(e(c.file))\">\(e(c.title))</a>\n" + caption) {
          b.linkedCharts += 1
        } else {
          b.leftOutCharts += 1
        }
      }
    }
    for n in p.notes { _ = b.add("<p class=\"note\">Note: \(e(n))</p>\n") }
    if !p.rows.isEmpty { _ = b.add("<h2>Policies</h2>\n<p class=\"note\">\(e(tableNote(p.basis)))</p>\n") }
    b.addTables(policySections(p, .html))
    if let note = summaryNote(p, b) { h += "<p class=\"note summary\"><b>\(e(note))</b></p>\n" }
    return h + b.text + end
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
    let title = "# FetchLab report: \(md(p.name))\n\n", end = "Manifest: [manifest.json](manifest.json)\n"
    var b = BudgetedPage(limit: p.pageBytes - title.utf8.count - end.utf8.count)
    if !p.rows.isEmpty {
      _ = b.add("## Headline\n\n\(headlineNote(p.basis))\n\n")
      b.addTables(headlineSections(p, .markdown))
    } else {
      _ = b.add("## Fit\n\n\(fitNote)\n\n")
    }
    if let robustness = p.robustness, !b.add(robustnessMarkdown(robustness, table: markdownTable)) { b.leftOutTables += 1 }
    _ = b.add("## Charts\n\n")
    for c in p.figures where !b.add("![\(md(c.title))](plots/\(c.file))\n\n") { b.leftOutCharts += 1 }
    for n in p.notes { _ = b.add("Note: \(md(n))\n\n") }
    if !p.rows.isEmpty { _ = b.add("## Policies\n\n\(tableNote(p.basis))\n\n") }
    b.addTables(policySections(p, .markdown))
    var m = title
    if let note = summaryNote(p, b) { m += "**\(md(note))**\n\n" }
    return m + b.text + end
  }
}
