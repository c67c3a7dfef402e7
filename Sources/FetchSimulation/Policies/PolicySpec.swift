import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld
import Foundation

/// A policy configuration as written on the command line, e.g.
/// `periodic:30m`: a ``PolicyFamily`` and one of its configurations.
/// Parsing is strict; ``description`` is canonical, and two specs are equal
/// when their canonical strings are.
public struct PolicySpec: Sendable, Hashable, CustomStringConvertible {
  /// The family (`periodic` for `periodic:30m`).
  public let family: any PolicyFamily.Type
  /// The family's configuration, a `family.Configuration`.
  let configuration: any Sendable
  /// The canonical policy string.
  public let description: String

  /// A spec of `family` with `configuration`.
  public init<F: PolicyFamily>(_ family: F.Type, _ configuration: F.Configuration) {
    self.family = family
    self.configuration = configuration
    description = F.describe(configuration)
  }

  /// Parses a policy string; throws ``PolicySpecError`` naming what is wrong.
  public init(parsing s: String) throws {
    let parts = s.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
    let name = String(parts[0])
    guard let family = PolicyRegistry.family(named: name) else {
      let hint = Suggestion.closest(to: name, among: PolicyRegistry.names).map { " (did you mean '\($0)'?)" } ?? ""
      throw PolicySpecError(
        .unknownPolicy, "unknown policy '\(s)'\(hint); known: \(PolicySpec.syntax)", location: InputLocation(field: s))
    }
    do {
      self = try Self.parse(family, parts.count > 1 ? String(parts[1]) : nil, spec: s)
    } catch var e as PolicySpecError {
      if e.location.field == nil { e.location.field = s }
      throw e
    }
  }

  private static func parse<F: PolicyFamily>(_ family: F.Type, _ argument: String?, spec: String) throws -> PolicySpec {
    PolicySpec(family, try F.parse(argument, spec: spec))
  }

  /// The configuration if the spec is of `family`.
  public func configuration<F: PolicyFamily>(of family: F.Type) -> F.Configuration? {
    self.family == family ? configuration as? F.Configuration : nil
  }

  /// Specs are equal when their canonical strings are.
  public static func == (a: PolicySpec, b: PolicySpec) -> Bool { a.description == b.description }
  /// Hashes the canonical string.
  public func hash(into h: inout Hasher) { h.combine(description) }

  /// The policies `--policy` accepts, for help and error texts.
  package static var syntax: String { PolicyRegistry.syntax }

  /// Whether the policy learns from a training period (the run then splits
  /// each user's window and scores every policy on the held-out part).
  public var learns: Bool { Self.learns(family, configuration) }
  private static func learns<F: PolicyFamily>(_ f: F.Type, _ c: any Sendable) -> Bool { F.learns(c as! F.Configuration) }

  /// Whether the policy fits a habit model (and so wants the population model).
  package var usesHabitModel: Bool { Self.usesHabitModel(family, configuration) }
  private static func usesHabitModel<F: PolicyFamily>(_ f: F.Type, _ c: any Sendable) -> Bool {
    F.usesHabitModel(c as! F.Configuration)
  }

  /// Whether the policy is the Minimum scheduler (`ios-minimum`,
  /// `ios-custom`), whose settings can share open probabilities
  /// (``HabitFitCache/sharesOpenProbabilities``).
  package var usesMinimumScheduler: Bool { family == IOSMinimumFamily.self || family == IOSCustomFamily.self }

  /// Whether a run of `policies` should share open probabilities between
  /// its Minimum-scheduler settings: when it has three or more (a shared
  /// probability costs a lookup, and a store when missed; the measurements
  /// behind the threshold are in docs/performance.md). Results are the
  /// same either way.
  package static func sharesOpenProbabilities(_ policies: [PolicySpec]) -> Bool {
    policies.lazy.filter(\.usesMinimumScheduler).count >= 3
  }

  /// Fetches a (user, app) day the policy is expected to make (size estimates).
  package var expectedFetchesPerDay: Double { Self.expected(family, configuration) }
  private static func expected<F: PolicyFamily>(_ f: F.Type, _ c: any Sendable) -> Double {
    F.expectedFetchesPerDay(c as! F.Configuration)
  }

  /// The shortest mean spacing of the policy's own fetches per app, s (`nil`:
  /// it fetches only on content updates), for the up-front resource check.
  package var fetchSpacingBound: Double? { Self.spacing(family, configuration) }
  private static func spacing<F: PolicyFamily>(_ f: F.Type, _ c: any Sendable) -> Double? {
    F.fetchSpacingBound(c as! F.Configuration)
  }

