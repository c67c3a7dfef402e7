import FetchSupport
import Foundation

extension SyntheticPopulation {
  /// Appends the user's `network` rows: one at the window start, then one
  /// per change.
  ///
  /// The user is on WiFi (home, or work for some) except in cellular
  /// intervals: commutes on working weekdays, the working day itself for
  /// commuters without work WiFi whose WiFi fraction leaves room for it, and
  /// outings that use up the rest of the day's cellular budget. The budget
  /// is `(1 − f) · 24 h` per day with `f` the user's WiFi fraction, drawn
  /// logit-normal around ``Parameters/wifiFractionMedian`` (ExtraSensory), times
  /// day-to-day log-normal noise. Offline intervals (tunnels during
  /// commutes, rare flights) override both. The cellular technology is one
  /// per user.
  ///
  /// The user's trips (commutes and outings, before the offline overlays)
  /// are appended to `trips` for ``generateLocations(_:trips:into:using:)``;
  /// recording them draws nothing.
  func generateNetwork(
    _ tr: Traits, into events: inout [TraceEvent], trips: inout [Trip],
    using rng: inout SplitMix64
  ) {
    let p = parameters
    let wifiTarget = Self.logistic(
      Self.logit(p.wifiFractionMedian) + p.wifiFractionLogitSD * rng.normal())
    let cellularPerDay = (1 - wifiTarget) * 86_400
    let commuter = rng.uniform() < p.commuterShare
    let workWifi = rng.uniform() < p.workWifiShare
    let commuteMedian =
      p.commuteMedianMinutes * 60 * exp(0.4 * rng.normal())
    let depart = p.departHour + tr.chrono + 0.5 * rng.normal()
    let habits = Commute(workWifi: workWifi, median: commuteMedian, depart: depart)
    let tech = cellularTechnology(using: &rng)
    // Day noise with mean 1, so the budget's mean is the target.
    let daySigma = p.cellularDaySigma
    let noiseMean = exp(daySigma * daySigma / 2)

    var marks = NetworkMarks()
    marks.marks.reserveCapacity(days * 12)
    for d in 0..<days {
      let day = tr.start + Double(d) * 86_400
      var budget = cellularPerDay * exp(daySigma * rng.normal()) / noiseMean
      var busy: [(Double, Double)] = []
      let works =
        commuter && !isWeekend(d) && rng.uniform() < p.workDayProbability
      if works {
        workday(
          day, habits, budget: &budget, busy: &busy, marks: &marks,
          trips: &trips, using: &rng)
      }
      // Outings take the rest of the budget, away from the working day.
      if budget > 60 {
        outings(
          tr, day: day, budget: budget, busy: &busy, marks: &marks,
          trips: &trips, using: &rng)
      }
      if rng.uniform() < p.flightProbabilityPerDay {
        let s = day + (7 + rng.uniform() * 13) * 3600
        marks.offline(s, s + (1 + rng.uniform() * 5) * 3600)
      }
    }
    appendNetworkRows(marks.marks, tech: tech, tr, into: &events)
  }

  /// A commuter's habits: WiFi at work, the median commute (s) and the
  /// usual departure hour.
  private struct Commute {
    var workWifi: Bool
    var median: Double
    var depart: Double
  }

  /// Boundaries of the cellular and offline intervals: +1/−1 on a counter.
  private struct NetworkMarks {
    var marks: [(time: Double, cell: Int, off: Int)] = []

    mutating func cellular(_ a: Double, _ b: Double) {
      guard b > a else { return }
      marks.append((a, 1, 0))
      marks.append((b, -1, 0))
    }

    mutating func offline(_ a: Double, _ b: Double) {
      guard b > a else { return }
      marks.append((a, 0, 1))
      marks.append((b, 0, -1))
    }
  }

  /// The user's cellular technology, drawn by the LTE, 5G and 3G shares.
  private func cellularTechnology(using rng: inout SplitMix64) -> NetworkKind {
    let p = parameters
    let shares = [p.lteShare, p.nr5gShare, p.umts3gShare]
    var u = rng.uniform() * shares.reduce(0, +)
    var tech = NetworkKind.lte
    for (s, k) in zip(shares, [NetworkKind.lte, .nr5g, .umts3g]) {
      if u < s {
        tech = k
        break
      }
      u -= s
    }
    return tech
  }

