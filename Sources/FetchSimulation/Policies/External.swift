import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld

/// A policy whose decisions come from another process: at each decision
/// opportunity of the app (the window's start, each open of the app, the
/// ask-again time it asked for, the end of each of its fetches) FetchLab
/// writes what an app on the phone could see to the process and applies
/// its answer, fetch now or not, and when to ask again (protocol version
/// 3, `docs/external-protocol.md`). A process may choose at its handshake
/// not to be asked at opens or fetch ends: it is then told of them in its
/// next message (``ExternalMessage/Notes``), after the fact, as an app
/// woken by its own timer reads its usage log, unless it chose not to
/// be told of them either.
///
/// The engine shows it every event so that the device state (network,
/// charging, battery) is current; the process hears only of the app's own
/// opens, as an app on iOS or Android does (it is not told of other apps).
package struct ExternalPolicy: FetchPolicy {
  package static var observedEvents: ObservedEvents { .all }
  let session: ExternalSession
  /// ``ExternalMessage/decidePrefix(user:app:version:)``.
  let prefix: String
  let appName: String
  var clock: LocalClock
  var notes = ExternalMessage.Notes()
  /// The battery level of the `low_battery` gate, %.
  static let lowBatteryPct = 20.0

  package mutating func start(_ ctx: inout PolicyContext) { decide(.start, &ctx) }

  package mutating func observe(_ event: TraceEvent, _ ctx: inout PolicyContext) {
    guard event.kind == .open && event.app == ctx.app else { return }
    let h = session.handshake
    if h.asksOpen { decide(.open, &ctx) } else if h.tellsOpens { notes.opens.append(event.time) }
  }

  package mutating func timerFired(_ ctx: inout PolicyContext) { decide(.timer, &ctx) }

  package mutating func fetchFinished(_ outcome: FetchOutcome, _ ctx: inout PolicyContext) {
    let h = session.handshake
    if h.asksFetchDone { decide(.fetchDone, &ctx, outcome) } else if h.tellsOutcomes { notes.outcomes.append(outcome) }
  }

  private mutating func decide(_ reason: ExternalMessage.Reason, _ ctx: inout PolicyContext, _ outcome: FetchOutcome? = nil) {
    let m = ExternalMessage.decide(
      prefix: prefix, reason: reason, ctx: ctx, clock: &clock, lowBatteryPct: Self.lowBatteryPct, outcome: outcome,
      notes: notes, compact: session.handshake.version >= 3)
    if !notes.isEmpty { notes = ExternalMessage.Notes() }
    guard let r = session.ask(m, now: ctx.now, app: appName) else {
      ctx.cancelTimer()
      return
    }
    if r.fetch { ctx.requestFetch() }
    switch r.next {
    case .keep: break
    case .cancel: ctx.cancelTimer()
    case .at(let t): ctx.setTimer(at: t)
    }
  }
}