  /// The decision steps the settings imply per replayed (user, app) day
  /// (``SettingWork``), for the up-front resource check; `nil`: none beyond
  /// the fetches.
  package var settingWork: SettingWork? { Self.work(family, configuration) }
  private static func work<F: PolicyFamily>(_ f: F.Type, _ c: any Sendable) -> SettingWork? {
    F.settingWork(c as! F.Configuration)
  }

  /// Replays one (user, app) under this policy; learning policies fit on
  /// `learning` (the user's training part and a population model).
  package func replay(
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
  package func replay(
    user: PreparedUser, apps: [Int32], contents: [ContentTimeline], scope: ReplayScope, seed: UInt64,
    recordEvents: Bool, learning: LearningContext? = nil
  ) -> DeviceReplay {
    let device = DeviceReplayInput(
      user: user, apps: apps, contents: contents, scope: scope,
      options: ReplayOptions(seed: seed, policyKey: description, recordEvents: recordEvents), learning: learning)
    return Self.replay(family, configuration, device)
  }
  private static func replay<F: PolicyFamily>(_ f: F.Type, _ c: any Sendable, _ device: DeviceReplayInput) -> DeviceReplay {
    device.run(F.makePolicies(c as! F.Configuration, device))
  }

  /// The maker of this spec's per-app policy instances on `device`, boxed
  /// (for composites such as `per-app`).
  func makeBoxedPolicies(_ device: DeviceReplayInput) -> (Int32, ContentTimeline) -> AnyFetchPolicy {
    Self.boxed(family, configuration, device)
  }
  private static func boxed<F: PolicyFamily>(_ f: F.Type, _ c: any Sendable, _ device: DeviceReplayInput)
    -> (Int32, ContentTimeline) -> AnyFetchPolicy
  {
    let make = F.makePolicies(c as! F.Configuration, device)
    return { AnyFetchPolicy(make($0, $1)) }
  }
}

/// One device to replay under a policy: what a ``PolicyFamily`` gets.
public struct DeviceReplayInput {
  package let user: PreparedUser
  /// The replayed apps (indices into the trace's app table) and their content.
  public let apps: [Int32]
  /// Each replayed app's content updates, in `apps` order.
  public let contents: [ContentTimeline]
  package let scope: ReplayScope
  package let options: ReplayOptions
  /// The training part and population model, for learning policies.
  package let learning: LearningContext?
  /// State the device's apps share during this replay (the OS budgets).
  package let services = DeviceServices()

  /// The user's trace before the replay window (empty without learning).
  public var training: UserTrace {
    learning?.training ?? UserTrace(
      user: user.trace.user, timeZone: user.trace.timeZone, start: user.trace.start, end: user.trace.start,
      apps: user.trace.apps)
  }

