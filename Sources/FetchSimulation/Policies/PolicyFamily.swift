import FetchModels
import FetchTraces
import FetchWorld
import Foundation

/// A family of fetch policies: everything FetchLab needs to know about one
/// policy name (`periodic`, `ios-minimum`, …) in one declaration.
///
/// A family parses its argument (the text after `name:`) into a
/// ``Configuration``, prints a configuration back canonically, documents
/// itself (syntax, help, settings, the chart style), and replays a device
/// under a configuration. Adding a policy is one file with one conforming
/// type and one line in ``PolicyRegistry/builtIn`` (or a call to
/// ``PolicyRegistry/register(_:)`` from code that embeds FetchLab); see
/// `docs/adding-a-policy.md`.
///
/// Invariants the registry test checks for every family: the example parses
/// and prints back to itself (`describe(parse(x)) == x` for canonical text);
/// the help and settings are documented in `docs/policies.md`; the
/// (colour, marker) pair is the family's own.
public protocol PolicyFamily: Sendable {
  /// What one configuration of the family holds (an interval, a parameter
  /// struct, …).
  associatedtype Configuration: Sendable
  /// The behaviour the family replays, one instance per app.
  associatedtype Policy: FetchPolicy

  /// The family's name (before `:` in a policy string, e.g. `periodic`),
  /// how its argument is written, a canonical example that the registry
  /// test parses and replays, one sentence on what it models, what it
  /// learns and how charts draw it; ``name``, ``syntax``, ``example``,
  /// ``summary``, ``learns``, ``usesHabitModel`` and ``style`` read it.
  static var info: FamilyInfo { get }
  /// The `key=value` settings the family accepts, with their meaning.
  static var settings: [PolicySettingInfo] { get }

  /// Parses the text after `name:` (`nil` when there is no `:`); `spec` is
  /// the whole policy string, for error messages.
  /// - Throws: ``PolicySpecError`` naming what is wrong.
  static func parse(_ argument: String?, spec: String) throws -> Configuration
  /// The canonical policy string of a configuration; parsing it gives the
  /// same configuration.
  static func describe(_ configuration: Configuration) -> String
  /// Fetches a (user, app) day that the configuration is expected to make,
  /// for the experiment's size estimate (default 50).
  static func expectedFetchesPerDay(_ configuration: Configuration) -> Double
  /// The shortest mean spacing of the configuration's own fetches per app,
  /// s, for the up-front resource check (`nil`: it fetches only on content
  /// updates; default 900 s).
  static func fetchSpacingBound(_ configuration: Configuration) -> Double?
  /// The decision steps the configuration's settings imply per replayed
  /// (user, app) day, for the up-front resource check (`nil`, the default:
  /// none beyond its fetches).
  static func settingWork(_ configuration: Configuration) -> SettingWork?
  /// Whether this configuration learns (default ``learns``; a composite
  /// such as `per-app` learns when one of its parts does).
  static func learns(_ configuration: Configuration) -> Bool
  /// Whether this configuration fits a habit model (default ``usesHabitModel``).
  static func usesHabitModel(_ configuration: Configuration) -> Bool
  /// A maker of the policy instance of each replayed app, `make(app,
  /// content)`, for one device. State the device's apps share (the OS
  /// budgets: ``DeviceReplayInput/services``) is set up here, once per
  /// device; the engine then replays the apps together on one radio, or
  /// apart at `replay.scope=app`.
  static func makePolicies(_ configuration: Configuration, _ device: DeviceReplayInput) -> (Int32, ContentTimeline) -> Policy
}

extension PolicyFamily {
  /// No settings.
  public static var settings: [PolicySettingInfo] { [] }
  /// 50 fetches a (user, app) day.
  public static func expectedFetchesPerDay(_ configuration: Configuration) -> Double { 50 }
  /// 15 min.
  public static func fetchSpacingBound(_ configuration: Configuration) -> Double? { 900 }
  /// None beyond the fetches.
  public static func settingWork(_ configuration: Configuration) -> SettingWork? { nil }
  /// The family's ``learns``.
  public static func learns(_ configuration: Configuration) -> Bool { learns }
  /// The family's ``usesHabitModel``.
  public static func usesHabitModel(_ configuration: Configuration) -> Bool { usesHabitModel }
}

/// The marker shapes charts draw; a family's (colour, marker) pair is its own.
public enum PolicyMarker: String, CaseIterable, Sendable {
  case circle, square, triangle, diamond, triangleDown, plus, cross, star, hexagon, pentagon, triangleLeft, triangleRight
  /// An open circle (outline only).
  case ring
  /// A filled octagon; outlines only of a square, a diamond, a triangle
  /// and a hexagon; an asterisk (a plus over a cross).
  case octagon, openSquare, openDiamond, openTriangle, openHexagon, asterisk
  /// Outlines only of a pentagon and an octagon.
  case openPentagon, openOctagon
}

