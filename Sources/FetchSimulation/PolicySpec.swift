import FetchModels
import FetchTraces

/// A policy configuration as written on the command line, e.g.
/// `periodic:30m`. Parsing is strict; ``description`` is canonical.
public enum PolicySpec: Sendable, Hashable, CustomStringConvertible {
  case never
  /// A timer every `interval` seconds, the first `phase` seconds after the
  /// window start (`nil`: one interval, `periodic:<interval>,phase=<d>`).
  case periodic(interval: Double, phase: Double? = nil)
  case oracle
  /// The iOS-like Minimum scheduler (``MinimumPolicy``).
  case iosMinimum(MinimumParameters)
  /// The same scheduler with a floor of `interval` seconds between launches.
  case iosCustom(interval: Double, MinimumParameters)
  /// Server pushes on content updates, APNs-like delivery (``SilentPushPolicy``).
  case silentPush(SilentPushParameters)
  /// Android WorkManager periodic work under Doze (``WorkManagerPolicy``).
  case androidWorkManager(interval: Double, WorkManagerParameters)
  /// Android App Standby Buckets quotas (``StandbyPolicy``).
  case androidStandby(StandbyParameters)
  /// Deferred fetches riding other activity's radio tails (``TailEnderPolicy``).
  case tailender(interval: Double, TailEnderParameters)
  /// Informed Mobile Prefetching: cost-benefit under energy and data budgets (``IMPPolicy``).
  case imp(IMPParameters)
  /// The best schedule under a fetch-count or energy budget (``BudgetOraclePolicy``).
  case oracleBudget(OracleBudget, BudgetOracleParameters)

  /// The policies `--policy` accepts, for help and error texts.
  public static let syntax =
    "never, periodic:<interval>[,phase=<d>] (e.g. periodic:30m, periodic:1h,phase=0), oracle, oracle-budget:<N per day>|<X>J, "
    + "ios-minimum[:key=value,...], ios-custom:<interval>[,key=value,...], silent-push[:...], "
    + "android-workmanager:<interval>[,...], android-standby[:...], tailender:<interval>[,...], imp[:...]"

  /// The policy family names (the part before `:`), for "did you mean".
  public static let familyNames = [
    "never", "periodic", "oracle", "oracle-budget", "ios-minimum", "ios-custom", "silent-push", "android-workmanager",
    "android-standby", "tailender", "imp",
  ]

  /// Whether the policy learns from a training period (the run then splits
  /// each user's window and scores every policy on the held-out part).
  public var learns: Bool {
    switch self {
    case .iosMinimum, .iosCustom, .imp, .androidStandby: true
    default: false
    }
  }

  /// Whether the policy fits a habit model (and so wants the population model).
  public var usesHabitModel: Bool {
    switch self {
    case .iosMinimum, .iosCustom, .imp: true
    default: false
    }
  }

