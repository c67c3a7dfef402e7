import FetchBenchmark
import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces
import FetchWorld
import Foundation

/// What `fetchlab report --timeline-…` asks for; nil fields take the
/// deterministic default (see ``UserDayTimeline/build(runDir:request:)``).
package struct TimelineRequest: Sendable, Equatable {
  /// Dataset name (experiment runs); default: the first dataset.
  package var dataset: String?
  /// User id; default: the first user of the trace.
  package var user: String?
  /// Local day `YYYY-MM-DD`; default: the user's day with most opens of
  /// the app inside the test window (whole days first; ties: the earliest).
  package var day: String?
  /// App name; default: the user's most-opened selected app.
  package var app: String?
  /// Policy configurations (each must be one of the run's); default: up
  /// to 4, `ios-minimum` and `oracle` first when the run has them.
  package var policies: [String]

  package init(dataset: String? = nil, user: String? = nil, day: String? = nil, app: String? = nil, policies: [String] = []) {
    self.dataset = dataset
    self.user = user
    self.day = day
    self.app = app
    self.policies = policies
  }

  /// True when nothing was asked for explicitly.
  package var isDefault: Bool { self == TimelineRequest() }
}

/// A problem with a timeline request or its inputs (exit code 1).
///
/// A public struct over an internal enum (like `LinearAlgebraError`): match
/// on ``code``, show ``message``; new codes do not break callers.
package struct TimelineError: Error, CustomStringConvertible, Sendable, Equatable {
  enum Kind: Sendable, Hashable {
    case badManifest, traceUnavailable, badRequest
  }

  /// The category of a ``TimelineError``.
  package struct Code: Sendable, Hashable, CustomStringConvertible {
    let kind: Kind

    /// The run's `manifest.json` is unreadable or lacks a field the timeline needs.
    package static let badManifest = Code(kind: .badManifest)
    /// The run's trace is missing or changed since the run.
    package static let traceUnavailable = Code(kind: .traceUnavailable)
    /// A `--timeline-*` option names no user, app, policy, dataset or day of the run.
    package static let badRequest = Code(kind: .badRequest)

    /// A stable kebab-case name.
    package var description: String {
      switch kind {
      case .badManifest: "bad-manifest"
      case .traceUnavailable: "trace-unavailable"
      case .badRequest: "bad-request"
      }
    }
  }

  /// The category.
  package let code: Code
  /// What is wrong, in words (also the ``description``).
  package let message: String
  /// The manifest or option at fault, when known.
  package var location: InputLocation

  init(_ code: Code, _ message: String, location: InputLocation = InputLocation()) {
    self.code = code
    self.message = message
    self.location = location
  }

  /// A ``Code-swift.struct/badManifest`` error: `manifest: detail`.
  init(manifest: String, _ detail: String) {
    self.init(.badManifest, manifest + ": " + detail, location: InputLocation(file: manifest))
  }

  package var description: String { message }
}

