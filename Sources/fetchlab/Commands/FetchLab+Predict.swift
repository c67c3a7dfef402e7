import ArgumentParser
import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces
import FetchWorld
import Foundation

extension FetchLab {
  struct Predict: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Predict the fetch times of the iOS-like Minimum scheduler for one user and app in a time window.",
      discussion: """
        Uses the habit model saved by 'fetchlab fit' and continues from the end of its training window \
        (the user's last opens before it). With --trace, the user's events in the window (opens, network, \
        battery) are replayed and the model refits nightly on them; each decision shows the device \
        models' probabilities at that moment (p_plugged_1h, p_wifi_30m, p_offline_30m; empty when the \
        state is unknown). Without --trace, the forecast integrates over the user's future: --paths \
        seeded sample paths of opens (every modelled app's habit model), network and charging (the \
        device models; see docs/models.md) are each replayed, and the table gives per hour the mean and \
        standard deviation over paths of the app's opens and of the launches, the share of paths on \
        WiFi and on the charger, and the mean age at opens. Fetch results inside the window follow the \
        world's content model. Times are ISO 8601 (2026-01-12T08:00:00Z, or with an offset) or Unix seconds.
        Example (a model from 'fetchlab fit', then a prediction):
          fetchlab fit --trace datasets/ubiqlog/ubiqlog-opens.csv --out model.json
          fetchlab predict --model model.json --user 19_F --app com.whatsapp \\
            --from 2014-01-04T00:00:00Z --to 2014-01-05T00:00:00Z \\
            --trace datasets/ubiqlog/ubiqlog-opens.csv
        """)

    @Option(help: "Model file written by 'fetchlab fit'.", completion: .json)
    var model: String

    @Option(help: "User id.")
    var user: String

    @Option(help: "App name.")
    var app: String

    @Option(parsing: .unconditional, help: "Start of the window (ISO 8601 or Unix seconds).")
    var from: String

    @Option(parsing: .unconditional, help: "End of the window (ISO 8601 or Unix seconds; at most 31 days after --from).")
    var to: String

    @Option(help: "Trace to take the user's events in the window from (optional).", completion: .trace)
    var trace: String?

    @Option(
      help: "Scheduler settings, as for --policy: ios-minimum[:key=value,...] or ios-custom:<interval>.",
      completion: .list(["ios-minimum", "ios-custom"]))
    var policy = "ios-minimum"

    @Option(help: "JSON file overriding world-model parameters.", completion: .json)
    var config: String?

    @Option(parsing: .unconditional, help: "Seed of the simulated content updates and of the sample paths.")
    var seed: UInt64 = 1

    @Option(parsing: .unconditional, help: "Sample paths of the future without --trace.")
    var paths = 20

    @Flag(help: "Print CSV instead of a table.")
    var csv = false

    @Flag(help: "Print every decision point, not only launches.")
    var all = false

    func validate() throws {
      guard let a = parseTime(from), let b = parseTime(to) else {
        throw ValidationError("--from and --to must be ISO 8601 times (e.g. 2026-01-12T08:00:00Z) or Unix seconds")
      }
      // Unix seconds past 10^11 (the year 5138) are milliseconds given by mistake.
      for (name, text, t) in [("--from", from, a), ("--to", to, b)] where !TimeText.plausibleTimes.contains(t) {
        if t >= 1e11 && DecimalText.isDecimal(text) && TimeText.plausibleTimes.contains(t / 1000) {
          throw ValidationError(
            "\(name) \(text) looks like milliseconds since 1970: give Unix seconds (\(CSV.number((t / 1000).rounded(.down), decimals: 0))) or an ISO 8601 time")
        }
        throw ValidationError(
          "\(name) \(text.count > 40 ? String(text.prefix(40)) + "…" : text) is outside 1970-01-01...2100-01-01, the dates "
            + "FetchLab models (give Unix seconds or an ISO 8601 time)")
      }
      guard b > a else { throw ValidationError("--to must be after --from") }
      guard b - a <= 31 * 86_400 else { throw ValidationError("the window may span at most 31 days") }
      guard paths >= 1, paths <= 10_000 else { throw ValidationError("--paths must be in 1...10000") }
      do {
        guard try minimumParameters(PolicySpec(parsing: policy)) != nil else {
          throw ValidationError("--policy must be ios-minimum or ios-custom")
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
      guard var params = try minimumParameters(PolicySpec(parsing: policy)) else { fatalError("checked in validate()") }
      var world = WorldParameters()
      if let config { try world.apply(configPath: config) }
      if let b = um.lastBattery, world.device.initialBatteryPct < 0 { world.device.initialBatteryPct = b.levelPct }

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
        return try forecast(file: file, um: um, am: am, params: params, world: world, t0: t0, t1: t1)
      }
      let appIndex = full.appIndex(app)
      let start = max(t0, full.start)
      guard start < full.end else { throw CommandError("the window ends before the model's training window does") }
      let (history, window) = full.split(at: start)
      for e in history.events where e.kind == .open {
        lastAny = max(lastAny, e.time)
        if e.app == appIndex { lastApp = max(lastApp, e.time) }
      }
      var p = IOSMinimumPolicy(
        params: params, world: world, habit: am.habit, history: history, app: appIndex, population: file.population,
        lastAppOpen: lastApp, lastAnyOpen: lastAny)
      p.logDecisions = true
      let prepared = PreparedUser(trace: window, world: world)
      let content = ContentTimeline(trace: window, app: appIndex, world: world, seed: seed)
      let r = FetchSimulation.replay(&p, user: prepared, app: appIndex, content: content)
      let shown = p.decisions.filter { all || $0.launched }
      let header = [
        "time", "launched", "p_open", "p_new", "expected_age_s", "benefit_j", "cost_j", "factor", "p_plugged_1h",
        "p_wifi_30m", "p_offline_30m",
      ]
      var rows: [[String]] = []
      let timeline = DeviceTimeline(full)
      var clock = LocalClock(full.timeZone)
      func probability(_ x: Double?) -> String { x.map { CSV.number($0, decimals: 4) } ?? "" }
      for d in shown {
        let f = um.device.probabilities(at: d.time, timeline: timeline, fallback: file.devicePopulation, clock: &clock)
        rows.append([
          isoTime(d.time), d.launched ? "1" : "0", CSV.number(d.pOpen, decimals: 4), CSV.number(d.pNew, decimals: 4),
          CSV.number(d.expectedAgeS, decimals: 1), CSV.number(d.benefitJ, decimals: 3), CSV.number(d.costJ, decimals: 3),
          d.factor.rawValue, probability(f.plugged), probability(f.wifi), probability(f.offline),
        ])
      }
      printTable(header, rows, csv: csv)
      if !csv {
        print("\(r.summary.fetches) fetches (\(r.summary.newData) new data), \(CSV.number(r.summary.energyJ, decimals: 1)) J in \(CSV.number((full.end - start) / 3600, decimals: 1)) h")
      }
    }
  }
}

