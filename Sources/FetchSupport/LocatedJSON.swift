import Foundation

/// A JSON value that knows the line it starts on, so errors in experiment
/// files, world configs and synthetic-population parameters can name
/// `file:line: key.path`. Numbers keep their text (a 64-bit seed must not
/// pass through `Double`); a key twice in one object is refused.
///
/// - Complexity: parsing is O(n) in the text's bytes, with nesting limited
///   to 256 levels.
package struct LocatedJSON: Sendable {
  package indirect enum Value: Sendable {
    case object([Member])
    case array([LocatedJSON])
    case string(String)
    case number(String)
    case bool(Bool)
    case null
  }

  /// One `"key": value` of an object, in file order (duplicates kept).
  package struct Member: Sendable {
    package var key: String
    package var line: Int
    package var value: LocatedJSON

    package init(key: String, line: Int, value: LocatedJSON) {
      self.key = key
      self.line = line
      self.value = value
    }
  }

  package var value: Value
  /// 1-based line of the value's first character.
  package var line: Int

  package init(value: Value, line: Int) {
    self.value = value
    self.line = line
  }

  /// Parses RFC 8259 JSON text (a UTF-8 byte order mark is allowed).
  /// - Throws: ``SyntaxError`` naming the line.
  package static func parse(_ text: String) throws(SyntaxError) -> LocatedJSON {
    var p = Parser(bytes: Array(text.utf8))
    p.skipSpace()
    let v = try p.value(depth: 0)
    p.skipSpace()
    guard p.i == p.bytes.count else { throw p.error("unexpected text after the JSON value") }
    return v
  }

  /// A short name of the value's type, for "expected …" messages.
  package var typeName: String {
    switch value {
    case .object: "an object"
    case .array: "an array"
    case .string: "a string"
    case .number: "a number"
    case .bool: "a boolean"
    case .null: "null"
    }
  }

  /// The value as Foundation objects, as `JSONSerialization` would give it.
  package var foundation: Any {
    switch value {
    case .object(let m):
      var d: [String: Any] = [:]
      for x in m { d[x.key] = x.value.foundation }
      return d
    case .array(let a): return a.map(\.foundation)
    case .string(let s): return s
    case .number(let t):
      if !t.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }), let i = Int64(t) { return NSNumber(value: i) }
      return NSNumber(value: Double(t) ?? .nan)
    case .bool(let b): return NSNumber(value: b)
    case .null: return NSNull()
    }
  }

  private struct Parser {
    let bytes: [UInt8]
    var i = 0
    var line = 1

    init(bytes: [UInt8]) {
      self.bytes = bytes
      // A UTF-8 byte order mark is allowed before the value.
      if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
    }

    func error(_ message: String) -> SyntaxError {
      SyntaxError(line: line, message: "not valid JSON: " + message)
    }

    mutating func skipSpace() {
      while i < bytes.count {
        switch bytes[i] {
        case UInt8(ascii: "\n"): line += 1
        case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"): break
        default: return
        }
        i += 1
      }
    }

    /// Reads the comma-separated elements of an object or array whose
    /// opening byte is next, through its `close` byte: `element` reads each
    /// one, from its first byte; `what` names the container in errors.
    mutating func elements(
      closedBy close: UInt8, in what: String, _ element: (inout Parser) throws(SyntaxError) -> Void
    ) throws(SyntaxError) {
      i += 1
      skipSpace()
      if i < bytes.count, bytes[i] == close {
        i += 1
        return
      }
      while true {
        skipSpace()
        try element(&self)
        skipSpace()
        guard i < bytes.count else { throw error("unexpected end of file in \(what)") }
        if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
        if bytes[i] == close { i += 1; return }
        throw error("expected ',' or '\(Character(Unicode.Scalar(close)))'")
      }
    }

    mutating func value(depth: Int) throws(SyntaxError) -> LocatedJSON {
      guard depth < 256 else { throw error("nested too deeply") }
      guard i < bytes.count else { throw error("unexpected end of file") }
      let start = line
      switch bytes[i] {
      case UInt8(ascii: "{"):
        var members: [Member] = []
        try elements(closedBy: UInt8(ascii: "}"), in: "an object") { (p: inout Parser) throws(SyntaxError) in
          guard p.i < p.bytes.count, p.bytes[p.i] == UInt8(ascii: "\"") else { throw p.error("expected a \"key\"") }
          let keyLine = p.line
          let key = try p.string()
          p.skipSpace()
          guard p.i < p.bytes.count, p.bytes[p.i] == UInt8(ascii: ":") else { throw p.error("expected ':' after \"\(key)\"") }
          p.i += 1
          p.skipSpace()
          if let first = members.first(where: { $0.key == key }) {
            throw SyntaxError(
              line: keyLine, field: key.isEmpty || key.contains(where: \.isNewline) ? "-" : key,
              message: "duplicate key \"\(key)\" in one object (first on line \(first.line)): keep one")
          }
          members.append(Member(key: key, line: keyLine, value: try p.value(depth: depth + 1)))
        }
        return LocatedJSON(value: .object(members), line: start)
      case UInt8(ascii: "["):
        var items: [LocatedJSON] = []
        try elements(closedBy: UInt8(ascii: "]"), in: "an array") { (p: inout Parser) throws(SyntaxError) in
          items.append(try p.value(depth: depth + 1))
        }
        return LocatedJSON(value: .array(items), line: start)
      case UInt8(ascii: "\""):
        return LocatedJSON(value: .string(try string()), line: start)
      case UInt8(ascii: "t"):
        try literal("true")
        return LocatedJSON(value: .bool(true), line: start)
      case UInt8(ascii: "f"):
        try literal("false")
        return LocatedJSON(value: .bool(false), line: start)
      case UInt8(ascii: "n"):
        try literal("null")
        return LocatedJSON(value: .null, line: start)
      case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        let t = try number()
        guard let x = Double(t), x.isFinite else { throw error("the number \(t) is out of range (beyond ±1.8e308)") }
        return LocatedJSON(value: .number(t), line: start)
      default:
        throw error("unexpected character '\(Character(Unicode.Scalar(bytes[i])))'")
      }
    }

    mutating func literal(_ word: String) throws(SyntaxError) {
      let w = Array(word.utf8)
      guard bytes.count - i >= w.count, Array(bytes[i..<(i + w.count)]) == w else {
        throw error("unexpected word (expected \(word))")
      }
      i += w.count
    }

    mutating func number() throws(SyntaxError) -> String {
      let start = i
      func digits() -> Int {
        let s = i
        while i < bytes.count, bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9") { i += 1 }
        return i - s
      }
      if bytes[i] == UInt8(ascii: "-") { i += 1 }
      guard i < bytes.count else { throw error("bad number") }
      if bytes[i] == UInt8(ascii: "0") {
        i += 1
      } else if digits() == 0 {
        throw error("bad number")
      }
      if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
        i += 1
        guard digits() > 0 else { throw error("bad number: digits expected after '.'") }
      }
      if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
        i += 1
        if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard digits() > 0 else { throw error("bad number: digits expected in the exponent") }
      }
      return String(decoding: bytes[start..<i], as: UTF8.self)
    }

    mutating func hex4() throws(SyntaxError) -> UInt32 {
      guard bytes.count - i >= 4 else { throw error("bad \\u escape") }
      var x: UInt32 = 0
      for _ in 0..<4 {
        let c = bytes[i]
        let d: UInt32
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c - UInt8(ascii: "A") + 10)
        default: throw error("bad \\u escape")
        }
        x = x << 4 | d
        i += 1
      }
      return x
    }

    mutating func string() throws(SyntaxError) -> String {
      i += 1  // opening quote
      var out: [UInt8] = []
      while true {
        guard i < bytes.count else { throw error("unterminated string") }
        let c = bytes[i]
        i += 1
        switch c {
        case UInt8(ascii: "\""):
          guard let s = String(validating: out, as: UTF8.self) else {
            throw error("invalid UTF-8 in a string")
          }
          return s
        case UInt8(ascii: "\\"):
          guard i < bytes.count else { throw error("unterminated string") }
          let e = bytes[i]
          i += 1
          switch e {
          case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
          case UInt8(ascii: "b"): out.append(8)
          case UInt8(ascii: "f"): out.append(12)
          case UInt8(ascii: "n"): out.append(10)
          case UInt8(ascii: "r"): out.append(13)
          case UInt8(ascii: "t"): out.append(9)
          case UInt8(ascii: "u"):
            var u = try hex4()
            if (0xD800..<0xDC00).contains(u) {
              guard bytes.count - i >= 6, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                throw error("unpaired surrogate in \\u escape")
              }
              i += 2
              let lo = try hex4()
              guard (0xDC00..<0xE000).contains(lo) else { throw error("unpaired surrogate in \\u escape") }
              u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00)
            }
            guard let scalar = Unicode.Scalar(u) else { throw error("bad \\u escape") }
            out += Array(String(Character(scalar)).utf8)
          default:
            throw error("bad escape '\\\(Character(Unicode.Scalar(e)))'")
          }
        case 0..<0x20:
          throw error("control character in a string")
        default:
          out.append(c)
        }
      }
    }
  }
}

extension LocatedJSON {
  /// The line of the member at `path` (object keys; array indexes as
  /// decimal text), or of the deepest value on the way that exists.
  package func line(at path: [String]) -> Int {
    guard let first = path.first else { return line }
    switch value {
    case .object(let members):
      guard let m = members.first(where: { $0.key == first }) else { return line }
      return path.count == 1 ? m.line : m.value.line(at: Array(path.dropFirst()))
    case .array(let items):
      guard let i = Int(first), items.indices.contains(i) else { return line }
      return items[i].line(at: Array(path.dropFirst()))
    default: return line
    }
  }

  /// The first member called `key` anywhere in the tree, in file order.
  package func firstMember(named key: String) -> Member? {
    switch value {
    case .object(let members):
      for m in members {
        if m.key == key { return m }
        if let found = m.value.firstMember(named: key) { return found }
      }
      return nil
    case .array(let items):
      for x in items { if let found = x.firstMember(named: key) { return found } }
      return nil
    default: return nil
    }
  }
}
