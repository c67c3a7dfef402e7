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
    guard let data = FileManager.default.contents(atPath: path) else {
      throw TraceFormatError(file: path, line: 0, field: "-", message: "cannot read config file")
    }
    let obj: Any
    do {
      obj = try JSONSerialization.jsonObject(with: data)
    } catch {
      throw TraceFormatError(file: path, line: 0, field: "-", message: "not valid JSON: \(error.localizedDescription)")
    }
    try apply(json: obj, file: path, text: String(decoding: data, as: UTF8.self))
  }

  /// Applies overrides from a parsed JSON object; `text` locates lines for errors.
  public mutating func apply(json: Any, file: String, text: String, prefix: String = "") throws {
    guard let dict = json as? [String: Any] else {
      throw TraceFormatError(file: file, line: 0, field: prefix.isEmpty ? "-" : prefix, message: "expected a JSON object")
    }
    for key in dict.keys.sorted() {
      let name = prefix.isEmpty ? key : prefix + "." + key
      let v = dict[key]!
      if let sub = v as? [String: Any] {
        try apply(json: sub, file: file, text: text, prefix: name)
        continue
      }
      let value: ParameterValue
      if let n = v as? NSNumber {
        // JSONSerialization gives booleans as NSNumber too; tell them apart.
        let isBool = String(describing: type(of: n)).contains("Boolean")
        value = isBool ? .flag(n.boolValue) : .number(n.doubleValue)
      } else if let s = v as? String {
        value = .word(s)
      } else if let a = v as? [Any] {
        // Arrays set indexed parameters: name.0, name.1, ...
        for (i, x) in a.enumerated() {
          try apply(json: ["\(i)": x], file: file, text: text, prefix: name)
        }
        continue
      } else {
        throw TraceFormatError(file: file, line: Self.line(of: key, in: text), field: name, message: "unsupported value")
      }
      if let msg = set(name, to: value) {
        throw TraceFormatError(file: file, line: Self.line(of: key, in: text), field: name, message: msg)
      }
    }
  }

  /// 1-based line of the first occurrence of `"key"` in `text`, 0 if absent.
  static func line(of key: String, in text: String) -> Int {
    guard let r = text.range(of: "\"\(key)\"") else { return 0 }
    return text[..<r.lowerBound].reduce(1) { $1 == "\n" ? $0 + 1 : $0 }
  }

  /// Every parameter whose value differs from the default, `name=value`, sorted.
  public func overrides() -> [String] {
    let d = WorldParameters()
    var out = Self.registry.compactMap { p -> String? in
      let v = p.value(in: self)
      return v == p.value(in: d) ? nil : "\(p.name)=\(v)"
    }
    out += appRatePerHour.keys.sorted().map { "\(Self.appRatePrefix)\($0)=\(CSV.number(appRatePerHour[$0]!))" }
    return out
  }
}