extension FetchLab.Predict {
  /// The forecast without a trace: `paths` sample paths of the window (see
  /// ``FuturePaths``), each replayed with the Minimum scheduler; per local
  /// hour of the window, the mean and SD over paths of the app's opens and
  /// the launches, the share of paths on WiFi / on the charger at the hour's
  /// start, and the mean age at the hour's opens.
  func forecast(
    file: ModelFile, um: ModelFile.UserModels, am: ModelFile.AppModel, params: IOSMinimumParameters,
    world: WorldParameters, t0: Double, t1: Double
  ) throws {
    let start = max(t0, um.splitTime)
    guard start < t1 else { throw CommandError("the window ends before the model's training window does") }
    let names = um.apps.map(\.app)
    let appIndex = Int32(names.firstIndex(of: app)!)
    let hours = Int(((t1 - start) / 3600).rounded(.up))
    var opens = [[Double]](repeating: [], count: hours), launches = [[Double]](repeating: [], count: hours)
    var wifi = [Double](repeating: 0, count: hours), plugged = [Double](repeating: 0, count: hours)
    var ageSum = [Double](repeating: 0, count: hours), ageN = [Double](repeating: 0, count: hours)
    var totalLaunches: [Double] = [], totalOpens: [Double] = [], meanAges: [Double] = []
    for path in 0..<paths {
      let events = FuturePaths.sample(
        um, population: file.devicePopulation, options: file.options.device, from: start, to: t1,
        lastAppOpens: um.apps.map { $0.lastOpen ?? -.infinity }, lastAnyOpen: um.lastOpenAny ?? -.infinity,
        seed: StableHash.combine(seed, UInt64(path)))
      let window = UserTrace(user: user, timeZone: um.timeZone, start: start, end: t1, apps: names, events: events)
      let history = UserTrace(user: user, timeZone: um.timeZone, start: um.splitTime, end: start, apps: names)
      var p = IOSMinimumPolicy(
        params: params, world: world, habit: am.habit, history: history, app: appIndex, population: file.population,
        lastAppOpen: am.lastOpen ?? -.infinity, lastAnyOpen: um.lastOpenAny ?? -.infinity)
      let prepared = PreparedUser(trace: window, world: world)
      let content = ContentTimeline(trace: window, app: appIndex, world: world, seed: seed)
      let r = FetchSimulation.replay(&p, user: prepared, app: appIndex, content: content)
      var o = [Double](repeating: 0, count: hours), l = [Double](repeating: 0, count: hours)
      func hour(_ t: Double) -> Int { min(hours - 1, max(0, Int((t - start) / 3600))) }
      for e in r.opens {
        o[hour(e.time)] += 1
        ageSum[hour(e.time)] += e.ageS
        ageN[hour(e.time)] += 1
      }
      for f in r.fetches { l[hour(f.start)] += 1 }
      let timeline = DeviceTimeline(window)
      for h in 0..<hours {
        opens[h].append(o[h])
        launches[h].append(l[h])
        let t = start + Double(h) * 3600
        if timeline.network(at: t)?.kind == .wifi { wifi[h] += 1 }
        if timeline.charging(at: t)?.plugged == true { plugged[h] += 1 }
      }
      totalLaunches.append(Double(r.summary.fetches))
      totalOpens.append(Double(r.summary.opens))
      if r.summary.opens > 0 { meanAges.append(r.summary.meanAgeS) }
    }
    func meanSD(_ x: [Double]) -> (Double, Double) {
      let m = x.reduce(0, +) / Double(x.count)
      let v = x.count > 1 ? x.reduce(0) { $0 + ($1 - m) * ($1 - m) } / Double(x.count - 1) : 0
      return (m, v.squareRoot())
    }
    let n = Double(paths)
    let header = [
      "hour", "opens_mean", "opens_sd", "launches_mean", "launches_sd", "share_wifi", "share_plugged", "mean_age_s",
    ]
    var rows: [[String]] = []
    for h in 0..<hours {
      let (om, os) = meanSD(opens[h]), (lm, ls) = meanSD(launches[h])
      rows.append([
        isoTime(start + Double(h) * 3600), CSV.number(om, decimals: 3), CSV.number(os, decimals: 3),
        CSV.number(lm, decimals: 3), CSV.number(ls, decimals: 3), CSV.number(wifi[h] / n, decimals: 3),
        CSV.number(plugged[h] / n, decimals: 3), ageN[h] > 0 ? CSV.number(ageSum[h] / ageN[h], decimals: 1) : "",
      ])
    }
    printTable(header, rows, csv: csv)
    if !csv {
      let (lm, ls) = meanSD(totalLaunches), (om, os) = meanSD(totalOpens)
      let age = meanAges.isEmpty ? "no opens" : "mean age at opens \(CSV.number(meanSD(meanAges).0, decimals: 1)) s"
      print("\(paths) sample paths: \(CSV.number(lm, decimals: 2)) ± \(CSV.number(ls, decimals: 2)) launches, \(CSV.number(om, decimals: 2)) ± \(CSV.number(os, decimals: 2)) opens of \(app), \(age), in \(CSV.number((t1 - start) / 3600, decimals: 1)) h")
    }
  }
}

