import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces
import FetchWorld
import Foundation

// MARK: Replaying one day

extension UserDayTimeline {
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
    let input = try chooseInput(run, request)
    if let w = run.worlds[input.dataset] { run.world = w }
    let (path, check) = try checkTrace(input, runDir: runDir)
    let specs = try choosePolicies(run, request, runDir: runDir)
    let trace = try findUser(path, request)
    let config = RunConfiguration(
      tracePath: path, policies: specs, seed: run.seed, world: run.world, apps: run.apps, recordEvents: true, jobs: 1,
      trainFraction: run.trainFraction)
    let population = specs.contains(where: \.usesHabitModel) ? try fitPopulation(config) : PopulationModels()
    let result = replayUser(trace, config, models: population)
    let test = result.trace
    guard !result.apps.isEmpty else { throw TimelineError(.badRequest, "user \(trace.user) opens no app the run selected (\(run.apps))") }
    let a = try chooseApp(result, request, user: trace.user)
    let app = result.apps[a]
    let dayNumber = try chooseDay(request, test, app: app, user: trace.user)
    let t0 = midnight(dayNumber, test.timeZone), t1 = midnight(dayNumber + 1, test.timeZone)
    let lo = max(t0, test.start), hi = min(t1, test.end)

    // Device state from the prepared user (what the replay saw).
    let prepared = PreparedUser(trace: test, world: run.world)
    let network = networkSpans(prepared, test, lo: lo, hi: hi)
    let charging = chargingSpans(test, lo: lo, hi: hi)
    let (busy, tails) = backgroundRadio(prepared, world: run.world, lo: lo, hi: hi)
    let lanes = specs.enumerated().map { pi, spec in
      lane(spec, result.replays[a][pi], t0: t0, t1: t1, prepared: prepared, world: run.world)
    }
    let content = ContentTimeline(trace: test, app: app, world: run.world, seed: run.seed)
    return UserDayTimeline(
      dataset: input.dataset, user: trace.user, app: test.apps[Int(app)], day: civil(dayNumber), timeZone: test.timeZone,
      dayStart: t0, dayEnd: t1, window: Span(start: test.start, end: test.end), tracePath: path, traceCheck: check,
      seed: run.seed, network: network, charging: charging, updates: content.updates.filter { $0 >= t0 && $0 < t1 },
      backgroundBusy: busy, backgroundTails: tails, cellularTailS: run.world.radios.radio(for: .cellular)?.tailDurationS ?? 0,
      lanes: lanes)
  }

  /// One of the run's traces as its manifest records it: the path given,
  /// its SHA-256, the path from the run directory and the absolute path.
  typealias RunInput = (dataset: String, path: String, sha256: String?, fromRunDir: String?, absolute: String?)

  /// The run's input the request names (default: the first).
  private static func chooseInput(_ run: RunSettings, _ request: TimelineRequest) throws -> RunInput {
    guard let d = request.dataset else { return run.inputs[0] }
    guard let i = run.inputs.first(where: { $0.dataset == d }) else {
      throw TimelineError(.badRequest, "--timeline-dataset \(d): the run's datasets are \(run.inputs.map { $0.dataset.isEmpty ? "(unnamed)" : $0.dataset }.joined(separator: ", "))")
    }
    return i
  }

  /// The input's trace file, a regular file checked against the manifest's
  /// SHA-256 when it has one, and what the check found.
  private static func checkTrace(_ input: RunInput, runDir: String) throws -> (path: String, check: String) {
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
    return (path, check)
  }

  /// The requested policies (each one of the run's; duplicates once), else the defaults.
  private static func choosePolicies(_ run: RunSettings, _ request: TimelineRequest, runDir: String) throws -> [PolicySpec] {
    var chosen: [String] = []
    for p in request.policies {
      let spec: PolicySpec
      do { spec = try PolicySpec(parsing: p) } catch { throw TimelineError(.badRequest, "--timeline-policy \(p): \(error)") }
      guard !spec.needsGeneratorTruth else {
        throw TimelineError(.badRequest, "--timeline-policy \(p): the timeline replays without the generator's models")
      }
      guard run.policies.contains(spec.description) else {
        throw TimelineError(.badRequest, "--timeline-policy \(p): not one of the run's policies (\(run.policies.joined(separator: ", ")))")
      }
      if !chosen.contains(spec.description) { chosen.append(spec.description) }
    }
    if chosen.isEmpty { chosen = defaultPolicies(run.policies) }
    return try chosen.filter { p in (try? PolicySpec(parsing: p))?.needsGeneratorTruth != true }.map { p in
      do { return try PolicySpec(parsing: p) } catch { throw TimelineError(manifest: "\(runDir)/manifest.json", "policy \(p): \(error)") }
    }
  }

  /// The requested user of the trace, else its first.
  private static func findUser(_ path: String, _ request: TimelineRequest) throws -> UserTrace {
    let reader = try TraceReader(path: path)
    while let u = try reader.next() {
      if request.user == nil || u.user == request.user { return u }
    }
    throw TimelineError(.badRequest, request.user.map { "--timeline-user \($0): not in \(path)" } ?? "\(path): no users")
  }

  /// The index among the replayed apps of the requested app, else 0 (the most opened).
  private static func chooseApp(_ result: UserResult, _ request: TimelineRequest, user: String) throws -> Int {
    guard let name = request.app else { return 0 }
    let test = result.trace
    guard let i = result.apps.firstIndex(where: { test.apps[Int($0)] == name }) else {
      throw TimelineError(.badRequest, "--timeline-app \(name): not among user \(user)'s replayed apps (\(result.apps.map { test.apps[Int($0)] }.joined(separator: ", ")))")
    }
    return i
  }

  /// The requested day (inside the replayed window), else the day with the
  /// most opens of `app`, whole days first, ties the earliest.
  private static func chooseDay(_ request: TimelineRequest, _ test: UserTrace, app: Int32, user: String) throws -> Int {
    var clock = LocalClock(test.timeZone)
    func dayOf(_ t: Double) -> Int { Int((clock.local(t) / 86_400).rounded(.down)) }
    if let s = request.day {
      guard let d = parseDay(s) else { throw TimelineError(.badRequest, "--timeline-day \(s): expected YYYY-MM-DD") }
      guard midnight(d + 1, test.timeZone) > test.start, midnight(d, test.timeZone) < test.end else {
        throw TimelineError(.badRequest, "--timeline-day \(s): outside user \(user)'s replayed (test) window \(civil(dayOf(test.start))) to \(civil(dayOf(test.end)))")
      }
      return d
    }
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
    return ranked[0]
  }

  /// The network segments inside [lo, hi).
  private static func networkSpans(_ prepared: PreparedUser, _ test: UserTrace, lo: Double, hi: Double) -> [NetworkSpan] {
    var network: [NetworkSpan] = []
    let changes = prepared.networkChanges
    for (i, c) in changes.enumerated() {
      let s = max(c.time, lo), e = min(i + 1 < changes.count ? changes[i + 1].time : test.end, hi)
      if e > s { network.append(NetworkSpan(start: s, end: e, network: c.network)) }
    }
    return network
  }

  /// The charging periods inside [lo, hi).
  private static func chargingSpans(_ test: UserTrace, lo: Double, hi: Double) -> [Span] {
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
    return charging
  }

  /// Background radio activity on whichever interface is active, and its
  /// tails, inside [lo, hi), each sorted.
  private static func backgroundRadio(
    _ prepared: PreparedUser, world: WorldParameters, lo: Double, hi: Double
  ) -> (busy: [Span], tails: [Span]) {
    var busy: [Span] = [], tails: [Span] = []
    for cellular in [false, true] {
      let b = prepared.backgroundBusy(cellular: cellular)
      let radio = (cellular ? world.radios.radio(for: .cellular) : world.radios.radio(for: .wifi))?.terms ?? RadioTerms()
      for (i, iv) in b.enumerated() where radio.tailEnd(after: iv.end) > lo && iv.start < hi {
        busy.append(Span(start: max(iv.start, lo), end: min(iv.end, hi)))
        let next = i + 1 < b.count ? b[i + 1].start : .infinity
        let te = min(radio.tailEnd(after: iv.end, nextActivityAt: next), hi)
        if te > iv.end { tails.append(Span(start: max(iv.end, lo), end: te)) }
      }
    }
    busy.sort { ($0.start, $0.end) < ($1.start, $1.end) }
    tails.sort { ($0.start, $0.end) < ($1.start, $1.end) }
    return (busy, tails)
  }

  /// One policy's lane: its fetches that start in [t0, t1) with the tails
  /// they caused, and the opens in the day.
  private static func lane(
    _ spec: PolicySpec, _ r: AppReplay, t0: Double, t1: Double, prepared: PreparedUser, world: WorldParameters
  ) -> Lane {
    let all = r.fetches
    var dayFetches: [FetchRecord] = [], dayTails: [Span] = []
    for (k, f) in all.enumerated() where f.start >= t0 && f.start < t1 {
      dayFetches.append(f)
      dayTails.append(causedTail(f, index: k, fetches: all, prepared: prepared, world: world))
    }
    return Lane(
      policy: spec.description, fetches: dayFetches, tails: dayTails,
      opens: r.opens.filter { $0.time >= t0 && $0.time < t1 }, energyJ: dayFetches.reduce(0) { $0 + $1.energyJ })
  }

  /// The part of fetch `k`'s cellular radio tail that nothing else paid
  /// for: from its end (or the end of a tail already running from earlier
  /// activity) to the end of its own tail or the next activity on the
  /// interface. Empty for WiFi fetches (a WiFi tail is 0.24 s by default).
  static func causedTail(
    _ f: FetchRecord, index k: Int, fetches: [FetchRecord], prepared: PreparedUser, world: WorldParameters
  ) -> Span {
    guard f.failure != "offline", f.network != .offline, f.network != .wifi, let radio = world.radios.radio(for: f.network)?.terms
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
