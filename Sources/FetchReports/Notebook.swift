import FetchBenchmark
import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation

/// `fetchlab report RUN_DIR --notebook PATH.ipynb`: a Jupyter notebook
/// (nbformat 4.5) that opens with the run's tables, charts and a written
/// interpretation already in it, and whose code cells redo the analysis
/// from the run's CSVs with the `fetchlab` Python package (`python/`:
/// pandas and matplotlib), which the notebook imports rather than pastes.
///
/// The first code cell sets `RUN_DIR`, the run directory relative to the
/// notebook's folder, so the notebook executes where it is
/// (`jupyter nbconvert --to notebook --execute PATH.ipynb`). The stored
/// outputs are FetchLab's own: the summary tables as `text/html` and
/// `text/plain`, the charts of ``RunReport`` as `image/svg+xml`, and the
/// interpretation as text. Cell ids are `cell-0001`, `cell-0002`, ...; keys
/// are sorted and indented as `nbformat` writes them; there are no
/// timestamps: the same run and paths give the same bytes.
///
/// Reads `policies.csv`, `pareto.csv`, `manifest.json` (required) and
/// `pooled.csv`, `summary.csv`, `opens.csv`, `fetches.csv` (when present).
package enum Notebook {
  /// The energy budgets of the interpretation's "freshest under a budget"
  /// statements, J/day (also `BUDGETS_J_PER_DAY` of the `fetchlab.notebook`
  /// Python module).
  package static let budgetsJPerDay: [Double] = [10, 100]

  /// Writes the notebook for the run in `runDir` to `path` (atomically,
  /// creating its folder) and returns `path`. `RUN_DIR` in the notebook is
  /// the path of `runDir` relative to the folder of `path`.
  /// Throws ``TraceFormatError`` (file:line) on a missing or malformed input.
  @discardableResult
  package static func write(runDir: String, to path: String, options: RunReport.Options = RunReport.Options()) throws
    -> String
  {
    let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
    do {
      try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    } catch {
      throw TraceFormatError(file: folder, line: 0, field: "-", message: "cannot create directory")
    }
    let text = try render(runDir: runDir, runDirReference: relativePath(from: folder, to: runDir), options: options)
    let f = try AtomicTextFile(path: path)
    try f.write(text)
    try f.commit()
    return path
  }

  /// The notebook for the run in `runDir` as JSON text (ends with a line
  /// break), with `RUN_DIR = runDirReference` in its first code cell. Its
  /// charts are ``RunReport/figures(runDir:options:)`` with `options`: the
  /// SVGs `fetchlab report` writes to `plots/` with the same options.
  package static func render(
    runDir: String, runDirReference: String, options: RunReport.Options = RunReport.Options()
  ) throws -> String {
    let run = try RunData(runDir: runDir, options: options)
    return encode(try build(run, runDirReference: runDirReference)) + "\n"
  }

  /// The interpretation statements per dataset (Markdown bullet lines), in
  /// dataset order; the notebook's `interpret(...)` cells print the same
  /// lines from the CSVs.
  package static func interpretation(runDir: String) throws -> [(dataset: String, lines: [String])] {
    let run = try RunData(runDir: runDir, options: RunReport.Options(timeline: nil))
    return run.datasets.map { ($0, statements(run, dataset: $0)) }
  }

  /// The path of `target` relative to the folder `base` (both resolved
  /// against the current directory, symbolic links followed), `.` when equal.
  package static func relativePath(from base: String, to target: String) -> String {
    func parts(_ p: String) -> [String] {
      URL(fileURLWithPath: p).standardizedFileURL.resolvingSymlinksInPath().pathComponents.filter { $0 != "/" }
    }
    let b = parts(base), t = parts(target)
    var k = 0
    while k < b.count, k < t.count, b[k] == t[k] { k += 1 }
    let up = Array(repeating: "..", count: b.count - k)
    let rel = up + t[k...]
    return rel.isEmpty ? "." : rel.joined(separator: "/")
  }

  /// `x` with 3 significant digits (integers of 4+ digits in full), `–` when
  /// nil or not finite; the notebook's Python `fmt` gives the same text.
  package static func format(_ x: Double?) -> String {
    guard let x, x.isFinite else { return "–" }
    if x == 0 { return "0" }
    let d = max(0, 2 - Int(log10(abs(x)).rounded(.down)))
    return CSV.number(x, decimals: min(d, 9))
  }

  // MARK: Manifest

  static func text(_ v: Any?) -> String? {
    switch v {
    case let s as String: return s
    case let b as Bool where type(of: v!) == Bool.self: return b ? "true" : "false"
    case let n as NSNumber:
      if let i = Int(exactly: n.doubleValue), abs(n.doubleValue) < 9e15 { return String(i) }
      return n.doubleValue.description
    default: return nil
    }
  }

  /// "What the run is": selected manifest fields (no timestamps).
  static func about(_ run: RunData) -> String {
    let m = run.manifest
    let code = MarkdownText.code
    var s = "# FetchLab run: \(MarkdownText.escape(run.name))\n\n"
    s += "This notebook was written by `fetchlab report --notebook` from the run's files. It opens with FetchLab's own "
    s += "tables and charts; executing it (*Run All*, or `jupyter nbconvert --to notebook --execute`) redoes the "
    s += "analysis from the CSVs with pandas and matplotlib.\n\n## The run\n\n"
    if let x = m["experiment"] as? [String: Any], let n = text(x["name"]) {
      s += "- Experiment: \(code(n))" + (text(x["path"]).map { " (\(code($0)))" } ?? "") + "\n"
    }
    if let c = text(m["command"]) { s += "- Command: \(code(c))\n" }
    if let v = text(m["fetchlab_version"]) { s += "- FetchLab version: \(MarkdownText.escape(v))\n" }
    if let t = m["trace"] as? [String: Any], let p = text(t["path"]) { s += "- Trace: \(code(p))\n" }
    if let ds = m["datasets"] as? [[String: Any]], !ds.isEmpty {
      s += "- Datasets:\n"
      for d in ds {
        s += "  - \(code(text(d["name"]) ?? "?")): \(text(d["users"]) ?? "?") users, \(text(d["pairs"]) ?? "?") (user, app) "
        s += "pairs, \(text(d["opens"]) ?? "?") scored opens, \(text(d["fetches"]) ?? "?") fetches\n"
      }
    } else if let c = m["counts"] as? [String: Any] {
      s += "- \(text(c["users"]) ?? "?") users, \(text(c["pairs"]) ?? "?") (user, app) pairs, "
      s += "\(text(c["opens"]) ?? "?") scored opens, \(text(c["fetches"]) ?? "?") fetches\n"
    }
    if let a = text(m["apps"]) { s += "- Apps per user: \(code(a))\n" }
    if let p = m["policies"] as? [Any] {
      s += "- \(p.count) policy configurations: " + p.compactMap { text($0).map(code) }.joined(separator: ", ") + "\n"
    }
    if let r = m["replications"] as? [Any] { s += "- Replications: \(r.count)\n" }
    if let t = text(m["train_fraction"]) {
      s += "- Train fraction: \(t) (learning policies train on that share of each user's window; all are scored on the rest)\n"
    }
    if let seed = text(m["seed"]) { s += "- Seed: \(MarkdownText.escape(seed))\n" }
    if let w = m["world_overrides"] as? [Any] {
      s += "- World-model overrides: " + (w.isEmpty ? "none" : w.compactMap { text($0).map(code) }.joined(separator: ", ")) + "\n"
    }
    if let ev = m["event_files"] as? Bool {
      s += "- Event files (`opens.csv`, `fetches.csv`): " + (ev ? "written" : "not written (no age CDF or hour-of-day charts)") + "\n"
    }
    return s
  }

  // MARK: Building

  static func build(_ run: RunData, runDirReference: String) throws -> JSON {
    var c = Cells()
    introCells(&c, run, runDirReference: runDirReference)
    var used = Set<String>()
    for d in run.datasets {
      datasetCells(&c, run, dataset: d, usedCharts: &used)
    }
    otherChartCells(&c, run, used: used)
    return .object([
      "cells": .array(c.cells),
      "metadata": .object([
        "kernelspec": .object([
          "display_name": .string("Python 3 (ipykernel)"), "language": .string("python"), "name": .string("python3"),
        ]),
        "language_info": .object([
          "codemirror_mode": .object(["name": .string("ipython"), "version": .int(3)]),
          "file_extension": .string(".py"), "mimetype": .string("text/x-python"), "name": .string("python"),
          "nbconvert_exporter": .string("python"), "pygments_lexer": .string("ipython3"),
        ]),
      ]),
      "nbformat": .int(4), "nbformat_minor": .int(5),
    ])
  }

  /// What the run is, how to use the notebook, and the cells that set
  /// `RUN_DIR` and load the run.
  private static func introCells(_ c: inout Cells, _ run: RunData, runDirReference: String) {
    c.markdown(about(run))
    c.markdown(
      """
      ## How to use this notebook

      The first code cell sets `RUN_DIR`, the run directory relative to this notebook's folder. Change it to \
      analyse another run (any directory written by `fetchlab run`), then run all cells. The stored outputs are \
      FetchLab's: tables from `policies.csv` and `pooled.csv`, SVG charts drawn by `fetchlab report`, and the \
      interpretation written from the numbers. Executing the cells replaces them with pandas tables and \
      matplotlib charts computed from the CSVs, and the `interpret(...)` cells print the statements again from the \
      data. Needs the `fetchlab` Python package: `pip install ./python` in FetchLab's sources (it brings pandas \
      and matplotlib).
      """)
    c.code(
      """
      # The run directory, relative to this notebook's folder: change it to analyse another run.
      RUN_DIR = \(py(runDirReference))
      """)
    c.code(
      """
      # The analysis: the fetchlab Python package (`pip install ./python` in FetchLab's sources).
      from fetchlab.notebook import NotebookRun

      nb = NotebookRun(RUN_DIR)
      """)
  }

  /// One dataset's section: the policy table, its charts (their files
  /// added to `usedCharts`), the spread over users and the interpretation.
  private static func datasetCells(_ c: inout Cells, _ run: RunData, dataset d: String, usedCharts used: inout Set<String>) {
    let sfx = run.suffix(d)
    let rows = run.rows.filter { $0.dataset == d }
    let label = py(d)
    policyTableCells(&c, run, dataset: d, rows: rows)
    let usable = rows.filter { $0.energy.mean != nil && $0.meanAge.mean != nil }.count
    let onFront = run.frontier.filter { $0.dataset == d }.count
    for kind in ["staleness-energy", "age-cdf", "hour-of-day"] {
      guard let ch = run.charts.first(where: { $0.file == kind + sfx + ".svg" }) else { continue }
      used.insert(ch.file)
      let out = [svg(ch.svg, "<FetchLab chart plots/\(ch.file): \(ch.title)>")]
      chartCells(&c, kind: kind, label: label, outputs: out, usable: usable, onFront: onFront)
    }
    if let per = run.perUser?[d] {
      c.markdown(
        """
        ### Spread over users

        The policy table gives means over users; this one gives each policy's median and interquartile range \
        `[p25, p75]` over users of the per-user mean age and J/day (each user averaged over apps and \
        replications), from `summary.csv`.
        """)
      let t = frame(
        index: "policy", columns: ["users", "mean age (s) median [p25, p75]", "J/day median [p25, p75]"],
        rows: per.map { x in
          func q(_ v: [Double]) -> String {
            let s = v.sorted()
            return format(quantile(s, 0.5)) + " [" + format(quantile(s, 0.25)) + ", " + format(quantile(s, 0.75)) + "]"
          }
          return (x.policy, [String(x.age.count), q(x.age), q(x.energy)])
        })
      c.code("nb.per_user_table(\(label))", outputs: [table(html: t.html, plain: t.plain)])
    }
    let lines = statements(run, dataset: d)
    c.markdown(
      "### Interpretation\n\nWritten from the numbers of `policies.csv` and `pareto.csv` (means over users, "
        + "`[low, high]` = 95 % CI). \"Without oracles\" leaves out the `oracle` families, which know the future. "
        + "Budgets: " + budgetsJPerDay.map { format($0) + " J/day" }.joined(separator: ", ") + ".\n\n"
        + lines.joined(separator: "\n"))
    c.code("nb.interpret(\(label))", outputs: [stream(lines.joined(separator: "\n") + "\n")])
  }

  /// The dataset's heading and policy table (means with their CIs, and the
  /// pooled p90 age when the run has it).
  private static func policyTableCells(_ c: inout Cells, _ run: RunData, dataset d: String, rows: [RunReport.PolicyRow]) {
    let basis = rows.first?.basis ?? .standard
    let header =
      ["users", "\(basis.label) J/day [95% CI]", "cellular MB/day [95% CI]", "mean age (s) [95% CI]", "fresh (%) [95% CI]"]
      + (run.pooledP90 == nil ? [] : ["p90 age, pooled (s)"])
    c.markdown(
      "## Dataset \(title(d))\n\n### Policies\n\nOne row per policy configuration: the mean over users with its 95 % "
        + "percentile bootstrap CI `[low, high]` (users resampled), from `policies.csv`: background-fetch "
        + "\(basis.label) (`\(basis.column)`, J/day per app), cellular data (MB/day), mean age of the content at app open (s), and the share of opens "
        + "that showed fresh content"
        + (run.pooledP90 == nil ? "." : "; and the 90th percentile of the age over all opens, from `pooled.csv` "
          + "(mean over replications).") + " Lower is better except for fresh opens.")
    let tab = frame(
      index: "policy", columns: header,
      rows: rows.map { r in
        var cells = [String(r.users)]
        for (m, scale) in [
          (basis.scoreMetric, 1.0), (.cellular_bytes_per_day, 1e-6), (.mean_age_s, 1), (.fresh_ratio, 100),
        ] {
          let e = r.estimates[m.rawValue] ?? RunReport.Estimate()
          cells.append(format(e.mean.map { $0 * scale }) + ci(e, scale))
        }
        if let p = run.pooledP90 { cells.append(format(p[d]?[r.policy])) }
        return (r.policy, cells)
      })
    c.code("nb.policy_table(\(py(d)))", outputs: [table(html: tab.html, plain: tab.plain)])
  }

  /// A chart of the dataset (`kind`: staleness-energy, age-cdf or
  /// hour-of-day): what it shows, then the cell that draws it.
  private static func chartCells(
    _ c: inout Cells, kind: String, label: String, outputs out: [(Int) -> JSON], usable: Int, onFront: Int
  ) {
    switch kind {
    case "staleness-energy":
      c.markdown(
        """
        ### Staleness against energy

        Each point is one policy configuration: x is the background-fetch energy per day (J, log scale), y the \
        mean age of the content at app open (s, log scale); the whiskers are the 95 % bootstrap CIs over users. \
        Lower left is better. Settings of one family (the text before `:`) are joined in energy order. The \
        dashed black staircase is the Pareto frontier: no configuration is both cheaper and fresher than a point \
        on it. A configuration at 0 (never fetching costs 0 J; the oracle's content is never stale) is drawn at \
        the axis break labelled 0. Here: \(usable) configurations, \(onFront) on the frontier.
        """)
      c.code("nb.plot_staleness_energy(\(label))", outputs: out)
    case "age-cdf":
      c.markdown(
        """
        ### Age at open

        For each policy, the share of opens whose content was at most x seconds old (log scale), pooled over \
        users, apps and replications. Higher and further left is fresher; the level at the left edge is the \
        share of opens that showed fresh content (age 0). From `opens.csv`.
        """)
      c.code("nb.plot_age_cdf(\(label))", outputs: out)
    default:
      c.markdown(
        """
        ### Opens and fetches by hour of day

        Opens (dashed) and each policy's background fetches by hour of day, each as a share of its own total. \
        Hours are each user's local time, from the time zones of the run's trace (UTC when the trace is not \
        found). A policy whose fetch curve follows the opens curve fetches when the user is likely to open the \
        app; a flat curve is a timer. From `opens.csv` and `fetches.csv`.
        """)
      c.code("nb.plot_hour_of_day(\(label))", outputs: out)
    }
  }

  /// The charts no dataset section showed, and the notes on skipped charts.
  private static func otherChartCells(_ c: inout Cells, _ run: RunData, used: Set<String>) {
    let others = run.charts.filter { !used.contains($0.file) }
    guard !others.isEmpty || !run.chartNotes.isEmpty else { return }
    var s = "## Other charts\n\n"
    s += others.isEmpty ? "" : "More charts drawn by `fetchlab report` (SVG files in `RUN_DIR/plots/`).\n\n"
    s += run.chartNotes.map { "_Note: \($0)._\n" }.joined()
    c.markdown(s)
    for ch in others {
      c.code(
        "nb.show_chart(\(py(ch.file)))  # \(ch.title)",
        outputs: [svg(ch.svg, "<FetchLab chart plots/\(ch.file): \(ch.title)>")])
    }
  }
}
