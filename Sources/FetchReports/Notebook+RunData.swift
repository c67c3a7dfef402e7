import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation

/// The run files a notebook is made from.
extension Notebook {
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
      frontier = try RunReport.readFrontier(path: runDir + "/pareto.csv", cost: options.basis.scoreMetric)
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
      perUser = fm.fileExists(atPath: summaryPath) ? try Self.readPerUser(path: summaryPath, energy: options.basis.column) : nil
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
    /// replications of `mean_age_s` and of the `energy` column (the basis's).
    static func readPerUser(path: String, energy: String) throws -> [String: [(policy: String, age: [Double], energy: [Double])]] {
      var cols = RunReport.Columns()
      var order: [String: [String]] = [:]
      var users: [String: [String: [String]]] = [:]
      var acc: [String: [String: [String: (Double, Int, Double, Int)]]] = [:]
      try StrictCSV.read(
        path: path,
        header: {
          cols = try RunReport.Columns($0, file: path, required: ["user", "policy", "mean_age_s", energy])
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
          if let v = try RunReport.number(f[c[energy]!], file: path, line: line, column: energy) {
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
}
