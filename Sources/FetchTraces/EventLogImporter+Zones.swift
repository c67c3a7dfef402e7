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
}