  /// Parses a policy string; throws ``PolicySpecError`` naming what is wrong.
  public init(parsing s: String) throws {
    let parts = s.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
    let name = String(parts[0])
    let arg = parts.count > 1 ? String(parts[1]) : nil
    switch (name, arg) {
    case ("never", nil): self = .never
    case ("oracle", nil): self = .oracle
    case ("periodic", let a?):
      let items = a.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
      guard let secs = parseDuration(items[0]), secs >= 1 else {
        throw PolicySpecError("policy '\(s)': bad interval '\(items[0])' (use e.g. 90s, 15m, 1h, 1h30m, 1d; at least 1 s)")
      }
      var phase: Double?
      if items.count > 1 {
        let kv = items[1].split(separator: "=", maxSplits: 1).map(String.init)
        guard kv.count == 2, kv[0] == "phase" else {
          throw PolicySpecError("policy '\(s)': unknown setting '\(items[1])'; known: phase")
        }
        guard let p = parseDuration(kv[1]), p >= 0, p <= secs else {
          throw PolicySpecError("policy '\(s)': bad value '\(kv[1])' for phase (a duration from 0 to the interval, e.g. phase=0)")
        }
        phase = p == secs ? nil : p
      }
      self = .periodic(interval: secs, phase: phase)
    case ("periodic", nil):
      throw PolicySpecError("policy 'periodic' needs an interval, e.g. periodic:30m")
    case ("ios-minimum", let a):
      self = .iosMinimum(try parseMinimum(a ?? "", policy: s))
    case ("ios-custom", let a?):
      let items = a.split(separator: ",", maxSplits: 1).map(String.init)
      guard let secs = parseDuration(items.first ?? ""), secs >= 1 else {
        throw PolicySpecError("policy '\(s)': bad interval '\(items.first ?? "")' (use e.g. 30m, 1h; at least 1 s)")
      }
      var p = try parseMinimum(items.count > 1 ? items[1] : "", policy: s)
      p.minSpacingS = max(p.minSpacingS, secs)
      self = .iosCustom(interval: secs, p)
    case ("ios-custom", nil):
      throw PolicySpecError("policy 'ios-custom' needs an interval, e.g. ios-custom:1h")
    case ("silent-push", let a):
      self = .silentPush(try parseSettings(a ?? "", policy: s, defaults: SilentPushParameters(), keys: SilentPushParameters.keys))
    case ("android-workmanager", let a?):
      let (i, rest) = try parseIntervalAndSettings(a, policy: s)
      self = .androidWorkManager(
        interval: i, try parseSettings(rest, policy: s, defaults: WorkManagerParameters(), keys: WorkManagerParameters.keys))
    case ("android-standby", let a):
      self = .androidStandby(try parseSettings(a ?? "", policy: s, defaults: StandbyParameters(), keys: StandbyParameters.keys))
    case ("tailender", let a?):
      let (i, rest) = try parseIntervalAndSettings(a, policy: s)
      self = .tailender(
        interval: i, try parseSettings(rest, policy: s, defaults: TailEnderParameters(), keys: TailEnderParameters.keys))
    case ("imp", let a):
      self = .imp(try parseSettings(a ?? "", policy: s, defaults: IMPParameters(), keys: IMPParameters.keys))
    case ("oracle-budget", let a?):
      let items = a.split(separator: ",", maxSplits: 1).map(String.init)
      guard let b = OracleBudget(argument: items.first ?? "") else {
        throw PolicySpecError(
          "policy '\(s)': bad budget '\(items.first ?? "")' (fetches per day, e.g. oracle-budget:4, or joules per day, e.g. oracle-budget:50J)")
      }
      self = .oracleBudget(
        b,
        try parseSettings(
          items.count > 1 ? items[1] : "", policy: s, defaults: BudgetOracleParameters(), keys: BudgetOracleParameters.keys))
    case ("android-workmanager", nil), ("tailender", nil), ("oracle-budget", nil):
      throw PolicySpecError("policy '\(name)' needs an argument, e.g. \(name == "oracle-budget" ? "oracle-budget:4" : name + ":1h")")
    case ("never", _?), ("oracle", _?):
      throw PolicySpecError("policy '\(name)' takes no parameter (got '\(s)')")
    default:
      let hint = Suggestion.closest(to: name, among: PolicySpec.familyNames).map { " (did you mean '\($0)'?)" } ?? ""
      throw PolicySpecError("unknown policy '\(s)'\(hint); known: \(PolicySpec.syntax)")
    }
  }

  public var description: String {
    switch self {
    case .never: "never"
    case .oracle: "oracle"
    case .periodic(let i, let phase): "periodic:\(formatDuration(i))" + (phase.map { ",phase=" + formatDuration($0) } ?? "")
    case .iosMinimum(let p): "ios-minimum" + minimumSuffix(p, separator: ":")
    case .iosCustom(let i, var p):
      "ios-custom:\(formatDuration(i))" + {
        p.minSpacingS = p.minSpacingS == i ? MinimumParameters().minSpacingS : p.minSpacingS
        return minimumSuffix(p, separator: ",")
      }()
    case .silentPush(let p):
      "silent-push" + settingsSuffix(p, defaults: SilentPushParameters(), keys: SilentPushParameters.keys, separator: ":")
    case .androidWorkManager(let i, let p):
      "android-workmanager:\(formatDuration(i))"
        + settingsSuffix(p, defaults: WorkManagerParameters(), keys: WorkManagerParameters.keys, separator: ",")
    case .androidStandby(let p):
      "android-standby" + settingsSuffix(p, defaults: StandbyParameters(), keys: StandbyParameters.keys, separator: ":")
    case .tailender(let i, let p):
      "tailender:\(formatDuration(i))"
        + settingsSuffix(p, defaults: TailEnderParameters(), keys: TailEnderParameters.keys, separator: ",")
    case .imp(let p):
      "imp" + settingsSuffix(p, defaults: IMPParameters(), keys: IMPParameters.keys, separator: ":")
    case .oracleBudget(let b, let p):
      "oracle-budget:\(b)"
        + settingsSuffix(p, defaults: BudgetOracleParameters(), keys: BudgetOracleParameters.keys, separator: ",")
    }
  }

