import FetchModels
import FetchTraces
import FetchWorld

/// Knobs of the fetch-on-exit policy (Apple background-task documentation). Durations in seconds.
package struct FetchOnExitParameters: SettingTable {
  /// How the background task runs: iOS 6 (0), ~600 s of continuous time
  /// keeping the device awake; iOS 7 (1), in chunks when the device wakes
  /// for other reasons, under 10 min in total (V, Xamarin.iOS backgrounding guides).
  package var mode = Mode.ios6
  /// The task's time, s: continuous (iOS 6) or the total of the chunks
  /// (iOS 7) (V: 600 s; later iOS versions grant 30–180 s, M).
  package var taskTimeS = 600.0
  /// iOS 7: the chunk right at the exit, s, while the app is still being
  /// moved to the background (M: `DidEnterBackground`'s few seconds, ~5 s).
  package var exitChunkS = 5.0
  /// iOS 7: the chunk a location wake gives, s (M: ~10 s).
  package var locationChunkS = 10.0

  /// The two background-task regimes.
  package enum Mode: String, Sendable, Hashable, CaseIterable {
    case ios6, ios7
  }

  package init() {}

  /// Names accepted in `fetch-on-exit:key=value,...` (besides `mode`).
  package static let keys: [SettingKey<FetchOnExitParameters>] = [
    .init("task_time", \.taskTimeS, min: 1, max: 3600, duration: true, help: "background-task time: continuous (ios6) or the total of the chunks (ios7)"),
    .init("exit_chunk", \.exitChunkS, max: 600, duration: true, help: "ios7: chunk of time right at the exit (DidEnterBackground)"),
    .init("location_chunk", \.locationChunkS, max: 600, duration: true, help: "ios7: chunk of time a location wake gives"),
  ]
}

/// Refresh when the user leaves the app, `fetch-on-exit` (Apple background-task documentation):
/// the app asks for background-task time (`beginBackgroundTask`) as it
/// moves to the background, at the end of each of its sessions (the open's
/// time plus its session length), and refreshes its content in that time.
///
/// - **iOS 6** (`mode=ios6`): ~600 s of continuous time keeping the device
///   awake: the refresh starts at the exit and may run up to
///   ``FetchOnExitParameters/taskTimeS``; it is charged its CPU (the CPU
///   wake and active power for its duration: the awake time it actually
///   uses, since the app ends the task when done) and its marginal radio
///   energy. The user's session just ended, so the radio is often still in
///   its tail.
/// - **iOS 7** (`mode=ios7`): the task's time is opportunistic: the work
///   runs in chunks when the device is awake for other reasons: a short
///   chunk at the exit itself (``FetchOnExitParameters/exitChunkS``), then
///   the next wakes: another app's `wake` row (its duration), another app's
///   open (its session), a `location` row
///   (``FetchOnExitParameters/locationChunkS``), under
///   ``FetchOnExitParameters/taskTimeS`` in total. Each chunk starts the
///   fetch afresh and cuts it at the chunk's end (simplified: no resume of
///   a cut download); the time each chunk's fetch runs is taken from the
///   total. The task ends when the fetch succeeds, its time is used up, or
///   the user opens the app again.
///
/// No battery gate: a background task is the app's own time, granted to
/// any app leaving the foreground.
package struct FetchOnExitPolicy: FetchPolicy {
  package static var observedEvents: ObservedEvents { .allWithLocation }
  package let params: FetchOnExitParameters
  /// iOS 7: the time left of the pending task (0: none pending).
  var remaining = 0.0
  /// iOS 7: the current chunk's end (−∞: none).
  var chunkEnd = -Double.infinity
  /// Refresh attempts (one per iOS 6 exit; one per iOS 7 chunk used).
  package private(set) var attempts = 0
  /// iOS 7 tasks that ended with their time used up before a success.
  package private(set) var exhausted = 0

  package init(params: FetchOnExitParameters = FetchOnExitParameters()) {
    self.params = params
  }

  package mutating func observe(_ event: TraceEvent, _ ctx: inout PolicyContext) {
    switch event.kind {
    case .open where event.app == ctx.app:
      // Back in the foreground: the pending task ends; exit at session end.
      remaining = 0
      chunkEnd = -.infinity
      ctx.setTimer(at: event.time + event.value)
    case .open:
      chunk(&ctx, seconds: event.value)
    case .wake:
      chunk(&ctx, seconds: event.value)
    case .location:
      chunk(&ctx, seconds: params.locationChunkS)
    case .network:
      // A chunk that waited offline may start its fetch now.
      if chunkEnd > ctx.now { chunk(&ctx, seconds: chunkEnd - ctx.now) }
    default:
      break
    }
  }

  /// The exit: the user left the app.
  package mutating func timerFired(_ ctx: inout PolicyContext) {
    switch params.mode {
    case .ios6:
      guard !ctx.fetchInFlight else { return }
      attempts += 1
      ctx.requestFetch(withinS: params.taskTimeS)
    case .ios7:
      remaining = params.taskTimeS
      chunkEnd = -.infinity
      chunk(&ctx, seconds: params.exitChunkS)
    }
  }

  package mutating func fetchFinished(_ outcome: FetchOutcome, _ ctx: inout PolicyContext) {
    guard params.mode == .ios7, remaining > 0 else { return }
    remaining = max(0, remaining - (outcome.end - outcome.start))
    if outcome.result != .failed {
      remaining = 0
    } else if remaining <= 0 {
      exhausted += 1
    } else if chunkEnd > ctx.now && outcome.end > outcome.start {
      // Failed inside a chunk that is still open (e.g. a network change): go on in it.
      chunk(&ctx, seconds: chunkEnd - ctx.now)
    }
  }

  /// iOS 7: the device is awake for `seconds` from now; the pending task
  /// runs a fetch in that time (at most its remaining time).
  mutating func chunk(_ ctx: inout PolicyContext, seconds: Double) {
    guard params.mode == .ios7, remaining > 0, seconds > 0 else { return }
    chunkEnd = max(chunkEnd, ctx.now + seconds)
    guard !ctx.fetchInFlight, ctx.network != .offline else { return }
    let budget = min(chunkEnd - ctx.now, remaining)
    guard budget > 0 else { return }
    attempts += 1
    ctx.requestFetch(withinS: budget)
  }
}