/// Parses Unix seconds (decimal, ``DecimalText``) or an ISO 8601 time with
/// `Z` or an offset (``TimeText/parseISO8601(_:)-(String)``): the forms a
/// trace's `time` column takes.
func parseTime(_ s: String) -> Double? {
  if let x = DecimalText.finite(s) { return x }
  return TimeText.parseISO8601(s)?.unixSeconds
}

/// A Unix time as ISO 8601 UTC.
func isoTime(_ t: Double) -> String {
  ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: t))
}

/// Prints `rows` under `header`: CSV, or columns padded to their widest cell.
private func printTable(_ header: [String], _ rows: [[String]], csv: Bool) {
  if csv {
    print(header.joined(separator: ","))
    for row in rows { print(row.map(CSV.field).joined(separator: ",")) }
    return
  }
  let widths = header.indices.map { c in ([header] + rows).map { $0[c].count }.max() ?? 0 }
  for row in [header] + rows {
    print(row.indices.map { row[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  "))
  }
}

/// The Minimum scheduler's parameters of an `ios-minimum` or `ios-custom`
/// spec; nil for other policies.
private func minimumParameters(_ spec: PolicySpec) -> IOSMinimumParameters? {
  spec.configuration(of: IOSMinimumFamily.self) ?? spec.configuration(of: IOSCustomFamily.self)?.parameters
}
