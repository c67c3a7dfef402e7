import FetchSupport

extension EventLogImporter {
  /// The Unix time of the local midnight at or before `t`.
  static func localMidnight(atOrBefore t: Double, clock: inout LocalClock) -> Double {
    let off = clock.offset(at: t)
    let local = t + off
    return (local / 86_400).rounded(.down) * 86_400 - off
  }

  /// What a wall-clock time names in a zone.
  enum WallTime: Equatable {
    /// One instant, Unix s.
    case unique(Double)
    /// Two instants (the hour repeated when the offset falls): the first
    /// and the second, Unix s.
    case ambiguous(Double, Double)
    /// None (the hour skipped when the offset rises), with the offsets
    /// before and after, s east of UTC.
    case gap(Double, Double)
  }

  /// The instants whose wall-clock time in `clock`'s zone is `wall`: the
  /// offsets a day before and after (a zone changes its offset at most
  /// once in two days) each give a candidate, kept when the zone has that
  /// offset at it.
  ///
  /// - Complexity: O(1): three offset look-ups, cached while no
  ///   transition is near.
  static func resolveWallClock(_ wall: Double, _ clock: inout LocalClock) -> WallTime {
    let before = clock.offset(at: wall - 86_400)
    let after = clock.offset(at: wall + 86_400)
    let first = wall - before, second = wall - after
    let firstHolds = clock.offset(at: first) == before
    let secondHolds = before != after && clock.offset(at: second) == after
    switch (firstHolds, secondHolds) {
    case (true, true): return .ambiguous(min(first, second), max(first, second))
    case (true, false): return .unique(first)
    case (false, true): return .unique(second)
    case (false, false):
      // Two transitions within two days: the offset at the instant named.
      let guess = wall - clock.offset(at: wall - before)
      let t = wall - clock.offset(at: guess)
      return clock.offset(at: t) + t == wall ? .unique(t) : .gap(before, after)
    }
  }

  /// The unit of the first time of a file under ``TimeUnit/auto``.
  static func guessUnit(_ s: String) -> TimeUnit {
    if TimeText.parseISO8601(s) != nil { return .iso8601 }
    if let x = DecimalText.finite(s), abs(x) >= TimeText.maximumUnixSeconds { return .milliseconds }
    return .seconds
  }

  /// `s` in `unit` as Unix seconds; `fail` builds the error. An ISO time
  /// without a zone is read in `zone` (whose clock is `clock`): a wall time
  /// that does not exist there is refused, and one that occurs twice sets
  /// `ambiguous` and gives the first. `offset` is set to the offset an ISO
  /// time is written with. `decided` says where the unit comes from, for
  /// a time in milliseconds that looks like seconds.
  static func time(
    _ s: String, unit: TimeUnit, decided: String = "", zone: TraceTimeZone, clock: inout LocalClock,
    offset: inout Int?, ambiguous: inout Bool, fail: (String) -> TraceFormatError
  ) throws -> Double {
    let t: Double
    switch unit {
    case .iso8601:
      guard let iso = TimeText.parseISO8601(s) else {
        throw fail(
          "expected an ISO 8601 calendar date-time such as 2018-01-16 06:01:05 or 2026-01-05T08:00:00Z, found '\(s.prefix(40))'"
            + (TimeText.looksLikeDate(s.utf8) ? " (week dates such as 2026-W02-1, ordinal dates and a date alone are not)" : ""))
      }
      offset = iso.offset
      if let u = iso.unixSeconds {
        t = u
      } else {
        switch resolveWallClock(iso.wallSeconds, &clock) {
        case .unique(let u): t = u
        case .ambiguous(let first, _):
          ambiguous = true
          t = first
        case .gap(let before, let after):
          throw fail(
            "local time '\(escapedName(String(s.prefix(40))))' does not exist in \(zone): its clocks jump from "
              + "\(TraceTimeZone.fixed(Int(before))) to \(TraceTimeZone.fixed(Int(after))) there (daylight saving time "
              + "starts); the times are not wall-clock times of this zone: name the zone the log was written in "
              + "(--time-zone, --zone-column) or give times with offsets")
        }
      }
    case .seconds, .milliseconds, .auto:
      guard let x = DecimalText.finite(s) else {
        let hint =
          TimeText.parseISO8601(s) != nil
          ? " (an ISO 8601 time: use --time-unit iso)"
          : TimeText.looksLikeDate(s.utf8)
            ? ": " + TimeText.notATimeMessage(String(s.prefix(40))) + "; with --time-unit iso, also without a zone"
            : ""
        throw fail("expected a number of \(unit == .milliseconds ? "milliseconds" : "seconds"), found '\(s.prefix(40))'\(hint)")
      }
      t = unit == .milliseconds ? x / 1000 : x
      if unit == .milliseconds && abs(x) < TimeText.maximumUnixSeconds {
        throw fail(
          "time '\(escapedName(String(s.prefix(40))))' read as milliseconds\(decided) is \(TimeText.isoUTC(t)), "
            + "before 1973-03-03: it looks like seconds (\(TimeText.isoUTC(x))); a log holds one unit: "
            + "convert its rows to one, or give it with --time-unit")
      }
    }
    guard TimeText.plausibleTimes.contains(t) else {
      guard unit == .milliseconds else { throw fail(TimeText.outOfRangeMessage(t)) }
      throw fail("time '\(escapedName(String(s.prefix(40))))' ms is outside 1970-01-01...2100-01-01, the dates a trace may hold")
    }
    return t
  }
}