  /// Replays the device with one policy instance per app made by `make(app,
  /// content)`: at device scope all apps on one radio, at app scope each
  /// alone (the device summary then sums the apps' separate radios).
  ///
  /// - Complexity: one walk over the device's events per replay (generic in
  ///   `P`, so policy calls are static).
  package func run<P: FetchPolicy>(_ make: (Int32, ContentTimeline) -> P) -> DeviceReplay {
    // Plain loops, not `zip` or `map`: this generic code is not
    // specialized, and those went through the runtime's witnesses per
    // element (4 % of a `never` replay).
    if scope == .device && apps.count > 1 {
      var ps: [P] = []
      ps.reserveCapacity(apps.count)
      for i in 0..<apps.count { ps.append(make(apps[i], contents[i])) }
      return FetchSimulation.replayDevice(&ps, user: user, apps: apps, contents: contents, options: options)
    }
    var rs: [AppReplay] = []
    rs.reserveCapacity(apps.count)
    for i in 0..<apps.count {
      var p = make(apps[i], contents[i])
      rs.append(FetchSimulation.replay(&p, user: user, app: apps[i], content: contents[i], options: options))
    }
    return DeviceReplay(apps: rs, summary: DeviceSummary(rs))
  }
}

/// What the apps of one device share during one replay (the device-wide
/// budgets of the OS scheduler, of IMP, of each planner setting), one
/// value per type and key, made on first use: a family asks for its own
/// type (``shared(_:key:_:)``), so a new family's device state needs no
/// field here.
package final class DeviceServices {
  private struct Key: Hashable {
    let type: ObjectIdentifier
    let key: AnyHashable
  }
  private var values: [Key: AnyObject] = [:]

  /// The device's one `T` for `key` (one per setting, say; `0` when the
  /// type has one), made by `make` on first use.
  package func shared<T: AnyObject>(
    _ type: T.Type, key: some Hashable = 0, _ make: () -> T
  ) -> T {
    let k = Key(type: ObjectIdentifier(type), key: AnyHashable(key))
    if let v = values[k] { return v as! T }
    let v = make()
    values[k] = v
    return v
  }

  /// An empty store.
  package init() {}
}

/// What a learning policy is trained on.
package struct LearningContext: Sendable {
  /// The user's trace before the replay window (same app indices).
  package var training: UserTrace
  /// The population habit model to shrink toward, if any.
  package var population: HabitModel?
  /// The population device models (WiFi, offline, plugged) to shrink each
  /// device's toward, fitted on the training windows of the run's users;
  /// nil without device rows (the device's own then shrink toward zero).
  package var populationDevice: DeviceModels?
  /// Habit fits shared by the learning policies replayed with this context.
  package let fits: HabitFitCache
  /// Device models fitted on the training window, shared likewise.
  package let deviceModels = DeviceModelsCache()
  /// The apps' pacing of the Minimum scheduler's budgets, shared likewise.
  package let pacing = TrainingPacing()
  /// The synthetic generator's truth of this user (nil for a trace that no
  /// generator in the run made), for `planner:models=true`.
  package var truth: SyntheticTruth?

  package init(
    training: UserTrace, population: HabitModel?, fits: HabitFitCache = HabitFitCache(),
    populationDevice: DeviceModels? = nil
  ) {
    self.training = training
    self.population = population
    self.fits = fits
    self.populationDevice = populationDevice
  }
}

/// Device models fitted on a training window, shared by the policies
/// replayed with one ``LearningContext`` (every `planner` setting of a
/// sweep fits the same models on the same window). A fit is a pure
/// function of the window, so sharing it changes no result.
///
/// Thread-safe (a lock).
package final class DeviceModelsCache: @unchecked Sendable {
  private struct Key: Equatable {
    var user: String
    var start: UInt64
    var end: UInt64
    var events: Int
  }

  private var entry: (key: Key, models: DeviceModels?)?
  private let lock = NSLock()
  /// Fits computed, for tests.
  package private(set) var computed = 0

  package init() {}

  /// `fit(training)`, computed once for the window (the user, start, end
  /// and number of events of `training`; the last window asked for is kept).
  ///
  /// - Complexity: O(1) when kept, else the fit's.
  package func models(for training: UserTrace, fit: (UserTrace) -> DeviceModels?) -> DeviceModels? {
    let key = Key(
      user: training.user, start: training.start.bitPattern, end: training.end.bitPattern,
      events: training.events.count)
    lock.lock()
    defer { lock.unlock() }
    if let entry, entry.key == key { return entry.models }
    let models = fit(training)
    entry = (key, models)
    computed += 1
    return models
  }
}

/// A bad policy string: a stable ``code``, the ``message`` shown to users,
/// and the policy string at fault as ``location``'s field.
///
/// ``code`` is a struct of named codes, so new codes do not break callers:
///
///     do { spec = try PolicySpec(parsing: text) }
///     catch let e as PolicySpecError where e.code == .unknownPolicy { … }
public struct PolicySpecError: CodedError {
  /// The category of a ``PolicySpecError``.
  public struct Code: Sendable, Hashable, CustomStringConvertible {
    /// A stable kebab-case name, e.g. `unknown-policy`.
    public let description: String

    /// No policy family has the name.
    public static let unknownPolicy = Code(description: "unknown-policy")
    /// The family needs an argument (`periodic` without `:30m`).
    public static let missingArgument = Code(description: "missing-argument")
    /// The family takes no argument (`never:1h`).
    public static let unexpectedArgument = Code(description: "unexpected-argument")
    /// An interval or a setting's value is malformed or out of range.
    public static let badValue = Code(description: "bad-value")
    /// A `key=value` setting the family does not know.
    public static let unknownSetting = Code(description: "unknown-setting")
    /// A setting given twice.
    public static let repeatedSetting = Code(description: "repeated-setting")
    /// Any other problem with the policy string.
    public static let invalid = Code(description: "invalid")
  }

  /// The category.
  public let code: Code
  /// What is wrong, in words (also the ``description``).
  public let message: String
  /// The policy string at fault as the field, when known; a file and line
  /// when the caller read it from one.
  public var location: InputLocation

  package init(code: Code, message: String, location: InputLocation) {
    (self.code, self.message, self.location) = (code, message, location)
  }

  /// An ``Code-swift.struct/invalid`` error with `message`.
  public init(_ message: String) { self.init(.invalid, message) }
}

/// Parses `90`, `90s`, `15m`, `1h30m`, `1.5h`, `2d` into seconds; `nil` if malformed.
public func parseDuration(_ s: String) -> Double? { DurationText.parse(s) }

/// Seconds as the shortest `1h30m`-style text; fractions of a second as `s`.
public func formatDuration(_ secs: Double) -> String { DurationText.format(secs) }

extension PolicySpec {
  /// The family name of a policy string: the text before its first `:`
  /// (`periodic` of `periodic:1h`), the whole string when it has none.
  package static func familyName(of policy: String) -> String { String(policy.prefix { $0 != ":" }) }
}
