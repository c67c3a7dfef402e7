import FetchTraces
import Foundation

/// Which network a user is on, by local hour of the week, fitted from a
/// training window: P(WiFi), P(offline) and P(cellular) = the rest.
///
/// From the trace's `network` rows (the state holds until the next row; the
/// time before the first row is unknown unless an earlier row in the history
/// sets it), smoothed in two levels with a Dirichlet prior of ``priorHours``
/// pseudo-hours: the user's hour-of-day shares toward the priors, and each
/// hour-of-week share toward the user's hour-of-day share:
///
///     p_d(k)  = (T_d(k) + κ·π_d(k)) / (T_d + κ)
///     p_hw(k) = (T_hw(k) + κ·p_d(k)) / (T_hw + κ),   k ∈ {wifi, cellular, offline}
///
/// Priors π_d: the population's shares by local hour of day, fitted on the
/// training windows of other users (``hourOfDayShares(_:)``; `fetchlab fit`
/// passes them), never shares built into the code; without them the
/// uninformed ⅓ each. A trace without network rows (UbiqLog) gets the
/// priors themselves.
package struct NetworkModel: Codable, Sendable, Equatable {
  /// The share of each class when nothing is known: ⅓.
  package static let uninformedShare = 1.0 / 3

  /// P(WiFi) by local hour of week (168 values, Monday 00:00 first).
  package private(set) var wifiProbability: [Double]
  /// P(offline) by local hour of week; `wifi + offline ≤ 1`.
  package private(set) var offlineProbability: [Double]
  /// Training hours with a known network (0: the priors).
  package private(set) var observedHours: Double
  /// Pseudo-hours of the priors (κ).
  package private(set) var priorHours: Double

  /// The prior model: `prior` (shares by class — WiFi, cellular, offline —
  /// and local hour of day, 3 × 24; nil: ⅓ each) for every day of the week.
  package init(priorHours: Double = 2, prior: [[Double]]? = nil) {
    let p = Self.checkedPrior(prior)
    wifiProbability = (0..<168).map { p[0][$0 % 24] }
    offlineProbability = (0..<168).map { p[2][$0 % 24] }
    observedHours = 0
    self.priorHours = priorHours
  }

  /// `prior`, checked, or the uninformed shares.
  static func checkedPrior(_ prior: [[Double]]?) -> [[Double]] {
    guard let prior else { return Array(repeating: Array(repeating: uninformedShare, count: 24), count: 3) }
    precondition(
      prior.count == 3 && prior.allSatisfy { $0.count == 24 && $0.allSatisfy { $0 >= 0 && $0 <= 1 } },
      "a network prior needs 3 × 24 shares in [0, 1]")
    return prior
  }

  /// Seconds on each class (WiFi, cellular, offline) per local hour of
  /// week over [`from`, `to`) of `trace` (3 × 168; zero before the first row).
  ///
  /// - Complexity: O(events + window hours).
  package static func classSeconds(_ trace: UserTrace, from: Double, to: Double) -> [[Double]] {
    var clock = LocalClock(trace.timeZone)
    // Seconds per hour of week on each network class: 0 wifi, 1 cellular, 2 offline.
    var time = [[Double]](repeating: [Double](repeating: 0, count: 168), count: 3)
    var state: Int? = nil
    var t = from
    func account(until b: Double, clock: inout LocalClock) {
      guard let k = state, b > t else { return }
      LocalHours.forEachPiece(from: t, to: b, clock: &clock) { how, s in time[k][how] += s }
    }
    for e in trace.events where e.kind == .network {
      if e.time >= to { break }
      if e.time > from {
        account(until: e.time, clock: &clock)
        t = e.time
      }
      if let n = e.network { state = n == .wifi ? 0 : n == .offline ? 2 : 1 }
    }
    account(until: to, clock: &clock)
    return time
  }

  /// Shares of each class by local hour of day from summed
  /// ``classSeconds(_:from:to:)`` (e.g. over the population's training
  /// windows), 3 × 24, or nil when some hour has no observed time.
  package static func hourOfDayShares(_ time: [[Double]]) -> [[Double]]? {
    precondition(time.count == 3 && time.allSatisfy { $0.count == 168 }, "need 3 × 168 bins")
    var k = [[Double]](repeating: [Double](repeating: 0, count: 24), count: 3)
    var n = [Double](repeating: 0, count: 24)
    for c in 0..<3 {
      for how in 0..<168 {
        k[c][how % 24] += time[c][how]
        n[how % 24] += time[c][how]
      }
    }
    guard n.allSatisfy({ $0 > 0 }) else { return nil }
    return k.map { row in (0..<24).map { min(1, max(0, row[$0] / n[$0])) } }
  }

  /// Fits the model to the window [`from`, `to`) of `trace`, shrunk toward
  /// `prior` (see ``init(priorHours:prior:)``).
  ///
  /// - Complexity: O(events + window hours).
  package init(fitting trace: UserTrace, from: Double, to: Double, priorHours: Double = 2, prior: [[Double]]? = nil) {
    precondition(from.isFinite && to.isFinite && to > from, "training window [\(from), \(to)) is empty")
    precondition(priorHours > 0, "priorHours must be > 0")
    self.init(priorHours: priorHours, prior: prior)
    let time = Self.classSeconds(trace, from: from, to: to)
    let total = (0..<168).map { time[0][$0] + time[1][$0] + time[2][$0] }
    observedHours = total.reduce(0, +) / 3600
    guard observedHours > 0 else { return }
    let prior = Self.checkedPrior(prior)
    var dayT = [Double](repeating: 0, count: 24)
    var dayK = [[Double]](repeating: [Double](repeating: 0, count: 24), count: 3)
    for how in 0..<168 {
      dayT[how % 24] += total[how] / 3600
      for k in 0..<3 { dayK[k][how % 24] += time[k][how] / 3600 }
    }
    func share(_ k: Int, _ how: Int) -> Double {
      let d = how % 24
      let pd = (dayK[k][d] + priorHours * prior[k][d]) / (dayT[d] + priorHours)
      return (time[k][how] / 3600 + priorHours * pd) / (total[how] / 3600 + priorHours)
    }
    wifiProbability = (0..<168).map { share(0, $0) }
    offlineProbability = (0..<168).map { share(2, $0) }
  }

  /// P(on WiFi) at Unix time `t`.
  package func probabilityWiFi(at t: Double, clock: inout LocalClock) -> Double {
    wifiProbability[Self.bin(t, &clock)]
  }

  /// P(offline) at Unix time `t`.
  package func probabilityOffline(at t: Double, clock: inout LocalClock) -> Double {
    offlineProbability[Self.bin(t, &clock)]
  }

  /// P(on a cellular network) at Unix time `t`: 1 − WiFi − offline.
  package func probabilityCellular(at t: Double, clock: inout LocalClock) -> Double {
    let b = Self.bin(t, &clock)
    return max(0, 1 - wifiProbability[b] - offlineProbability[b])
  }

  static func bin(_ t: Double, _ clock: inout LocalClock) -> Int {
    min(167, max(0, Int(clock.hourOfWeek(t))))
  }

  enum CodingKeys: String, CodingKey {
    case wifiProbability = "wifi_probability_by_hour_of_week"
    case offlineProbability = "offline_probability_by_hour_of_week"
    case observedHours = "observed_h"
    case priorHours = "prior_h"
  }

  package init(from decoder: any Decoder) throws {
    let c = try decoder.container(keyedBy: CodingKeys.self)
    wifiProbability = try c.decodeHourOfWeekProbabilities(forKey: .wifiProbability)
    offlineProbability = try c.decodeHourOfWeekProbabilities(forKey: .offlineProbability)
    guard zip(wifiProbability, offlineProbability).allSatisfy({ $0 + $1 <= 1 + 1e-9 }) else {
      throw DecodingError.dataCorruptedError(
        forKey: .offlineProbability, in: c, debugDescription: "P(WiFi) + P(offline) exceeds 1")
    }
    observedHours = try c.decodeNonNegative(forKey: .observedHours)
    priorHours = try c.decodeNonNegative(forKey: .priorHours)
    guard priorHours > 0 else {
      throw DecodingError.dataCorruptedError(forKey: .priorHours, in: c, debugDescription: "prior_h must be > 0")
    }
  }
}

