import FetchModels
import FetchSupport
import FetchTraces

extension ReplayEngine {
  // The families reach the engine through the registry's existential
  // metatypes, so its callers are not specialized: these pre-specialized
  // copies (one per built-in policy; the generic entry dispatches to them
  // at run time) keep the per-event calls static. A policy registered from
  // outside runs the generic code, with the same results.
  @_specialize(where P == NeverPolicy)
  @_specialize(where P == PeriodicPolicy)
  @_specialize(where P == OraclePolicy)
  @_specialize(where P == OracleBudgetPolicy)
  @_specialize(where P == IOSMinimumPolicy)
  @_specialize(where P == PlannerPolicy)
  @_specialize(where P == SilentPushPolicy)
  @_specialize(where P == AndroidWorkManagerPolicy)
  @_specialize(where P == AndroidStandbyPolicy)
  @_specialize(where P == TailEnderPolicy)
  @_specialize(where P == IMPPolicy)
  @_specialize(where P == TransferPolicy)
  @_specialize(where P == LocationWakePolicy)
  @_specialize(where P == FetchOnExitPolicy)
  @_specialize(where P == BGAppRefreshPolicy)
  @_specialize(where P == BGProcessingPolicy)
  @_specialize(where P == AndroidPrefetchPolicy)
  @_specialize(where P == AnyFetchPolicy)
  mutating func run<P: FetchPolicy>(_ policies: inout [P]) -> DeviceReplay {
    // Policies that ignore most events only need the apps' opens.
    let all = P.observedEvents == .all || P.observedEvents == .allWithLocation
    let location = P.observedEvents == .allWithLocation
    let events = all ? u.trace.events : appOpens
    let end = u.trace.end
    let n = lanes.count
    var i = 0
    for j in 0..<n {
      updateRadio(P.self, j)
      policies[j].start(&lanes[j].ctx)
      handleRequest(j)
    }
    // The earliest completion and timer over the lanes change only when a
    // policy is called or a fetch completes: scanned again only then.
    var tDone = Double.infinity, done = 0
    var tTimer = Double.infinity, timer = 0
    var rescan = true
    while true {
      let tEvent = i < events.count ? events[i].time : .infinity
      if rescan {
        tDone = .infinity
        tTimer = .infinity
        for j in 0..<n {
          if let f = lanes[j].inflight, f.end < tDone { tDone = f.end; done = j }
          if lanes[j].ctx.timerAt < tTimer { tTimer = lanes[j].ctx.timerAt; timer = j }
        }
        rescan = false
      }
      // Background transfers: after everything else at the same instant.
      let tTransfer = transfers.nextTime
      if tTransfer < tDone && tTransfer < tEvent && tTransfer < tTimer && tTransfer <= end {
        stepTransfers(at: tTransfer)
        continue
      }
      if tDone <= tEvent && tDone <= tTimer && tDone <= end {
        lanes[done].ctx.now = tDone
        updateRadio(P.self, done)
        complete(done, &policies[done], notify: true)
        rescan = true
      } else if tEvent <= tTimer && tEvent <= end {
        let e = events[i]
        i += 1
        if all {
          // Location rows change no device state: skipped unless shown.
          if e.kind == .location && !location { continue }
          guard apply(e) else { continue }
          for j in 0..<n {
            lanes[j].ctx.now = tEvent
            updateRadio(P.self, j)
            policies[j].observe(e, &lanes[j].ctx)
            handleRequest(j)
          }
          rescan = true
        } else {
          let j = laneOf[Int(e.app)]
          recordOpen(j, at: e.time)
          guard P.observedEvents == .appOpens else {
            // The policy sees no opens, so they move no completion, timer
            // or transfer: every open before the next of those (the order
            // of the branches above) is scored here in one run.
            let through = min(tTimer, tTransfer, end)
            while i < events.count {
              let t = events[i].time
              guard t < tDone && t <= through else { break }
              recordOpen(laneOf[Int(events[i].app)], at: t)
              i += 1
            }
            continue
          }
          lanes[j].ctx.now = tEvent
          updateRadio(P.self, j)
          policies[j].observe(e, &lanes[j].ctx)
          handleRequest(j)
          rescan = true
        }
      } else if tTimer <= end {
        lanes[timer].ctx.now = tTimer
        lanes[timer].ctx.timerAt = .infinity
        updateRadio(P.self, timer)
        policies[timer].timerFired(&lanes[timer].ctx)
        handleRequest(timer)
        rescan = true
      } else {
        break
      }
    }
    for j in 0..<n where lanes[j].inflight != nil {
      lanes[j].ctx.now = lanes[j].inflight!.end
      complete(j, &policies[j], notify: false)
    }
    for j in 0..<n where lanes[j].ctx.monitorsLocation { chargeStandingMonitoring(j) }
    let apps = (0..<n).map { finish($0) }
    #if DEBUG
    _checkInvariants(apps)
    #endif
    return DeviceReplay(apps: apps, summary: DeviceSummary(apps))
  }

