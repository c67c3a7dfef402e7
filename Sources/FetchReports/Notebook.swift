import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation

/// `fetchlab report RUN_DIR --notebook PATH.ipynb`: a Jupyter notebook
/// (nbformat 4.5) that opens with the run's tables, charts and a written
/// interpretation already in it, and whose code cells redo the analysis
/// from the run's CSVs with pandas and matplotlib.
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
public enum Notebook {
  /// The energy budgets of the interpretation's "freshest under a budget"
  /// statements, J/day (also in the notebook's helper cell).
  public static let budgetsJPerDay: [Double] = [10, 100]

  /// Writes the notebook for the run in `runDir` to `path` (atomically,
  /// creating its folder) and returns `path`. `RUN_DIR` in the notebook is
  /// the path of `runDir` relative to the folder of `path`.
  /// Throws ``TraceFormatError`` (file:line) on a missing or malformed input.
  @discardableResult
  public static func write(runDir: String, to path: String, options: RunReport.Options = RunReport.Options()) throws
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
  public static func render(
    runDir: String, runDirReference: String, options: RunReport.Options = RunReport.Options()
  ) throws -> String {
    let run = try RunData(runDir: runDir, options: options)
    return encode(try build(run, runDirReference: runDirReference)) + "\n"
  }

  /// The interpretation statements per dataset (Markdown bullet lines), in
  /// dataset order; the notebook's `interpret(...)` cells print the same
  /// lines from the CSVs.
  public static func interpretation(runDir: String) throws -> [(dataset: String, lines: [String])] {
    let run = try RunData(runDir: runDir, options: RunReport.Options(timeline: nil))
    return run.datasets.map { ($0, statements(run, dataset: $0)) }
  }

