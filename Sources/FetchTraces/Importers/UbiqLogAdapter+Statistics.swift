import FetchSupport
import Foundation

extension UbiqLogAdapter {
  /// Summary statistics of open traces, defined as in the published UbiqLog statistics, so a
  /// derived trace can be compared with the published figures.
  ///
  /// Definitions (all local time from each user's ``UserTrace/timeZone``):
  /// - an *active user-day* is a (user, local date) with at least one open;
  /// - *same-app gap*: start-to-start time between successive opens of the
  ///   same app by the same user, in minutes; *any-app gap*: between
  ///   successive opens of one user;
  /// - distributions pool all user-days, gaps or opens of all users;
  /// - quantiles interpolate linearly between order statistics (Hyndman & Fan
  ///   type 7, the NumPy and R default); NaN when empty.
  ///
  /// - Complexity: O(n log n) in the number of opens.
  package struct Statistics: Sendable, Equatable {
    /// Quantiles and mean of a pooled sample.
    package struct Summary: Sendable, Equatable {
      package var count: Int
      package var p10: Double
      package var p25: Double
      package var median: Double
      package var p75: Double
      package var p90: Double
      package var mean: Double

      /// Summarises `values` (any order).
      package init(_ values: [Double]) {
        let s = values.sorted()
        count = s.count
        p10 = Quantile.type7(sorted: s, 0.10)
        p25 = Quantile.type7(sorted: s, 0.25)
        median = Quantile.type7(sorted: s, 0.50)
        p75 = Quantile.type7(sorted: s, 0.75)
        p90 = Quantile.type7(sorted: s, 0.90)
        mean = s.isEmpty ? .nan : s.reduce(0, +) / Double(s.count)
      }
    }

    /// An app's share of all opens.
    package struct AppShare: Sendable, Equatable {
      package var app: String
      package var opens: Int
      /// Fraction of all opens, 0...1.
      package var share: Double
    }

    /// Users with at least one open.
    package var participants: Int
    /// (user, local date) pairs with at least one open.
    package var activeUserDays: Int
    /// All open events.
    package var opens: Int
    /// Active days per participant.
    package var activeDaysPerParticipant: Summary
    /// Opens per active user-day.
    package var opensPerActiveDay: Summary
    /// Opens per active user-day, ignoring `com.android.settings`.
    package var opensPerActiveDayWithoutSettings: Summary
    /// Same-app gaps, in minutes.
    package var sameAppGapMinutes: Summary
    /// Any-app gaps, in minutes.
    package var anyAppGapMinutes: Summary
    /// Session lengths (the `value` of opens), in seconds.
    package var sessionSeconds: Summary
    /// The ten most opened apps (ties by name), pooled over users.
    package var topApps: [AppShare]
    /// Share of opens of the ten most opened apps, 0...1.
    package var topTenShare: Double
    /// Per participant, the most-used app's share of that participant's opens.
    package var participantTopAppShare: Summary
    /// Share of opens by local hour 0...23; sums to 1 when there are opens.
    package var hourShare: [Double]

    /// Computes the statistics of the `open` events of `users`.
    package init(users: [UserTrace]) {
      var perDay: [Double] = [], perDayNoSettings: [Double] = [], activeDays: [Double] = []
      var same: [Double] = [], any: [Double] = [], sessions: [Double] = [], topShare: [Double] = []
      var appOpens: [String: Int] = [:]
      var hours = [Int](repeating: 0, count: 24)
      var participants = 0, opens = 0
      for u in users {
        var clock = LocalClock(u.timeZone)
        var days: [Int: Int] = [:], daysNoSettings: [Int: Int] = [:]
        var lastByApp = [Double?](repeating: nil, count: u.apps.count)
        var counts = [Int](repeating: 0, count: u.apps.count)
        var last: Double?
        var n = 0
        for e in u.events where e.kind == .open {
          n += 1
          let local = clock.local(e.time)
          let day = Int((local / 86_400).rounded(.down))
          days[day, default: 0] += 1
          let name = e.app >= 0 ? u.apps[Int(e.app)] : ""
          if name != "com.android.settings" { daysNoSettings[day, default: 0] += 1 }
          hours[min(23, max(0, Int(clock.hourOfDay(e.time))))] += 1
          if let l = last { any.append((e.time - l) / 60) }
          last = e.time
          if e.app >= 0 {
            let a = Int(e.app)
            if let l = lastByApp[a] { same.append((e.time - l) / 60) }
            lastByApp[a] = e.time
            counts[a] += 1
            appOpens[name, default: 0] += 1
          }
          sessions.append(e.value)
        }
        guard n > 0 else { continue }
        participants += 1
        opens += n
        activeDays.append(Double(days.count))
        perDay += days.values.map(Double.init)
        perDayNoSettings += daysNoSettings.values.map(Double.init)
        topShare.append(Double(counts.max() ?? 0) / Double(n))
      }
      self.participants = participants
      self.opens = opens
      self.activeUserDays = perDay.count
      self.activeDaysPerParticipant = Summary(activeDays)
      self.opensPerActiveDay = Summary(perDay)
      self.opensPerActiveDayWithoutSettings = Summary(perDayNoSettings)
      self.sameAppGapMinutes = Summary(same)
      self.anyAppGapMinutes = Summary(any)
      self.sessionSeconds = Summary(sessions)
      self.participantTopAppShare = Summary(topShare)
      let total = Double(max(opens, 1))
      let ranked = appOpens.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
      self.topApps = ranked.prefix(10).map { AppShare(app: $0.key, opens: $0.value, share: Double($0.value) / total) }
      self.topTenShare = opens == 0 ? .nan : Double(topApps.reduce(0) { $0 + $1.opens }) / total
      self.hourShare = hours.map { opens == 0 ? .nan : Double($0) / total }
    }


    /// A Markdown table of these statistics next to the reference values of
    /// the published UbiqLog statistics, then the top-10 apps and the hourly shares.
    package func markdownComparison() -> String {
      func f(_ x: Double, _ d: Int = 0) -> String { CSV.number(x, decimals: d) }
      func pct(_ x: Double) -> String { CSV.number(x * 100, decimals: 1) + " %" }
      let rows: [(String, String, String)] = [
        ("Participants", "24", "\(participants)"),
        ("Active user-days", "1,086", "\(activeUserDays)"),
        ("Opens", "96,140", "\(opens)"),
        ("Active days per participant: median (p10, p90)", "52 (11, 68)",
         "\(f(activeDaysPerParticipant.median, 1)) (\(f(activeDaysPerParticipant.p10, 1)), \(f(activeDaysPerParticipant.p90, 1)))"),
        ("Opens per active user-day: median (p10, p90); mean", "74 (20, 180); 88.5",
         "\(f(opensPerActiveDay.median, 1)) (\(f(opensPerActiveDay.p10, 1)), \(f(opensPerActiveDay.p90, 1))); \(f(opensPerActiveDay.mean, 1))"),
        ("Same, without com.android.settings: median (p10, p90)", "66 (17, 172)",
         "\(f(opensPerActiveDayWithoutSettings.median, 1)) (\(f(opensPerActiveDayWithoutSettings.p10, 1)), \(f(opensPerActiveDayWithoutSettings.p90, 1)))"),
        ("Same-app gap, min: median (p25, p75)", "25 (6.5, 163)",
         "\(f(sameAppGapMinutes.median, 1)) (\(f(sameAppGapMinutes.p25, 1)), \(f(sameAppGapMinutes.p75, 1)))"),
        ("Any-app gap, min: p50, p75, p90", "1.8, 7.8, 29",
         "\(f(anyAppGapMinutes.median, 1)), \(f(anyAppGapMinutes.p75, 1)), \(f(anyAppGapMinutes.p90, 1))"),
        ("Top-10 apps' share of opens", "57 %", pct(topTenShare)),
        ("A participant's most-used app share: median (p10, p90)", "34 % (15 %, 52 %)",
         "\(pct(participantTopAppShare.median)) (\(pct(participantTopAppShare.p10)), \(pct(participantTopAppShare.p90)))"),
        ("Session length, s: median (p90) (capped)", "n/a",
         "\(f(sessionSeconds.median)) (\(f(sessionSeconds.p90)))"),
      ]
      var s = "| Statistic | Published statistics (UbiqLog) | This adapter |\n|---|---|---|\n"
      for r in rows { s += "| \(r.0) | \(r.1) | \(r.2) |\n" }
      s += "\nTop-10 apps (share of opens): "
      s += topApps.map { "\($0.app) \(f($0.share, 3))" }.joined(separator: ", ") + "\n"
      s += "\nReference: mms .102, viber .092, whatsapp .081, settings .066, htcdialer .054, line .045,"
      s += " google search .037, wechat .035, gosms .033, contacts .026\n"
      s += "\nShare of opens by local hour, 00→23:\n\n```\n"
      s += "this:      " + hourShare.map { f($0, 3) }.joined(separator: " ") + "\n"
      s += "reference: .046 .020 .012 .009 .004 .005 .017 .025 .030 .041 .051 .051"
      s += " .057 .052 .050 .046 .046 .056 .058 .062 .064 .061 .069 .068\n```\n"
      return s
    }
  }
}
