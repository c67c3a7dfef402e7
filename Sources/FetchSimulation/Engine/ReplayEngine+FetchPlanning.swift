import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld

extension ReplayEngine {
  mutating func handleRequest(_ j: Int) {
    if lanes[j].ctx.wakesWithoutFetch != 0 { chargeWakes(j) }
    guard let r = lanes[j].ctx.request else { return }
    lanes[j].ctx.request = nil
    let now = lanes[j].ctx.now
    guard lanes[j].inflight == nil, now < u.trace.end else { return }
    let f: InFlight
    switch r {
    case .now:
      f = plan(j, start: now, completion: nil)
    case .completing(let t):
      if let (start, end) = latestCompletion(j, by: t) {
        f = plan(j, start: start, completion: end)
      } else {
        f = plan(j, start: now, completion: nil)
      }
    case .within(let budget):
      longestBudgetS = max(longestBudgetS, budget)
      f = plan(j, start: now, completion: nil, budget: budget)
    }
    lanes[j].inflight = f
    lanes[j].ctx.fetchInFlight = true
  }

  /// The latest (start, end) at or before `t` at which a fetch can run
  /// whole inside one online network segment, starting no earlier than now;
  /// `nil` if there is none (oracles).
  mutating func latestCompletion(_ j: Int, by t: Double) -> (Double, Double)? {
    let now = lanes[j].ctx.now
    var d = t
    while d > now {
      // The segment a fetch ending at d runs in: the last change before d.
      var i = u.networkIndex(at: d, hint: &netHint)
      if i > 0 && u.netTimes[i] == d { i -= 1 }
      let segStart = u.netTimes[i]
      if u.netKinds[i] != .offline {
        let s = startToComplete(j, by: d, on: u.netKinds[i])
        if s >= max(segStart, now) { return (s, d) }
      }
      guard i > 0 else { return nil }
      d = segStart
    }
    return nil
  }

  /// The latest start from which a fetch on `net` finishes by `t`.
  mutating func startToComplete(_ j: Int, by t: Double, on net: NetworkKind) -> Double {
    guard let k = PreparedUser.interface(net) else { return t }
    let r = radio(net)
    let v = lanes[j].serverVersion(at: t)
    let bytes = v > lanes[j].version ? lanes[j].newDataBytes(version: v) : w.fetch.noDataBytes
    let x = r.transferTime(downBytes: bytes, upBytes: w.fetch.requestBytes)
    let base = x.up + w.fetch.serverLatencyS + x.down
    let p0 = r.promotion(afterGap: quietGap(k, at: t - base)).timeS
    var s = t - base - p0
    let p1 = r.promotion(afterGap: quietGap(k, at: s)).timeS
    if p1 > p0 { s = t - base - p1 }
    // Waiting for a promotion under way (another fetch's or a burst's)
    // would end too late: start before it began, with a promotion of its own.
    let under = promotionUnderWay(k, at: s, r)
    if s >= under.from && s < under.to && under.to > t - base {
      let before = under.from.nextDown
      s = min(before, t - base - r.promotion(afterGap: quietGap(k, at: before)).timeS)
    }
    return s
  }

