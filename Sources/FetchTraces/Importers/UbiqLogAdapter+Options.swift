import FetchSupport
import Foundation

// The filters: which UbiqLog rows count as user-facing app activity.
extension UbiqLogAdapter {
  /// Which rows count as user-facing app activity, and how chunks merge.
  ///
  /// The name rules, applied to the lowercased process name in this order
  /// (first match wins):
  ///
  /// 1. contains `:` and ``dropSecondaryProcesses`` → drop (a secondary
  ///    process such as `com.tencent.mm:push` or `…:sandboxed_process0`);
  /// 2. contains any of ``dropSubstrings`` → drop;
  /// 3. last dot-separated component is in ``keepAppNames`` → keep
  ///    (`com.android.mms`, `com.sec.android.app.camera`, `com.htc.album`);
  /// 4. starts with any of ``dropPrefixes`` → drop;
  /// 5. otherwise keep (third-party apps).
  ///
  /// Clock and alarm apps are dropped (`clock` is a drop substring): their
  /// process stays alive to ring scheduled alarms, and an alarm is not an open
  /// that wants fresh content.
  package struct Options: Sendable, Equatable {
    /// Rows whose start or end year is earlier are clock resets; dropped.
    package var minimumYear: Int
    /// Rows whose end − start is negative or exceeds this (s) are dropped.
    package var maximumRecordDuration: Double
    /// A record of an app starting less than this many seconds after that
    /// app's previous record ended is merged into it. ≥ 0.
    package var mergeGap: Double
    /// Cap on an open's session length, in s; in (0, 86,400].
    package var maximumSession: Double
    /// A user's window is cut to the block of days with the most opens in
    /// which no two consecutive active days are more than this many days
    /// apart (0 keeps everything). Logging gaps of weeks or months (2_F has
    /// 18 active days in 381) would otherwise count as days of phone use.
    package var maximumIdleDays: Int
    /// Drop names with a `:` (secondary processes).
    package var dropSecondaryProcesses: Bool
    /// Background markers: a name containing one is dropped (rule 2).
    package var dropSubstrings: [String]
    /// User-facing system apps: kept when the last name component is one of
    /// these, even under a platform prefix (rule 3).
    package var keepAppNames: [String]
    /// Platform and vendor packages: dropped unless kept by rule 3 (rule 4).
    package var dropPrefixes: [String]
    /// Behavioural cues applied after the name rules (``UbiqLogBehaviouralFilter``);
    /// `nil` (the default, which built the bundled trace) applies none.
    package var behaviouralFilter: UbiqLogBehaviouralFilter? = nil

    package init(
      minimumYear: Int = 2013,
      maximumRecordDuration: Double = 86_400,
      mergeGap: Double = 60,
      maximumSession: Double = 1_800,
      maximumIdleDays: Int = 21,
      dropSecondaryProcesses: Bool = true,
      dropSubstrings: [String] = Options.defaultDropSubstrings,
      keepAppNames: [String] = Options.defaultKeepAppNames,
      dropPrefixes: [String] = Options.defaultDropPrefixes
    ) {
      self.minimumYear = minimumYear
      self.maximumRecordDuration = maximumRecordDuration
      self.mergeGap = mergeGap
      self.maximumSession = maximumSession
      self.maximumIdleDays = maximumIdleDays
      self.dropSecondaryProcesses = dropSecondaryProcesses
      self.dropSubstrings = dropSubstrings
      self.keepAppNames = keepAppNames
      self.dropPrefixes = dropPrefixes
    }

    /// Substrings that mark background, system or helper processes.
    package static let defaultDropSubstrings: [String] = [
      // the markers of the published UbiqLog statistics
      "launcher", "widget", "provider", "service", "keyguard", "lockscreen", "push", "sync",
      // home screens, input methods, wallpapers
      "home", "wallpaper", "inputmethod", "keyboard", "theme",
      // daemons and device management
      "daemon", "agent", "process", "system", "fota", "update", "setupwizard", "backup", "uploader",
      // radios and sensors
      "bluetooth", "nfc", "location",
      // always-on monitors: battery, security scanners
      "battery", "antivirus", "security", "mobilecare",
      // alarm clocks and the in-call screen (the dialer is counted instead)
      "clock", "incallui",
    ]

    /// Last name components of user-facing system apps.
    package static let defaultKeepAppNames: [String] = [
      // messaging, phone, contacts
      "mms", "conversations", "dialer", "htcdialer", "dialertab", "contacts", "htccontacts",
      "socialphonebook",
      // settings, web, app store
      "settings", "browser", "sbrowser", "chrome", "vending", "samsungapps",
      // camera, photos, media
      "camera", "gallery", "gallery3d", "album", "music", "video", "videoplayer", "fmradio",
      // mail, calendar, tools
      "email", "mail", "calendar", "calculator", "calculator2", "popupcalculator", "memo", "notes",
      "myfiles", "filemanager", "soundrecorder", "voicerecorder",
    ]

    /// Platform and vendor package prefixes.
    package static let defaultDropPrefixes: [String] = [
      "com.android.", "android.", "com.google.android.gms", "com.google.android.gsf",
      "com.google.android.tts", "com.google.android.partnersetup", "com.google.process.",
      "com.sec.", "com.samsung.", "com.lge.", "com.sonyericsson.", "com.sonymobile.", "com.htc.",
      "com.motorola.", "com.mediatek.", "com.huawei.", "com.qualcomm.", "com.qct.", "com.broadcom.",
      "com.redbend.", "com.lmi.", "com.osp.", "com.vlingo.", "com.wssyncmldm", "com.wssnps",
      "com.fmm.dm", "oem.",
    ]

    /// Why `name` is dropped, or `nil` when it is kept as a user-facing app.
    ///
    ///     Options().dropReason(process: "com.sec.android.app.launcher")
    ///     // "contains 'launcher'"
    package func dropReason(process name: String) -> String? {
      let n = name.lowercased()
      if dropSecondaryProcesses && n.contains(":") { return "secondary process (':')" }
      if let s = dropSubstrings.first(where: { n.contains($0.lowercased()) }) { return "contains '\(s)'" }
      let last = n.split(separator: ".").last.map(String.init) ?? n
      if keepAppNames.contains(where: { $0.lowercased() == last }) { return nil }
      if let p = dropPrefixes.first(where: { n.hasPrefix($0.lowercased()) }) { return "platform prefix '\(p)'" }
      return nil
    }

    /// Whether `name` is kept as a user-facing app.
    package func keeps(process name: String) -> Bool { dropReason(process: name) == nil }

    /// The options as `#` comment lines for a derived trace.
    package var commentLines: [String] {
      [
        "adapter options: minimumYear=\(minimumYear) maximumRecordDuration=\(CSV.number(maximumRecordDuration))s"
          + " mergeGap=\(CSV.number(mergeGap))s maximumSession=\(CSV.number(maximumSession))s maximumIdleDays=\(maximumIdleDays)"
          + " dropSecondaryProcesses=\(dropSecondaryProcesses)",
        "dropSubstrings: " + dropSubstrings.joined(separator: " "),
        "keepAppNames (last name component): " + keepAppNames.joined(separator: " "),
        "dropPrefixes: " + dropPrefixes.joined(separator: " "),
      ] + behaviourCommentLines
    }

    /// The behavioural filter's settings as a comment line (none without it).
    var behaviourCommentLines: [String] {
      guard let f = behaviouralFilter else { return [] }
      let coverage = "behavioural filter: always running at ≥ " + CSV.number(f.alwaysRunningCoverage)
        + " of logged \(f.binSeconds) s bins"
      let lockstep = "; lockstep share ≥ " + CSV.number(f.lockstepShare) + " within ±\(f.lockstepToleranceSeconds) s"
      return [coverage + lockstep + "; at least \(f.minimumRecords) merged records"]
    }

    func _checkValid() {
      precondition(mergeGap.isFinite && mergeGap >= 0, "UbiqLogAdapter.Options.mergeGap must be finite and ≥ 0")
      precondition(maximumSession > 0 && maximumSession <= 86_400, "UbiqLogAdapter.Options.maximumSession must be in (0, 86400] s")
      precondition(maximumRecordDuration >= 0, "UbiqLogAdapter.Options.maximumRecordDuration must be ≥ 0")
      if let p = behaviouralFilter?.problem { preconditionFailure("UbiqLogAdapter.Options.behaviouralFilter: " + p) }
    }
  }
}
