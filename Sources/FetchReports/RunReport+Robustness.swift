import FetchSupport
import FetchTraces
import Foundation

/// The report's "Robustness" section, from `robustness.csv` (a run with a
/// world grid or `world_variants`).
extension RunReport {
  static let robustnessNote =
    "Each world point changes assumptions of the reference world (column 'changed'). Kendall τ-b compares the "
    + "configurations' order at that point with the reference: by energy (J/day per app), and by user-mean age at "
    + "open among configurations in the same decade of energy. A headline claim holds when it is still true there "
    + "(from robustness.csv)."

  /// One base dataset's robustness table.
  struct RobustnessTable {
    var dataset: String
    var summary: String
    var header: [String]
    var rows: [[String]]
  }

  /// The section's tables, or nil when the run has no `robustness.csv`.
  ///
  /// - Throws: ``TraceFormatError`` naming the file, line and column.
  static func robustnessTables(runDir: String) throws -> [RobustnessTable]? {
    let path = runDir + "/robustness.csv"
    guard FileManager.default.fileExists(atPath: path) else { return nil }
    // The run's datasets: each world point names one (`<dataset>.<point>`).
    let datasets = Set(try readPolicies(path: runDir + "/policies.csv").map(\.dataset))
    var cols = Columns()
    struct Point { var changed = "", tauEnergy = "–", tauAge = "–", held = 0, claims = 0, failing: [String] = [] }
    var order: [String] = []
    var points: [String: [(String, Point)]] = [:]
    try StrictCSV.read(
      path: path, header: { cols = try Columns($0, file: path, required: Robustness.header) },
      record: { line, f in
        let c = cols.index
        func v(_ k: String) -> String { f[c[k]!] }
        let d = v("dataset"), label = v("world_point")
        let energyPoint = Robustness.energyPointLabels.contains(label) && datasets.contains { $0.hasPrefix(d + ".") }
        guard datasets.contains(d + "." + label) || energyPoint else {
          throw TraceFormatError(
            file: path, line: line, field: "world_point",
            message: "'\(escaped(label))' of dataset '\(escaped(d))' is not a world point of this run (policies.csv has no "
              + "dataset '\(escaped(d + "." + label))')")
        }
        func tau() throws -> String {
          guard !v("kendall_tau").isEmpty else { return "–" }
          let t = try number(v("kendall_tau"), file: path, line: line, column: "kendall_tau")!
          guard (-1...1).contains(t) else {
            throw TraceFormatError(
              file: path, line: line, field: "kendall_tau", message: "\(v("kendall_tau")) is not a Kendall τ (−1 to 1)")
          }
          return sig(t)
        }
        if points[d] == nil { order.append(d) }
        var list = points[d] ?? []
        if list.last?.0 != label { list.append((label, Point(changed: v("changed")))) }
        var p = list[list.count - 1].1
        switch v("measure") {
        case "kendall_tau_energy": p.tauEnergy = try tau()
        case "kendall_tau_age_in_energy_bands": p.tauAge = try tau()
        case let m where !Robustness.claimMeasures.contains(m):
          throw TraceFormatError(
            file: path, line: line, field: "measure",
            message: "unknown measure '\(escaped(m))' (expected kendall_tau_energy, kendall_tau_age_in_energy_bands, "
              + Robustness.claimMeasures.sorted().joined(separator: ", ") + ")")
        default:
          guard ["0", "1"].contains(v("holds")) else {
            throw TraceFormatError(file: path, line: line, field: "holds", message: "expected 0 or 1, got '\(v("holds"))'")
          }
          p.claims += 1
          if v("holds") == "1" { p.held += 1 } else { p.failing.append(v("claim")) }
        }
        list[list.count - 1].1 = p
        points[d] = list
      })
    return order.map { d in
      let list = points[d]!
      let rows = list.map { label, p in
        [label, p.changed, p.tauEnergy, p.tauAge, "\(p.held) / \(p.claims)",
         p.failing.prefix(3).joined(separator: "; ") + (p.failing.count > 3 ? " (+\(p.failing.count - 3) more)" : "")]
      }
      let stable = list.filter { $0.1.failing.isEmpty }.count
      let summary = "Every headline claim holds at \(stable) of \(list.count) world points."
      return RobustnessTable(
        dataset: d, summary: summary,
        header: ["world point", "changed", "τ energy", "τ age (energy bands)", "claims holding", "claims failing"], rows: rows)
    }
  }

  /// The section as HTML, with `table` rendering one table.
  static func robustnessHTML(_ tables: [RobustnessTable], table: ([String], [[String]]) -> String) -> String {
    let e = SVGPlot.escape
    var h = "<h2>Robustness</h2>\n<p class=\"note\">\(e(robustnessNote))</p>\n"
    for t in tables {
      h += "<h3>Dataset \(e(t.dataset))</h3>\n<p>\(e(t.summary))</p>\n" + table(t.header, t.rows)
    }
    return h
  }

  /// The section as Markdown, with `table` rendering one table.
  static func robustnessMarkdown(_ tables: [RobustnessTable], table: ([String], [[String]]) -> String) -> String {
    var m = "## Robustness\n\n\(robustnessNote)\n\n"
    for t in tables {
      m += "### Dataset \(MarkdownText.escape(t.dataset))\n\n\(MarkdownText.escape(t.summary))\n\n" + table(t.header, t.rows)
    }
    return m
  }
}
