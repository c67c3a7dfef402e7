import FetchBenchmark
import FetchSupport
import FetchTraces
import Foundation

/// `fetchlab report RUN_DIR`: SVG charts, one self-contained `report.html`
/// and a `report.md` from the files of a run directory.
///
/// Reads `policies.csv`, `pareto.csv` and `manifest.json` (required) and
/// `opens.csv`, `fetches.csv` (optional: absent after `--no-event-files`).
/// Writes `plots/*.svg`, `report.html` and `report.md`, each atomically.
/// The output depends only on the input files: the same run gives the same
/// bytes.
public enum RunReport {
  /// A mean with its 95 % CI ends; nil where the CSV cell is empty.
  package struct Estimate: Sendable, Equatable {
    package var mean: Double?
    package var low: Double?
    package var high: Double?
  }

  /// One row of `policies.csv`.
  package struct PolicyRow: Sendable, Equatable {
    package var dataset: String
    package var policy: String
    package var family: String
    package var users: Int
    /// Every metric of ``ScoreMetric`` by raw value.
    package var estimates: [String: Estimate]
    /// The energy it ranks on: ``energy`` is this basis's.
    package var basis = EnergyBasis.standard
    /// Energy per app-day on ``basis``.
    package var energy: Estimate { estimates[basis.column] ?? Estimate() }
    package var meanAge: Estimate { estimates[ScoreMetric.mean_age_s.rawValue] ?? Estimate() }
  }

  /// A configuration on the (mean age, J/day) Pareto frontier.
  package struct FrontierPoint: Sendable, Equatable {
    package var dataset: String
    package var policy: String
    package var cost: Double
    package var staleness: Double
  }

  /// Per dataset: the ages at open per policy and opens/fetches per UTC hour.
  package struct Events: Sendable {
    package var datasets: [String] = []
    package var policies: [String: [String]] = [:]  // dataset -> policies in order
    package var ages: [String: [String: [Double]]] = [:]
    package var opensByHour: [String: [Int]] = [:]
    package var fetchesByHour: [String: [String: [Int]]] = [:]
  }

  /// What ``write(runDir:)`` did.
  public struct Output: Sendable {
    /// Paths written, in order.
    public var files: [String] = []
    /// Charts skipped and why (for stderr).
    public var notes: [String] = []
  }

  // MARK: Reading

  /// Maps required (and optional) column names to indices; a missing
  /// required column is an error at line 1.
  struct Columns {
    var index: [String: Int] = [:]
    init() {}
    init(_ header: [String], file: String, required: [String]) throws {
      for (i, h) in header.enumerated() { index[h] = i }
      for r in required where index[r] == nil {
        throw TraceFormatError(file: file, line: 1, field: r, message: "missing column '\(r)'")
      }
    }
  }

  /// A number cell: nil when empty, an error when not a finite number.
  static func number(_ s: String, file: String, line: Int, column: String, optional: Bool = true) throws -> Double? {
    if s.isEmpty {
      if optional { return nil }
      throw TraceFormatError(file: file, line: line, field: column, message: "empty value; expected a number")
    }
    guard let v = DecimalText.finite(s) else {
      throw TraceFormatError(file: file, line: line, field: column, message: "not a finite number: '\(s)'")
    }
    return v
  }

  /// Reads `policies.csv` (columns: ``Scoring/policiesHeader``), each row
  /// ranking on energy basis `basis`.
  package static func readPolicies(path: String, basis: EnergyBasis = .standard) throws -> [PolicyRow] {
    let traceName = Scoring.traceDataset(runDir: (path as NSString).deletingLastPathComponent)
    var cols = Columns()
    var rows: [PolicyRow] = []
    let metrics = ScoreMetric.allCases.map(\.rawValue)
    let required = ["policy", "users"] + metrics.flatMap { [$0, $0 + "_lo", $0 + "_hi"] }
    try StrictCSV.read(
      path: path, header: { cols = try Columns($0, file: path, required: required) },
      record: { line, f in
        let c = cols.index
        let policy = f[c["policy"]!]
        guard !policy.isEmpty else {
          throw TraceFormatError(file: path, line: line, field: "policy", message: "empty policy")
        }
        guard let users = Int(f[c["users"]!]), users >= 0 else {
          throw TraceFormatError(file: path, line: line, field: "users", message: "not a count: '\(f[c["users"]!])'")
        }
        var e: [String: Estimate] = [:]
        for m in metrics {
          e[m] = Estimate(
            mean: try number(f[c[m]!], file: path, line: line, column: m),
            low: try number(f[c[m + "_lo"]!], file: path, line: line, column: m + "_lo"),
            high: try number(f[c[m + "_hi"]!], file: path, line: line, column: m + "_hi"))
        }
        rows.append(
          PolicyRow(
            dataset: c["dataset"].map { f[$0] == traceName ? "" : f[$0] } ?? "", policy: policy,
            family: c["family"].map { f[$0] }.flatMap { $0.isEmpty ? nil : $0 } ?? Scoring.family(of: policy),
            users: users, estimates: e, basis: basis))
      })
    return rows
  }