/// How charts draw a policy family: a colour (`#RRGGBB`) and a marker.
public struct PolicyStyle: Sendable, Hashable {
  /// Colour, `#RRGGBB`.
  public var color: String
  /// Marker shape.
  public var marker: PolicyMarker
  /// A style; the pair must be the family's own.
  public init(color: String, marker: PolicyMarker) {
    self.color = color
    self.marker = marker
  }
}

/// One documented `key=value` setting of a family (for help and docs).
public struct PolicySettingInfo: Sendable, Hashable {
  /// The key in `key=value`.
  public var name: String
  /// The default as it is written in a policy string (`15m`, `0.5`).
  public var defaultValue: String
  /// The accepted values, e.g. `0...1`, `at least 60s`.
  public var range: String
  /// What the setting does, with its unit.
  public var help: String

  /// A setting's documentation.
  public init(name: String, defaultValue: String, range: String, help: String) {
    self.name = name
    self.defaultValue = defaultValue
    self.range = range
    self.help = help
  }
}

/// The policy families FetchLab knows: the built-in ones and any registered
/// by code that embeds FetchLab.
public enum PolicyRegistry {
  /// The built-in families, in the order of help texts and charts. One line
  /// per family.
  static let builtIn: [any PolicyFamily.Type] = [
    NeverFamily.self,
    PeriodicFamily.self,
    OracleFamily.self,
    OracleBudgetFamily.self,
    IOSMinimumFamily.self,
    IOSCustomFamily.self,
    PlannerFamily.self,
    SilentPushFamily.self,
    AndroidWorkManagerFamily.self,
    AndroidStandbyFamily.self,
    TailEnderFamily.self,
    IMPFamily.self,
    TransferFamily.self,
    LocationWakeFamily.self,
    FetchOnExitFamily.self,
    BGAppRefreshFamily.self,
    BGProcessingFamily.self,
    AndroidPrefetchFamily.self,
    PerAppFamily.self,
    ExternalFamily.self,
    ScheduleFamily.self,
  ]

  private static let lock = NSLock()
  nonisolated(unsafe) private static var registered: [any PolicyFamily.Type] = []

  /// Every known family: the built-in ones, then the registered ones in
  /// registration order.
  public static var families: [any PolicyFamily.Type] {
    lock.withLock { builtIn + registered }
  }

  /// Adds a family (e.g. from a package that embeds FetchLab or a test).
  /// Registering a name twice is a programming error.
  public static func register(_ family: any PolicyFamily.Type) {
    lock.withLock {
      precondition(
        !(builtIn + registered).contains { $0.name == family.name }, "policy family '\(family.name)' is registered already")
      registered.append(family)
    }
  }

  /// The family called `name`, if any.
  public static func family(named name: String) -> (any PolicyFamily.Type)? {
    families.first { $0.name == name }
  }

  /// The family names, for "did you mean".
  public static var names: [String] { families.map { $0.name } }

  /// Every family's syntax, comma-separated, for help and error texts.
  package static var syntax: String { families.map { $0.syntax }.joined(separator: ", ") }
}

extension PolicyRegistry {
  /// The reference of `families` in Markdown: per family its syntax, what it
  /// models, whether it learns, and a table of its settings with defaults,
  /// accepted values and meaning. `docs/policies.md` holds this text for
  /// the built-in families (a test keeps the two equal) and
  /// `fetchlab policies` prints it.
  package static func reference(_ families: [any PolicyFamily.Type] = families) -> String {
    var out = ""
    for f in families {
      out += "### `\(f.name)`\n\n`\(f.syntax)`: \(f.summary).\n"
      if f.learns {
        out += "It learns from the training part of each user's window"
          + (f.usesHabitModel ? " (a habit model shrunk toward the population's)" : "") + ".\n"
      }
      out += "Example: `\(f.example)`.\n"
      let settings = f.settings
      if !settings.isEmpty {
        out += "\n| setting | default | accepted | meaning |\n|---|---|---|---|\n"
        for s in settings {
          out += "| `\(s.name)` | \(s.defaultValue) | \(s.range) | \(s.help.replacingOccurrences(of: "|", with: "\\|")) |\n"
        }
      }
      out += "\n"
    }
    return out
  }

  /// The built-in families, for the registry test.
  package static var builtInFamilies: [any PolicyFamily.Type] { builtIn }
}