/// `fetch-on-exit[:mode=ios6|ios7,key=value,...]`.
package enum FetchOnExitFamily: PolicyFamily {
  package static let info = FamilyInfo(
    "fetch-on-exit", .settingsAfter("mode=ios6|ios7"),
    example: "fetch-on-exit:mode=ios7", style: PolicyStyle(color: "#CC79A7", marker: .openSquare),
    summary:
      "refresh when the user leaves the app, in background-task time: ios6 ~600 s continuous (the device kept awake), ios7 in chunks at the next device wakes, under 10 min in total")

  /// `mode=ios6|ios7`, among the table's settings.
  static let mode = ChoiceSetting(
    name: "mode", path: \FetchOnExitParameters.mode,
    help: "ios6: continuous task time at the exit; ios7: chunks at later device wakes")

  package static var settings: [PolicySettingInfo] { [mode.info] + FetchOnExitParameters.settingInfos }

  package static func parse(_ argument: String?, spec: String) throws -> FetchOnExitParameters {
    try mode.parse(argument, policy: spec)
  }
  package static func describe(_ p: FetchOnExitParameters) -> String {
    var q = p
    q.mode = .ios6
    let rest = q.settingsSuffix(separator: ",")
    let items = (p.mode == .ios6 ? "" : "mode=ios7") + rest
    return name + (items.isEmpty ? "" : ":" + (items.hasPrefix(",") ? String(items.dropFirst()) : items))
  }
  /// One refresh per session of the app (UbiqLog: a few a day).
  package static func expectedFetchesPerDay(_ p: FetchOnExitParameters) -> Double { 20 }
  package static func makePolicies(_ p: FetchOnExitParameters, _ device: DeviceReplayInput) -> (Int32, ContentTimeline) -> FetchOnExitPolicy {
    { _, _ in FetchOnExitPolicy(params: p) }
  }
}
