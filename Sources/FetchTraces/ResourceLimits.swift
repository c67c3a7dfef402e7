import FetchSupport
import Foundation

/// Every size limit FetchLab enforces up front, so that an absurd input is
/// refused with a message before it exhausts memory or disk, in one place.
///
/// Each limit has a default and an environment variable that overrides it
/// (read once, by ``current``); the refusal messages name the variable.
/// Estimates use the per-row and per-event constants below, measured on the
/// synthetic population (generator version 1) and the bundled UbiqLog trace.
///
///     var limits = ResourceLimits.current
///     limits.maxEventsPerUser = 1_000
///     let reader = try TraceReader(path: p, limits: limits)
public struct ResourceLimits: Sendable, Equatable {
  /// Longest accepted trace line, in bytes (without the line ending).
  /// Default 1 MiB; `FETCHLAB_MAX_LINE_BYTES` (``lineLimitHint``).
  package var maxLineBytes: Int
  /// Most rows (events between `begin` and `end`) of one user the trace
  /// reader holds in memory, in events; a user with more is refused at the
  /// row that exceeds it. Default 20,000,000 (≈ 480 MB of ``TraceEvent``s,
  /// 170 years of the synthetic population's 320 rows a day);
  /// `FETCHLAB_MAX_EVENTS_PER_USER`.
  package var maxEventsPerUser: Int
  /// Largest estimated peak memory of a run, in bytes. Default: 3/4 of the
  /// machine's physical memory; `FETCHLAB_MAX_MEMORY_MB` (in MiB).
  package var maxMemoryBytes: Double
  /// Largest estimated output (CSV files plus generated traces) of one
  /// command, in bytes. Default 1 TB (10¹² B); `FETCHLAB_MAX_OUTPUT_MB` (in
  /// MiB). `fetchlab synth` also refuses output larger than the free space.
  package var maxOutputBytes: Double
  /// Largest number of (policy, replication, user-day) replays of one
  /// experiment, in policy-user-days. Default 10¹² (days of CPU time at a
  /// million a second); `FETCHLAB_MAX_POLICY_USER_DAYS`.
  package var maxPolicyUserDays: Double
  /// Largest number of (dataset, replication, policy) result cells of one
  /// experiment; each holds a 20.8 kB age histogram in memory while the
  /// results are assembled. Default 1,000,000 (20.8 GB);
  /// `FETCHLAB_MAX_RESULT_CELLS`.
  package var maxResultCells: Int
  /// Longest replayed window of one user (its `begin` to its `end` row),
  /// in days. Bounds the work learning policies do per user (a nightly
  /// refit over every 15-min bin so far: quadratic in the window).
  /// Default 3,650 (10 years); `FETCHLAB_MAX_WINDOW_DAYS`.
  package var maxWindowDays: Double = 3_650
  /// Most decision steps the settings of one policy imply for one user's
  /// device: over its replayed apps, every check and every decision
  /// opportunity (other apps' opens, wakes, plug-ins, network changes) ×
  /// the steps of a decision (a planner's horizon ÷ step bins, squared; the
  /// open-probability points of a horizon for the OS schedulers and IMP).
  /// Default 10¹⁰ (measured: 10¹¹ took 15 to 75 s in a release build);
  /// `FETCHLAB_MAX_POLICY_STEPS`.
  package var maxPolicySteps: Double = 1e10

  /// Limits; the defaults suit a 24 GiB machine (see the properties).
  public init(
    maxLineBytes: Int = 1 << 20, maxEventsPerUser: Int = 20_000_000,
    maxMemoryBytes: Double = Double(ProcessInfo.processInfo.physicalMemory) * 0.75,
    maxOutputBytes: Double = 1e12, maxPolicyUserDays: Double = 1e12, maxResultCells: Int = 1_000_000
  ) {
    precondition(maxLineBytes >= 64 && maxEventsPerUser >= 1, "limits must be positive")
    self.maxLineBytes = maxLineBytes
    self.maxEventsPerUser = maxEventsPerUser
    self.maxMemoryBytes = maxMemoryBytes
    self.maxOutputBytes = maxOutputBytes
    self.maxPolicyUserDays = maxPolicyUserDays
    self.maxResultCells = maxResultCells
  }

