import Testing

@testable import FetchSimulation

/// Every stored number of every family's settings table is reachable through
/// one of its `key=value` settings, and each setting has the one wording that
/// help texts and `docs/policies.md` show: a value no key can set would be a
/// default no user can sweep, and a key without help is a setting no user
/// can read about.
@Suite("Policy setting coverage")
struct PolicySettingCoverageTests {
  /// The settings table of a family's configuration: the configuration
  /// itself, or the parameters of a timer family's `IntervalSettings`.
  static func table(of family: any PolicyFamily.Type) -> (any SettingTable.Type)? {
    func configuration<F: PolicyFamily>(_ f: F.Type) -> Any.Type { F.Configuration.self }
    let c = configuration(family)
    if let t = c as? any SettingTable.Type { return t }
    if let t = c as? any IntervalTableHolder.Type { return t.table }
    return nil
  }

  @Test("every stored number of every family's settings table is written by exactly one key, and every key has help")
  func everyStoredSettingHasAKey() throws {
    var tables = 0
    for family in PolicyRegistry.builtIn {
      guard let table = Self.table(of: family) else { continue }
      tables += 1
      let report = Self.coverage(table)
      #expect(report.uncovered.isEmpty, "\(family.name): no key sets \(report.uncovered.sorted())")
      #expect(report.shared.isEmpty, "\(family.name): more than one key sets \(report.shared.sorted())")
      #expect(report.inert.isEmpty, "\(family.name): keys \(report.inert.sorted()) set no stored value")
      #expect(report.helpless.isEmpty, "\(family.name): keys \(report.helpless.sorted()) have no help text")
    }
    // The registry's settings tables, not a list kept by hand: a new family
    // with a table is checked without editing this test.
    #expect(tables >= 12, "only \(tables) families with a settings table were found")
  }

  @Test("the coverage check finds a stored number that no key writes")
  func coverageCheckCanFail() {
    let report = Self.coverage(HalfKeyed.self)
    #expect(report.uncovered == ["unkeyed"])
    #expect(report.inert.isEmpty && report.shared.isEmpty && report.helpless.isEmpty)
  }

  /// What a table's keys do to its stored values.
  struct Coverage {
    /// Stored number leaves (dotted paths) that no key changes.
    var uncovered: Set<String>
    /// Leaves that more than one key changes.
    var shared: Set<String>
    /// Keys that change no leaf.
    var inert: Set<String>
    /// Keys with an empty help text.
    var helpless: Set<String>
  }

  /// Writes each key in turn onto the defaults and sees, through `Mirror`,
  /// which stored number leaves change.
  static func coverage<T: SettingTable>(_ t: T.Type) -> Coverage {
    let base = leaves(of: T())
    var writers: [String: Int] = [:]
    var inert = Set<String>(), helpless = Set<String>()
    for key in T.keys {
      var changed = T()
      let old = changed[keyPath: key.path]
      changed[keyPath: key.path] = old == key.maximum ? key.minimum : min(key.maximum, old + 1)
      let after = leaves(of: changed)
      let moved = base.keys.filter { base[$0] != after[$0] }
      if moved.isEmpty { inert.insert(key.name) }
      for leaf in moved { writers[leaf, default: 0] += 1 }
      if key.help.isEmpty { helpless.insert(key.name) }
    }
    let numbers = Set(base.keys)
    return Coverage(
      uncovered: numbers.subtracting(writers.keys), shared: Set(writers.filter { $0.value > 1 }.keys), inert: inert,
      helpless: helpless)
  }

  /// The stored `Double` leaves of a value, by dotted path, through nested
  /// structs; other leaves (enums chosen by a `ChoiceSetting`) are not
  /// numbers and are left out.
  static func leaves(of value: Any, prefix: String = "") -> [String: Double] {
    var out: [String: Double] = [:]
    for child in Mirror(reflecting: value).children {
      let name = prefix + (child.label ?? "?")
      if let x = child.value as? Double {
        out[name] = x
      } else if Mirror(reflecting: child.value).displayStyle == .struct {
        out.merge(leaves(of: child.value, prefix: name + "."), uniquingKeysWith: { a, _ in a })
      }
    }
    return out
  }
}

/// A timer family's configuration exposes its parameters' table.
protocol IntervalTableHolder { static var table: any SettingTable.Type { get } }
extension IntervalSettings: IntervalTableHolder { static var table: any SettingTable.Type { Parameters.self } }

/// A table with one stored number and no key for it.
private struct HalfKeyed: SettingTable {
  var keyed = 1.0
  var unkeyed = 2.0
  static let keys: [SettingKey<HalfKeyed>] = [SettingKey("keyed", \.keyed, max: 10, help: "a keyed number")]
}