/// `external:cmd=<command>[,timeout=<d>][,key=value,...]`: decisions from
/// a process that speaks the `external` protocol.
package enum ExternalFamily: PolicyFamily {
  /// The command, the reply timeout, and the settings passed through.
  package struct Configuration: Sendable, Hashable {
    /// A shell command line (`/bin/sh -c`), run in FetchLab's working directory.
    package var command: String
    /// The longest wait for a reply (or for the process to read), s.
    package var timeoutS: Double
    /// The other `key=value` settings, sorted by key, handed to the process.
    package var settings: [Setting]

    package struct Setting: Sendable, Hashable {
      package var key: String
      package var value: String
    }
  }

  /// The default reply timeout, s: room for an interpreter to start and a
  /// model to load at the first decision; a policy that hangs is stopped.
  static let defaultTimeoutS = 30.0

  package static let info = FamilyInfo(
    "external", .other(":cmd=<command>[,timeout=<d>,key=value,...]"), example: "external:cmd=python3 docs/examples/stale_after.py",
    learning: .usage, style: PolicyStyle(color: "#5D3A9B", marker: .openPentagon),
    summary:
      "decisions from another process (any language) over the JSON-lines protocol of docs/external-protocol.md: at each open of the app, ask-again time and fetch end it sees what the app could see and answers fetch now or not, and when to ask again; any other key=value (a key of a-z, 0-9 and _) is handed to the process as text")

  package static let settings = [
    PolicySettingInfo(
      name: "cmd", defaultValue: "(required)", range: "a shell command line without commas",
      help: "the process to start (/bin/sh -c, in the working directory); one per job, each serving many devices"),
    PolicySettingInfo(
      name: "timeout", defaultValue: "30s", range: "1s...1h",
      help: "the longest wait for a reply, or for the process to read (the handshake's at least 60 s); a process past it is stopped and the run fails"),
  ]

  package static func parse(_ argument: String?, spec: String) throws -> Configuration {
    guard let a = argument, !a.isEmpty else {
      throw PolicySpecError(.missingArgument, "policy 'external' needs a command, e.g. external:cmd=python3 policy.py")
    }
    var command: String?
    var timeout = defaultTimeoutS
    var seen = Set<String>()
    var rest: [Configuration.Setting] = []
    for item in a.split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
      let kv = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
      guard kv.count == 2, isKey(kv[0]) else {
        throw PolicySpecError(
          .badValue,
          "policy '\(spec)': '\(item)' is not key=value with a key of lower-case letters, digits and '_' (a command cannot hold a comma: wrap it in a script)")
      }
      guard seen.insert(kv[0]).inserted else {
        throw PolicySpecError(.repeatedSetting, "policy '\(spec)': setting '\(kv[0])' is given twice")
      }
      switch kv[0] {
      case "cmd":
        guard !kv[1].trimmingCharacters(in: .whitespaces).isEmpty else {
          throw PolicySpecError(.badValue, "policy '\(spec)': cmd is empty")
        }
        command = kv[1]
      case "timeout":
        guard let t = settingDuration(kv[1]), t >= 1, t <= 3600 else {
          throw PolicySpecError(.badValue, "policy '\(spec)': bad value '\(kv[1])' for timeout (a duration from 1s to 1h, e.g. timeout=10s)")
        }
        timeout = t
      default:
        rest.append(.init(key: kv[0], value: kv[1]))
      }
    }
    guard let command else {
      throw PolicySpecError(.missingArgument, "policy '\(spec)': needs cmd=<command>, e.g. external:cmd=python3 policy.py")
    }
    return Configuration(command: command, timeoutS: timeout, settings: rest.sorted { $0.key < $1.key })
  }

  private static func isKey(_ s: String) -> Bool {
    guard let f = s.unicodeScalars.first, ("a"..."z").contains(f) else { return false }
    return s.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
  }

  package static func describe(_ c: Configuration) -> String {
    "external:cmd=" + c.command + (c.timeoutS == defaultTimeoutS ? "" : ",timeout=" + formatDuration(c.timeoutS))
      + c.settings.map { "," + $0.key + "=" + $0.value }.joined()
  }

  package static func fetchSpacingBound(_ c: Configuration) -> Double? { ExternalReply.leastDelayS }
  package static func expectedFetchesPerDay(_ c: Configuration) -> Double { 24 }

  package static func makePolicies(_ c: Configuration, _ device: DeviceReplayInput) -> (Int32, ContentTimeline) -> ExternalPolicy {
    let seed = device.options.seed
    let pool = ExternalProcessPool.pool(
      key: describe(c) + "\u{0}\(seed)", command: c.command,
      hello: ExternalMessage.hello(
        seed: seed & (1 << 53 - 1), timeoutS: c.timeoutS, settings: c.settings.map { ($0.key, $0.value) }),
      timeoutS: c.timeoutS)
    let trace = device.user.trace
    let names = device.apps.map { trace.apps[Int($0)] }
    let training = device.training
    var opens = [[Double]](repeating: [], count: device.apps.count)
    for e in training.events where e.kind == .open {
      if let i = device.apps.firstIndex(of: e.app) { opens[i].append(e.time) }
    }
    var rng = SplitMix64(seed: seed, keys: "external", trace.user)
    let session = ExternalSession(
      pool: pool, user: trace.user,
      deviceMessage: ExternalMessage.device(
        user: trace.user, seed: rng.next() & (1 << 53 - 1), timeZone: trace.timeZone.description,
        windowStart: trace.start, apps: names, training: (training.start, training.end, opens)))
    let clock = LocalClock(trace.timeZone)
    let version = session.handshake.version
    return { app, _ in
      let name = trace.apps[Int(app)]
      return ExternalPolicy(
        session: session, prefix: ExternalMessage.decidePrefix(user: trace.user, app: name, version: version),
        appName: name, clock: clock)
    }
  }
}
