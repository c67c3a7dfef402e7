import FetchSupport
import FetchTraces
import Foundation

extension WorldParameters {
  /// Reads overrides from a JSON config file onto the defaults.
  ///
  /// Keys are parameter names (`fetchlab params`), either dotted
  /// (`{"radio.lte.tail_s": 11.576}`) or nested
  /// (`{"radio": {"lte": {"tail_s": 11.576}}}`). Unknown names, wrong types
  /// and out-of-range values are errors naming file, line and parameter.
  public static func load(configPath path: String) throws -> WorldParameters {
    var w = WorldParameters()
    try w.apply(configPath: path)
    return w
  }

  /// Applies the overrides in a JSON config file.
  public mutating func apply(configPath path: String) throws {
    try apply(json: LocatedJSON.parse(contentsOf: path, what: "config file"), file: path)
  }

  /// Applies overrides from a parsed JSON object (a config file, or the
  /// `world` object of an experiment file); errors name `file`, the line of
  /// the key at fault, and the parameter. A parameter set twice (a dotted
  /// key and the same name nested) is an error. Keys are applied in sorted
  /// order.
  package mutating func apply(json: LocatedJSON, file: String, prefix: String = "") throws {
    var seen = Set<String>()
    try apply(json: json, file: file, prefix: prefix, seen: &seen)
  }

  private mutating func apply(json: LocatedJSON, file: String, prefix: String, seen: inout Set<String>) throws {
    guard case .object(let members) = json.value else {
      throw TraceFormatError(
        file: file, line: json.line, field: prefix.isEmpty ? "-" : prefix, message: "expected a JSON object")
    }
    for m in members.sorted(by: { $0.key < $1.key }) {
      let name = prefix.isEmpty ? m.key : prefix + "." + m.key
      let value: ParameterValue
      switch m.value.value {
      case .object:
        try apply(json: m.value, file: file, prefix: name, seen: &seen)
        continue
      case .array(let items):
        // Arrays set indexed parameters: name.0, name.1, ...
        for (i, x) in items.enumerated() {
          let item = LocatedJSON(value: .object([.init(key: "\(i)", line: x.line, value: x)]), line: x.line)
          try apply(json: item, file: file, prefix: name, seen: &seen)
        }
        continue
      case .number(let t): value = .number(Double(t) ?? .nan)
      case .bool(let b): value = .flag(b)
      case .string(let s): value = .word(s)
      case .null:
        throw TraceFormatError(file: file, line: m.line, field: name, message: "unsupported value")
      }
      guard seen.insert(name).inserted else {
        throw TraceFormatError(
          file: file, line: m.line, field: name, message: "set twice (a dotted name and the same name nested): keep one")
      }
      if let msg = set(name, to: value) {
        throw TraceFormatError(file: file, line: m.line, field: name, message: msg)
      }
    }
  }

  /// Every parameter whose value differs from the default, `name=value`, sorted.
  package func overrides() -> [String] {
    let d = WorldParameters()
    var out = Self.registry.compactMap { p -> String? in
      let v = p.value(in: self)
      return v == p.value(in: d) ? nil : "\(p.name)=\(v)"
    }
    out += content.appRatePerHour.keys.sorted().map { "\(Self.appRatePrefix)\($0)=\(CSV.number(content.appRatePerHour[$0]!))" }
    return out
  }
}
