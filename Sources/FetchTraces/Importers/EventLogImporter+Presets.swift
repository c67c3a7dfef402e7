import FetchSupport
import Foundation

extension EventLogImporter {
  /// A device's zone from a given time on (a row of a collector's zone table).
  package struct ZoneChange: Sendable, Equatable {
    /// Unix s.
    package var time: Double
    package var zone: TraceTimeZone
    /// Where the row is, `file:line`, for warnings.
    package var location: String

    package init(time: Double, zone: TraceTimeZone, location: String) {
      self.time = time
      self.zone = zone
      self.location = location
    }
  }

  /// The collectors whose exports `import-events --preset` reads.
  package enum Preset: String, Sendable, CaseIterable, CustomStringConvertible {
    /// AWARE's `applications_foreground` table: `_id`, `timestamp` (Unix
    /// ms), `device_id`, `package_name`, `application_name`,
    /// `is_system_app`. Every row is the app brought to the foreground; its
    /// session ends at the device's next foreground row (AWARE,
    /// "Applications" sensor, https://awareframework.com/applications/).
    case aware
    /// Android `UsageStatsManager.queryEvents` exports, one file per device:
    /// `package` (`getPackageName`), `event_type` (`getEventType`, by name or
    /// code) and `timestamp` (`getTimeStamp`, Unix ms). `ACTIVITY_RESUMED`
    /// (`MOVE_TO_FOREGROUND` before API 29, code 1) opens, `ACTIVITY_PAUSED`
    /// (`MOVE_TO_BACKGROUND`, 2) and `ACTIVITY_STOPPED` (23) close, every
    /// other type is skipped (Android developer reference,
    /// `android.app.usage.UsageEvents.Event`).
    case usagestats

    package var description: String { rawValue }

    /// The options of the preset, over `o`'s other settings.
    package func apply(to o: inout Options) {
      o.timeUnit = .milliseconds
      o.foregroundStream = true
      o.excludedApps = EventLogImporter.defaultExcludedApps
      o.durationColumn = nil
      switch self {
      case .aware:
        (o.userColumn, o.timeColumn, o.appColumn, o.eventColumn) = ("device_id", "timestamp", "package_name", nil)
        (o.openEvents, o.closeEvents, o.ignoredEvents) = ([], [], [])
      case .usagestats:
        (o.userColumn, o.timeColumn, o.appColumn, o.eventColumn) = (nil, "timestamp", "package", "event_type")
        o.openEvents = ["ACTIVITY_RESUMED", "MOVE_TO_FOREGROUND", "1"]
        o.closeEvents = ["ACTIVITY_PAUSED", "MOVE_TO_BACKGROUND", "ACTIVITY_STOPPED", "2", "23"]
        o.ignoredEvents = []
        o.ignoreUnknownEvents = true
      }
    }
  }

  /// Packages that are not apps a user opens, excluded by default in a
  /// foreground stream: home-screen launchers (AOSP, Pixel, Samsung,
  /// Xiaomi, Huawei, OnePlus, Motorola, Nova, Microsoft), System UI (the
  /// notification shade, lock screen and recents) and the common
  /// keyboards (Gboard, AOSP, Samsung, SwiftKey). The import prints them.
  package static let defaultExcludedApps = [
    "com.android.launcher", "com.android.launcher2", "com.android.launcher3",
    "com.google.android.apps.nexuslauncher", "com.sec.android.app.launcher", "com.miui.home",
    "com.huawei.android.launcher", "net.oneplus.launcher", "com.motorola.launcher3", "com.teslacoilsw.launcher",
    "com.microsoft.launcher", "com.android.systemui", "com.google.android.inputmethod.latin",
    "com.android.inputmethod.latin", "com.samsung.android.honeyboard", "com.sec.android.inputmethod",
    "com.touchtype.swiftkey",
  ]