  /// Replays one (user, app) under this policy; learning policies fit on
  /// `learning` (the user's training part and a population model).
  public func replay(
    user: PreparedUser, app: Int32, content: ContentTimeline, seed: UInt64, recordEvents: Bool,
    learning: LearningContext? = nil
  ) -> AppReplay {
    replay(user: user, apps: [app], contents: [content], scope: .app, seed: seed, recordEvents: recordEvents, learning: learning)
      .apps[0]
  }

  /// Replays the user's `apps` (with their `contents`) under this policy,
  /// one instance per app: at `scope` ``ReplayScope/device`` all together on
  /// one radio (``replayDevice(_:user:apps:contents:options:)``), at
  /// ``ReplayScope/app`` each alone (``replay(_:user:app:content:options:)``,
  /// the device summary then sums the apps' separate radios).
  public func replay(
    user: PreparedUser, apps: [Int32], contents: [ContentTimeline], scope: ReplayScope, seed: UInt64,
    recordEvents: Bool, learning: LearningContext? = nil
  ) -> DeviceReplay {
    let o = ReplayOptions(seed: seed, policyKey: description, recordEvents: recordEvents)
    let training = learning?.training ?? UserTrace(
      user: user.trace.user, timeZone: user.trace.timeZone, start: user.trace.start, end: user.trace.start,
      apps: user.trace.apps)
    func run<P: FetchPolicy>(_ make: (Int32, ContentTimeline) -> P) -> DeviceReplay {
      if scope == .device && apps.count > 1 {
        var ps = zip(apps, contents).map { make($0, $1) }
        return FetchSimulation.replayDevice(&ps, user: user, apps: apps, contents: contents, options: o)
      }
      let rs = zip(apps, contents).map { app, content in
        var p = make(app, content)
        return FetchSimulation.replay(&p, user: user, app: app, content: content, options: o)
      }
      return DeviceReplay(apps: rs, summary: DeviceSummary(rs))
    }
    switch self {
    case .never: return run { _, _ in NeverPolicy() }
    case .periodic(let i, let phase): return run { _, _ in PeriodicPolicy(interval: i, phase: phase ?? i) }
    case .oracle: return run { OraclePolicy(user: user, app: $0, content: $1) }
    case .iosMinimum(let params), .iosCustom(_, let params):
      // One OS scheduler per device: its apps draw on one budget ledger.
      let ledger = scope == .device ? DeviceBudgetLedger() : nil
      return run { app, _ in
        MinimumPolicy(
          params: params, world: user.world, training: training, app: app, population: learning?.population,
          fits: learning?.fits, ledger: ledger)
      }
    case .silentPush(let params): return run { SilentPushPolicy(params: params, user: user, content: $1) }
    case .androidWorkManager(let i, let params): return run { _, _ in WorkManagerPolicy(interval: i, params: params) }
    case .androidStandby(let params): return run { app, _ in StandbyPolicy(params: params, training: training, app: app) }
    case .tailender(let i, let params): return run { _, _ in TailEnderPolicy(interval: i, params: params) }
    case .imp(let params):
      return run { app, _ in
        IMPPolicy(
          params: params, world: user.world, training: training, app: app, population: learning?.population,
          fits: learning?.fits)
      }
    case .oracleBudget(let b, let params):
      return run { BudgetOraclePolicy(budget: b, user: user, app: $0, content: $1, params: params) }
    }
  }
}

/// What a learning policy is trained on.
public struct LearningContext: Sendable {
  /// The user's trace before the replay window (same app indices).
  public var training: UserTrace
  /// The population habit model to shrink toward, if any.
  public var population: HabitModel?
  /// Habit fits shared by the learning policies replayed with this context.
  public let fits: HabitFitCache

  public init(training: UserTrace, population: HabitModel?, fits: HabitFitCache = HabitFitCache()) {
    self.training = training
    self.population = population
    self.fits = fits
  }
}

/// Splits `<interval>[,key=value,...]`.
private func parseIntervalAndSettings(_ a: String, policy: String) throws -> (Double, String) {
  let items = a.split(separator: ",", maxSplits: 1).map(String.init)
  guard let secs = parseDuration(items.first ?? ""), secs >= 1 else {
    throw PolicySpecError("policy '\(policy)': bad interval '\(items.first ?? "")' (use e.g. 15m, 1h; at least 1 s)")
  }
  return (secs, items.count > 1 ? items[1] : "")
}

