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

/// A problem with a timeline request or its inputs (exit code 1): match on
/// ``code``, show ``message``.
package struct TimelineError: CodedError {
  /// The category of a ``TimelineError``; its description is a stable
  /// kebab-case name.
  package enum Code: String, Sendable, Hashable, CustomStringConvertible {
    /// The run's `manifest.json` is unreadable or lacks a field the timeline needs.
    case badManifest = "bad-manifest"
    /// The run's trace is missing or changed since the run.
    case traceUnavailable = "trace-unavailable"
    /// A `--timeline-*` option names no user, app, policy, dataset or day of the run.
    case badRequest = "bad-request"

    package var description: String { rawValue }
  }

  /// The category.
  package let code: Code
  /// What is wrong, in words (also the ``description``).
  package let message: String
  /// The manifest at fault, when known.
  package var location: InputLocation

  package init(code: Code, message: String, location: InputLocation) {
    (self.code, self.message, self.location) = (code, message, location)
  }

  /// An error of `code` with `message` about `file`.
  init(_ code: Code, _ message: String, file: String?) {
    self.init(code, message, location: InputLocation(file: file))
  }

  /// A ``Code/badManifest`` error: `manifest: detail`.
  init(manifest: String, _ detail: String) {
    self.init(.badManifest, manifest + ": " + detail, file: manifest)
  }
}

/// One user's day under a few policies, re-replayed from the run's trace
/// with the run's world parameters and seed: the data of the timeline chart
/// (drawn by `render()` in FetchReports).
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
    var inputs: [RunInput]
  }

  /// An unsigned integer from JSON without going through `Double`
  /// (seeds use all 64 bits).
  static func uint64(_ v: Any?) -> UInt64? {
    guard let n = v as? NSNumber else { return nil }
    if let u = UInt64(n.stringValue) { return u }
    return n.doubleValue >= 0 && n.doubleValue < 1.8e19 ? n.uint64Value : nil
  }

  /// Where the trace of one of the run's inputs is now: from the run
  /// directory first (`path_from_run_dir`, when recorded), then at its
  /// absolute path (`absolute_path`), then as recorded (from where the run
  /// started), then from the run directory's parents (older manifests, run
  /// from an ancestor), then an experiment's generated
  /// `datasets/<name>.csv`; nil when none exists. Callers that need the very
  /// same file check its SHA-256.
  static func locateTrace(runDir: String, input: RunInput) -> String? {
    var candidates = input.fromRunDir.map { [runDir + "/" + $0] } ?? []
    if let a = input.absolute { candidates.append(a) }
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
  /// changed since the run: its SHA-256 differs from the manifest's), and a
  /// note for each such dataset (its hours of day are then UTC) and for a
  /// trace found elsewhere than at its recorded absolute path (it moved).
  ///
  /// - Complexity: two reads of each trace (the hash, then the zones).
  package static func timeZones(runDir: String) -> (zones: [String: [String: TraceTimeZone]], notes: [String]) {
    guard let run = try? readSettings(runDir: runDir) else { return ([:], []) }
    var out: [String: [String: TraceTimeZone]] = [:]
    var notes: [String] = []
    for input in run.inputs {
      let name = input.dataset.isEmpty ? "the run's trace" : "dataset \(input.dataset)'s trace"
      let recorded = input.absolute ?? input.path
      let utc = "hours of day in UTC, not the users' local time"
      var st = stat()
      guard let path = locateTrace(runDir: runDir, input: input) else {
        notes.append("\(name) \(recorded) is not found (nor from \(runDir)): \(utc)")
        continue
      }
      guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, let want = input.sha256,
        (try? SHA256.hashFile(atPath: path).hex) == want, let reader = try? TraceReader(path: path)
      else {
        notes.append("\(name) \(path) is not the run's (not a regular file, or its SHA-256 differs from the manifest's): \(utc)")
        continue
      }
      let found = RunPaths.canonical(path)
      if let a = input.absolute, found != a, !found.hasPrefix(RunPaths.canonical(runDir) + "/") {
        notes.append("\(name) moved: found at \(path), recorded at \(a) (its SHA-256 matches the manifest's)")
      }
      var zones: [String: TraceTimeZone] = [:]
      while let u = try? reader.next() { zones[u.user] = u.timeZone }
      out[input.dataset] = zones
    }
    return (out, notes)
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
    var inputs: [RunInput] = []
    let seed: UInt64
    if let ins = m["inputs"] as? [[String: Any]] {
      // An experiment: replication 0 (``Experiment/replicationSeed(_:)``).
      seed = StableHash.combine(master, 0)
      for i in ins {
        guard let d = i["dataset"] as? String, let p = i["path"] as? String else { continue }
        inputs.append((d, p, i["sha256"] as? String, i["path_from_run_dir"] as? String, i["absolute_path"] as? String))
        if i["world_overrides"] != nil { worlds[d] = try world(i["world_overrides"]) }
      }
    } else if let t = m["trace"] as? [String: Any], let p = t["path"] as? String {
      seed = master
      inputs.append(("", p, t["sha256"] as? String, t["path_from_run_dir"] as? String, t["absolute_path"] as? String))
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
      add(run.contains(want) ? want : run.first { PolicySpec.familyName(of: $0) == PolicySpec.familyName(of: want) })
    }
    for p in run where p != "never" {
      let f = PolicySpec.familyName(of: p)
      if !out.contains(where: { PolicySpec.familyName(of: $0) == f }) { add(p) }
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
}