/// One user's day under a few policies, re-replayed from the run's trace
/// with the run's world parameters and seed: the data of the timeline chart
/// (``render()``).
///
/// Times are Unix seconds; ``hour(_:)`` maps them to local hours since the
/// day's midnight.
package struct UserDayTimeline: Sendable {
  /// A time span, Unix s.
  package struct Span: Sendable, Equatable {
    package var start: Double
    package var end: Double
  }

  /// A network segment.
  package struct NetworkSpan: Sendable, Equatable {
    package var start: Double
    package var end: Double
    package var network: NetworkKind
  }

  /// One policy's lane.
  package struct Lane: Sendable {
    package var policy: String
    /// The fetches that start in the day, as the replay recorded them.
    package var fetches: [FetchRecord]
    /// The cellular radio tail each fetch caused (same order; `start ==
    /// end`: none: WiFi, or the radio stayed on for other activity).
    package var tails: [Span]
    /// The opens of the app in the day with the age this policy gave them.
    package var opens: [OpenRecord]
    /// Energy of the day's fetches, J.
    package var energyJ: Double
  }

  package var dataset: String
  package var user: String
  package var app: String
  /// `YYYY-MM-DD`, local.
  package var day: String
  package var timeZone: TraceTimeZone
  /// Unix times of the day's local midnights.
  package var dayStart: Double
  package var dayEnd: Double
  /// The replayed (test) window of the user; outside it nothing happens.
  package var window: Span
  package var tracePath: String
  /// "verified" or why not.
  package var traceCheck: String
  package var seed: UInt64
  package var network: [NetworkSpan]
  package var charging: [Span]
  /// Content updates of the app on the server in the day.
  package var updates: [Double]
  /// The user's sessions and other apps' wakes on the active interface.
  package var backgroundBusy: [Span]
  /// The radio tails after them (until the next activity or the tail's end).
  package var backgroundTails: [Span]
  /// Tail length of the default cellular radio, s (for the notes).
  package var cellularTailS: Double
  package var lanes: [Lane]

  /// Local hours since the day's midnight (0 at `dayStart`), by wall clock.
  package func hour(_ t: Double) -> Double {
    var c = LocalClock(timeZone)
    let midnight = (c.local(dayStart) / 86_400).rounded() * 86_400
    return (c.local(t) - midnight) / 3_600
  }
}

// MARK: Building

extension UserDayTimeline {
  /// The run's settings, read from `manifest.json` (`fetchlab run --trace`
  /// or an experiment file).
  struct RunSettings {
    var policies: [String]
    var apps: AppSelection
    var trainFraction: Double
    var world: WorldParameters
    /// The worlds of world-grid datasets (`inputs[].world_overrides`), by dataset.
    var worlds: [String: WorldParameters] = [:]
    /// The replication-0 seed.
    var seed: UInt64
    /// (dataset, path as recorded, SHA-256 or nil).
    var inputs: [(dataset: String, path: String, sha256: String?, fromRunDir: String?)]
  }

  /// An unsigned integer from JSON without going through `Double`
  /// (seeds use all 64 bits).
  static func uint64(_ v: Any?) -> UInt64? {
    guard let n = v as? NSNumber else { return nil }
    if let u = UInt64(n.stringValue) { return u }
    return n.doubleValue >= 0 && n.doubleValue < 1.8e19 ? n.uint64Value : nil
  }

  /// Where the trace of one of the run's inputs is now: from the run
  /// directory first (`path_from_run_dir`, when recorded), then as recorded
  /// (from where the run started), then from the run directory's parents
  /// (older manifests, run from an ancestor), then an experiment's generated
  /// `datasets/<name>.csv`; nil when none exists. Callers that need the very
  /// same file check its SHA-256.
  static func locateTrace(runDir: String, input: (dataset: String, path: String, sha256: String?, fromRunDir: String?))
    -> String?
  {
    var candidates = input.fromRunDir.map { [runDir + "/" + $0] } ?? []
    candidates.append(input.path)
    if !input.path.hasPrefix("/") {
      var up = runDir
      for _ in 0..<6 {
        up += "/.."
        candidates.append(up + "/" + input.path)
      }
    }
    if !input.dataset.isEmpty { candidates.append(runDir + "/datasets/" + input.dataset + ".csv") }
    return candidates.first { FileManager.default.fileExists(atPath: $0) }
  }

  /// Each user's time zone per dataset, from the run's traces (empty for a
  /// dataset whose trace is not found, not a regular file, not readable, or
  /// changed since the run: its SHA-256 differs from the manifest's).
  ///
  /// - Complexity: two reads of each trace (the hash, then the zones).
  static func timeZones(runDir: String) -> [String: [String: TraceTimeZone]] {
    guard let run = try? readSettings(runDir: runDir) else { return [:] }
    var out: [String: [String: TraceTimeZone]] = [:]
    for input in run.inputs {
      var st = stat()
      guard let path = locateTrace(runDir: runDir, input: input), stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG,
        let want = input.sha256, (try? SHA256.hashFile(atPath: path).hex) == want,
        let reader = try? TraceReader(path: path)
      else { continue }
      var zones: [String: TraceTimeZone] = [:]
      while let u = try? reader.next() { zones[u.user] = u.timeZone }
      out[input.dataset] = zones
    }
    return out
  }