  /// The energy basis `runDir/manifest.json` records (`energy_basis`), or
  /// nil without one.
  package static func recordedBasis(runDir: String) -> EnergyBasis? {
    guard let data = FileManager.default.contents(atPath: runDir + "/manifest.json"),
      let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any], let b = json["energy_basis"] as? String
    else { return nil }
    return EnergyBasis(rawValue: b)
  }

  /// Reads one frontier from `pareto.csv`: (`staleness`, `cost`), by
  /// default (mean_age_s, battery_energy_j_per_day).
  package static func readFrontier(
    path: String, staleness: ScoreMetric = .mean_age_s, cost: ScoreMetric = EnergyBasis.standard.scoreMetric
  ) throws -> [FrontierPoint] {
    let traceName = Scoring.traceDataset(runDir: (path as NSString).deletingLastPathComponent)
    var cols = Columns()
    var out: [FrontierPoint] = []
    try StrictCSV.read(
      path: path,
      header: { cols = try Columns($0, file: path, required: ParetoColumn.allCases.map(\.rawValue)) },
      record: { line, f in
        let c = cols.index
        guard f[c["staleness_metric"]!] == staleness.rawValue, f[c["cost_metric"]!] == cost.rawValue else { return }
        let on = f[c["on_frontier"]!]
        guard on == "0" || on == "1" else {
          throw TraceFormatError(file: path, line: line, field: "on_frontier", message: "expected 0 or 1, found '\(on)'")
        }
        let cost = try number(f[c["cost"]!], file: path, line: line, column: "cost")
        let stale = try number(f[c["staleness"]!], file: path, line: line, column: "staleness")
        guard on == "1", let cost, let stale else { return }
        out.append(FrontierPoint(dataset: f[c["dataset"]!] == traceName ? "" : f[c["dataset"]!], policy: f[c["policy"]!], cost: cost, staleness: stale))
      })
    return out
  }

  /// The hour of day (0–23) of Unix time `t`: local in `clock`'s zone,
  /// UTC without one.
  static func hour(_ t: Double, _ clock: inout LocalClock?) -> Int {
    if clock != nil { return min(23, Int(clock!.hourOfDay(t))) }
    var s = t.truncatingRemainder(dividingBy: 86_400)
    if s < 0 { s += 86_400 }
    return min(23, Int(s / 3_600))
  }

  /// Reads `opens.csv` and, when `fetchesPath` is given, `fetches.csv`.
  /// - Complexity: O(rows); keeps every age at open in memory (8 B each).
  ///   - timeZones: each user's time zone per dataset; hours are local for
  ///     the users it names, UTC for the others.
  package static func readEvents(
    opensPath: String, fetchesPath: String?, timeZones: [String: [String: TraceTimeZone]] = [:]
  ) throws -> Events {
    var ev = Events()
    // One clock per (dataset, user), so each keeps its DST cache.
    var clocks: [String: [String: LocalClock]] = [:]
    func clock(_ d: String, _ user: String?) -> LocalClock? {
      guard let user, let tz = timeZones[d]?[user] else { return nil }
      if let c = clocks[d]?[user] { return c }
      let c = LocalClock(tz)
      clocks[d, default: [:]][user] = c
      return c
    }
    func localHour(_ t: Double, _ d: String, _ user: String?) -> Int {
      var c = clock(d, user)
      let h = hour(t, &c)
      if let user, let c { clocks[d]![user] = c }
      return h
    }
    func note(_ d: String, _ p: String) {
      if ev.policies[d] == nil {
        ev.datasets.append(d)
        ev.policies[d] = []
        ev.opensByHour[d] = Array(repeating: 0, count: 24)
      }
      if ev.ages[d, default: [:]][p] == nil {
        ev.policies[d]!.append(p)
        ev.ages[d, default: [:]][p] = []
        ev.fetchesByHour[d, default: [:]][p] = Array(repeating: 0, count: 24)
      }
    }
    var cols = Columns()
    try StrictCSV.read(
      path: opensPath, header: { cols = try Columns($0, file: opensPath, required: ["policy", "time", "age_s"]) },
      record: { line, f in
        let c = cols.index
        let d = c["dataset"].map { f[$0] } ?? "", p = f[c["policy"]!]
        note(d, p)
        let t = try number(f[c["time"]!], file: opensPath, line: line, column: "time", optional: false) ?? 0
        let age = try number(f[c["age_s"]!], file: opensPath, line: line, column: "age_s", optional: false) ?? 0
        guard age >= 0 else {
          throw TraceFormatError(file: opensPath, line: line, field: "age_s", message: "negative age: \(f[c["age_s"]!])")
        }
        ev.ages[d]![p]!.append(age)
        if ev.policies[d]!.first == p { ev.opensByHour[d]![localHour(t, d, c["user"].map { f[$0] })] += 1 }
      })
    if let fetchesPath {
      try StrictCSV.read(
        path: fetchesPath, header: { cols = try Columns($0, file: fetchesPath, required: ["policy", "time"]) },
        record: { line, f in
          let c = cols.index
          let d = c["dataset"].map { f[$0] } ?? "", p = f[c["policy"]!]
          note(d, p)
          let t = try number(f[c["time"]!], file: fetchesPath, line: line, column: "time", optional: false) ?? 0
          ev.fetchesByHour[d]![p]![localHour(t, d, c["user"].map { f[$0] })] += 1
        })
    }
    return ev
  }

  /// The manifest text, checked to be JSON; pretty-printed with sorted keys
  /// unless it already spans several lines.
  static func readManifest(path: String) throws -> String {
    let data: Data
    do {
      data = try Data(contentsOf: URL(fileURLWithPath: path))
    } catch {
      throw TraceFormatError(file: path, line: 0, field: "-", message: "cannot read file: \(FileError.reason(error))")
    }
    let obj: Any
    do {
      obj = try JSONSerialization.jsonObject(with: data)
    } catch {
      throw TraceFormatError(file: path, line: 0, field: "-", message: "not valid JSON")
    }
    let text = String(decoding: data, as: UTF8.self)
    if text.trimmingCharacters(in: .whitespacesAndNewlines).contains("\n") { return text }
    return try JSONText.pretty(obj)
  }

  // MARK: Charts

  /// A file-name-safe form of a dataset name (empty for the single dataset).
  static func slug(_ s: String) -> String {
    String(s.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") ? $0 : "-" })
  }

  /// Most datasets a report draws charts for (a world grid of 10,000
  /// points would otherwise draw 40,000 charts into one page): the first
  /// ones in the run's order; the tables cover the first
  /// ``maxTabledDatasets``, `policies.csv` every dataset.
  package static let maxChartedDatasets = 24

  /// A chart and its file name under `plots/`.
  package struct Chart: Sendable {
    package var file: String
    package var plot: SVGPlot
  }

  /// Every chart of the run in `runDir` that is an ``SVGPlot``, in report
  /// order, and notes on the charts that were skipped: staleness vs energy
  /// per dataset, the age CDF and hour-of-day charts (with event files),
  /// and the calibration chart when `calibration.csv` (a
  /// `fetchlab fit --report` output) is in `runDir` or `runDir/fit`. A
  /// directory with only a fit report gives the calibration chart alone.
  /// The timeline is not an ``SVGPlot``: see ``figures(runDir:options:)``.
  /// `policies` (nil: all) chooses the configurations the run's charts show
  /// (``PolicySelectionError`` names the valid ones); the returned rows are all.
  package static func charts(
    runDir: String, policies: [String]? = nil, readsTrace: Bool = true, basis: EnergyBasis = .standard
  ) throws
    -> (charts: [Chart], notes: [String], policies: [PolicyRow])
  {
    let fm = FileManager.default
    let calibration = calibrationDirectory(runDir: runDir)
    if !fm.fileExists(atPath: runDir + "/policies.csv"), let c = calibration {
      return ([try calibrationChart(fitDir: c, runDir: runDir)], [], [])
    }
    var (charts, notes, rows) = try runCharts(runDir: runDir, policies: policies, readsTrace: readsTrace, basis: basis)
    if let c = calibration { charts.append(try calibrationChart(fitDir: c, runDir: runDir)) }
    return (charts, notes, rows)
  }

  /// The charts of a run directory (`policies.csv`, `pareto.csv`, event files).
  static func runCharts(runDir: String, policies: [String]?, readsTrace: Bool, basis: EnergyBasis) throws
    -> (charts: [Chart], notes: [String], policies: [PolicyRow])
  {
    let allRows = try readPolicies(path: runDir + "/policies.csv", basis: basis)
    let shown = try selectPolicies(policies, from: allRows, file: runDir + "/policies.csv")
    let rows = allRows.filter { shown.contains($0.policy) }
    let frontier = try readFrontier(path: runDir + "/pareto.csv", cost: basis.scoreMetric)
    var datasets: [String] = [], seen = Set<String>()
    for r in rows where seen.insert(r.dataset).inserted { datasets.append(r.dataset) }
    var used = Set<String>()
    var suffixes: [String: String] = [:]
    for d in datasets {
      var s = d.isEmpty ? "" : "-" + slug(d)
      var k = 2
      while used.contains(s) {
        s = (d.isEmpty ? "" : "-" + slug(d)) + "-\(k)"
        k += 1
      }
      used.insert(s)
      suffixes[d] = s
    }
    // A large grid gets charts for its first datasets only; the tables cover all.
    var notes: [String] = []
    if datasets.count > maxChartedDatasets {
      notes.append(
        "\(datasets.count) datasets: charts for the first \(maxChartedDatasets) only (policies.csv and robustness.csv "
          + "cover all); a report draws at most \(maxChartedDatasets) datasets' charts")
      datasets = Array(datasets.prefix(maxChartedDatasets))
    }
    let charted = Set(datasets)
    let byDataset = Dictionary(grouping: rows, by: \.dataset)
    var charts: [Chart] = []
    // Asked-for policies are all drawn; by default at most SVGPlot.seriesLimit families.
    let limit = policies == nil ? SVGPlot.seriesLimit : nil
    for d in datasets {
      let mine = byDataset[d] ?? []
      charts.append(
        Chart(
          file: "staleness-energy\(suffixes[d]!).svg",
          plot: .stalenessEnergy(
            dataset: d, rows: mine, frontier: frontier.filter { $0.dataset == d }, limit: limit, basis: basis)))
    }
    // The same trade-off seen through the share of fresh opens, and against
    // cellular data instead of energy: file name, title, axes and frontier.
    let tradeoffs: [(file: String, title: String, x: SVGPlot.TradeoffAxis, y: SVGPlot.TradeoffAxis, frontier: [FrontierPoint])] = [
      ("fresh-energy", "Fresh opens vs energy", .energy(basis), .fresh,
       try readFrontier(path: runDir + "/pareto.csv", staleness: .fresh_ratio, cost: basis.scoreMetric)),
      ("staleness-cellular", "Staleness vs cellular data", .cellular, .meanAge,
       try readFrontier(path: runDir + "/pareto.csv", cost: .cellular_bytes_per_day)),
    ]
    for d in datasets {
      let mine = byDataset[d] ?? []
      for t in tradeoffs {
        charts.append(
          Chart(
            file: t.file + "\(suffixes[d]!).svg",
            plot: .tradeoff(
              title: t.title, dataset: d, rows: mine, x: t.x, y: t.y, frontier: t.frontier.filter { $0.dataset == d },
              limit: limit)))
      }
    }
    // Large content: delivery delay against energy and cellular data, and
    // the transfers' data per network (SVGPlot+Transfers.swift), only for
    // runs whose transfers moved bytes.
    if FileManager.default.fileExists(atPath: runDir + "/pooled.csv") {
      let deliveries = try readDeliveries(path: runDir + "/pooled.csv")
      for d in datasets {
        let mine = deliveries.filter { $0.dataset == d && shown.contains($0.policy) }
        guard !mine.isEmpty else { continue }
        charts.append(Chart(file: "delivery-energy\(suffixes[d]!).svg", plot: .deliveryTradeoff(dataset: d, rows: mine, cellular: false)))
        charts.append(Chart(file: "delivery-cellular\(suffixes[d]!).svg", plot: .deliveryTradeoff(dataset: d, rows: mine, cellular: true)))
        charts.append(Chart(file: "transfer-bytes\(suffixes[d]!).svg", plot: .transferBytes(dataset: d, rows: mine)))
      }
    }
    // How users fare one by one: the per-user distribution of the mean
    // age for the headline's policies (summary.csv, so without event files too).
    if FileManager.default.fileExists(atPath: runDir + "/summary.csv") {
      let table = try SummaryTable(path: runDir + "/summary.csv")
      for d in datasets {
        let mine = byDataset[d] ?? []
        let ps = headlinePolicies(mine)
        let means = Dictionary(uniqueKeysWithValues: ps.compactMap { p in
          table.values(dataset: d, policy: p).map { (p, $0[.mean_age_s]) }
        })
        guard !means.isEmpty else { continue }
        charts.append(
          Chart(file: "user-age-cdf\(suffixes[d]!).svg", plot: .userAgeCDF(dataset: d, policies: ps, userMeans: means)))
      }
    }
    let events = try eventCharts(
      runDir: runDir, suffixes: suffixes, rows: rows, shown: policies == nil ? nil : shown, readsTrace: readsTrace,
      charted: seen.count > maxChartedDatasets ? charted : nil)
    return (charts + events.charts, notes + events.notes, allRows)
  }

  // MARK: Tables

  /// `x` with 3 significant digits (integers of 4+ digits in full), locale-free.
  static func sig(_ x: Double?) -> String {
    guard let x, x.isFinite else { return "–" }
    if x == 0 { return "0" }
    let d = max(0, 2 - Int(log10(abs(x)).rounded(.down)))
    return CSV.number(x, decimals: min(d, 9))
  }

  /// The summary columns: header, unit, metric and scale factor.
  /// Scale 0 marks a duration in s, shown in one unit per table column
  /// (s, min, h or days; ``durationUnit(_:)``), named in its header.
  static let tableColumns: [(title: String, metric: ScoreMetric, scale: Double)] = [
    ("battery energy (J per app-day)", .battery_energy_j_per_day, 1),
    ("total energy (J per app-day)", .energy_j_per_day, 1),
    ("battery (% per app-day)", .battery_pct_per_day, 1),
    ("fetches per app-day", .fetches_per_day, 1),
    ("cellular (MB per app-day)", .cellular_bytes_per_day, 1e-6),
    ("user-mean age", .mean_age_s, 0),
    ("user-mean p90 age", .p90_age_s, 0),
    ("user-mean fresh (%)", .fresh_ratio, 100),
  ]

  /// The policy table of some rows: header and cells, `mean [lo, hi]` per
  /// column, a duration column in the one unit its header names.
  static func policyTable(_ rows: [PolicyRow]) -> (header: [String], rows: [[String]]) {
    let units = tableColumns.map { c in
      c.scale == 0 ? durationUnit(rows.compactMap { $0.estimates[c.metric.rawValue]?.mean }) : (c.scale, "")
    }
    let header = ["policy", "users"] + zip(tableColumns, units).map { c, u in
      c.scale == 0 ? c.title + " (" + u.1 + ")" : c.title
    }
    let body = rows.map { r in
      [r.policy, String(r.users)]
        + zip(tableColumns, units).map { c, u in
          let e = r.estimates[c.metric.rawValue] ?? Estimate()
          return c.scale == 0 ? ci(e, scale: 1 / u.0, unit: "") : ci(e, scale: c.scale, unit: "")
        }
    }
    return (header, body)
  }

  /// The rows of one dataset in table order: by mean energy (missing last),
  /// then mean age, then name.
  static func tableOrder(_ rows: [PolicyRow]) -> [PolicyRow] {
    rows.sorted {
      ($0.energy.mean ?? .infinity, $0.meanAge.mean ?? .infinity, $0.policy)
        < ($1.energy.mean ?? .infinity, $1.meanAge.mean ?? .infinity, $1.policy)
    }
  }

  /// The headline's note, naming the energy it ranks on.
  static func headlineNote(_ basis: EnergyBasis) -> String {
    "Real policies only (oracles know the future); user means (each user's mean, then the mean over users) with the "
      + "95 % bootstrap CI [low, high]. Each line: the lowest user-mean age at open among the configurations whose mean "
      + "\(basis.label) (energy_basis=\(basis.rawValue)) is within the budget."
  }

  static let fitNote =
    "Calibration of the open predictors scored by fetchlab fit --report on the held-out test windows; "
    + "scores per predictor in evaluation_overall.csv, per (user, app) in evaluation.csv."

  /// The policy table's note, naming the energy it is sorted by.
  static func tableNote(_ basis: EnergyBasis) -> String {
    "Mean over users with the 95 % percentile bootstrap CI [low, high] (users resampled); from policies.csv. "
      + "Sorted by \(basis.label)."
  }

  // MARK: Writing

  /// A rendered chart: what `report.html` inlines and `plots/` holds.
  package struct Figure: Sendable {
    /// The chart's title (the SVG's `<title>`).
    package var title: String
    /// File name under `plots/`.
    package var file: String
    /// The standalone SVG document.
    package var svg: String
  }

  /// What ``write(runDir:options:)`` draws beyond the run's own files.
  package struct Options: Sendable {
    /// The one-user-day timeline; nil: none. The default request picks a
    /// user, day and policies itself and is skipped (with a note) when the
    /// run's trace cannot be found or replayed; an explicit one fails.
    package var timeline: TimelineRequest?

    /// The policy configurations the charts show (nil: all); the tables
    /// keep every configuration.
    package var policies: [String]?

    /// Whether the report may read the run's trace (for the timeline and
    /// the users' time zones); false: it reads only the result directory,
    /// and hour-of-day charts are in UTC.
    package var readsTrace: Bool

    /// Most bytes of `report.html` and `report.md` (``maxPageBytes``;
    /// tests give less).
    package var pageBytes: Int = RunReport.maxPageBytes

    /// The energy the frontier, headline, budgets and tables rank on.
    package var basis: EnergyBasis

    package init(
      timeline: TimelineRequest? = TimelineRequest(), policies: [String]? = nil, readsTrace: Bool = true,
      basis: EnergyBasis = .standard
    ) {
      self.timeline = timeline
      self.policies = policies
      self.readsTrace = readsTrace
      self.basis = basis
    }
  }

  /// Every chart of the report in order, rendered: the ``charts(runDir:)``
  /// and then the timeline (``UserDayTimeline``); notes on skipped charts.
  /// This is the list `report.html` and `report.md` show.
  package static func figures(runDir: String, options: Options = Options()) throws
    -> (figures: [Figure], notes: [String], policies: [PolicyRow])
  {
    var (charts, notes, rows) = try charts(
      runDir: runDir, policies: options.policies, readsTrace: options.readsTrace, basis: options.basis)
    // Experiment runs keep the calibration chart last, after the timeline.
    let calibration = charts.last?.file == "calibration.svg" && !rows.isEmpty ? charts.removeLast() : nil
    var figures = charts.map { Figure(title: $0.plot.title, file: $0.file, svg: $0.plot.render()) }
    if let request = options.timeline, !rows.isEmpty {
      do {
        let t = try UserDayTimeline.build(runDir: runDir, request: request)
        figures.append(Figure(title: t.title, file: "timeline-\(slug(t.user))-\(t.day).svg", svg: t.render()))
      } catch let error as TimelineError where request.isDefault {
        notes.append("timeline skipped: \(error.description)")
      } catch let error as TraceFormatError where request.isDefault {
        notes.append("timeline skipped: \(error.description)")
      }
    }
    if let c = calibration { figures.append(Figure(title: c.plot.title, file: c.file, svg: c.plot.render())) }
    return (figures, notes, rows)
  }

  /// Writes `plots/*.svg`, `report.html` and `report.md` into `runDir`,
  /// with the default timeline (``Options``).
  @discardableResult
  public static func write(runDir: String) throws -> Output {
    try write(runDir: runDir, options: Options())
  }
}