  /// Works out lane `j`'s fetch starting at `s`: its completion, failure,
  /// bytes and energy, and puts it on the device radio.
  /// `budget` replaces ``FetchExchange/fetchBudgetS`` for this fetch.
  mutating func plan(_ j: Int, start s: Double, completion forced: Double?, budget: Double? = nil) -> InFlight {
    let seg = u.networkIndex(at: s, hint: &netHint)
    let net = u.netKinds[seg]
    let cpuWake = w.device.cpuWakeEnergyJ
    guard let k = PreparedUser.interface(net) else {
      return InFlight(start: s, end: s, failure: .offline, bytes: 0, energyJ: cpuWake, network: net, answeredAt: s)
    }
    let instant = w.replay.instantTransfers
    let r = radio(net)
    // A promotion under way (another fetch's, or a burst's that began on a
    // quiet radio) is not over for this one either.
    let under = promotionUnderWay(k, at: s, r)
    let waiting = s >= under.from && s < under.to ? under.to - s : 0
    let promoS = max(r.promotion(afterGap: quietGap(k, at: s)).timeS, waiting)
    if promoS > 0 && s + promoS > promotedAt[k] {
      promotingFrom[k] = s
      promotedAt[k] = s + promoS
    }
    let x0 = r.transferTime(downBytes: 0, upBytes: w.fetch.requestBytes)
    // The server answers after the promotion, the request and its own
    // time, also for a fetch timed to finish at a given moment (which
    // then waits for its end, not for content published meanwhile).
    let response = instant ? s : s + promoS + x0.up + w.fetch.serverLatencyS
    let version = lanes[j].version
    let v = lanes[j].serverVersion(at: response)
    var respBytes = v > version ? lanes[j].newDataBytes(version: v) : w.fetch.noDataBytes
    // A large item goes to the background transfer queue: the handler gets
    // the feed (a no-data-sized response) and hands the item over.
    var handOff = 0
    if v > version, let ts = lanes[j].ctx.transfers, respBytes >= ts.minBytes {
      handOff = v
      respBytes = w.fetch.noDataBytes
    }
    let x = r.transferTime(downBytes: respBytes, upBytes: w.fetch.requestBytes)
    var end = max(forced ?? 0, s + promoS + x.up + w.fetch.serverLatencyS + x.down)
    var failure = FetchFailure.none
    var downS = x.down
    var bytes = w.fetch.requestBytes + respBytes
    let nextChange = seg + 1 < u.netTimes.count ? u.netTimes[seg + 1] : .infinity
    let budgetEnd = s + (budget ?? w.fetch.fetchBudgetS)
    let cut = min(budgetEnd, nextChange)
    if cut < end && !instant {
      failure = cut == budgetEnd ? .budget : .networkChange
      let frac = max(0, min(1, (cut - (end - x.down)) / x.down))
      downS = x.down * frac
      bytes = w.fetch.requestBytes + respBytes * frac
      end = cut
    } else if w.fetch.failureProbability > 0 && lanes[j].rng.uniform() < w.fetch.failureProbability {
      failure = .server
      bytes = w.fetch.requestBytes + w.fetch.noDataBytes
      downS = r.transferTime(downBytes: w.fetch.noDataBytes, upBytes: 0).down
    }
    let iv = BusyInterval(start: s, end: end)
    let radioJ = marginalEnergy(k, net, iv) + r.throughputEnergy(downS: downS, upS: x.up)
    addOwn(k, iv, now: lanes[j].ctx.now)
    let energy = cpuWake + w.device.cpuActivePowerW * (end - s) + radioJ
    return InFlight(
      start: s, end: instant ? s : end, failure: failure, bytes: bytes, energyJ: energy, network: net,
      answeredAt: response, handOff: failure == .none ? handOff : 0)
  }

