import ArgumentParser
import FetchModels
import FetchSimulation
import FetchTraces
import Foundation

extension FetchLab {
  struct Predict: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Predict the fetch times of the iOS-like Minimum scheduler for one user and app in a time window.",
      discussion: """
        Uses the habit model saved by 'fetchlab fit' and continues from the end of its training window \
        (the user's last opens before it). With --trace, the user's events in the window (opens, network, \
        battery) are replayed too and the model refits nightly on them; without, the window is assumed \
        quiet (no opens, network.default). Fetch results inside the window follow the world's content \
        model. Times are ISO 8601 (2026-01-12T08:00:00Z, or with an offset) or Unix seconds.
        Example (after 'fetchlab fit --trace datasets/ubiqlog/ubiqlog-opens.csv --out model.json'):
          fetchlab predict --model model.json --user 19_F --app com.whatsapp \\
            --from 2014-01-04T00:00:00Z --to 2014-01-05T00:00:00Z --trace datasets/ubiqlog/ubiqlog-opens.csv
        """)

    @Option(help: "Model file written by 'fetchlab fit'.")
    var model: String

    @Option(help: "User id.")
    var user: String

    @Option(help: "App name.")
    var app: String

    @Option(help: "Start of the window (ISO 8601 or Unix seconds).")
    var from: String

    @Option(help: "End of the window (ISO 8601 or Unix seconds; at most 31 days after --from).")
    var to: String

    @Option(help: "Trace to take the user's events in the window from (optional).")
    var trace: String?

    @Option(help: "Scheduler settings, as for --policy: ios-minimum[:key=value,...] or ios-custom:<interval>.")
    var policy = "ios-minimum"

    @Option(help: "JSON file overriding world-model parameters.")
    var config: String?

    @Option(help: "Seed of the simulated content updates.")
    var seed: UInt64 = 1

    @Flag(help: "Print CSV instead of a table.")
    var csv = false

    @Flag(help: "Print every decision point, not only launches.")
    var all = false

    func validate() throws {
      guard let a = parseTime(from), let b = parseTime(to) else {
        throw ValidationError("--from and --to must be ISO 8601 times (e.g. 2026-01-12T08:00:00Z) or Unix seconds")
      }
      guard b > a else { throw ValidationError("--to must be after --from") }
      guard b - a <= 31 * 86_400 else { throw ValidationError("the window may span at most 31 days") }
      do {
        switch try PolicySpec(parsing: policy) {
        case .iosMinimum, .iosCustom: break
        default: throw ValidationError("--policy must be ios-minimum or ios-custom")
        }
      } catch let e as PolicySpecError { throw ValidationError(e.description) }
    }

    func run() throws {
      let t0 = parseTime(from)!, t1 = parseTime(to)!
      let file = try ModelFile.load(path: model)
      guard let um = file.users.first(where: { $0.user == user }) else {
        throw CommandError("user '\(user)' is not in \(model) (\(file.users.count) users, e.g. \(file.users.prefix(3).map(\.user).joined(separator: ", ")))")
      }
      guard let am = um.apps.first(where: { $0.app == app }) else {
        throw CommandError("app '\(app)' of user '\(user)' is not in \(model); modelled: \(um.apps.map(\.app).joined(separator: ", "))")
      }
      var params: MinimumParameters
      switch try PolicySpec(parsing: policy) {
      case .iosMinimum(let p), .iosCustom(_, let p): params = p
      default: fatalError("checked in validate()")
      }
      var world = WorldParameters()
      if let config { try world.apply(configPath: config) }
      if let b = um.lastBattery, world.initialBatteryPct < 0 { world.initialBatteryPct = b.levelPct }

      // History (what the scheduler has seen) and the window to replay.
      var full = UserTrace(user: user, timeZone: um.timeZone, start: um.splitTime, end: t1)
      var lastApp = am.lastOpen ?? -.infinity, lastAny = um.lastOpenAny ?? -.infinity
      if let trace {
        let reader = try TraceReader(path: trace)
        var found: UserTrace?
        while found == nil, let u = try reader.next() {
          if u.user == user { found = u }
        }
        guard let u = found else { throw CommandError("user '\(user)' is not in \(trace)") }
        full = u
        full.end = min(u.end, t1)
        full.events = u.events.filter { $0.time <= full.end }
      } else {
        params.refitHour = 24  // nothing new to learn from
      }
      let appIndex = full.appIndex(app)
      let start = max(t0, full.start)
      guard start < full.end else { throw CommandError("the window ends before the model's training window does") }
      let (history, window) = full.split(at: start)
      for e in history.events where e.kind == .open {
        lastAny = max(lastAny, e.time)
        if e.app == appIndex { lastApp = max(lastApp, e.time) }
      }
      var p = MinimumPolicy(
        params: params, world: world, habit: am.habit, history: history, app: appIndex, population: file.population,
        lastAppOpen: lastApp, lastAnyOpen: lastAny)
      p.logDecisions = true
      let prepared = PreparedUser(trace: window, world: world)
      let content = ContentTimeline(trace: window, app: appIndex, world: world, seed: seed)
      let r = FetchSimulation.replay(&p, user: prepared, app: appIndex, content: content)
      let shown = p.decisions.filter { all || $0.launched }
      let header = ["time", "launched", "p_open", "p_new", "expected_age_s", "benefit_j", "cost_j", "factor"]
      var rows: [[String]] = []
      for d in shown {
        rows.append([
          isoTime(d.time), d.launched ? "1" : "0", CSV.number(d.pOpen, decimals: 4), CSV.number(d.pNew, decimals: 4),
          CSV.number(d.expectedAgeS, decimals: 1), CSV.number(d.benefitJ, decimals: 3), CSV.number(d.costJ, decimals: 3),
          d.factor.rawValue,
        ])
      }
      if csv {
        print(header.joined(separator: ","))
        for row in rows { print(row.map(CSV.field).joined(separator: ",")) }
      } else {
        let widths = header.indices.map { c in ([header] + rows).map { $0[c].count }.max()! }
        for row in [header] + rows {
          print(row.indices.map { row[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  "))
        }
        print("\(r.summary.fetches) fetches (\(r.summary.newData) new data), \(CSV.number(r.summary.energyJ, decimals: 1)) J in \(CSV.number((full.end - start) / 3600, decimals: 1)) h")
      }
    }
  }
}

/// Parses ISO 8601 (with Z or an offset, optional fractional seconds) or Unix seconds.
func parseTime(_ s: String) -> Double? {
  if let x = Double(s), x.isFinite { return x }
  let f = ISO8601DateFormatter()
  if let d = f.date(from: s) { return d.timeIntervalSince1970 }
  f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
  return f.date(from: s)?.timeIntervalSince1970
}

/// A Unix time as ISO 8601 UTC.
func isoTime(_ t: Double) -> String {
  ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: t))
}
