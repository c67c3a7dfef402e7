import FetchWorld

#if DEBUG
/// The replay state's invariants, checked at the end of every replay in
/// debug and test builds (release builds compile none of this).
extension ReplayEngine {
  /// The invariants of the finished replay that `apps` (the result of
  /// ``run(_:)``) violate, in words; empty when all hold.
  ///
  /// - Times: every lane integrated up to at most the window end; recorded
  ///   opens and fetch starts non-decreasing and inside the window; every
  ///   fetch ends no earlier than it starts.
  /// - Radio: no fetch in flight; each interface's list of device fetches
  ///   sorted by start.
  /// - Budgets: no fetch runs longer than ``FetchExchange/fetchBudgetS``
  ///   (or the longest budget a policy asked for);
  ///   the fetch energy since the last battery sample is non-negative.
  /// - Charges: fetches = new data + no data + failed; the summary's energy
  ///   and bytes equal the sums over the recorded fetches (when recorded)
  ///   plus the background transfers' and the location monitoring's
  ///   (zero unless the app monitors location); transfers complete at most
  ///   once each; energy, bytes, ages and waits are non-negative.
  /// - Complexity: O(opens + fetches).
  func invariantViolations(_ apps: [AppReplay]) -> [String] {
    var out: [String] = []
    func check(_ ok: Bool, _ what: @autoclosure () -> String) { if !ok { out.append(what()) } }
    let start = u.trace.start, end = u.trace.end
    // Rounding of absolute Unix times (about 2.4e-7 s at 2^30 s).
    let timeSlack = 4 * max(abs(start), abs(end)).ulp
    for j in lanes.indices {
      let lane = lanes[j]
      // The records were moved from the lane to its result.
      let r = apps[j]
      let s = r.summary
      check(lane.inflight == nil && !lane.ctx.fetchInFlight, "lane \(j): a fetch is still in flight")
      check(lane.version >= 0 && lane.version <= lane.updates.count, "lane \(j): version \(lane.version) out of range")
      check(lane.segmentStart <= end, "lane \(j): integrated past the window end")
      check(
        lane.freshTime >= 0 && lane.freshTime <= (end - start) * (1 + 1e-9) + timeSlack,
        "lane \(j): fresh time \(lane.freshTime) s")
      check(lane.ageIntegral >= 0, "lane \(j): negative age integral")
      check(s.fetches == s.newData + s.noData + s.failed, "lane \(j): fetch outcomes do not add up")
      check(s.energyJ >= 0 && s.cellularBytes >= 0 && s.wifiBytes >= 0, "lane \(j): negative energy or bytes")
      check(s.foregroundEnergyJ >= 0, "lane \(j): negative foreground energy")
      check(
        s.monitoringEnergyJ >= 0 && (lane.ctx.monitorsLocation || s.monitoringEnergyJ == 0)
          && lane.ctx.wakesWithoutFetch == 0,
        "lane \(j): monitoring energy \(s.monitoringEnergyJ) J without location monitoring, or wakes left uncharged")
      check(r.staleAges.allSatisfy { $0 >= 0 } && r.staleAges.count <= s.opens, "lane \(j): bad ages")
      check(r.waits.allSatisfy { $0 >= 0 }, "lane \(j): negative wait")
      check(
        s.transferEnergyJ >= 0 && s.transferCellularBytes >= 0 && s.transferWifiBytes >= 0
          && s.transfersCompleted <= s.transfersQueued && s.transfersCompleted <= s.transferChunks,
        "lane \(j): bad transfer counts or charges")
      check(s.delivered <= s.updates && s.deliveryDelaySumS >= 0, "lane \(j): bad deliveries")
      guard options.recordEvents else { continue }
      check(r.opens.count == s.opens, "lane \(j): \(r.opens.count) open records, \(s.opens) opens")
      var last = start
      for o in r.opens {
        check(o.time >= last && o.time <= end, "lane \(j): open at \(o.time) out of order or window")
        last = o.time
      }
      check(r.fetches.count == s.fetches, "lane \(j): \(r.fetches.count) fetch records, \(s.fetches) fetches")
      last = start
      var energy = 0.0, bytes = 0.0
      for f in r.fetches {
        check(f.start >= last && f.end >= f.start, "lane \(j): fetch \(f.start)...\(f.end) out of order")
        check(f.end - f.start <= max(w.fetch.fetchBudgetS, longestBudgetS) + timeSlack, "lane \(j): fetch at \(f.start) exceeds the fetch budget")
        last = f.start
        energy += f.energyJ
        bytes += f.bytes
      }
      let chunkJ = r.transferChunks.reduce(0) { $0 + $1.energyJ }
      check(
        r.transferChunks.count == s.transferChunks && abs(chunkJ - s.transferEnergyJ) <= 1e-9 * max(1, chunkJ),
        "lane \(j): transfer chunks charge \(chunkJ) J, summary \(s.transferEnergyJ) J")
      check(
        r.transferChunks.filter(\.completes).count == s.transfersCompleted
          && r.transferChunks.allSatisfy { $0.end >= $0.start && $0.end <= end && $0.bytes >= 0 },
        "lane \(j): bad transfer chunk records")
      // The summary's totals hold the background transfers and the
      // location monitoring too.
      let tol = 1e-9 * max(1, s.energyJ)
      check(
        abs(energy + s.transferEnergyJ + s.monitoringEnergyJ - s.energyJ) <= tol,
        "lane \(j): fetch energies sum to \(energy) J + transfers \(s.transferEnergyJ) J + monitoring \(s.monitoringEnergyJ) J, summary \(s.energyJ) J")
      let transferBytes = s.transferCellularBytes + s.transferWifiBytes
      check(
        abs(bytes + transferBytes - s.cellularBytes - s.wifiBytes) <= 1e-9 * max(1, bytes + transferBytes),
        "lane \(j): fetch bytes sum to \(bytes) + transfers \(transferBytes), summary \(s.cellularBytes + s.wifiBytes)")
    }
    for (k, list) in [own.wifi, own.cellular].enumerated() {
      check(zip(list, list.dropFirst()).allSatisfy { $0.start <= $1.start }, "interface \(k): device fetches unsorted")
    }
    check(energySinceSampleJ >= 0, "negative fetch energy since the battery sample")
    return out
  }

  /// Stops with the violated invariants of the finished replay `apps`
  /// (see ``invariantViolations(_:)``).
  func _checkInvariants(_ apps: [AppReplay]) {
    let v = invariantViolations(apps)
    precondition(v.isEmpty, "replay of \(u.trace.user): " + v.joined(separator: "; "))
  }
}
#endif