  /// Refreshes ``PolicyContext/radioQuietGapS`` and ``PolicyContext/radioTailS``
  /// of lane `j` for policies that read them.
  mutating func updateRadio<P: FetchPolicy>(_: P.Type, _ j: Int) {
    guard P.observesRadio else { return }
    if let k = PreparedUser.interface(lanes[j].ctx.network) {
      lanes[j].ctx.radioQuietGapS = quietGap(k, at: lanes[j].ctx.now)
      lanes[j].ctx.radioTailS = radio(lanes[j].ctx.network).terms.tailDurationS
    } else {
      lanes[j].ctx.radioQuietGapS = .infinity
      lanes[j].ctx.radioTailS = 0
    }
  }

  /// Applies a trace event to the device state; returns whether the policies see it.
  mutating func apply(_ e: TraceEvent) -> Bool {
    switch e.kind {
    case .update:
      return false
    case .open:
      let j = Int(e.app) < laneOf.count ? laneOf[Int(e.app)] : -1
      if j >= 0 { recordOpen(j, at: e.time) }
    case .network:
      network = e.network ?? .offline
      for j in lanes.indices { lanes[j].ctx.network = network }
    case .battery:
      sampledPct = e.value
      energySinceSampleJ = 0
      for j in lanes.indices { lanes[j].ctx.batteryPct = e.value }
    case .chargeStart:
      isCharging = true
      for j in lanes.indices { lanes[j].ctx.isCharging = true }
    case .chargeEnd:
      isCharging = false
      for j in lanes.indices { lanes[j].ctx.isCharging = false }
    case .wake, .location:
      break
    }
    return true
  }

  /// Scores an open of lane `j`'s app at `t` and, with foreground refresh,
  /// refreshes its content (after scoring: an open does not see a refresh at
  /// its own instant).
  ///
  /// The open is fresh when the age is 0 (an update at the open's instant
  /// included). A stale open on a network fetches in the foreground: the
  /// radio state just before the open decides the promotion, and the
  /// user's wait is promotion + request + server latency + response; a
  /// fresh open waits 0 s; an offline open's wait is not measured.
  ///
  /// Most opens are fresh and end in the lane's side; a stale one's
  /// refresh is priced out of line (``refreshStale(_:_:at:)``), which keeps
  /// this function's frame small. (Even marked `@inline(__always)`, it is
  /// called, not inlined, from the specialized event loops; see
  /// docs/performance.md.)
  @inline(__always)
  mutating func recordOpen(_ j: Int, at t: Double) {
    // The lane's side (score, trace context, server version, a fresh
    // open's wait and sync) in one access to it.
    let o = lanes[j].open(at: t, windowStart: u.trace.start, record: options.recordEvents, refresh: w.refreshesAtOpen)
    if o.stale { refreshStale(j, o, at: t) }
  }
}
