@testable import FetchBenchmark
import FetchSupport
import Foundation
import Testing

@testable import FetchSimulation

private let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
  .deletingLastPathComponent().path

/// Every declared metric (``Metric/all``) is wired everywhere its
/// declaration says, so a declaration cannot be half-wired: each result
/// column is a declared figure or one of its file's own few, each pooled
/// file holds the figure the metric's pooling gives, and the units of
/// `docs/outputs.md` and the Python loader are the table's.
@Suite("Declared metrics")
struct MetricDeclarationTests {
  static let days = 2.0

  /// The columns of each file that are no declared metric's figure.
  static let own: [(file: String, header: [String], columns: Set<String>)] = [
    ("summary.csv", SummaryColumn.allCases.map(\.rawValue), ["user", "app", "policy"]),
    ("devices.csv", DeviceColumn.allCases.map(\.rawValue), ["user", "policy", "apps", "foreground_bytes_per_day"]),
    ("pooled.csv", PolicyColumn.allCases.map(\.rawValue), ["policy", "pairs"]),
    (
      "devices_pooled.csv", DevicePoolColumn.allCases.map(\.rawValue),
      ["policy", "devices", "foreground_bytes_per_day", "device_mean_wait_s", "device_mean_wait_s_lo", "device_mean_wait_s_hi", "waits"]
    ),
  ]

  /// Three apps of one device, each stored metric a distinct value per app
  /// (counts whole, shares of the app's opens); one app without opens (it
  /// weighs nothing in an opens-weighted mean).
  static func replays(scale: Double = 1) -> [AppReplay] {
    [3, 0, 5].enumerated().map { i, opens in
      var s = AppSummary()
      for m in Metric.all where m.isStored {
        let x = scale * (Double(m.index + 1) * 1_234.5 + Double(i) * 17.25)
        m.set(&s, m.pooling == .opensShare ? (opens > 0 ? Double(i + 1) / Double(opens + 2) : .nan) : x.rounded())
      }
      (s.days, s.opens) = (days, opens)
      return AppReplay(summary: s, opens: [], fetches: [], staleAges: [], freshOpens: 0)
    }
  }

  /// What `m` pools to over `apps`, computed here: the sum, the mean
  /// weighted by opens, the share of the opens; a derived metric from
  /// these; nil for the figures pooled from samples or not at all.
  static func pooled(_ m: Metric, _ apps: [AppSummary]) -> Double? {
    let opens = apps.reduce(0.0) { $0 + Double($1.opens) }
    switch m.pooling {
    case .sum where m.isStored: return apps.reduce(0) { $0 + m.value($1) }
    case .opensWeighted:
      return apps.filter { $0.opens > 0 }.reduce(0) { $0 + m.value($1) * Double($1.opens) } / opens
    case .opensShare:
      return apps.filter { $0.opens > 0 }.reduce(0) { $0 + (m.value($1) * Double($1.opens)).rounded() } / opens
    case .sum, .recomputed:
      guard case .derived(let f) = m.source else { return nil }
      return f { pooled($0, apps) ?? .nan }
    case .mean, .quantile, .none: return nil
    }
  }

  /// `column`'s value in a one-row CSV (`header`, `record`) as a number.
  static func number(_ column: String, header: [String], record: String) throws -> Double {
    let fields = record.trimmingCharacters(in: .newlines).split(separator: ",", omittingEmptySubsequences: false)
    let i = try #require(header.firstIndex(of: column), "\(column) missing")
    return try #require(Double(String(fields[i])), "\(column): \(fields[i])")
  }

  /// Within half a step of the column's last decimal.
  static func close(_ got: Double, _ want: Double, decimals: Int?) -> Bool {
    abs(got - want) <= 0.5 * pow(10, -Double(decimals ?? 0)) + 1e-12 * abs(want)
  }