  static func readSettings(runDir: String) throws -> RunSettings {
    let path = runDir + "/manifest.json"
    guard let data = FileManager.default.contents(atPath: path),
      let m = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    else { throw TimelineError(manifest: path, "cannot read the run's manifest (JSON object)") }
    guard let policies = m["policies"] as? [String], !policies.isEmpty else {
      throw TimelineError(manifest: path, "no \"policies\" list")
    }
    let apps: AppSelection
    do { apps = try AppSelection(parsing: m["apps"] as? String ?? "top:3") } catch {
      throw TimelineError(manifest: path, "apps: \(error)")
    }
    func world(_ overrides: Any?) throws -> WorldParameters {
      var world = WorldParameters()
      for item in overrides as? [String] ?? [] {
        guard let eq = item.firstIndex(of: "=") else { throw TimelineError(manifest: path, "world_overrides: '\(item)'") }
        let name = String(item[..<eq])
        if let msg = world.set(name, to: ParameterValue(parsing: String(item[item.index(after: eq)...]))) {
          throw TimelineError(manifest: path, "world_overrides: \(name): \(msg)")
        }
      }
      return world
    }
    let base = try world(m["world_overrides"])
    var worlds: [String: WorldParameters] = [:]
    guard let master = uint64(m["seed"]) else { throw TimelineError(manifest: path, "no \"seed\"") }
    let trainFraction = (m["train_fraction"] as? NSNumber)?.doubleValue ?? 0
    var inputs: [(String, String, String?, String?)] = []
    let seed: UInt64
    if let ins = m["inputs"] as? [[String: Any]] {
      // An experiment: replication 0 (``Experiment/replicationSeed(_:)``).
      seed = StableHash.combine(master, 0)
      for i in ins {
        guard let d = i["dataset"] as? String, let p = i["path"] as? String else { continue }
        inputs.append((d, p, i["sha256"] as? String, i["path_from_run_dir"] as? String))
        if i["world_overrides"] != nil { worlds[d] = try world(i["world_overrides"]) }
      }
    } else if let t = m["trace"] as? [String: Any], let p = t["path"] as? String {
      seed = master
      inputs.append(("", p, t["sha256"] as? String, t["path_from_run_dir"] as? String))
    } else {
      throw TimelineError(manifest: path, "no trace recorded (\"trace\" or \"inputs\")")
    }
    return RunSettings(
      policies: policies, apps: apps, trainFraction: trainFraction, world: base, worlds: worlds, seed: seed,
      inputs: inputs)
  }

  /// The default policies: `ios-minimum`, `oracle`, `periodic:1h`, `imp`,
  /// `tailender:1h` when present (else the first of their family), then
  /// other families in run order, then any (skipping `never`), up to 4.
  static func defaultPolicies(_ run: [String]) -> [String] {
    var out: [String] = []
    func add(_ p: String?) {
      guard let p, !out.contains(p), out.count < 4 else { return }
      out.append(p)
    }
    for want in ["ios-minimum", "oracle", "periodic:1h", "imp", "tailender:1h"] {
      add(run.contains(want) ? want : run.first { Scoring.family(of: $0) == Scoring.family(of: want) })
    }
    for p in run where p != "never" {
      let f = Scoring.family(of: p)
      if !out.contains(where: { Scoring.family(of: $0) == f }) { add(p) }
    }
    for p in run where p != "never" { add(p) }
    return out
  }

