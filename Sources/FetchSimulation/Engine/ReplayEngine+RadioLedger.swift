import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld

/// The world's radio models as the engine reads them, by ``NetworkKind``
/// raw value: built once per user (``PreparedUser/radios``), not per replay.
///
/// Each model reads its stages from one table the radios share, held here
/// for as long as the prepared user lives, so that pricing retains nothing.
struct ReplayRadios: @unchecked Sendable {
  /// The models (offline: zero terms and no stages, never read).
  let models: [RadioModel]
  /// Every profile's stage table, one after another.
  let table: RadioStageTable
  /// The longest look-around (``RadioTerms/lookAroundS``) of the radios, s.
  let maxWindow: Double

  init(_ radios: RadioSet) {
    let profiles = radios.byNetwork
    table = RadioStageTable(profiles.flatMap { $0?.stages ?? [] })
    var models: [RadioModel] = []
    var first = 0
    for r in profiles {
      guard let r else {
        models.append(RadioModel(terms: RadioTerms(), stages: UnsafeBufferPointer(start: table.base, count: 0)))
        continue
      }
      models.append(RadioModel(terms: r.terms, stages: UnsafeBufferPointer(start: table.base + first, count: r.stages.count)))
      first += r.stages.count
    }
    self.models = models
    maxWindow = profiles.compactMap { $0?.terms.lookAroundS }.max() ?? 0
  }
}

extension ReplayRadios {
  /// The background activity `intervals` of interface `k` (any order) as
  /// the radio carries it, sorted by start and merged: an activity that
  /// starts on a quiet radio first waits for the promotion its quiet gap
  /// needs (on the network in force then), so its radio time runs from its
  /// start to the end of the promotion plus its own length, and one that
  /// starts while the radio is promoting runs its length after the
  /// promotion. A 1 s burst on an idle 3G radio is busy for 2 + 1 s, and
  /// its tail starts then.
  ///
  /// - Complexity: O(n log n).
  func carried(
    _ intervals: [BusyInterval], interface k: Int, netTimes: [Double], netKinds: [NetworkKind]
  ) -> [BusyInterval] {
    var out: [BusyInterval] = []
    out.reserveCapacity(intervals.count)
    var connectedAt = -Double.infinity
    var hint = 0
    for iv in intervals.sorted(by: { $0.start < $1.start }) {
      let length = iv.end - iv.start
      if let last = out.last, iv.start <= last.end {
        out[out.count - 1].end = max(last.end, max(iv.start, connectedAt) + length)
        continue
      }
      let gap = out.last.map { iv.start - $0.end } ?? .infinity
      let net = netKinds[PreparedUser.networkIndex(in: netTimes, at: iv.start, hint: &hint)]
      let promotion = PreparedUser.interface(net) == k ? models[Int(net.rawValue)].promotion(afterGap: gap).timeS : 0
      connectedAt = iv.start + promotion
      out.append(BusyInterval(start: iv.start, end: connectedAt + length))
    }
    return out
  }
}

extension ReplayEngine {
  /// Seconds since interface `k` was last busy at `t` (0 while busy, ∞ if
  /// never), counting the user's activity (when shared) and the device's
  /// fetches that started by `t`.
  mutating func quietGap(_ k: Int, at t: Double) -> Double {
    let i = firstBusy(k, endingAtOrAfter: t)
    // Read in place (a copy of the list retained and released it).
    let (inside, userEnd) = busy[k].withUnsafeBufferPointer { b in
      (i < b.count && b[i].start <= t, i > 0 ? b[i - 1].end : -Double.infinity)
    }
    if inside { return 0 }
    return t - lastActivity(k, at: t, after: userEnd)
  }

  /// The promotion under way on interface `k` at `t` with radio `r`, as
  /// (from, to) in Unix s, or (−∞, −∞) when there is none: the device's own
  /// (started by a fetch on a quiet radio) or the background activity's (a
  /// session burst or another app's wake that began on a quiet radio),
  /// whichever ends later. A transfer that starts in [from, to) moves data
  /// only from `to`: a fetch in the same instant as a burst on an idle radio
  /// waits for the burst's promotion, like one that follows another fetch.
  mutating func promotionUnderWay(_ k: Int, at t: Double, _ r: RadioModel) -> (from: Double, to: Double) {
    var under = t >= promotingFrom[k] && t < promotedAt[k] ? (from: promotingFrom[k], to: promotedAt[k]) : (from: -Double.infinity, to: -Double.infinity)
    let i = firstBusy(k, endingAtOrAfter: t)
    let (inside, start, previousEnd) = busy[k].withUnsafeBufferPointer { b in
      i < b.count && b[i].start <= t ? (true, b[i].start, i > 0 ? b[i - 1].end : -Double.infinity) : (false, 0, 0)
    }
    guard inside else { return under }
    // The radio's quiet gap just before the activity began, the device's
    // own fetches included (one running then leaves nothing to promote).
    let before = start.nextDown
    let gap = start - lastActivity(k, at: before, after: previousEnd)
    let to = start + r.promotion(afterGap: gap).timeS
    if t < to && to > under.to { under = (start, to) }
    return under
  }

