import FetchSupport

extension EventLogImporter {
  /// The zone written on a user's `begin` row, which places its day
  /// boundaries and hours of day:
  /// 1. the zone of its first row's ``Options/zoneColumn``, when set;
  /// 2. else, when its times are ISO 8601 with offsets: ``Options/timeZone``
  ///    if that is an IANA zone whose offset at every such time is the one
  ///    written (daylight saving time included), else the fixed offset of
  ///    the times when they all have the same (`-05:00`), else the offset
  ///    of the user's first time, with a warning naming the line where the
  ///    offset changes (travel, or daylight saving time without an IANA
  ///    zone);
  /// 3. else ``Options/timeZone``.
  ///
  /// - Complexity: O(rows of the user).
  func zone(of user: User, path: String, warnings: inout [String]) -> TraceTimeZone {
    if let z = user.zone { return z }
    let rows = user.rows.filter { $0.offset != EventLogImporter.noOffset }.sorted { ($0.time, $0.line) < ($1.time, $1.line) }
    guard let first = rows.first else { return options.timeZone }
    if case .named = options.timeZone {
      var clock = LocalClock(options.timeZone)
      if rows.allSatisfy({ clock.offset(at: $0.time) == Double($0.offset) }) { return options.timeZone }
    }
    let fixed = TraceTimeZone.fixed(Int(first.offset))
    if let change = rows.first(where: { $0.offset != first.offset }) {
      let message = "user '\(escapedName(user.id))': the offset changes from \(fixed) to \(TraceTimeZone.fixed(Int(change.offset)))"
        + " (travel, or daylight saving time); a trace holds one zone per user, so \(fixed), its first time's, is used"
        + " (name the IANA zone with --time-zone or --zone-column to follow daylight saving time)"
      warnings.append(TraceFormatError(file: path, line: change.line, field: options.timeColumn, message: message).description)
    }
    return fixed
  }

  /// Records the zone `text` of a ``Options/zoneColumn`` on a row of
  /// `user`: the user's zone when it has none yet, else a warning (once)
  /// when it differs; `cache` holds the zones parsed so far. `fail` builds
  /// the error or warning at the row's zone field.
  ///
  /// - Throws: ``TraceFormatError`` for an empty or unknown zone.
  static func noteZone(
    _ text: String, of user: inout User, cache: inout [String: TraceTimeZone], warnings: inout [String],
    fail: (String) -> TraceFormatError
  ) throws {
    guard !text.isEmpty, let zone = cache[text] ?? TraceTimeZone(parsing: text) else {
      throw fail("unknown time zone '\(escapedName(String(text.prefix(40))))' (use UTC, +HH:MM or an IANA name such as America/New_York)")
    }
    cache[text] = zone
    guard let first = user.zone else {
      user.zone = zone
      user.clock = LocalClock(zone)
      return
    }
    if first != zone && !user.zoneChanged {
      user.zoneChanged = true
      warnings.append(
        fail("user '\(escapedName(user.id))' changes zone from \(first) to \(zone); a trace holds one zone per user: \(first), its first row's, is used").description)
    }
  }
}