  /// `YYYY-MM-DD` of a day number (days since 1970-01-01).
  static func civil(_ z: Int) -> String {
    let (y, m, d) = CivilDate.civil(fromDays: z)
    func pad(_ v: Int, _ n: Int) -> String { String(repeating: "0", count: max(0, n - String(v).count)) + String(v) }
    return pad(y, 4) + "-" + pad(m, 2) + "-" + pad(d, 2)
  }

  /// The day number (days since 1970-01-01) of `YYYY-MM-DD`; nil when it
  /// is not a valid date.
  package static func dayNumber(_ s: String) -> Int? { parseDay(s) }

  /// Parses `YYYY-MM-DD` into a day number.
  static func parseDay(_ s: String) -> Int? {
    let parts = s.split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
      let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]), (1...12).contains(m), (1...31).contains(d)
    else { return nil }
    let z = CivilDate.days(year: y, month: m, day: d)
    return civil(z) == s ? z : nil
  }

  /// The Unix time of local midnight starting day number `d`.
  static func midnight(_ d: Int, _ tz: TraceTimeZone) -> Double {
    var c = LocalClock(tz)
    let wall = Double(d) * 86_400
    var t = wall - c.offset(at: wall)
    t = wall - c.offset(at: t)
    return t
  }

  /// Re-replays one user of the run in `runDir` and cuts out one local day.
  ///
  /// Reads `manifest.json` for the trace (checked against its SHA-256), the
  /// policies, apps, train fraction, world overrides and seed (replication
  /// 0 of an experiment); fits the population habit model as the run did
  /// when a chosen policy uses it; replays the user under the chosen
  /// policies with event records on. The result equals the run's own
  /// records for that user, app and policy (`opens.csv`, `fetches.csv`).
  ///
  /// - Throws: ``TimelineError`` for a bad request or a changed or missing
  ///   trace; ``TraceFormatError`` from the trace reader.
  package static func build(runDir: String, request: TimelineRequest = TimelineRequest()) throws -> UserDayTimeline {
    var run = try readSettings(runDir: runDir)
    // Dataset and trace.
    let input: (dataset: String, path: String, sha256: String?, fromRunDir: String?)
    if let d = request.dataset {
      guard let i = run.inputs.first(where: { $0.dataset == d }) else {
        throw TimelineError(.badRequest, "--timeline-dataset \(d): the run's datasets are \(run.inputs.map { $0.dataset.isEmpty ? "(unnamed)" : $0.dataset }.joined(separator: ", "))")
      }
      input = i
    } else {
      input = run.inputs[0]
    }
    if let w = run.worlds[input.dataset] { run.world = w }
    guard let path = locateTrace(runDir: runDir, input: input) else {
      throw TimelineError(.traceUnavailable, "trace \(input.path) (recorded in \(runDir)/manifest.json) not found; run the report from the directory the run was started in")
    }
    var st = stat()
    guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
      throw TimelineError(.traceUnavailable, "trace \(escaped(path)) is not a regular file (a FIFO, device or directory): not read")
    }
    var check = "SHA-256 not recorded in the manifest: not checked"
    if let want = input.sha256 {
      let got = try SHA256.hashFile(atPath: path).hex
      guard got == want else {
        throw TimelineError(.traceUnavailable, "trace \(path) changed since the run: SHA-256 \(got), manifest \(want)")
      }
      check = "SHA-256 matches the manifest"
    }

    // Policies.
    var chosen: [String] = []
    for p in request.policies {
      let spec: PolicySpec
      do { spec = try PolicySpec(parsing: p) } catch { throw TimelineError(.badRequest, "--timeline-policy \(p): \(error)") }
      guard run.policies.contains(spec.description) else {
        throw TimelineError(.badRequest, "--timeline-policy \(p): not one of the run's policies (\(run.policies.joined(separator: ", ")))")
      }
      if !chosen.contains(spec.description) { chosen.append(spec.description) }
    }
    if chosen.isEmpty { chosen = defaultPolicies(run.policies) }
    let specs = try chosen.map { p in
      do { return try PolicySpec(parsing: p) } catch { throw TimelineError(manifest: "\(runDir)/manifest.json", "policy \(p): \(error)") }
    }

    // The user.
    let reader = try TraceReader(path: path)
    var found: UserTrace?
    while let u = try reader.next() {
      if request.user == nil || u.user == request.user {
        found = u
        break
      }
    }
    guard let trace = found else {
      throw TimelineError(.badRequest, request.user.map { "--timeline-user \($0): not in \(path)" } ?? "\(path): no users")
    }
    let config = RunConfiguration(
      tracePath: path, policies: specs, seed: run.seed, world: run.world, apps: run.apps, recordEvents: true, jobs: 1,
      trainFraction: run.trainFraction)
    let population = specs.contains(where: \.usesHabitModel) ? try fitPopulation(config) : nil
    let result = replayUser(trace, config, population)
    let test = result.trace
    guard !result.apps.isEmpty else { throw TimelineError(.badRequest, "user \(trace.user) opens no app the run selected (\(run.apps))") }
    let a: Int
    if let name = request.app {
      guard let i = result.apps.firstIndex(where: { test.apps[Int($0)] == name }) else {
        throw TimelineError(.badRequest, "--timeline-app \(name): not among user \(trace.user)'s replayed apps (\(result.apps.map { test.apps[Int($0)] }.joined(separator: ", ")))")
      }
      a = i
    } else {
      a = 0
    }
    let app = result.apps[a]

    // The day.
    var clock = LocalClock(test.timeZone)
    func dayOf(_ t: Double) -> Int { Int((clock.local(t) / 86_400).rounded(.down)) }
    let dayNumber: Int
    if let s = request.day {
      guard let d = parseDay(s) else { throw TimelineError(.badRequest, "--timeline-day \(s): expected YYYY-MM-DD") }
      guard midnight(d + 1, test.timeZone) > test.start, midnight(d, test.timeZone) < test.end else {
        throw TimelineError(.badRequest, "--timeline-day \(s): outside user \(trace.user)'s replayed (test) window \(civil(dayOf(test.start))) to \(civil(dayOf(test.end)))")
      }
      dayNumber = d
    } else {
      var counts: [Int: Int] = [:]
      for e in test.events where e.kind == .open && e.app == app && e.time >= test.start && e.time < test.end {
        counts[dayOf(e.time), default: 0] += 1
      }
      let first = dayOf(test.start), last = dayOf(test.end)
      func whole(_ d: Int) -> Bool { midnight(d, test.timeZone) >= test.start && midnight(d + 1, test.timeZone) <= test.end }
      let days = Array(first...max(first, last))
      let ranked = days.sorted {
        (whole($0) ? 0 : 1, -(counts[$0] ?? 0), $0) < (whole($1) ? 0 : 1, -(counts[$1] ?? 0), $1)
      }
      dayNumber = ranked[0]
    }
    let t0 = midnight(dayNumber, test.timeZone), t1 = midnight(dayNumber + 1, test.timeZone)
    let lo = max(t0, test.start), hi = min(t1, test.end)

    // Device state from the prepared user (what the replay saw).
    let prepared = PreparedUser(trace: test, world: run.world)
    var network: [NetworkSpan] = []
    let changes = prepared.networkChanges
    for (i, c) in changes.enumerated() {
      let s = max(c.time, lo), e = min(i + 1 < changes.count ? changes[i + 1].time : test.end, hi)
      if e > s { network.append(NetworkSpan(start: s, end: e, network: c.network)) }
    }
    var charging: [Span] = []
    var since: Double?
    for e in test.events {
      if e.kind == .chargeStart, since == nil { since = e.time }
      if e.kind == .chargeEnd, let s = since {
        if e.time > lo && s < hi { charging.append(Span(start: max(s, lo), end: min(e.time, hi))) }
        since = nil
      }
    }
    if let s = since, s < hi { charging.append(Span(start: max(s, lo), end: hi)) }

    // Background radio activity on whichever interface is active, and its tails.
    var busy: [Span] = [], tails: [Span] = []
    for cellular in [false, true] {
      let b = prepared.backgroundBusy(cellular: cellular)
      let radio = (cellular ? run.world.radio(for: .cellular) : run.world.radio(for: .wifi))?.terms ?? RadioTerms()
      for (i, iv) in b.enumerated() where radio.tailEnd(after: iv.end) > lo && iv.start < hi {
        busy.append(Span(start: max(iv.start, lo), end: min(iv.end, hi)))
        let next = i + 1 < b.count ? b[i + 1].start : .infinity
        let te = min(radio.tailEnd(after: iv.end, nextActivityAt: next), hi)
        if te > iv.end { tails.append(Span(start: max(iv.end, lo), end: te)) }
      }
    }
    busy.sort { ($0.start, $0.end) < ($1.start, $1.end) }
    tails.sort { ($0.start, $0.end) < ($1.start, $1.end) }

    var lanes: [Lane] = []
    for (pi, spec) in specs.enumerated() {
      let r = result.replays[a][pi]
      let all = r.fetches
      var dayFetches: [FetchRecord] = [], dayTails: [Span] = []
      for (k, f) in all.enumerated() where f.start >= t0 && f.start < t1 {
        dayFetches.append(f)
        dayTails.append(causedTail(f, index: k, fetches: all, prepared: prepared, world: run.world))
      }
      lanes.append(
        Lane(
          policy: spec.description, fetches: dayFetches, tails: dayTails,
          opens: r.opens.filter { $0.time >= t0 && $0.time < t1 }, energyJ: dayFetches.reduce(0) { $0 + $1.energyJ }))
    }
    let content = ContentTimeline(trace: test, app: app, world: run.world, seed: run.seed)
    return UserDayTimeline(
      dataset: input.dataset, user: trace.user, app: test.apps[Int(app)], day: civil(dayNumber), timeZone: test.timeZone,
      dayStart: t0, dayEnd: t1, window: Span(start: test.start, end: test.end), tracePath: path, traceCheck: check,
      seed: run.seed, network: network, charging: charging, updates: content.updates.filter { $0 >= t0 && $0 < t1 },
      backgroundBusy: busy, backgroundTails: tails, cellularTailS: run.world.radio(for: .cellular)?.tailDurationS ?? 0,
      lanes: lanes)
  }

  /// The part of fetch `k`'s cellular radio tail that nothing else paid
  /// for: from its end (or the end of a tail already running from earlier
  /// activity) to the end of its own tail or the next activity on the
  /// interface. Empty for WiFi fetches (a WiFi tail is 0.24 s by default).
  static func causedTail(
    _ f: FetchRecord, index k: Int, fetches: [FetchRecord], prepared: PreparedUser, world: WorldParameters
  ) -> Span {
    guard f.failure != "offline", f.network != .offline, f.network != .wifi, let radio = world.radio(for: f.network)?.terms
    else {
      return Span(start: f.end, end: f.end)
    }
    let cellular = f.network != .wifi
    let tail = radio.tailDurationS
    var onUntil = -Double.infinity, next = Double.infinity
    for b in prepared.backgroundBusy(cellular: cellular) {
      if b.start > f.end + tail { break }
      if b.start <= f.end {
        onUntil = max(onUntil, b.end >= f.end ? .infinity : radio.tailEnd(after: b.end))
      } else {
        next = min(next, b.start)
      }
    }
    for (j, o) in fetches.enumerated() where j != k && (o.network == .wifi) == !cellular && o.network != .offline {
      if o.start > f.end + tail { break }
      if j < k { onUntil = max(onUntil, o.end >= f.end ? .infinity : radio.tailEnd(after: o.end)) } else if o.start >= f.end {
        next = min(next, o.start)
      }
    }
    let s = max(f.end, onUntil), e = radio.tailEnd(after: f.end, nextActivityAt: next)
    return e > s ? Span(start: s, end: e) : Span(start: f.end, end: f.end)
  }
}