  /// Follows a "line longer than N bytes" message: how to raise the limit.
  package static let lineLimitHint = " (the limit; FETCHLAB_MAX_LINE_BYTES raises it)"

  /// The defaults, overridden by the `FETCHLAB_MAX_*` environment variables
  /// (a value that is not a positive number is ignored).
  public static let current: ResourceLimits = {
    let env = ProcessInfo.processInfo.environment
    func value(_ name: String) -> Double? {
      guard let s = env[name], let x = Double(s), x.isFinite, x > 0 else { return nil }
      return x
    }
    var l = ResourceLimits()
    if let x = value("FETCHLAB_MAX_LINE_BYTES") { l.maxLineBytes = Int(min(max(x, 64), 1e12)) }
    if let x = value("FETCHLAB_MAX_EVENTS_PER_USER") { l.maxEventsPerUser = Int(min(max(x, 1), 1e15)) }
    if let x = value("FETCHLAB_MAX_MEMORY_MB") { l.maxMemoryBytes = x * 1_048_576 }
    if let x = value("FETCHLAB_MAX_OUTPUT_MB") { l.maxOutputBytes = x * 1_048_576 }
    if let x = value("FETCHLAB_MAX_POLICY_USER_DAYS") { l.maxPolicyUserDays = x }
    if let x = value("FETCHLAB_MAX_RESULT_CELLS") { l.maxResultCells = Int(min(x, 1e15)) }
    if let x = value("FETCHLAB_MAX_WINDOW_DAYS") { l.maxWindowDays = x }
    if let x = value("FETCHLAB_MAX_POLICY_STEPS") { l.maxPolicySteps = x }
    return l
  }()

  // MARK: Estimation constants

  /// Trace rows per user-day of the synthetic population (measured: 304 at
  /// the default parameters; rounded up).
  package static let syntheticRowsPerUserDay = 330.0
  /// App opens per user-day of the synthetic population (measured: 86).
  package static let opensPerUserDay = 90.0
  /// Bytes per trace row on disk (measured: 36 B synthetic, 40 B UbiqLog).
  package static let traceBytesPerRow = 40.0
  /// Bytes of memory per trace event held (``TraceEvent`` stride).
  package static let memoryBytesPerEvent = Double(MemoryLayout<TraceEvent>.stride)
  /// Bytes of a `summary.csv` row (README: ≈ 250 B).
  package static let summaryBytesPerRow = 250.0
  /// Bytes of an `opens.csv` row (README: ≈ 60 B, plus the experiment columns).
  package static let openBytesPerRow = 70.0
  /// Bytes of a `fetches.csv` row (README: ≈ 110 B, plus the experiment columns).
  package static let fetchBytesPerRow = 120.0