  @Test("each declaration is well formed: a unique snake_case name ending in its unit, a meaning, its own property")
  func declarations() {
    let all = Metric.all
    #expect(Set(all.map(\.name)).count == all.count)
    var properties: Set<AnyKeyPath> = []
    for (i, m) in all.enumerated() {
      #expect(m.index == i)
      #expect(m.name.allSatisfy { $0.isLowercase || $0 == "_" || $0.isNumber }, "\(m.name)")
      let suffix: [Metric.Unit: String] = [.joules: "_j", .bytes: "_bytes", .seconds: "_s", .ratio: "_ratio", .days: "days"]
      if let s = suffix[m.unit] { #expect(m.name.hasSuffix(s), "\(m.name): unit \(m.unit.rawValue) not in the name") }
      #expect(!m.help.isEmpty, "\(m.name)")
      #expect(!m.perDay || m.pooling == .sum, "\(m.name): only a sum is per day")
      #expect(!m.recorded || m.isStored, "\(m.name): a record keeps stored figures")
      switch m.source {
      case .value(let p): #expect(properties.insert(p).inserted, "\(m.name): a property charged twice")
      case .count(let p): #expect(properties.insert(p).inserted, "\(m.name): a property charged twice")
      case .derived: break
      }
    }
  }

  @Test("each column of summary.csv, devices.csv, pooled.csv and devices_pooled.csv is a declared figure or one of the file's own")
  func columns() {
    for (file, header, own) in Self.own {
      #expect(Set(header).count == header.count, "\(file): a column twice")
      for c in header {
        let f = MetricFigure(column: c)
        #expect((f == nil) == own.contains(c), "\(file): \(c)")
        if let f { #expect(f.column == c, "\(file): \(c) reads back as \(f.column)") }
        // A per-day figure has its interval in devices_pooled.csv exactly when declared so.
        if file == "devices_pooled.csv", let f, f.kind != .value, f.bound == .none {
          #expect([c + "_lo", c + "_hi"].allSatisfy(header.contains) == f.metric.interval, "\(file): interval of \(c)")
        }
      }
      // The trailing metrics follow the listed columns, in table order.
      let trailing = header.compactMap { MetricFigure(column: $0) }.filter { $0.metric.trailing && $0.kind != .batteryPct }
        .map(\.metric.name)
      let names = Metric.trailing.filter { file == "summary.csv" || $0.pooling != .none }.map(\.name)
      #expect(Array(Set(trailing)).sorted() == names.sorted(), "\(file)")
      #expect(header.suffix(trailing.count).allSatisfy { MetricFigure(column: $0)?.metric.trailing == true }, "\(file)")
    }
    for m in Metric.recorded { #expect(AppSummary.recordFields.contains { $0.name == m.name && $0.unit == m.unit.rawValue }) }
  }

  @Test("each figure pools as declared: apps into the device, devices and pairs into the pooled files, through the part records")
  func pooling() throws {
    let apps = Self.replays(), others = Self.replays(scale: 3)
    let device = DeviceSummary(apps), other = DeviceSummary(others)
    let deviceRow = deviceRecord(user: "u", policy: "p", device, capacityJ: 1000)
    var policy = PolicyAggregate(policy: "p"), pool = DeviceAggregate(policy: "p")
    for r in apps + others { policy.add(r) }
    // Each device through its part record, as an experiment pools it.
    for (d, a) in [(device, apps), (other, others)] {
      let sample = DeviceSample(d, apps: a), fields = DeviceSample.recordFields
      let positions = try #require(fields.positions(of: fields.map(\.name)))
      pool.add(try #require(fields.record(DeviceSample(), positions: positions, values: fields.values(of: sample))))
    }
    let rows = [
      ("summary.csv", SummaryColumn.allCases.map { $0.value(("u", "a", "p", apps[2].summary, 1000)) }.joined(separator: ",")),
      ("devices.csv", deviceRow), ("pooled.csv", pooledRecord(policy, capacityJ: 1000)),
      ("devices_pooled.csv", devicePoolRecord(pool, capacityJ: 1000)),
    ]
    let summaries = apps.map(\.summary), otherSummaries = others.map(\.summary)
    var checked = 0
    for ((file, header, _), (_, row)) in zip(Self.own, rows) {
      for c in header {
        guard let f = MetricFigure(column: c), f.bound == .none else { continue }
        let m = f.metric
        // The figure over a record of `n` pairs' worth of days.
        func figure(_ x: Double, days: Double) -> Double {
          switch f.kind {
          case .value: m.name == "days" ? days : x
          case .perDay: x / days
          case .batteryPct: x / days / 1000 * 100
          }
        }
        let want: Double?
        switch file {
        case "summary.csv": want = figure(m.isStored ? m.value(summaries[2]) : Self.pooled(m, [summaries[2]]) ?? .nan, days: Self.days)
        case "devices.csv": want = Self.pooled(m, summaries).map { figure($0, days: Self.days) }
        case "pooled.csv": want = Self.pooled(m, summaries + otherSummaries).map { figure($0, days: 6 * Self.days) }
        default:
          // Per-day figures: the mean over the devices; totals: the sum over them.
          let each = [summaries, otherSummaries].compactMap { Self.pooled(m, $0) }
          want =
            each.count < 2 ? nil
            : f.kind == .value ? Self.pooled(m, summaries + otherSummaries).map { figure($0, days: 2 * Self.days) }
            : (figure(each[0], days: Self.days) + figure(each[1], days: Self.days)) / 2
        }
        guard let want else { continue }
        let got = try Self.number(c, header: header, record: row)
        #expect(Self.close(got, want, decimals: f.decimals), "\(file) \(c): \(got) vs \(want)")
        checked += 1
      }
    }
    #expect(checked > 60)
  }

  /// The unit `docs/outputs.md` gives a figure.
  static func docsUnit(_ f: MetricFigure) -> String {
    ["%/day": "% of capacity/day", "ratio": "ratio (0–1)"][f.unit] ?? f.unit
  }

  /// The unit the Python loader gives a figure.
  static func pythonUnit(_ f: MetricFigure) -> String {
    ["bytes": "B", "bytes/day": "B/day", "days": "day", "ratio": "fraction (0-1)"][f.unit] ?? f.unit
  }

  @Test("docs/outputs.md and python/fetchlab/load.py give every figure column the table's unit")
  func unitsInDocsAndPython() throws {
    let docs = try String(contentsOfFile: packageRoot + "/docs/outputs.md", encoding: .utf8)
    let python = try String(contentsOfFile: packageRoot + "/python/fetchlab/load.py", encoding: .utf8)
    // outputs.md: the units table (`| unit | columns |`) and the list of counts.
    var docsRows: [String: String] = [:]
    for line in docs.split(separator: "\n") where line.hasPrefix("| ") && line.contains("`") {
      let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
      guard cells.count == 2 else { continue }
      docsRows[cells[0]] = cells[1]
    }
    let counts = try #require(docs.range(of: "Counts (").map { String(docs[$0.upperBound...].prefix { $0 != ")" }) })
    // load.py: UNITS's `"column": unit` entries.
    let units = try #require(python.range(of: "UNITS = {").map { String(python[$0.upperBound...].prefix { $0 != "}" }) })
    let constants = ["_COUNT": "count", "_TEXT": "text", "_FLAG": "0/1 flag"]
    var pythonUnits: [String: String] = [:]
    for match in units.matches(of: /"([a-z0-9_]+)": *(?:"([^"]*)"|(_[A-Z]+))/) {
      pythonUnits[String(match.1)] = match.2.map(String.init) ?? constants[String(match.3 ?? "")]
    }
    let scored = ["energy_j_per_day", "battery_pct_per_day", "cellular_bytes_per_day", "fetches_per_day"]
    for c in Set(Self.own.flatMap(\.header) + scored) {
      guard let f = MetricFigure(column: c), f.bound == .none else { continue }
      if f.unit == "count" {
        #expect(counts.contains("`\(c)`"), "outputs.md: \(c) not among the counts")
      } else {
        #expect(docsRows[Self.docsUnit(f)]?.contains("`\(c)`") == true, "outputs.md: \(c) not in the row of \(Self.docsUnit(f))")
      }
      #expect(pythonUnits[c] == Self.pythonUnit(f), "load.py: \(c) has \(pythonUnits[c] ?? "no unit"), not \(Self.pythonUnit(f))")
    }
  }

  // metric-example:begin
  static let chargingShare = Metric(
    "charging_energy_ratio", .ratio, "share of energy_j drawn while charging",
    .derived { figure in figure(.energy) > 0 ? figure(.chargingEnergy) / figure(.energy) : .nan },
    pooling: .recomputed, trailing: true)
  // metric-example:end

  @Test("the ratio metric of docs/architecture.md compiles, pools as a ratio of sums and writes as a ratio")
  func addingAMetric() throws {
    let m = Self.chargingShare
    var a = AppSummary(), b = AppSummary()
    (a.energyJ, a.chargingEnergyJ, b.energyJ, b.chargingEnergyJ) = (10, 5, 30, 0)
    #expect(m.value(a) == 0.5 && m.value(b) == 0 && m.value(AppSummary()).isNaN)
    // Over both: Σ charging / Σ energy = 5 / 40, not the mean of the shares.
    var sums = MetricValues()
    for s in [a, b] { sums.add(s) }
    #expect(m.value(sums.pooled()) == 0.125)
    #expect(MetricFigure(m, .value).text(0.125) == "0.125" && MetricFigure(m, .value).text(.nan) == "")
    let architecture = try String(contentsOfFile: packageRoot + "/docs/architecture.md", encoding: .utf8)
    let test = try String(contentsOfFile: #filePath, encoding: .utf8)
    func between(_ s: String, _ a: String, _ b: String) throws -> String {
      let r = try #require(s.range(of: a))
      let e = try #require(s.range(of: b, range: r.upperBound..<s.endIndex))
      return String(s[r.upperBound..<e.lowerBound])
    }
    let shown = try between(architecture, "<!-- metric-example:begin -->\n```swift\n", "```\n<!-- metric-example:end -->")
    let code = try between(test, "// metric-example:begin\n  static let chargingShare = ", "  // metric-example:end\n")
    #expect(shown == code.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasPrefix("  ") ? String($0.dropFirst(2)) : String($0) }.joined(separator: "\n"))
  }
}