  /// The end of the last activity on interface `k` by `t` (capped at `t`):
  /// the later of `last` (the user's, from the caller) and the device's
  /// fetches that started by `t`.
  ///
  /// `mutating` only so that it borrows the engine: called from the
  /// engine's mutating methods, a non-mutating call copies all of it.
  mutating func lastActivity(_ k: Int, at t: Double, after last: Double) -> Double {
    var last = last
    // Own intervals are sorted by start; none that starts more than the
    // longest one before `last` can end after it.
    let o = own[k]
    var m = o.count - 1
    while m >= 0 {
      if o[m].start + longestOwnS < last { break }
      if o[m].start <= t { last = max(last, min(o[m].end, t)) }
      m -= 1
    }
    return last
  }

  /// The first interval of the user's activity on interface `k` that ends
  /// at or after `t`, searched from the previous answer (which is updated).
  mutating func firstBusy(_ k: Int, endingAtOrAfter t: Double) -> Int {
    let hint = busyHints[k]
    let i = busy[k].withUnsafeBufferPointer { p in firstIndex(count: p.count, from: hint) { p[$0].end >= t } }
    busyHints[k] = i
    return i
  }

  /// Puts `iv` on interface `k`'s list of device fetches (sorted by start).
  /// Beyond 64 entries it drops the oldest (keeping at least 32) that end
  /// more than the longest look-around before `now`: every later fetch
  /// starts at or after `now`, so they cannot reach it.
  mutating func addOwn(_ k: Int, _ iv: BusyInterval, now: Double) {
    #if DEBUG
    defer { peakOwnCount = max(peakOwnCount, own[k].count) }
    #endif
    var m = own[k].count
    while m > 0 && own[k][m - 1].start > iv.start { m -= 1 }
    // Mostly the latest start: appended (an insert at the end went through
    // the generic subrange replacement).
    if m == own[k].count { own[k].append(iv) } else { own[k].insert(iv, at: m) }
    longestOwnS = max(longestOwnS, iv.end - iv.start)
    guard own[k].count > 64 else { return }
    let horizon = now - radios.maxWindow
    var drop = 0
    while drop < own[k].count - 32 && own[k][drop].end < horizon { drop += 1 }
    own[k].removeFirst(drop)
    guard own[k].count > 64 else { return }
    // A long interval (a background transfer of days) ahead of the short
    // ones: drop every old one that ended before the horizon, wherever it
    // is, so that the list and the scans stay short.
    let keep = own[k].count - 32
    var kept: [BusyInterval] = []
    kept.reserveCapacity(own[k].count)
    for (i, o) in own[k].enumerated() where i >= keep || o.end >= horizon { kept.append(o) }
    if kept.count < own[k].count {
      own[k] = kept
      longestOwnS = kept.reduce(0) { max($0, $1.end - $1.start) }
    }
  }

  /// E(S ∪ {f}) − E(S) on interface `k` with the radio of `net`, where S is
  /// the background activity and the device's earlier fetches near f.
  /// Intervals further than the radio's tail (plus promotion) from f cannot
  /// change the difference, so the window is exact.
  ///
  /// One pass over the intervals of the window (the background list from
  /// its search hint, merged with the device's fetches) prices the set
  /// without `f` and, forked where `f` falls in start order, the set with
  /// it (``RadioModel/marginalEnergy(of:background:from:own:from:lo:hi:)``),
  /// without building either list, and priced from the stage table without
  /// reference counting.
  ///
  /// - Complexity: O(intervals within the window + log distance of the hint).
  mutating func marginalEnergy(_ k: Int, _ net: NetworkKind, _ f: BusyInterval) -> Double {
    let radio = radio(net)
    let d = radio.terms.lookAroundS
    let lo = f.start - d, hi = f.end + d
    let first = firstBusy(k, endingAtOrAfter: lo)
    // Sorted by start: none that starts more than the longest one before
    // `lo` can reach the window.
    let reach = lo - longestOwnS
    return busy[k].withUnsafeBufferPointer { b in
      own[k].withUnsafeBufferPointer { o in
        let start = firstIndex(in: 0..<o.count) { o[$0].start >= reach }
        return radio.marginalEnergy(of: f, background: b, from: first, own: o, from: start, lo: lo, hi: hi)
      }
    }
  }
}