  /// Prices the foreground refresh of stale open `o` of lane `j` at `t`
  /// (see ``recordOpen(_:at:)``).
  @inline(never)
  mutating func refreshStale(_ j: Int, _ o: AppLane.Open, at t: Double) {
    // Prepared with the user; worked out here only if the replay's opens
    // and the prepared ones ever disagreed.
    let c: OpenContext
    if o.index < lanes[j].openContexts.count && lanes[j].openContexts[o.index].time == t {
      c = lanes[j].openContexts[o.index]
    } else {
      c = OpenContext(open: t, netTimes: u.netTimes, netKinds: u.netKinds, busy: u.busy, netHint: &netHint, busyHints: &busyHints)
    }
    let net = u.netKinds[c.network]
    guard let k = PreparedUser.interface(net) else {
      lanes[j].sync(to: o.version, at: t)
      return
    }
    let r = radio(net)
    let x = r.transferTime(downBytes: o.responseBytes, upBytes: w.fetch.requestBytes)
    // The user's activity counts only when the radio is shared with it.
    let quietSince = w.replay.shareUserRadio ? c.quietSince : -.infinity
    let coverEnd = w.replay.shareUserRadio ? c.coverEnd : -.infinity
    let before = t.nextDown
    let gap = quietSince == before ? 0 : before - lastActivity(k, at: before, after: quietSince)
    let wait = r.promotion(afterGap: gap).timeS + w.openSetupS[Int(net.rawValue)] + x.up + w.fetch.serverLatencyS + x.down
    let iv = BusyInterval(start: t, end: t + wait)
    var energy = r.throughputEnergy(downS: x.down, upS: x.up)
    // Inside the user's session that opened the app: no radio energy
    // added and no one else's changed, exactly.
    if coverEnd < iv.end {
      energy += marginalEnergy(k, net, iv)
      addOwn(k, iv, now: t)
    }
    lanes[j].refreshed(
      at: t, version: o.version, wait: wait, energyJ: energy, bytes: w.fetch.requestBytes + o.responseBytes,
      cellular: net.isCellular)
  }

  mutating func complete<P: FetchPolicy>(_ j: Int, _ policy: inout P, notify: Bool) {
    let f = lanes[j].inflight!
    lanes[j].inflight = nil
    lanes[j].ctx.fetchInFlight = false
    var result = FetchResult.failed
    if f.handOff > 0, let ts = lanes[j].ctx.transfers {
      // An item the queue already holds (a discretionary one waiting, seen
      // again by a periodic fetch) is nothing new to the handler.
      let queued = transfers.waiting.contains { $0.lane == j && $0.version >= f.handOff }
      result = queued ? .noData : .newData
      enqueueTransfer(j, version: f.handOff, at: f.end, settings: ts)
    } else if f.failure == .none {
      let v = lanes[j].serverVersion(at: f.answeredAt)
      if v > lanes[j].version {
        result = .newData
        if lanes[j].unseenNewData { lanes[j].summary.wasted += 1 }
        lanes[j].unseenNewData = true
        lanes[j].sync(to: v, at: min(f.end, u.trace.end))
      } else {
        result = .noData
      }
    }
    lanes[j].summary.fetches += 1
    switch result {
    case .newData: lanes[j].summary.newData += 1
    case .noData: lanes[j].summary.noData += 1
    case .failed: lanes[j].summary.failed += 1
    }
    lanes[j].summary.energyJ += f.energyJ
    if f.network.isCellular { lanes[j].summary.cellularBytes += f.bytes } else { lanes[j].summary.wifiBytes += f.bytes }
    let outcome = FetchOutcome(
      start: f.start, end: f.end, result: result, bytes: f.bytes, energyJ: f.energyJ, network: f.network,
      charging: u.isCharging(at: f.start))
    lanes[j].summary.chargingEnergyJ += f.energyJ - outcome.batteryEnergyJ
    drainBattery(f.energyJ, charging: isCharging)
    if options.recordEvents { lanes[j].fetches.append(FetchRecord(outcome: outcome, failure: f.failure.text)) }
    guard notify else { return }
    policy.fetchFinished(outcome, &lanes[j].ctx)
    handleRequest(j)
  }

  /// Counts `energyJ` of the device's background work against the battery
  /// (not while `charging`) and shows every app's policy the level it
  /// implies: the last sample less the energy since, as % of capacity.
  mutating func drainBattery(_ energyJ: Double, charging: Bool) {
    if !charging { energySinceSampleJ += energyJ }
    if let p = sampledPct {
      let pct = max(0, p - 100 * energySinceSampleJ / w.device.batteryCapacityJ)
      for m in lanes.indices { lanes[m].ctx.batteryPct = pct }
    }
  }
}
