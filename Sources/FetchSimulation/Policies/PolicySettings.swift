import FetchModels
import FetchSupport
import FetchTraces

/// The upper bounds of policy settings: every setting has one, so that no
/// accepted value makes a replay's work or memory unbounded. The reasons
/// are in `docs/policies.md` ("Setting bounds"); the resource check
/// (``PolicySpec/settingWork``) refuses in-bound combinations that would
/// still cost too much.
package enum SettingBound {
  /// Durations: 30 d. A month is longer than any documented OS wait (APNs
  /// stores a push for 30 d) and than the weeks the traces span; a timer
  /// or window longer than that never fires inside a replay.
  package static let duration = 30 * 86_400.0
  /// Look-ahead horizons: 7 d. The habit model is weekly, so a longer
  /// horizon repeats what it already sees; the work of a decision grows
  /// with the horizon.
  package static let horizon = 7 * 86_400.0
  /// Decision periods and planning steps: 1 d (a policy that decides less
  /// often than daily misses every daily budget reset).
  package static let period = 86_400.0
  /// Counts per day or per window (launches, batches, pushes): 86,400, one
  /// a second, above the engine's own one-second timer floor.
  package static let count = 86_400.0
  /// Percentages of the battery: 100.
  package static let percent = 100.0
  /// Byte sizes and budgets: 10¹⁵ B (a petabyte), beyond any device.
  package static let bytes = 1e15
  /// Other numbers (prices, weights, gains, factors): 10⁹, far past the
  /// swept values (prices up to 3, weights up to 30) and still finite
  /// after any product the policies form.
  package static let number = 1e9
  /// Intervals given as a family's argument (`periodic:<interval>`).
  package static let interval = duration
}

/// A setting's number in decimal notation (`0.5`, `2e-3`); `nil` for
/// anything else, hexadecimal (`0x10`) included.
func settingNumber(_ text: String) -> Double? {
  guard text.utf8.allSatisfy({ (48...57).contains($0) || $0 == 46 || $0 == 43 || $0 == 45 || $0 == 69 || $0 == 101 })
  else { return nil }
  return Double(text)
}

/// A setting's duration (`90s`, `1h30m`, `2d`, `1.5h`); `nil` for anything
/// else, hexadecimal numbers included.
func settingDuration(_ text: String) -> Double? {
  guard !text.lowercased().contains("x") else { return nil }
  return parseDuration(text)
}

/// A family's `<interval>` argument, s: 1 s to ``SettingBound/interval``.
func parseInterval(_ text: String, policy: String, examples: String = "15m, 1h") throws -> Double {
  guard let secs = settingDuration(text), secs >= 1, secs <= SettingBound.interval else {
    throw PolicySpecError(
      .badValue,
      "policy '\(policy)': bad interval '\(text)' (use e.g. \(examples); 1s...\(formatDuration(SettingBound.interval)))")
  }
  return secs
}

/// Splits `<interval>[,key=value,...]`.
func parseIntervalAndSettings(_ a: String, policy: String) throws -> (Double, String) {
  let items = a.split(separator: ",", maxSplits: 1).map(String.init)
  let secs = try parseInterval(items.first ?? "", policy: policy)
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
  /// What the setting means, with its unit (help and docs).
  let help: String

  /// A setting; without `max`, the bound of its kind
  /// (``SettingBound/duration`` or ``SettingBound/number``).
  init(
    _ name: String, _ path: WritableKeyPath<P, Double>, min: Double = 0, max: Double? = nil, duration: Bool = false,
    help: String = ""
  ) {
    self.name = name
    self.path = path
    minimum = min
    maximum = max ?? (duration ? SettingBound.duration : SettingBound.number)
    precondition(maximum.isFinite && maximum >= minimum, "setting \(name) needs a finite upper bound")
    isDuration = duration
    self.help = help
  }

  /// A value as it is written in a policy string.
  func text(_ x: Double) -> String { isDuration ? formatDuration(x) : CSV.number(x) }

  /// The documentation of the setting with its default from `defaults`.
  func info(defaults: P) -> PolicySettingInfo {
    PolicySettingInfo(
      name: name, defaultValue: text(defaults[keyPath: path]), range: "\(text(minimum))...\(text(maximum))", help: help)
  }
}

extension SettingKey {
  /// `refit_hour`: local hour of the nightly habit-model refit, 0–24 (24:
  /// never); the same setting in every scheduler that keeps its habit
  /// model through ``MinimumPolicy``.
  static func refitHour(_ path: WritableKeyPath<P, Double>) -> SettingKey {
    SettingKey("refit_hour", path, max: 24, help: "local hour of the nightly habit-model refit (24: never)")
  }

  /// `prior_updates_per_hour`: prior mean of the content-update rate that a
  /// policy learns from its own NewData / NoData results, per hour (Gamma
  /// mean; ``UpdateRateEvidence``).
  static func priorUpdatesPerHour(_ path: WritableKeyPath<P, Double>) -> SettingKey {
    SettingKey("prior_updates_per_hour", path, min: 1e-6, help: "prior of the content-update rate, per hour (Gamma mean)")
  }
}

/// The documentation of every setting in `keys`, defaults from `defaults`.
func settingInfos<P>(_ keys: [SettingKey<P>], defaults: P) -> [PolicySettingInfo] {
  keys.map { $0.info(defaults: defaults) }
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
      throw PolicySpecError(.unknownSetting, "policy '\(policy)': unknown setting '\(item)'; known: " + keys.map(\.name).joined(separator: ", "))
    }
    guard seen.insert(key.name).inserted else {
      throw PolicySpecError(.repeatedSetting, "policy '\(policy)': \(key.name) is set more than once; keep one")
    }
    guard let x = key.isDuration ? settingDuration(kv[1]) : settingNumber(kv[1]), x.isFinite, x >= key.minimum, x <= key.maximum
    else {
      let range = "\(key.text(key.minimum))...\(key.text(key.maximum))"
      throw PolicySpecError(.badValue, "policy '\(policy)': bad value '\(kv[1])' for \(key.name) (\(range))")
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