  /// Text of a size for messages: `12.3 GB`, `512 MB`, `4 kB` (SI units).
  package static func bytesText(_ b: Double) -> String {
    guard b.isFinite else { return "∞ B" }
    let units: [(Double, String)] = [(1e15, "PB"), (1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")]
    for (scale, name) in units where b >= scale {
      return CSV.number(b / scale, decimals: 1) + " " + name
    }
    return CSV.number(b, decimals: 0) + " B"
  }

  /// Text of a count for messages: `3.6e12` from a billion up, else digits.
  package static func countText(_ x: Double) -> String {
    guard x.isFinite else { return "∞" }
    guard x >= 1e9 else { return CSV.number(x.rounded()) }
    var e = Int(log10(x).rounded(.down))
    var m = (x / pow(10, Double(e)) * 10).rounded() / 10
    if m >= 10 { m /= 10; e += 1 }
    return CSV.number(m) + "e" + String(e)
  }

  /// Refuses a policy whose settings imply more than ``maxPolicySteps``
  /// decision steps on one device: `steps`, summed over its `apps`
  /// replayed apps' checks and `opportunities` (other apps' opens, wakes,
  /// plug-ins, network changes) in `days` days; `nil` when it fits, else
  /// the message, which names the policy and the `settings` that drive the
  /// cost.
  package func checkDeviceWork(
    steps: Double, apps: Int, days: Double, opportunities: Double, policy: String, settings: String
  ) -> String? {
    guard !(steps <= maxPolicySteps) else { return nil }
    return "policy \(policy): its settings (\(settings)) imply about \(Self.countText(steps)) decision steps for "
      + "\(apps) app\(apps == 1 ? "" : "s") in a \(CSV.number(days, decimals: 1))-day window (each app decides at its "
      + "checks and at \(Self.countText(opportunities)) other apps' opens, wakes, plug-ins and network changes in all), "
      + "over the limit of \(Self.countText(maxPolicySteps)) per device; use a shorter horizon or a longer step or check, "
      + "or fewer apps (or raise FETCHLAB_MAX_POLICY_STEPS)"
  }

  /// Refuses a policy whose settings imply more than ``maxPolicySteps``
  /// decision steps for one (user, app) replay of `days` days:
  /// `stepsPerDay` × `days`; `nil` when it fits, else the message, which
  /// names the policy and the `settings` that drive the cost.
  package func checkPolicyWork(stepsPerDay: Double, days: Double, policy: String, settings: String) -> String? {
    let steps = stepsPerDay * max(days, 1)
    guard !(steps <= maxPolicySteps) else { return nil }
    return "policy \(policy): its settings (\(settings)) imply about \(Self.countText(steps)) decision steps per app in "
      + "a \(CSV.number(days, decimals: 1))-day window, over the limit of \(Self.countText(maxPolicySteps)); use a shorter "
      + "horizon or a longer step or check (or raise FETCHLAB_MAX_POLICY_STEPS)"
  }

  /// The estimated output size and peak memory of a synthetic trace of
  /// `users` × `days` (generated in batches of `batchUsers`), in bytes.
  package static func syntheticEstimate(users: Int, days: Int, batchUsers: Int = 64) -> (bytes: Double, memory: Double) {
    let userDays = Double(users) * Double(days)
    let bytes = userDays * syntheticRowsPerUserDay * traceBytesPerRow
    // Two batches in flight (one written, one generated), each user's
    // events plus the generator's working copies (≈ 3×).
    let perUser = Double(days) * syntheticRowsPerUserDay * memoryBytesPerEvent * 3
    let memory = 2 * Double(min(users, batchUsers)) * perUser
    return (bytes, memory)
  }

  /// Refuses a synthetic population whose trace would be larger than
  /// ``maxOutputBytes`` or `freeBytes`, or need more than
  /// ``maxMemoryBytes`` to generate; `nil` when it fits, else the message.
  package func checkSynthetic(users: Int, days: Int, freeBytes: Double? = nil, what: String) -> String? {
    let e = Self.syntheticEstimate(users: users, days: days)
    let shape = "\(users) users × \(days) days"
    if e.bytes > maxOutputBytes {
      return "\(what): \(shape) would write about \(Self.bytesText(e.bytes)) of trace, over the limit of "
        + "\(Self.bytesText(maxOutputBytes)); use fewer users or days (or raise FETCHLAB_MAX_OUTPUT_MB)"
    }
    if let free = freeBytes, e.bytes > free {
      return "\(what): \(shape) would write about \(Self.bytesText(e.bytes)) of trace, but only "
        + "\(Self.bytesText(free)) is free there; use fewer users or days"
    }
    if e.memory > maxMemoryBytes {
      return "\(what): \(shape) needs about \(Self.bytesText(e.memory)) of memory to generate, over the limit of "
        + "\(Self.bytesText(maxMemoryBytes)); use fewer days (or raise FETCHLAB_MAX_MEMORY_MB)"
    }
    return nil
  }

  /// Free bytes on the file system holding `path` (or its nearest existing
  /// parent directory); `nil` when it cannot be determined.
  package static func freeBytes(near path: String) -> Double? {
    var p = path.isEmpty ? "." : path
    let fm = FileManager.default
    while !fm.fileExists(atPath: p) {
      let parent = (p as NSString).deletingLastPathComponent
      if parent == p || parent.isEmpty { p = "."; break }
      p = parent
    }
    var s = statvfs()
    guard statvfs(p, &s) == 0 else { return nil }
    return Double(s.f_bavail) * Double(s.f_frsize)
  }
}
