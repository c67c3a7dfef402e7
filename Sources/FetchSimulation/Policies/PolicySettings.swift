import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld

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

/// Splits `<argument>[,key=value,...]` into the argument and the settings
/// (empty when none).
func splitArgumentAndSettings(_ a: String) -> (String, String) {
  let items = a.split(separator: ",", maxSplits: 1).map(String.init)
  return (items.first ?? "", items.count > 1 ? items[1] : "")
}

/// Splits `<interval>[,key=value,...]`; `examples` as in ``parseInterval(_:policy:examples:)``.
func parseIntervalAndSettings(_ a: String, policy: String, examples: String = "15m, 1h") throws -> (Double, String) {
  let (interval, settings) = splitArgumentAndSettings(a)
  return (try parseInterval(interval, policy: policy, examples: examples), settings)
}

/// One `key=value` setting of a policy's parameter struct.
package struct SettingKey<P>: @unchecked Sendable {
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
  /// model in a ``HabitTracker``.
  static func refitHour(_ path: WritableKeyPath<P, Double>) -> SettingKey {
    SettingKey("refit_hour", path, max: 24, help: "local hour of the nightly habit-model refit (24: never)")
  }

  /// `check`: a scheduler's decision period, 1 min to ``SettingBound/period``.
  static func check(_ path: WritableKeyPath<P, Double>, help: String) -> SettingKey {
    SettingKey("check", path, min: 60, max: SettingBound.period, duration: true, help: help)
  }

  /// `horizon`: how far ahead "soon" reaches for the predicted open
  /// probability, 1 min to ``SettingBound/horizon``.
  static func horizon(_ path: WritableKeyPath<P, Double>) -> SettingKey {
    SettingKey(
      "horizon", path, min: 60, max: SettingBound.horizon, duration: true,
      help: "\"soon\": horizon of the predicted open probability")
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

/// A policy's parameter struct whose `key=value` settings are a table of
/// ``SettingKey``s; `init()` gives the defaults.
package protocol SettingTable: Sendable, Hashable {
  init()
  /// The settings, in the order of help texts and canonical strings.
  static var keys: [SettingKey<Self>] { get }
}

extension SettingTable {
  /// The settings of this table held at `path` inside a larger parameter
  /// struct (`doze_*` inside `android-workmanager`'s), in table order.
  static func keys<Outer>(at path: WritableKeyPath<Outer, Self>) -> [SettingKey<Outer>] {
    keys.map { k in
      SettingKey(k.name, path.appending(path: k.path), min: k.minimum, max: k.maximum, duration: k.isDuration, help: k.help)
    }
  }

  /// The documentation of every setting, with its default.
  static var settingInfos: [PolicySettingInfo] { FetchSimulation.settingInfos(keys, defaults: Self()) }

  /// Parses `key=value,key=value` onto the defaults (see ``parseSettings(_:policy:defaults:keys:)``).
  static func parse(_ text: String, policy: String) throws -> Self {
    try parseSettings(text, policy: policy, defaults: Self(), keys: keys)
  }

  /// The settings that differ from the defaults, prefixed by `separator`
  /// (empty when none).
  func settingsSuffix(separator: String) -> String {
    FetchSimulation.settingsSuffix(self, defaults: Self(), keys: Self.keys, separator: separator)
  }
}

/// A setting of a family whose value is one of an enum's raw values
/// (`mode=ios6|ios7`), written among the `key=value` settings of the
/// family's numeric table.
struct ChoiceSetting<Table: SettingTable, Choice: RawRepresentable & CaseIterable>: @unchecked Sendable
where Choice.RawValue == String {
  /// The key in `key=value`.
  let name: String
  /// Where the choice goes in the table.
  let path: WritableKeyPath<Table, Choice>
  /// What each value does.
  let help: String

  /// The setting's documentation: the table's default, every value.
  var info: PolicySettingInfo {
    PolicySettingInfo(
      name: name, defaultValue: Table()[keyPath: path].rawValue,
      range: Choice.allCases.map(\.rawValue).joined(separator: ", "), help: help)
  }

  /// Parses `key=value,...` onto the table's defaults: this setting wherever
  /// it stands, the others by the table.
  /// - Throws: ``PolicySpecError`` for a repeated or unknown choice, or as
  ///   ``SettingTable/parse(_:policy:)``.
  func parse(_ argument: String?, policy spec: String) throws -> Table {
    let text = argument ?? ""
    let prefix = name + "="
    var rest: [Substring] = []
    var choice: Choice?
    for item in text.split(separator: ",", omittingEmptySubsequences: false) where !text.isEmpty {
      guard item.hasPrefix(prefix) else {
        rest.append(item)
        continue
      }
      guard choice == nil else { throw PolicySpecError(.repeatedSetting, "policy '\(spec)': \(name) is set more than once; keep one") }
      let value = item.dropFirst(prefix.count)
      guard let c = Choice(rawValue: String(value)) else {
        throw PolicySpecError(.badValue, "policy '\(spec)': bad value '\(value)' for \(name) (\(info.range))")
      }
      choice = c
    }
    var p = try Table.parse(rest.joined(separator: ","), policy: spec)
    if let choice { p[keyPath: path] = choice }
    return p
  }
}

/// A family whose whole argument is its settings, `name[:key=value,...]`:
/// its documentation, parsing and canonical string come from the table.
extension PolicyFamily where Configuration: SettingTable {
  /// Every setting of the table.
  package static var settings: [PolicySettingInfo] { Configuration.settingInfos }
  /// The settings onto the defaults; no argument is all defaults.
  package static func parse(_ argument: String?, spec: String) throws -> Configuration {
    try Configuration.parse(argument ?? "", policy: spec)
  }
  /// The name, then `:` and the settings that differ from the defaults.
  package static func describe(_ configuration: Configuration) -> String {
    name + configuration.settingsSuffix(separator: ":")
  }
}

/// A family without an argument or settings, `name` alone.
extension PolicyFamily where Configuration == Void {
  /// Nothing to parse; an argument is an error.
  package static func parse(_ argument: String?, spec: String) throws {
    if argument != nil { throw PolicySpecError(.unexpectedArgument, "policy '\(name)' takes no parameter (got '\(spec)')") }
  }
  /// The name.
  package static func describe(_ configuration: Void) -> String { name }
}

/// A timer family's configuration, `<interval>[,key=value,...]`: the
/// period, s, and the parameters.
package struct IntervalSettings<Parameters: SettingTable>: Sendable, Hashable {
  package var interval: Double
  package var parameters: Parameters

  package init(interval: Double, parameters: Parameters) {
    self.interval = interval
    self.parameters = parameters
  }
}

/// A policy that runs a job every interval with a table of parameters; its
/// family, `name:<interval>[,key=value,...]`, follows (``IntervalJobFamily``).
package protocol IntervalJobPolicy: FetchPolicy {
  associatedtype Parameters: SettingTable
  /// The family's description.
  static var family: FamilyInfo { get }
  /// A job every `interval` seconds whose first period ends `phase` (in
  /// (0, 1], ``TimerPhase``) of an interval after the window start.
  init(interval: Double, params: Parameters, phase: Double)
  /// Reads what the trace before the replay window says of the device
  /// (where Doze's clock stands at the window start); by default nothing.
  mutating func read(history: DozeHistory)
}

extension IntervalJobPolicy {
  /// Does nothing.
  package mutating func read(history: DozeHistory) {}
}

/// The family of a policy that runs a job every `<interval>` with a table
/// of settings, `name:<interval>[,key=value,...]`.
package enum IntervalJobFamily<Policy: IntervalJobPolicy>: PolicyFamily {
  package typealias Configuration = IntervalSettings<Policy.Parameters>

  package static var info: FamilyInfo { Policy.family }
  /// Every setting of the table.
  package static var settings: [PolicySettingInfo] { Policy.Parameters.settingInfos }
  /// The interval is required; the settings follow it.
  package static func parse(_ argument: String?, spec: String) throws -> Configuration {
    guard let a = argument else { throw PolicySpecError(.missingArgument, "policy '\(name)' needs an argument, e.g. \(name):1h") }
    let (i, rest) = try parseIntervalAndSettings(a, policy: spec)
    return Configuration(interval: i, parameters: try Policy.Parameters.parse(rest, policy: spec))
  }
  /// `name:<interval>`, then the settings that differ from the defaults.
  package static func describe(_ c: Configuration) -> String {
    "\(name):\(formatDuration(c.interval))" + c.parameters.settingsSuffix(separator: ",")
  }
  /// One fetch per interval.
  package static func expectedFetchesPerDay(_ c: Configuration) -> Double { timerFetchesPerDay(c.interval) }
  /// The interval, at most 15 min.
  package static func fetchSpacingBound(_ c: Configuration) -> Double? { min(c.interval, 900) }
  /// One job per app, each at the app's own phase.
  package static func makePolicies(_ c: Configuration, _ device: DeviceReplayInput) -> (Int32, ContentTimeline) -> Policy {
    let history = DozeHistory(device.training)
    return { app, _ in
      var p = Policy(interval: c.interval, params: c.parameters, phase: device.timerPhase(app: app))
      p.read(history: history)
      return p
    }
  }
}