  /// A working day: two cellular commutes (with tunnels), and the
  /// working day on cellular when there is no work WiFi and the budget
  /// leaves room for it.
  private func workday(
    _ day: Double, _ c: Commute, budget: inout Double, busy: inout [(Double, Double)],
    marks: inout NetworkMarks, trips: inout [Trip], using rng: inout SplitMix64
  ) {
    let p = parameters
    let leave = day + (c.depart + 0.3 * rng.normal()) * 3600
    let c1 = c.median * exp(0.3 * rng.normal())
    let c2 = c.median * exp(0.3 * rng.normal())
    let arrive = leave + c1
    let leaveWork =
      leave + (p.workdayHours + 0.5 * rng.normal()) * 3600 - c2
    let home = leaveWork + c2
    marks.cellular(leave, arrive)
    marks.cellular(leaveWork, home)
    trips.append(Trip(start: leave, end: arrive, from: .home, to: .work))
    trips.append(Trip(start: leaveWork, end: home, from: .work, to: .home))
    busy.append((leave, home))
    budget -= c1 + c2
    let atWork = max(0, leaveWork - arrive)
    if !c.workWifi && budget >= 0.6 * atWork {
      marks.cellular(arrive, leaveWork)
      budget -= atWork
    }
    for (a, b) in [(leave, arrive), (leaveWork, home)]
    where rng.uniform() < p.tunnelProbability {
      let len = min(
        b - a, p.tunnelMedianMinutes * 60 * exp(0.6 * rng.normal()))
      let s = a + rng.uniform() * (b - a - len)
      marks.offline(s, s + len)
    }
  }

  /// Outings that share the day's remaining cellular `budget`, placed
  /// (four tries) away from the busy intervals.
  private func outings(
    _ tr: Traits, day: Double, budget: Double, busy: inout [(Double, Double)],
    marks: inout NetworkMarks, trips: inout [Trip], using rng: inout SplitMix64
  ) {
    let count = 1 + rng.poisson(mean: 0.8)
    var weights = (0..<count).map { _ in -log(rng.uniformPositive()) }
    let wsum = weights.reduce(0, +)
    for i in weights.indices { weights[i] /= wsum }
    for w in weights {
      let len = min(12 * 3600, budget * w)
      var s = 0.0
      for _ in 0..<4 {
        let h = 9 + tr.chrono + rng.uniform() * 12.5
        s = day + h * 3600
        if !busy.contains(where: { s < $0.1 && s + len > $0.0 }) { break }
      }
      marks.cellular(s, s + len)
      if !busy.contains(where: { s < $0.1 && s + len > $0.0 }) {
        trips.append(Trip(start: s, end: s + len, from: .home, to: .home))
      }
      busy.append((s, s + len))
    }
  }

  /// The sweep over the marks: times to whole seconds; one `network` row
  /// at the window start, then one per change.
  private func appendNetworkRows(
    _ marks: [(time: Double, cell: Int, off: Int)], tech: NetworkKind, _ tr: Traits,
    into events: inout [TraceEvent]
  ) {
    var marks = marks
    marks.sort { $0.time < $1.time }
    var cell = 0
    var off = 0
    var state = NetworkKind.wifi
    var rows: [(time: Double, kind: NetworkKind)] = [(tr.start, .wifi)]
    var i = 0
    while i < marks.count {
      let t = marks[i].time
      while i < marks.count && marks[i].time == t {
        cell += marks[i].cell
        off += marks[i].off
        i += 1
      }
      let next: NetworkKind = off > 0 ? .offline : (cell > 0 ? tech : .wifi)
      if next == state { continue }
      state = next
      let tt = min(tr.end, max(tr.start, t.rounded()))
      if rows[rows.count - 1].time == tt {
        rows[rows.count - 1].kind = next
        if rows.count >= 2 && rows[rows.count - 2].kind == next {
          rows.removeLast()
        }
      } else {
        rows.append((tt, next))
      }
    }
    for r in rows {
      events.append(
        TraceEvent(time: r.time, kind: .network, value: Double(r.kind.rawValue))
      )
    }
  }
}