  /// The path of `target` relative to the folder `base` (both resolved
  /// against the current directory, symbolic links followed), `.` when equal.
  public static func relativePath(from base: String, to target: String) -> String {
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
  public static func format(_ x: Double?) -> String {
    guard let x, x.isFinite else { return "–" }
    if x == 0 { return "0" }
    let d = max(0, 2 - Int(log10(abs(x)).rounded(.down)))
    return CSV.number(x, decimals: min(d, 9))
  }

  // MARK: Run files

  /// The parsed run files the notebook needs.
  struct RunData {
    var runDir: String
    var name: String
    var rows: [RunReport.PolicyRow]
    var frontier: [RunReport.FrontierPoint]
    var datasets: [String]
    var charts: [RunReport.Figure]
    var chartNotes: [String]
    var manifest: [String: Any]
    /// dataset -> policy -> mean over replications of the pooled p90 age.
    var pooledP90: [String: [String: Double]]?
    /// dataset -> per policy in file order: per-user (mean age, J/day).
    var perUser: [String: [(policy: String, age: [Double], energy: [Double])]]?
    var hasOpens: Bool
    var hasFetches: Bool

    init(runDir: String, options: RunReport.Options) throws {
      self.runDir = runDir
      name = URL(fileURLWithPath: runDir).standardizedFileURL.lastPathComponent
      let c = try RunReport.figures(runDir: runDir, options: options)
      charts = c.figures
      chartNotes = c.notes
      rows = c.policies
      frontier = try RunReport.readFrontier(path: runDir + "/pareto.csv")
      datasets = []
      for r in rows where !datasets.contains(r.dataset) { datasets.append(r.dataset) }
      let mpath = runDir + "/manifest.json"
      let data: Data
      do {
        data = try Data(contentsOf: URL(fileURLWithPath: mpath))
      } catch {
        throw TraceFormatError(file: mpath, line: 0, field: "-", message: "cannot read file")
      }
      guard let obj = try? JSONSerialization.jsonObject(with: data), let m = obj as? [String: Any] else {
        throw TraceFormatError(file: mpath, line: 0, field: "-", message: "not a JSON object")
      }
      manifest = m
      let fm = FileManager.default
      hasOpens = fm.fileExists(atPath: runDir + "/opens.csv")
      hasFetches = fm.fileExists(atPath: runDir + "/fetches.csv")
      let pooledPath = runDir + "/pooled.csv"
      pooledP90 = fm.fileExists(atPath: pooledPath) ? try Self.readPooled(path: pooledPath) : nil
      let summaryPath = runDir + "/summary.csv"
      perUser = fm.fileExists(atPath: summaryPath) ? try Self.readPerUser(path: summaryPath) : nil
    }

    /// Mean over replications of `p90_age_s` per (dataset, policy).
    static func readPooled(path: String) throws -> [String: [String: Double]] {
      var cols = RunReport.Columns()
      var sums: [String: [String: (Double, Int)]] = [:]
      try StrictCSV.read(
        path: path, header: { cols = try RunReport.Columns($0, file: path, required: ["policy", "p90_age_s"]) },
        record: { line, f in
          let c = cols.index
          let d = c["dataset"].map { f[$0] } ?? "", p = f[c["policy"]!]
          guard let v = try RunReport.number(f[c["p90_age_s"]!], file: path, line: line, column: "p90_age_s") else {
            return
          }
          let s = sums[d, default: [:]][p, default: (0, 0)]
          sums[d, default: [:]][p] = (s.0 + v, s.1 + 1)
        })
      return sums.mapValues { $0.mapValues { $0.0 / Double($0.1) } }
    }

    /// Per dataset and policy (file order): each user's mean over apps and
    /// replications of `mean_age_s` and of `energy_j_per_day`.
    static func readPerUser(path: String) throws -> [String: [(policy: String, age: [Double], energy: [Double])]] {
      var cols = RunReport.Columns()
      var order: [String: [String]] = [:]
      var users: [String: [String: [String]]] = [:]
      var acc: [String: [String: [String: (Double, Int, Double, Int)]]] = [:]
      try StrictCSV.read(
        path: path,
        header: {
          cols = try RunReport.Columns($0, file: path, required: ["user", "policy", "mean_age_s", "energy_j_per_day"])
        },
        record: { line, f in
          let c = cols.index
          let d = c["dataset"].map { f[$0] } ?? "", p = f[c["policy"]!], u = f[c["user"]!]
          if acc[d]?[p] == nil { order[d, default: []].append(p) }
          if acc[d]?[p]?[u] == nil { users[d, default: [:]][p, default: []].append(u) }
          var a = acc[d, default: [:]][p, default: [:]][u, default: (0, 0, 0, 0)]
          if let v = try RunReport.number(f[c["mean_age_s"]!], file: path, line: line, column: "mean_age_s") {
            a.0 += v
            a.1 += 1
          }
          if let v = try RunReport.number(f[c["energy_j_per_day"]!], file: path, line: line, column: "energy_j_per_day") {
            a.2 += v
            a.3 += 1
          }
          acc[d, default: [:]][p, default: [:]][u] = a
        })
      var out: [String: [(policy: String, age: [Double], energy: [Double])]] = [:]
      for (d, ps) in order {
        out[d] = ps.map { p in
          let us = users[d]?[p] ?? []
          let a = us.compactMap { u -> Double? in
            let v = acc[d]![p]![u]!
            return v.1 > 0 ? v.0 / Double(v.1) : nil
          }
          let e = us.compactMap { u -> Double? in
            let v = acc[d]![p]![u]!
            return v.3 > 0 ? v.2 / Double(v.3) : nil
          }
          return (p, a, e)
        }
      }
      return out
    }

    /// The file-name suffix RunReport gives the charts of `dataset`.
    func suffix(_ dataset: String) -> String { dataset.isEmpty ? "" : "-" + RunReport.slug(dataset) }
  }

  /// ``Quantile/type7(sorted:_:)`` of `v`; nil when empty.
  static func quantile(_ v: [Double], _ q: Double) -> Double? {
    v.isEmpty ? nil : Quantile.type7(sorted: v, q)
  }

  // MARK: Interpretation

  /// One policy's numbers for the statements.
  struct Point {
    var policy: String
    var family: String
    var energy: RunReport.Estimate
    var age: RunReport.Estimate
    var cellular: RunReport.Estimate
    var fresh: RunReport.Estimate
    var e: Double { energy.mean ?? .nan }
    var a: Double { age.mean ?? .nan }
    var isOracle: Bool { family.hasPrefix("oracle") }
  }

  static func ci(_ e: RunReport.Estimate, _ scale: Double = 1) -> String {
    guard let lo = e.low, let hi = e.high else { return "" }
    return " [" + format(lo * scale) + ", " + format(hi * scale) + "]"
  }

  static func overlap(_ x: RunReport.Estimate, _ y: RunReport.Estimate) -> String? {
    guard let a = x.low, let b = x.high, let c = y.low, let d = y.high else { return nil }
    return a <= d && c <= b ? "overlap" : "do not overlap"
  }

  /// Lowest mean age, then lowest energy, then policy name.
  static func freshest(_ ps: [Point]) -> Point? {
    ps.min { ($0.a, $0.e, $0.policy) < ($1.a, $1.e, $1.policy) }
  }

  /// The interpretation of one dataset: Markdown bullets derived from
  /// `policies.csv` and `pareto.csv`. Mirrored by the notebook's Python
  /// `interpretation(dataset)`; keep the two in step.
  static func statements(_ run: RunData, dataset d: String) -> [String] {
    let rows = run.rows.filter { $0.dataset == d }
    let usable = rows.filter { $0.energy.mean != nil && $0.meanAge.mean != nil }.map { r in
      Point(
        policy: r.policy, family: r.family, energy: r.energy, age: r.meanAge,
        cellular: r.estimates[ScoreMetric.cellular_bytes_per_day.rawValue] ?? RunReport.Estimate(),
        fresh: r.estimates[ScoreMetric.fresh_ratio.rawValue] ?? RunReport.Estimate())
    }
    var family: [String: String] = [:]
    for r in rows { family[r.policy] = r.family }
    let real = usable.filter { !$0.isOracle }
    func p(_ s: String) -> String { "`" + s + "`" }
    func point(_ policy: String, _ e: Double, _ a: Double) -> String {
      p(policy) + " (" + format(e) + " J/day, " + format(a) + " s)"
    }
    var out: [String] = []
    let front = run.frontier.filter { $0.dataset == d }.sorted {
      ($0.cost, $0.staleness, $0.policy) < ($1.cost, $1.staleness, $1.policy)
    }
    if front.isEmpty {
      out.append("- pareto.csv has no (mean age, J/day) frontier for this dataset.")
    } else {
      out.append(
        "- Pareto frontier (mean age against J/day): \(front.count) of \(usable.count) configurations: "
          + front.map { point($0.policy, $0.cost, $0.staleness) }.joined(separator: ", ") + ".")
      let k = front.filter { (family[$0.policy] ?? Scoring.family(of: $0.policy)).hasPrefix("oracle") }.count
      if k > 0 {
        out.append(
          "- \(k) of the \(front.count) frontier points are oracle configurations, which know the future opens and "
            + "updates: no real scheduler reaches them.")
      }
    }
    var realFront: [Point] = []
    for q in real.sorted(by: { ($0.e, $0.a, $0.policy) < ($1.e, $1.a, $1.policy) })
    where realFront.last.map({ q.a < $0.a }) ?? true {
      realFront.append(q)
    }
    if !realFront.isEmpty {
      out.append(
        "- Without the oracles, the frontier is: " + realFront.map { point($0.policy, $0.e, $0.a) }.joined(separator: ", ")
          + ".")
    }
    for b in budgetsJPerDay {
      if let q = freshest(real.filter { $0.e <= b }) {
        out.append(
          "- Under \(format(b)) J/day, the freshest configuration without oracles is \(p(q.policy)): mean age "
            + "\(format(q.a)) s\(ci(q.age)) at \(format(q.e)) J/day.")
      } else {
        out.append("- No configuration without oracles spends at most \(format(b)) J/day.")
      }
    }
    if let o = usable.first(where: { $0.policy == "oracle" }) {
      var s = "- The oracle's mean age is \(format(o.a)) s at \(format(o.e)) J/day."
      if let q = freshest(real.filter { $0.e <= o.e }) {
        s += " At that energy or less, the freshest configuration without oracles is \(p(q.policy)) at "
        s += "\(format(q.a)) s, \(format(q.a - o.a)) s more."
      } else {
        s += " No configuration without oracles spends that little."
      }
      if let q = freshest(real) {
        s += " The freshest configuration without oracles, \(p(q.policy)) (\(format(q.a)) s), spends \(format(q.e)) J/day"
        s += o.e > 0 ? ", \(format(q.e / o.e))× the oracle's energy." : "."
      }
      out.append(s)
    }
    let m = usable.first { $0.policy == "ios-minimum" }, t = usable.first { $0.policy == "periodic:1h" }
    if let m, let t {
      var s = "- \(p("ios-minimum")) against \(p("periodic:1h")): \(format(m.e)) J/day\(ci(m.energy)) against "
      s += "\(format(t.e))\(ci(t.energy))"
      s += t.e > 0 ? " (\(format(m.e / t.e))× the energy)" : ""
      s += "; mean age \(format(m.a)) s\(ci(m.age)) against \(format(t.a)) s\(ci(t.age)); fresh opens "
      s += "\(format(m.fresh.mean.map { $0 * 100 })) % against \(format(t.fresh.mean.map { $0 * 100 })) %."
      if let x = overlap(m.energy, t.energy) { s += " The energy CIs \(x)." }
      if let x = overlap(m.age, t.age) { s += " The mean-age CIs \(x)." }
      out.append(s)
    }
    if let t {
      let c = real.filter { $0.a <= t.a && $0.cellular.mean != nil }
      if let q = c.min(by: { ($0.cellular.mean!, $0.a, $0.policy) < ($1.cellular.mean!, $1.a, $1.policy) }) {
        let mb = format(t.cellular.mean.map { $0 * 1e-6 })
        if q.policy == t.policy {
          out.append(
            "- No configuration without oracles that is at least as fresh as \(p("periodic:1h")) (mean age ≤ "
              + "\(format(t.a)) s) uses less cellular data than its \(mb) MB/day.")
        } else {
          out.append(
            "- At least as fresh as \(p("periodic:1h")) (mean age ≤ \(format(t.a)) s), the configuration without "
              + "oracles with the least cellular data is \(p(q.policy)): \(format(q.cellular.mean.map { $0 * 1e-6 })) "
              + "MB/day against \(mb).")
        }
      }
    }
    return out
  }

  // MARK: Cells

  /// A notebook JSON value; objects are encoded with sorted keys.
  indirect enum JSON {
    case string(String), int(Int), bool(Bool), null
    case array([JSON])
    case object([String: JSON])

    /// Text as nbformat stores it: an array of lines, each but the last
    /// ending in a line break.
    static func lines(_ s: String) -> JSON {
      var out: [JSON] = []
      var cur = ""
      for ch in s.unicodeScalars {
        cur.unicodeScalars.append(ch)
        if ch == "\n" {
          out.append(.string(cur))
          cur = ""
        }
      }
      if !cur.isEmpty { out.append(.string(cur)) }
      return .array(out)
    }
  }

  /// `json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False)`, as
  /// `nbformat.write` does, so a notebook saved by Jupyter diffs cleanly.
  static func encode(_ v: JSON) -> String {
    var out = ""
    func str(_ s: String) {
      out += "\""
      for u in s.unicodeScalars {
        switch u {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case "\u{8}": out += "\\b"
        case "\u{C}": out += "\\f"
        default:
          if u.value < 0x20 {
            let h = String(u.value, radix: 16)
            out += "\\u" + String(repeating: "0", count: 4 - h.count) + h
          } else {
            out.unicodeScalars.append(u)
          }
        }
      }
      out += "\""
    }
    func go(_ v: JSON, _ depth: Int) {
      let pad = "\n" + String(repeating: " ", count: depth + 1)
      let end = "\n" + String(repeating: " ", count: depth)
      switch v {
      case .string(let s): str(s)
      case .int(let i): out += String(i)
      case .bool(let b): out += b ? "true" : "false"
      case .null: out += "null"
      case .array(let a):
        guard !a.isEmpty else {
          out += "[]"
          return
        }
        out += "["
        for (i, x) in a.enumerated() {
          out += (i > 0 ? "," : "") + pad
          go(x, depth + 1)
        }
        out += end + "]"
      case .object(let o):
        guard !o.isEmpty else {
          out += "{}"
          return
        }
        out += "{"
        for (i, k) in o.keys.sorted(by: { Array($0.unicodeScalars).lexicographicallyPrecedes(Array($1.unicodeScalars)) }).enumerated() {
          out += (i > 0 ? "," : "") + pad
          str(k)
          out += ": "
          go(o[k]!, depth + 1)
        }
        out += end + "}"
      }
    }
    go(v, 0)
    return out
  }

  /// Accumulates cells with sequential ids and execution counts.
  struct Cells {
    var cells: [JSON] = []

    /// `s` without trailing line breaks (a cell's last line has none).
    static func trimmed(_ s: String) -> String {
      var s = s
      while s.hasSuffix("\n") { s.removeLast() }
      return s
    }
    var count = 0
    var id: String { "cell-" + String(repeating: "0", count: max(0, 4 - String(cells.count + 1).count)) + String(cells.count + 1) }

    mutating func markdown(_ text: String) {
      cells.append(.object(["cell_type": .string("markdown"), "id": .string(id), "metadata": .object([:]), "source": .lines(Self.trimmed(text))]))
    }

    /// A code cell; `outputs` take the cell's execution count.
    mutating func code(_ source: String, outputs: [(Int) -> JSON] = []) {
      count += 1
      let n = count
      cells.append(
        .object([
          "cell_type": .string("code"), "execution_count": .int(n), "id": .string(id), "metadata": .object([:]),
          "outputs": .array(outputs.map { $0(n) }), "source": .lines(Self.trimmed(source)),
        ]))
    }
  }

  static func stream(_ text: String) -> (Int) -> JSON {
    { _ in .object(["name": .string("stdout"), "output_type": .string("stream"), "text": .lines(text)]) }
  }

  static func svg(_ svg: String, _ label: String) -> (Int) -> JSON {
    { _ in
      .object([
        "data": .object(["image/svg+xml": .lines(svg), "text/plain": .lines(label)]), "metadata": .object([:]),
        "output_type": .string("display_data"),
      ])
    }
  }

  static func table(html: String, plain: String) -> (Int) -> JSON {
    { n in
      .object([
        "data": .object(["text/html": .lines(html), "text/plain": .lines(plain)]), "execution_count": .int(n),
        "metadata": .object([:]), "output_type": .string("execute_result"),
      ])
    }
  }

  /// A DataFrame-like table: HTML as pandas writes it, and aligned text.
  static func frame(index: String, columns: [String], rows: [(String, [String])]) -> (html: String, plain: String) {
    let e = SVGPlot.escape
    var h = "<div>\n<table border=\"1\" class=\"dataframe\">\n  <thead>\n    <tr style=\"text-align: right;\">\n"
    h += "      <th></th>\n" + columns.map { "      <th>\(e($0))</th>\n" }.joined() + "    </tr>\n"
    h += "    <tr>\n      <th>\(e(index))</th>\n" + columns.map { _ in "      <th></th>\n" }.joined() + "    </tr>\n"
    h += "  </thead>\n  <tbody>\n"
    for (k, cells) in rows {
      h += "    <tr>\n      <th>\(e(k))</th>\n" + cells.map { "      <td>\(e($0))</td>\n" }.joined() + "    </tr>\n"
    }
    h += "  </tbody>\n</table>\n</div>"
    let w0 = ([index] + rows.map(\.0)).map(\.count).max() ?? 0
    let ws = columns.indices.map { i in ([columns[i]] + rows.map { $0.1[i] }).map(\.count).max() ?? 0 }
    func pad(_ s: String, _ w: Int, left: Bool) -> String {
      let f = String(repeating: " ", count: max(0, w - s.count))
      return left ? s + f : f + s
    }
    var lines = [pad("", w0, left: true) + zip(columns, ws).map { "  " + pad($0, $1, left: false) }.joined()]
    lines.append(pad(index, w0, left: true) + ws.map { "  " + String(repeating: " ", count: $0) }.joined())
    for (k, cells) in rows { lines.append(pad(k, w0, left: true) + zip(cells, ws).map { "  " + pad($0, $1, left: false) }.joined()) }
    return (h, lines.map { $0.replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression) }.joined(separator: "\n"))
  }