/// One `key=value` setting of a policy's parameter struct.
struct SettingKey<P>: @unchecked Sendable {
  let name: String
  let path: WritableKeyPath<P, Double>
  /// Accepted values.
  let minimum: Double
  let maximum: Double
  /// Parsed and printed as a duration (`30m`) rather than a number.
  let isDuration: Bool

  init(_ name: String, _ path: WritableKeyPath<P, Double>, min: Double = 0, max: Double = .infinity, duration: Bool = false) {
    self.name = name
    self.path = path
    minimum = min
    maximum = max
    isDuration = duration
  }
}

/// Parses `key=value,key=value` onto `defaults`; errors name the policy
/// string and list the known keys.
func parseSettings<P>(_ text: String, policy: String, defaults: P, keys: [SettingKey<P>]) throws -> P {
  var p = defaults
  guard !text.isEmpty else { return p }
  var seen = Set<String>()
  for item in text.split(separator: ",", omittingEmptySubsequences: false) {
    let kv = item.split(separator: "=", maxSplits: 1).map(String.init)
    guard kv.count == 2, let key = keys.first(where: { $0.name == kv[0] }) else {
      throw PolicySpecError("policy '\(policy)': unknown setting '\(item)'; known: " + keys.map(\.name).joined(separator: ", "))
    }
    guard seen.insert(key.name).inserted else {
      throw PolicySpecError("policy '\(policy)': \(key.name) is set more than once; keep one")
    }
    guard let x = key.isDuration ? parseDuration(kv[1]) : Double(kv[1]), x.isFinite, x >= key.minimum, x <= key.maximum
    else {
      let range = key.maximum < .infinity
        ? "\(CSV.number(key.minimum))...\(CSV.number(key.maximum))" : "at least \(CSV.number(key.minimum))"
      throw PolicySpecError("policy '\(policy)': bad value '\(kv[1])' for \(key.name) (\(range))")
    }
    p[keyPath: key.path] = x
  }
  return p
}

/// `key=value,...` for the settings of `p` that differ from `defaults`, in
/// table order (empty when none), prefixed by `separator`.
func settingsSuffix<P>(_ p: P, defaults: P, keys: [SettingKey<P>], separator: String) -> String {
  let items = keys.compactMap { k -> String? in
    let v = p[keyPath: k.path]
    guard v != defaults[keyPath: k.path] else { return nil }
    return "\(k.name)=" + (k.isDuration ? formatDuration(v) : CSV.number(v))
  }
  return items.isEmpty ? "" : separator + items.joined(separator: ",")
}

private func parseMinimum(_ text: String, policy: String) throws -> MinimumParameters {
  try parseSettings(text, policy: policy, defaults: MinimumParameters(), keys: MinimumParameters.keys)
}

private func minimumSuffix(_ p: MinimumParameters, separator: String) -> String {
  settingsSuffix(p, defaults: MinimumParameters(), keys: MinimumParameters.keys, separator: separator)
}

/// A bad policy string.
public struct PolicySpecError: Error, CustomStringConvertible, Sendable {
  public let description: String
  init(_ s: String) { description = s }
}

private let durationUnits: [(Character, Double)] = [("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)]

/// Parses `90`, `90s`, `15m`, `1h30m`, `1.5h`, `2d` into seconds; `nil` if malformed.
public func parseDuration(_ s: String) -> Double? {
  guard !s.isEmpty else { return nil }
  // Beyond 2^53 s whole seconds are no longer exact (and formatDuration
  // could not print them): not a duration.
  if let x = Double(s), x.isFinite { return abs(x) < 0x1p53 ? x : nil }
  var total = 0.0
  var num = ""
  var lastUnit = Double.infinity
  for c in s {
    if c.isNumber || c == "." {
      num.append(c)
    } else if let u = durationUnits.first(where: { $0.0 == c })?.1 {
      guard let x = Double(num), x.isFinite, u < lastUnit else { return nil }
      total += x * u
      lastUnit = u
      num = ""
    } else {
      return nil
    }
  }
  return num.isEmpty && total < 0x1p53 ? total : nil
}

/// Seconds as the shortest `1h30m`-style text; fractions of a second as `s`.
public func formatDuration(_ secs: Double) -> String {
  if secs != secs.rounded() || !(abs(secs) < 0x1p53) { return CSV.number(secs) + "s" }
  var rest = Int(secs)
  var out = ""
  for (c, u) in durationUnits {
    let n = rest / Int(u)
    if n > 0 { out += "\(n)\(c)" }
    rest -= n * Int(u)
  }
  return out.isEmpty ? "0s" : out
}
