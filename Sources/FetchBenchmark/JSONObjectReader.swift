import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation

/// Reads the members of one JSON object, rejecting unknown and duplicate keys.
struct JSONObjectReader {
  let node: LocatedJSON
  let path: String
  let file: String
  private var members: [String: LocatedJSON.Member] = [:]

  init(_ node: LocatedJSON, path: String, file: String, allowed: [String]) throws {
    self.node = node
    self.path = path
    self.file = file
    guard case .object(let ms) = node.value else {
      throw TraceFormatError(file: file, line: node.line, field: path.isEmpty ? "-" : path, message: "expected an object, got \(node.typeName)")
    }
    for m in ms {
      let key = JSONObjectReader.displayKey(m.key)
      let field = path.isEmpty ? key : path + "." + key
      guard allowed.contains(m.key) else {
        throw TraceFormatError(file: file, line: m.line, field: field, message: "unknown key; known: " + allowed.joined(separator: ", "))
      }
      guard members[m.key] == nil else {
        throw TraceFormatError(file: file, line: m.line, field: field, message: "duplicate key")
      }
      members[m.key] = m
    }
  }

  /// A key as it appears in a field path: as is when it is a plain name,
  /// else JSON-quoted (an empty key, spaces, dots, control characters).
  static func displayKey(_ key: String) -> String {
    let plain = !key.isEmpty && key.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "_" || $0 == "-") }
    guard !plain else { return key }
    var out = "\""
    for u in key.unicodeScalars.prefix(80) {
      switch u {
      case "\"", "\\": out += "\\" + String(u)
      case _ where u.value < 0x20 || u.value == 0x7F: out += "\\u" + String(u.value, radix: 16).leftPadded(4)
      default: out.unicodeScalars.append(u)
      }
    }
    return out + (key.unicodeScalars.count > 80 ? "…\"" : "\"")
  }

  func member(_ key: String) -> LocatedJSON.Member? { members[key] }

  func field(_ key: String) -> String { key == "-" ? (path.isEmpty ? "-" : path) : path.isEmpty ? key : path + "." + key }

  func error(_ key: String, _ line: Int, _ message: String) -> TraceFormatError {
    TraceFormatError(file: file, line: line, field: field(key), message: message)
  }

  func missing(_ key: String) -> TraceFormatError {
    error(key, node.line, "missing (required)")
  }

  private func typed(_ key: String, _ what: String) -> TraceFormatError {
    let m = members[key]!
    return error(key, m.line, "expected \(what), got \(m.value.typeName)")
  }

  func string(_ key: String) throws -> String? {
    guard let m = members[key] else { return nil }
    guard case .string(let s) = m.value.value else { throw typed(key, "a string") }
    return s
  }

  func bool(_ key: String) throws -> Bool? {
    guard let m = members[key] else { return nil }
    guard case .bool(let b) = m.value.value else { throw typed(key, "true or false") }
    return b
  }

  func double(_ key: String) throws -> Double? {
    guard let m = members[key] else { return nil }
    guard case .number(let t) = m.value.value, let x = Double(t), x.isFinite else { throw typed(key, "a number") }
    return x
  }

  func int(_ key: String, min lo: Int, max hi: Int) throws -> Int? {
    guard let m = members[key] else { return nil }
    guard case .number(let t) = m.value.value, let x = Int(t) else { throw typed(key, "an integer") }
    guard x >= lo, x <= hi else { throw error(key, m.line, "must be in [\(lo), \(hi)], got \(x)") }
    return x
  }

  func uint64(_ key: String) throws -> UInt64? {
    guard let m = members[key] else { return nil }
    guard case .number(let t) = m.value.value, let x = UInt64(t) else {
      throw typed(key, "an integer in [0, 2^64)")
    }
    return x
  }
}

extension String {
  fileprivate func leftPadded(_ n: Int) -> String { String(repeating: "0", count: max(0, n - count)) + self }
}