  /// The rows of a two-or-more-column CSV file with a header (`path`), as
  /// arrays of trimmed fields, with their line numbers.
  private static func table(_ path: String, columns: [String]) throws -> [(line: Int, fields: [String])] {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw TraceFormatError(file: path, line: 0, field: "-", message: "cannot read the file")
    }
    guard let text = String(data: data, encoding: .utf8) else {
      throw TraceFormatError(file: path, line: 0, field: "-", message: "not valid UTF-8")
    }
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    guard let head = lines.first, let header = CSV.split(Array(head.utf8), delimiter: 44) else {
      throw TraceFormatError(file: path, line: 1, field: "-", message: "no header row")
    }
    let names = header.map { String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespaces) }
    let index = try columns.map { c in
      guard let i = names.firstIndex(of: c) else {
        throw TraceFormatError(file: path, line: 1, field: c, message: "no column '\(c)' (found: \(escapedName(names.joined(separator: ", "))))")
      }
      return i
    }
    var out: [(Int, [String])] = []
    for (k, l) in lines.enumerated().dropFirst() where !l.trimmingCharacters(in: .whitespaces).isEmpty {
      guard let f = CSV.split(Array(l.utf8), delimiter: 44), f.count == names.count else {
        throw TraceFormatError(file: path, line: k + 1, field: "-", message: "expected \(names.count) fields like the header")
      }
      out.append((k + 1, index.map { String(decoding: f[$0], as: UTF8.self).trimmingCharacters(in: .whitespaces) }))
    }
    return out
  }

  /// A participant map: a CSV file whose first two columns are the device
  /// id and the participant id (header names free); several devices may
  /// map to one participant.
  ///
  /// - Throws: ``TraceFormatError`` for a device listed twice or an empty id.
  package static func readParticipants(path: String) throws -> [String: String] {
    guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8),
      let head = text.split(separator: "\n").first, let header = CSV.split(Array(head.utf8), delimiter: 44), header.count >= 2
    else { throw TraceFormatError(file: path, line: 1, field: "-", message: "expected a CSV file with a header of two columns: device, participant") }
    let names = header.map { String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespaces) }
    var map: [String: String] = [:]
    for (line, f) in try table(path, columns: [names[0], names[1]]) {
      guard !f[0].isEmpty, !f[1].isEmpty else { throw TraceFormatError(file: path, line: line, field: names[f[0].isEmpty ? 0 : 1], message: "empty id") }
      guard map[f[0]] == nil else { throw TraceFormatError(file: path, line: line, field: names[0], message: "device '\(escapedName(f[0]))' is listed twice") }
      map[f[0]] = f[1]
    }
    return map
  }

  /// AWARE's `timezone` table (`timestamp` in Unix ms, `device_id`,
  /// `timezone` a tz database name): each device's zones by time.
  ///
  /// - Throws: ``TraceFormatError`` naming the line of a bad time or zone.
  package static func readAwareZones(path: String) throws -> [String: [ZoneChange]] {
    var out: [String: [ZoneChange]] = [:]
    for (line, f) in try table(path, columns: ["timestamp", "device_id", "timezone"]) {
      guard let ms = DecimalText.finite(f[0]), TimeText.plausibleTimes.contains(ms / 1000) else {
        throw TraceFormatError(file: path, line: line, field: "timestamp", message: "expected Unix milliseconds, found '\(escapedName(String(f[0].prefix(40))))'")
      }
      guard let zone = TraceTimeZone(parsing: f[2]) else {
        throw TraceFormatError(file: path, line: line, field: "timezone", message: "unknown time zone '\(escapedName(String(f[2].prefix(40))))' (\(TraceTimeZone.unknownHint(f[2])))")
      }
      out[f[1], default: []].append(ZoneChange(time: ms / 1000, zone: zone, location: "\(path):\(line)"))
    }
    for k in out.keys { out[k]?.sort { $0.time < $1.time } }
    return out
  }

  /// The zone of `user` from ``Options/deviceZones``: the last change at
  /// or before its first row (else the device's first), with a warning
  /// when the device's table names another zone later; `nil` when the
  /// table has no row for the device.
  func tableZone(of user: User, warnings: inout [String]) -> TraceTimeZone? {
    guard let changes = options.deviceZones[user.device], let earliest = changes.first else { return nil }
    let chosen = changes.last { $0.time <= user.first } ?? earliest
    if let other = changes.first(where: { $0.zone != chosen.zone && $0.time > user.first && $0.time <= user.last }) {
      warnings.append(
        "\(other.location): timezone: device '\(escapedName(user.device))' moves from \(chosen.zone) to \(other.zone) "
          + "at \(TimeText.isoUTC(other.time)); a trace holds one zone per user: \(chosen.zone), the zone at its first row, is used")
    }
    return chosen.zone
  }
}
