import FetchModels
import FetchSupport
import FetchTraces

/// Splits `<interval>[,key=value,...]`.
func parseIntervalAndSettings(_ a: String, policy: String) throws -> (Double, String) {
  let items = a.split(separator: ",", maxSplits: 1).map(String.init)
  guard let secs = parseDuration(items.first ?? ""), secs >= 1 else {
    throw PolicySpecError(.badValue, "policy '\(policy)': bad interval '\(items.first ?? "")' (use e.g. 15m, 1h; at least 1 s)")
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
  /// What the setting means, with its unit (help and docs).
  let help: String

  init(
    _ name: String, _ path: WritableKeyPath<P, Double>, min: Double = 0, max: Double = .infinity, duration: Bool = false,
    help: String = ""
  ) {
    self.name = name
    self.path = path
    minimum = min
    maximum = max
    isDuration = duration
    self.help = help
  }

  /// A value as it is written in a policy string.
  func text(_ x: Double) -> String { isDuration ? formatDuration(x) : CSV.number(x) }

  /// The documentation of the setting with its default from `defaults`.
  func info(defaults: P) -> PolicySettingInfo {
    let range =
      maximum < .infinity
      ? "\(text(minimum))...\(text(maximum))" : "at least \(text(minimum))"
    return PolicySettingInfo(name: name, defaultValue: text(defaults[keyPath: path]), range: range, help: help)
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
    guard let x = key.isDuration ? parseDuration(kv[1]) : Double(kv[1]), x.isFinite, x >= key.minimum, x <= key.maximum
    else {
      let range = key.maximum < .infinity
        ? "\(CSV.number(key.minimum))...\(CSV.number(key.maximum))" : "at least \(CSV.number(key.minimum))"
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


