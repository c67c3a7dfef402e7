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
    guard let data = FileManager.default.contents(atPath: path) else {
      throw TraceFormatError(file: path, line: 0, field: "-", message: "cannot read config file")
    }
    let obj: Any
    do {
      obj = try JSONSerialization.jsonObject(with: data)
    } catch {
      let e = error as NSError
      let detail = (e.userInfo[NSDebugDescriptionErrorKey] as? String) ?? "cannot be parsed"
      // Foundation says "… around line 3, column 5." or "… around
      // character 28."; give the line its place.
      var line = 0
      if let r = detail.range(of: "line ") {
        line = Int(detail[r.upperBound...].prefix(while: \.isNumber)) ?? 0
      } else if let r = detail.range(of: "character "), let k = Int(detail[r.upperBound...].prefix(while: \.isNumber)) {
        line = data.prefix(k).reduce(1) { $1 == 10 ? $0 + 1 : $0 }
      }
      throw TraceFormatError(file: path, line: line, field: "-", message: "not valid JSON: \(detail)")
    }
    if let dup = Self.duplicateKey(in: Array(data)) {
      throw TraceFormatError(
        file: path, line: dup.line, field: dup.key, message: "duplicate key \"\(dup.key)\" in one object: keep one")
    }
    try apply(json: obj, file: path, text: String(decoding: data, as: UTF8.self))
  }

  /// Applies overrides from a parsed JSON object; `text` locates lines for
  /// errors. A parameter set twice (a dotted key and the same name nested)
  /// is an error.
  package mutating func apply(json: Any, file: String, text: String, prefix: String = "") throws {
    var seen = Set<String>()
    try apply(json: json, file: file, text: text, prefix: prefix, seen: &seen)
  }

  private mutating func apply(json: Any, file: String, text: String, prefix: String, seen: inout Set<String>) throws {
    guard let dict = json as? [String: Any] else {
      throw TraceFormatError(file: file, line: 0, field: prefix.isEmpty ? "-" : prefix, message: "expected a JSON object")
    }
    for key in dict.keys.sorted() {
      let name = prefix.isEmpty ? key : prefix + "." + key
      let v = dict[key]!
      if let sub = v as? [String: Any] {
        try apply(json: sub, file: file, text: text, prefix: name, seen: &seen)
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
          try apply(json: ["\(i)": x], file: file, text: text, prefix: name, seen: &seen)
        }
        continue
      } else {
        throw TraceFormatError(file: file, line: Self.line(of: key, in: text), field: name, message: "unsupported value")
      }
      guard seen.insert(name).inserted else {
        throw TraceFormatError(
          file: file, line: Self.line(of: key, in: text), field: name,
          message: "set twice (a dotted name and the same name nested): keep one")
      }
      if let msg = set(name, to: value) {
        throw TraceFormatError(file: file, line: Self.line(of: key, in: text), field: name, message: msg)
      }
    }
  }

  /// The first key that appears twice in one object of the JSON text
  /// `bytes` (assumed valid JSON), with the 1-based line of its second
  /// occurrence; `nil` when there is none.
  ///
  /// - Complexity: O(bytes).
  static func duplicateKey(in bytes: [UInt8]) -> (key: String, line: Int)? {
    var stack: [Set<String>?] = []  // per open container: an object's keys, nil for an array
    var line = 1
    var i = 0
    var expectKey = false
    while i < bytes.count {
      let c = bytes[i]
      switch c {
      case UInt8(ascii: "\n"): line += 1
      case UInt8(ascii: "{"):
        stack.append([])
        expectKey = true
      case UInt8(ascii: "["):
        stack.append(nil)
        expectKey = false
      case UInt8(ascii: "}"), UInt8(ascii: "]"):
        _ = stack.popLast()
        expectKey = false
      case UInt8(ascii: ","):
        expectKey = stack.last.map { $0 != nil } ?? false
      case UInt8(ascii: ":"):
        expectKey = false
      case UInt8(ascii: "\""):
        var j = i + 1
        var raw: [UInt8] = []
        while j < bytes.count, bytes[j] != UInt8(ascii: "\"") {
          if bytes[j] == UInt8(ascii: "\\"), j + 1 < bytes.count {
            raw.append(bytes[j])
            j += 1
          }
          raw.append(bytes[j])
          j += 1
        }
        if expectKey, var keys = stack.last ?? nil {
          // Compare decoded keys (escapes such as \u0041 spell the same key).
          let quoted = [UInt8(ascii: "\"")] + raw + [UInt8(ascii: "\"")]
          let key = (try? JSONSerialization.jsonObject(with: Data(quoted), options: .fragmentsAllowed) as? String)
            ?? String(decoding: raw, as: UTF8.self)
          if !keys.insert(key).inserted { return (key, line) }
          stack[stack.count - 1] = keys
        }
        expectKey = false
        i = j
      default: break
      }
      i += 1
    }
    return nil
  }

  /// 1-based line of the first occurrence of `"key"` in `text`, 0 if absent.
  static func line(of key: String, in text: String) -> Int {
    guard let r = text.range(of: "\"\(key)\"") else { return 0 }
    return text[..<r.lowerBound].reduce(1) { $1 == "\n" ? $0 + 1 : $0 }
  }

  /// Every parameter whose value differs from the default, `name=value`, sorted.
  package func overrides() -> [String] {
    let d = WorldParameters()
    var out = Self.registry.compactMap { p -> String? in
      let v = p.value(in: self)
      return v == p.value(in: d) ? nil : "\(p.name)=\(v)"
    }
    out += appRatePerHour.keys.sorted().map { "\(Self.appRatePrefix)\($0)=\(CSV.number(appRatePerHour[$0]!))" }
    return out
  }
}