/// A monthly cellular data budget and one app's paced share of it.
///
/// The app may use ``appShare`` of ``monthlyBytes`` per local calendar
/// month, paced linearly through the month: by a moment that is a fraction
/// `f` of the way through its month, it may have spent `f × share`.
///
///     allowance(t) = max(0, min(f(t)·share − spent, share − spent))
///
/// A fetch may use at most the allowance, and so never more than the
/// remaining monthly share. Defaults: 2 GB a month (2e9 bytes), 5 % for the
/// app (both **NV**; sweep them, e.g. 1, 5, 20 MB/day).
package struct DataBudget: Codable, Sendable, Equatable {
  /// Cellular bytes per calendar month, the whole phone.
  package var monthlyBytes: Double
  /// The app's share of ``monthlyBytes``, in [0, 1].
  package var appShare: Double

  package init(monthlyBytes: Double = 2e9, appShare: Double = 0.05) {
    precondition(monthlyBytes.isFinite && monthlyBytes >= 0, "monthlyBytes must be finite and ≥ 0")
    precondition(appShare >= 0 && appShare <= 1, "appShare must be in [0, 1]")
    self.monthlyBytes = monthlyBytes
    self.appShare = appShare
  }

  /// The app's bytes per month.
  package var appMonthlyBytes: Double { monthlyBytes * appShare }

  /// Bytes the app may still use now (≥ 0), given what it used since the
  /// start of the current local calendar month.
  package func allowance(at t: Double, clock: inout LocalClock, spentThisMonth: Double) -> Double {
    let share = appMonthlyBytes
    let paced = Self.monthFraction(at: t, clock: &clock) * share
    return max(0, min(paced - spentThisMonth, share - spentThisMonth))
  }

  /// Bytes left of the app's monthly share (≥ 0), pacing aside.
  package func remainingShare(spentThisMonth: Double) -> Double {
    max(0, appMonthlyBytes - spentThisMonth)
  }

  /// Whether a fetch of `bytes` fits the allowance now.
  package func permits(bytes: Double, at t: Double, clock: inout LocalClock, spentThisMonth: Double) -> Bool {
    bytes <= allowance(at: t, clock: &clock, spentThisMonth: spentThisMonth)
  }

  /// How far through its local calendar month `t` is, in [0, 1).
  package static func monthFraction(at t: Double, clock: inout LocalClock) -> Double {
    let l = clock.local(t)
    let (start, end) = monthBounds(localSeconds: l)
    return min(max((l - start) / (end - start), 0), 1)
  }

  /// The local calendar month of `t` as `year × 12 + (month − 1)`: changes
  /// exactly when the spending counter should restart.
  package static func monthIndex(at t: Double, clock: inout LocalClock) -> Int {
    let day = Int((clock.local(t) / 86_400).rounded(.down))
    let (y, m, _) = CivilDate.civil(fromDays: day)
    return y * 12 + (m - 1)
  }

  /// Start and end of the calendar month containing local time `l`, in
  /// local seconds since the epoch.
  static func monthBounds(localSeconds l: Double) -> (Double, Double) {
    let day = Int((l / 86_400).rounded(.down))
    let (y, m, _) = CivilDate.civil(fromDays: day)
    let first = CivilDate.days(year: y, month: m, day: 1)
    let next = m == 12 ? CivilDate.days(year: y + 1, month: 1, day: 1) : CivilDate.days(year: y, month: m + 1, day: 1)
    return (Double(first) * 86_400, Double(next) * 86_400)
  }


  enum CodingKeys: String, CodingKey {
    case monthlyBytes = "monthly_bytes", appShare = "app_share"
  }
}