  /// A Python string literal for `s`.
  static func py(_ s: String) -> String {
    var out = "\""
    for u in s.unicodeScalars {
      switch u {
      case "\\": out += "\\\\"
      case "\"": out += "\\\""
      case "\n": out += "\\n"
      default:
        if u.value < 0x20 { out += "\\x" + (u.value < 16 ? "0" : "") + String(u.value, radix: 16) } else { out.unicodeScalars.append(u) }
      }
    }
    return out + "\""
  }

  /// A Markdown-safe dataset title.
  static func title(_ d: String) -> String { d.isEmpty ? "the run" : "`" + d + "`" }

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
    var s = "# FetchLab run: \(run.name)\n\n"
    s += "This notebook was written by `fetchlab report --notebook` from the run's files. It opens with FetchLab's own "
    s += "tables and charts; executing it (*Run All*, or `jupyter nbconvert --to notebook --execute`) redoes the "
    s += "analysis from the CSVs with pandas and matplotlib.\n\n## The run\n\n"
    if let x = m["experiment"] as? [String: Any], let n = text(x["name"]) {
      s += "- Experiment: `\(n)`" + (text(x["path"]).map { " (`\($0)`)" } ?? "") + "\n"
    }
    if let c = text(m["command"]) { s += "- Command: `\(c)`\n" }
    if let v = text(m["fetchlab_version"]) { s += "- FetchLab version: \(v)\n" }
    if let t = m["trace"] as? [String: Any], let p = text(t["path"]) { s += "- Trace: `\(p)`\n" }
    if let ds = m["datasets"] as? [[String: Any]], !ds.isEmpty {
      s += "- Datasets:\n"
      for d in ds {
        s += "  - `\(text(d["name"]) ?? "?")`: \(text(d["users"]) ?? "?") users, \(text(d["pairs"]) ?? "?") (user, app) "
        s += "pairs, \(text(d["opens"]) ?? "?") scored opens, \(text(d["fetches"]) ?? "?") fetches\n"
      }
    } else if let c = m["counts"] as? [String: Any] {
      s += "- \(text(c["users"]) ?? "?") users, \(text(c["pairs"]) ?? "?") (user, app) pairs, "
      s += "\(text(c["opens"]) ?? "?") scored opens, \(text(c["fetches"]) ?? "?") fetches\n"
    }
    if let a = text(m["apps"]) { s += "- Apps per user: `\(a)`\n" }
    if let p = m["policies"] as? [Any] {
      s += "- \(p.count) policy configurations: " + p.compactMap { text($0).map { "`\($0)`" } }.joined(separator: ", ") + "\n"
    }
    if let r = m["replications"] as? [Any] { s += "- Replications: \(r.count)\n" }
    if let t = text(m["train_fraction"]) {
      s += "- Train fraction: \(t) (learning policies train on that share of each user's window; all are scored on the rest)\n"
    }
    if let seed = text(m["seed"]) { s += "- Seed: \(seed)\n" }
    if let w = m["world_overrides"] as? [Any] {
      s += "- World-model overrides: " + (w.isEmpty ? "none" : w.compactMap { text($0).map { "`\($0)`" } }.joined(separator: ", ")) + "\n"
    }
    if let ev = m["event_files"] as? Bool {
      s += "- Event files (`opens.csv`, `fetches.csv`): " + (ev ? "written" : "not written (no age CDF or hour-of-day charts)") + "\n"
    }
    return s
  }

  // MARK: Building

  static func build(_ run: RunData, runDirReference: String) throws -> JSON {
    var c = Cells()
    c.markdown(about(run))
    c.markdown(
      """
      ## How to use this notebook

      The first code cell sets `RUN_DIR`, the run directory relative to this notebook's folder. Change it to \
      analyse another run (any directory written by `fetchlab run`), then run all cells. The stored outputs are \
      FetchLab's: tables from `policies.csv` and `pooled.csv`, SVG charts drawn by `fetchlab report`, and the \
      interpretation written from the numbers. Executing the cells replaces them with pandas tables and \
      matplotlib charts computed from the CSVs, and the `interpret(...)` cells print the statements again from the \
      data. Needs pandas and matplotlib.
      """)
    c.code(
      """
      # The run directory, relative to this notebook's folder: change it to analyse another run.
      RUN_DIR = \(py(runDirReference))
      """)
    c.code(
      helpers.replacingOccurrences(
        of: "FAMILY_COLORS = {}",
        with: "FAMILY_COLORS = {"
          + PolicyRegistry.families.map { "\"\($0.name)\": \"\($0.style.color)\"" }.joined(separator: ", ") + "}"))
    let header =
      ["users", "J/day [95% CI]", "cellular MB/day [95% CI]", "mean age (s) [95% CI]", "fresh (%) [95% CI]"]
      + (run.pooledP90 == nil ? [] : ["p90 age, pooled (s)"])
    var used = Set<String>()
    let known = ["staleness-energy", "age-cdf", "hour-of-day"]
    for d in run.datasets {
      let sfx = run.suffix(d)
      let rows = run.rows.filter { $0.dataset == d }
      let label = py(d)
      c.markdown(
        "## Dataset \(title(d))\n\n### Policies\n\nOne row per policy configuration: the mean over users with its 95 % "
          + "percentile bootstrap CI `[low, high]` (users resampled), from `policies.csv`: background-fetch energy "
          + "(J/day per app), cellular data (MB/day), mean age of the content at app open (s), and the share of opens "
          + "that showed fresh content"
          + (run.pooledP90 == nil ? "." : "; and the 90th percentile of the age over all opens, from `pooled.csv` "
            + "(mean over replications).") + " Lower is better except for fresh opens.")
      let tab = frame(
        index: "policy", columns: header,
        rows: rows.map { r in
          var cells = [String(r.users)]
          for (m, scale) in [
            (ScoreMetric.energy_j_per_day, 1.0), (.cellular_bytes_per_day, 1e-6), (.mean_age_s, 1), (.fresh_ratio, 100),
          ] {
            let e = r.estimates[m.rawValue] ?? RunReport.Estimate()
            cells.append(format(e.mean.map { $0 * scale }) + ci(e, scale))
          }
          if let p = run.pooledP90 { cells.append(format(p[d]?[r.policy])) }
          return (r.policy, cells)
        })
      c.code("policy_table(\(label))", outputs: [table(html: tab.html, plain: tab.plain)])
      let usable = rows.filter { $0.energy.mean != nil && $0.meanAge.mean != nil }.count
      let onFront = run.frontier.filter { $0.dataset == d }.count
      for kind in known {
        guard let ch = run.charts.first(where: { $0.file == kind + sfx + ".svg" }) else { continue }
        used.insert(ch.file)
        let out = [svg(ch.svg, "<FetchLab chart plots/\(ch.file): \(ch.title)>")]
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
          c.code("plot_staleness_energy(\(label))", outputs: out)
        case "age-cdf":
          c.markdown(
            """
            ### Age at open

            For each policy, the share of opens whose content was at most x seconds old (log scale), pooled over \
            users, apps and replications. Higher and further left is fresher; the level at the left edge is the \
            share of opens that showed fresh content (age 0). From `opens.csv`.
            """)
          c.code("plot_age_cdf(\(label))", outputs: out)
        default:
          c.markdown(
            """
            ### Opens and fetches by hour of day

            Opens (dashed) and each policy's background fetches by hour of day (UTC), each as a share of its own \
            total. A policy whose fetch curve follows the opens curve fetches when the user is likely to open the \
            app; a flat curve is a timer. From `opens.csv` and `fetches.csv`.
            """)
          c.code("plot_hour_of_day(\(label))", outputs: out)
        }
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
        c.code("per_user_table(\(label))", outputs: [table(html: t.html, plain: t.plain)])
      }
      let lines = statements(run, dataset: d)
      c.markdown(
        "### Interpretation\n\nWritten from the numbers of `policies.csv` and `pareto.csv` (means over users, "
          + "`[low, high]` = 95 % CI). \"Without oracles\" leaves out the `oracle` families, which know the future. "
          + "Budgets: " + budgetsJPerDay.map { format($0) + " J/day" }.joined(separator: ", ") + ".\n\n"
          + lines.joined(separator: "\n"))
      c.code("interpret(\(label))", outputs: [stream(lines.joined(separator: "\n") + "\n")])
    }
    let others = run.charts.filter { !used.contains($0.file) }
    if !others.isEmpty || !run.chartNotes.isEmpty {
      var s = "## Other charts\n\n"
      s += others.isEmpty ? "" : "More charts drawn by `fetchlab report` (SVG files in `RUN_DIR/plots/`).\n\n"
      s += run.chartNotes.map { "_Note: \($0)._\n" }.joined()
      c.markdown(s)
      for ch in others {
        c.code(
          "show_chart(\(py(ch.file)))  # \(ch.title)",
          outputs: [svg(ch.svg, "<FetchLab chart plots/\(ch.file): \(ch.title)>")])
      }
    }
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

  /// The helper code cell: loading, tables, charts and the interpretation.
  static let helpers = #"""
    # Load the run's files and define the tables, charts and interpretation.
    import json
    import math
    from pathlib import Path

    import matplotlib.pyplot as plt
    import numpy as np
    import pandas as pd
    from IPython.display import SVG, display

    RUN = Path(RUN_DIR)
    BUDGETS_J_PER_DAY = [10, 100]  # budgets of the "freshest under a budget" statements
    FAMILY_COLORS = {}  # each policy family's colour in FetchLab's SVG charts (Okabe-Ito)


    def color_of(name, i):
        """The colour of a policy or family (the text before ':') in FetchLab's charts; else matplotlib's cycle."""
        return FAMILY_COLORS.get(name.split(":")[0], f"C{i % 10}")


    def read_csv(name, required=True):
        """A run file as a DataFrame (None if optional and absent); dataset is "" in single runs."""
        path = RUN / name
        if not path.exists():
            if required:
                raise FileNotFoundError(f"{path} not found: does RUN_DIR point at a run directory?")
            return None
        text = {"dataset": str, "policy": str, "family": str, "user": str, "app": str}
        exact = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}  # pandas 3: exact by default
        df = pd.read_csv(path, dtype=text, **exact)
        if "dataset" not in df.columns:
            df.insert(0, "dataset", "")
        df["dataset"] = df["dataset"].fillna("")
        return df


    manifest = json.loads((RUN / "manifest.json").read_text(encoding="utf-8"))
    policies = read_csv("policies.csv")
    pareto = read_csv("pareto.csv")
    pooled = read_csv("pooled.csv", required=False)
    summary = read_csv("summary.csv", required=False)
    opens = read_csv("opens.csv", required=False)
    fetches = read_csv("fetches.csv", required=False)
    if "family" not in policies.columns:
        policies["family"] = pd.NA
    policies["family"] = policies["family"].fillna(policies["policy"].str.split(":").str[0])


    def fmt(x):
        """3 significant digits (integers of 4+ digits in full), as FetchLab writes them."""
        if x is None or not math.isfinite(x):
            return "–"
        if x == 0:
            return "0"
        d = min(max(0, 2 - math.floor(math.log10(abs(x)))), 9)
        p = 10.0**d
        r = abs(x * p)
        f = math.floor(r)
        r = (f + 1 if r - f >= 0.5 else f) * (1 if x > 0 else -1) / p
        return str(int(r)) if r == int(r) else repr(r)


    def ci(row, metric, scale=1.0):
        lo, hi = row[metric + "_lo"], row[metric + "_hi"]
        return f" [{fmt(lo * scale)}, {fmt(hi * scale)}]" if pd.notna(lo) and pd.notna(hi) else ""


    def policy_table(dataset):
        """Mean [95% CI] per policy of one dataset, from policies.csv (and pooled.csv)."""
        rows = policies[policies.dataset == dataset]
        out = pd.DataFrame({"users": rows["users"].to_numpy()}, index=pd.Index(rows["policy"], name="policy"))
        columns = [
            ("J/day [95% CI]", "energy_j_per_day", 1.0),
            ("cellular MB/day [95% CI]", "cellular_bytes_per_day", 1e-6),
            ("mean age (s) [95% CI]", "mean_age_s", 1.0),
            ("fresh (%) [95% CI]", "fresh_ratio", 100.0),
        ]
        for title, metric, scale in columns:
            out[title] = [fmt(r[metric] * scale) + ci(r, metric, scale) for _, r in rows.iterrows()]
        if pooled is not None:
            p90 = pooled[pooled.dataset == dataset].groupby("policy", sort=False)["p90_age_s"].mean()
            out["p90 age, pooled (s)"] = [fmt(p90.get(p, math.nan)) for p in rows["policy"]]
        return out


    def per_user_table(dataset):
        """Median [p25, p75] over users of each user's mean age and J/day, from summary.csv."""
        s = summary[summary.dataset == dataset]
        u = s.groupby(["policy", "user"], sort=False)[["mean_age_s", "energy_j_per_day"]].mean()
        rows = {}
        for policy in s["policy"].unique():
            g = u.loc[policy]
            q = lambda v: f"{fmt(v.median())} [{fmt(v.quantile(0.25))}, {fmt(v.quantile(0.75))}]"
            rows[policy] = [g["mean_age_s"].count(), q(g["mean_age_s"].dropna()), q(g["energy_j_per_day"].dropna())]
        columns = ["users", "mean age (s) median [p25, p75]", "J/day median [p25, p75]"]
        return pd.DataFrame.from_dict(rows, orient="index", columns=columns).rename_axis("policy")


    def zero_floor(values):
        """A symlog threshold: the decade below the smallest positive value (log axes cannot show 0)."""
        v = values[values > 0]
        return 10.0 ** math.floor(math.log10(v.min())) if len(v) else 1.0


    def plot_staleness_energy(dataset):
        """Mean age at open against J/day with 95% CI whiskers and the Pareto frontier."""
        rows = policies[policies.dataset == dataset].dropna(subset=["energy_j_per_day", "mean_age_s"])
        fig, ax = plt.subplots(figsize=(10, 6.5))
        for i, (family, g) in enumerate(rows.groupby("family", sort=False)):
            g = g.sort_values(["energy_j_per_day", "policy"])
            x, y = g["energy_j_per_day"], g["mean_age_s"]
            xerr = [(x - g["energy_j_per_day_lo"].fillna(x)).clip(lower=0), (g["energy_j_per_day_hi"].fillna(x) - x).clip(lower=0)]
            yerr = [(y - g["mean_age_s_lo"].fillna(y)).clip(lower=0), (g["mean_age_s_hi"].fillna(y) - y).clip(lower=0)]
            name = g["policy"].iloc[0] if len(g) == 1 else f"{family} ({len(g)})"
            ax.errorbar(x, y, xerr=xerr, yerr=yerr, fmt="o-" if len(g) > 1 else "o", ms=4, lw=1, capsize=2,
                        color=color_of(family, i), label=name)
        f = pareto[(pareto.dataset == dataset) & (pareto.staleness_metric == "mean_age_s")
                   & (pareto.cost_metric == "energy_j_per_day") & (pareto.on_frontier == 1)]
        f = f.dropna(subset=["cost", "staleness"]).sort_values(["cost", "staleness"])
        ax.step(f["cost"], f["staleness"], where="post", color="black", ls="--", lw=1, label="Pareto frontier")
        ax.set_xscale("symlog", linthresh=zero_floor(rows["energy_j_per_day"]))
        ax.set_yscale("symlog", linthresh=zero_floor(rows["mean_age_s"]))
        ax.set_xlim(left=0)
        ax.set_ylim(bottom=0)
        ax.set_xlabel("background-fetch energy (J/day, symlog scale)")
        ax.set_ylabel("mean age at open (s, symlog scale)")
        ax.set_title("Staleness vs energy" + (f" ({dataset})" if dataset else ""))
        ax.grid(True, which="major", color="#e5e5e5")
        ax.legend(fontsize=7, ncol=2, loc="upper right")
        plt.show()


    def plot_age_cdf(dataset):
        """Share of opens with age <= x per policy, from opens.csv."""
        ev = opens[opens.dataset == dataset]
        top = max(float(ev["age_s"].max()), 10.0)
        grid = np.logspace(0, math.ceil(math.log10(top)), 240)
        fig, ax = plt.subplots(figsize=(10, 6))
        for i, (policy, g) in enumerate(ev.groupby("policy", sort=False)):
            a = np.sort(g["age_s"].to_numpy())
            ax.plot(grid, 100 * np.searchsorted(a, grid, side="right") / len(a), color=color_of(policy, i), label=policy)
        ax.set_xscale("log")
        ax.set_ylim(0, 100)
        ax.set_xlabel("age at open (s, log scale)")
        ax.set_ylabel("opens with age ≤ x (%)")
        ax.set_title("Age at open, cumulative" + (f" ({dataset})" if dataset else ""))
        ax.grid(True, color="#e5e5e5")
        ax.legend(fontsize=7)
        plt.show()


    def plot_hour_of_day(dataset):
        """Opens and each policy's fetches by UTC hour, as shares of their totals."""
        hours = lambda t: np.minimum(23, (np.mod(t.to_numpy(), 86400) // 3600).astype(int))
        ev = opens[opens.dataset == dataset]
        first = ev["policy"].iloc[0]
        o = np.bincount(hours(ev[ev.policy == first]["time"]), minlength=24)
        fig, ax = plt.subplots(figsize=(10, 5))
        ax.plot(range(24), 100 * o / o.sum(), "k--", label=f"opens ({o.sum()})")
        if fetches is not None:
            fe = fetches[fetches.dataset == dataset]
            for i, (policy, g) in enumerate(fe.groupby("policy", sort=False)):
                c = np.bincount(hours(g["time"]), minlength=24)
                ax.plot(range(24), 100 * c / c.sum(), marker="o", ms=3, color=color_of(policy, i), label="fetches: " + policy)
        ax.set_xticks(range(0, 24, 3))
        ax.set_xlabel("hour of day (UTC)")
        ax.set_ylabel("share of the series' events (%)")
        ax.set_title("Opens and fetches by hour of day" + (f" ({dataset})" if dataset else ""))
        ax.grid(True, color="#e5e5e5")
        ax.legend(fontsize=7)
        plt.show()


    def show_chart(file):
        """An SVG chart drawn by `fetchlab report`, from RUN_DIR/plots/."""
        path = RUN / "plots" / file
        if path.exists():
            display(SVG(filename=str(path)))
        else:
            print(f"{path} not found: run `fetchlab report {RUN_DIR}` to draw it")


    def interpretation(dataset):
        """The interpretation's statements, computed from policies.csv and pareto.csv."""
        rows = policies[policies.dataset == dataset]
        family = dict(zip(rows["policy"], rows["family"]))
        usable = [r for _, r in rows.iterrows() if pd.notna(r["energy_j_per_day"]) and pd.notna(r["mean_age_s"])]
        real = [r for r in usable if not r["family"].startswith("oracle")]
        e = lambda r: r["energy_j_per_day"]
        a = lambda r: r["mean_age_s"]
        p = lambda s: f"`{s}`"
        point = lambda policy, cost, age: f"{p(policy)} ({fmt(cost)} J/day, {fmt(age)} s)"
        freshest = lambda rs: min(rs, key=lambda r: (a(r), e(r), r["policy"])) if rs else None
        overlap = lambda r, s, m: None if pd.isna(r[m + "_lo"]) or pd.isna(r[m + "_hi"]) or pd.isna(s[m + "_lo"]) or pd.isna(s[m + "_hi"]) else (
            "overlap" if r[m + "_lo"] <= s[m + "_hi"] and s[m + "_lo"] <= r[m + "_hi"] else "do not overlap")
        out = []
        f = pareto[(pareto.dataset == dataset) & (pareto.staleness_metric == "mean_age_s")
                   & (pareto.cost_metric == "energy_j_per_day") & (pareto.on_frontier == 1)]
        front = sorted(((c, s, q) for c, s, q in zip(f["cost"], f["staleness"], f["policy"]) if pd.notna(c) and pd.notna(s)))
        if not front:
            out.append("- pareto.csv has no (mean age, J/day) frontier for this dataset.")
        else:
            out.append(f"- Pareto frontier (mean age against J/day): {len(front)} of {len(usable)} configurations: "
                       + ", ".join(point(q, c, s) for c, s, q in front) + ".")
            k = sum(1 for _, _, q in front if family.get(q, q.split(":")[0]).startswith("oracle"))
            if k > 0:
                out.append(f"- {k} of the {len(front)} frontier points are oracle configurations, which know the future opens and "
                           "updates: no real scheduler reaches them.")
        real_front = []
        for r in sorted(real, key=lambda r: (e(r), a(r), r["policy"])):
            if not real_front or a(r) < a(real_front[-1]):
                real_front.append(r)
        if real_front:
            out.append("- Without the oracles, the frontier is: " + ", ".join(point(r["policy"], e(r), a(r)) for r in real_front) + ".")
        for b in BUDGETS_J_PER_DAY:
            q = freshest([r for r in real if e(r) <= b])
            if q is not None:
                out.append(f"- Under {fmt(b)} J/day, the freshest configuration without oracles is {p(q['policy'])}: mean age "
                           f"{fmt(a(q))} s{ci(q, 'mean_age_s')} at {fmt(e(q))} J/day.")
            else:
                out.append(f"- No configuration without oracles spends at most {fmt(b)} J/day.")
        o = next((r for r in usable if r["policy"] == "oracle"), None)
        if o is not None:
            s = f"- The oracle's mean age is {fmt(a(o))} s at {fmt(e(o))} J/day."
            q = freshest([r for r in real if e(r) <= e(o)])
            if q is not None:
                s += f" At that energy or less, the freshest configuration without oracles is {p(q['policy'])} at "
                s += f"{fmt(a(q))} s, {fmt(a(q) - a(o))} s more."
            else:
                s += " No configuration without oracles spends that little."
            q = freshest(real)
            if q is not None:
                s += f" The freshest configuration without oracles, {p(q['policy'])} ({fmt(a(q))} s), spends {fmt(e(q))} J/day"
                s += f", {fmt(e(q) / e(o))}× the oracle's energy." if e(o) > 0 else "."
            out.append(s)
        m = next((r for r in usable if r["policy"] == "ios-minimum"), None)
        t = next((r for r in usable if r["policy"] == "periodic:1h"), None)
        if m is not None and t is not None:
            s = f"- {p('ios-minimum')} against {p('periodic:1h')}: {fmt(e(m))} J/day{ci(m, 'energy_j_per_day')} against "
            s += f"{fmt(e(t))}{ci(t, 'energy_j_per_day')}"
            s += f" ({fmt(e(m) / e(t))}× the energy)" if e(t) > 0 else ""
            s += f"; mean age {fmt(a(m))} s{ci(m, 'mean_age_s')} against {fmt(a(t))} s{ci(t, 'mean_age_s')}; fresh opens "
            s += f"{fmt(m['fresh_ratio'] * 100)} % against {fmt(t['fresh_ratio'] * 100)} %."
            x = overlap(m, t, "energy_j_per_day")
            s += f" The energy CIs {x}." if x else ""
            x = overlap(m, t, "mean_age_s")
            s += f" The mean-age CIs {x}." if x else ""
            out.append(s)
        if t is not None:
            c = [r for r in real if a(r) <= a(t) and pd.notna(r["cellular_bytes_per_day"])]
            if c:
                q = min(c, key=lambda r: (r["cellular_bytes_per_day"], a(r), r["policy"]))
                mb = fmt(t["cellular_bytes_per_day"] * 1e-6)
                if q["policy"] == t["policy"]:
                    out.append(f"- No configuration without oracles that is at least as fresh as {p('periodic:1h')} (mean age ≤ "
                               f"{fmt(a(t))} s) uses less cellular data than its {mb} MB/day.")
                else:
                    out.append(f"- At least as fresh as {p('periodic:1h')} (mean age ≤ {fmt(a(t))} s), the configuration without "
                               f"oracles with the least cellular data is {p(q['policy'])}: {fmt(q['cellular_bytes_per_day'] * 1e-6)} "
                               f"MB/day against {mb}.")
        return out


    def interpret(dataset):
        print("\n".join(interpretation(dataset)))
    """#
}
