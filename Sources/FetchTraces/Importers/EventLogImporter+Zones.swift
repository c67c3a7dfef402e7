import FetchSupport

extension EventLogImporter {
  /// The zone written on a user's `begin` row, which places its day
  /// boundaries and hours of day:
  /// 1. the zone of its first row's ``Options/zoneColumn``, when set, or
  ///    of its device in ``Options/deviceZones`` (``tableZone(of:warnings:)``);
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
    if let z = tableZone(of: user, warnings: &warnings) { return z }
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

  /// The index of the zone `text` of a ``Options/zoneColumn`` in
  /// `rows`' zones, added with its clock when new; `fail` builds the error.
  ///
  /// - Throws: ``TraceFormatError`` for an empty or unknown zone.
  static func zoneIndex(_ text: String, in rows: inout LogRows, fail: (String) -> TraceFormatError) throws -> Int {
    if let k = rows.zones[text] { return k }
    guard !text.isEmpty, let zone = TraceTimeZone(parsing: text) else {
      throw fail("unknown time zone '\(escapedName(String(text.prefix(40))))' (\(TraceTimeZone.unknownHint(text)))")
    }
    let k = rows.zoneList.count
    rows.zones[text] = k
    rows.zoneList.append(zone)
    rows.clocks.append(LocalClock(zone))
    return k
  }

  /// Records the zone `zone` of a ``Options/zoneColumn`` on a row of
  /// `user` at Unix time `t`: the user's zone when it has none yet, else a
  /// warning (once) when it differs, naming both zones and their offsets
  /// at `t`. `fail` builds the warning at the row's zone field.
  static func noteZone(
    _ zone: TraceTimeZone, at t: Double, of user: inout User, warnings: inout [String],
    fail: (String) -> TraceFormatError
  ) {
    guard let first = user.zone else {
      user.zone = zone
      return
    }
    guard first != zone && !user.zoneChanged else { return }
    user.zoneChanged = true
    var a = LocalClock(first), b = LocalClock(zone)
    let offsets = { (c: inout LocalClock) in TraceTimeZone.fixed(Int(c.offset(at: t))).description }
    let same = a.offset(at: t) == b.offset(at: t) ? ", the same offset at this time but not all year" : ""
    warnings.append(
      fail(
        "user '\(escapedName(user.id))' changes zone from \(first) (\(offsets(&a)) at \(TimeText.isoUTC(t))) to \(zone) "
          + "(\(offsets(&b))\(same)); each row's local times are read in its own row's zone, but a trace holds one "
          + "zone per user: its days and hours of day follow \(first), its first row's"
      ).description)
  }
}
