import Foundation

/// The one JSON writer of FetchLab's own files: Foundation objects as text
/// with sorted keys, so equal objects give equal bytes (manifests, shard and
/// dataset records, configuration hashes). The notebook, whose layout is
/// nbformat's, has its own encoder.
package enum JSONText {
  /// Indented text with a final line break.
  package static func pretty(_ object: Any) throws -> String {
    String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted]), as: UTF8.self)
      + "\n"
  }

  /// Compact text (for hashing and comparing).
  package static func canonical(_ object: Any) throws -> String {
    String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
  }

  /// Writes `object` as ``pretty(_:)`` text to `path`, atomically.
  package static func write(_ object: Any, to path: String) throws {
    let f = try AtomicTextFile(path: path)
    try f.write(pretty(object))
    try f.commit()
  }

  /// `s` as a JSON string literal (RFC 8259) with `"`, `\\`, `\n`, `\r`,
  /// `\t`, `\b`, `\f` escaped and other control characters as `\u00XX`,
  /// everything else as it is (as Python's `json.dumps(ensure_ascii=False)`
  /// writes it).
  ///
  /// - Complexity: O(n) in the string's length.
  package static func quoted(_ s: String) -> String {
    var out = "\""
    out.reserveCapacity(s.utf8.count + 2)
    for u in s.unicodeScalars {
      switch u {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case "\u{8}": out += "\\b"
      case "\u{C}": out += "\\f"
      default:
        if u.value < 0x20 {
          let h = String(u.value, radix: 16)
          out += "\\u" + String(repeating: "0", count: 4 - h.count) + h
        } else {
          out.unicodeScalars.append(u)
        }
      }
    }
    return out + "\""
  }
}
