import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation

/// The notebook's JSON value and its encoder (nbformat's layout).
extension Notebook {
  /// A notebook JSON value; objects are encoded with sorted keys.
  indirect enum JSON {
    case string(String), int(Int), bool(Bool), null
    case array([JSON])
    case object([String: JSON])

    /// Text as nbformat stores it: an array of lines, each but the last
    /// ending in a line break.
    static func lines(_ s: String) -> JSON {
      var out: [JSON] = []
      var cur = ""
      for ch in s.unicodeScalars {
        cur.unicodeScalars.append(ch)
        if ch == "\n" {
          out.append(.string(cur))
          cur = ""
        }
      }
      if !cur.isEmpty { out.append(.string(cur)) }
      return .array(out)
    }
  }

  /// `json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False)`, as
  /// `nbformat.write` does, so a notebook saved by Jupyter diffs cleanly.
  static func encode(_ v: JSON) -> String {
    var out = ""
    func go(_ v: JSON, _ depth: Int) {
      let pad = "\n" + String(repeating: " ", count: depth + 1)
      let end = "\n" + String(repeating: " ", count: depth)
      switch v {
      case .string(let s): out += JSONText.quoted(s)
      case .int(let i): out += String(i)
      case .bool(let b): out += b ? "true" : "false"
      case .null: out += "null"
      case .array(let a):
        guard !a.isEmpty else {
          out += "[]"
          return
        }
        out += "["
        for (i, x) in a.enumerated() {
          out += (i > 0 ? "," : "") + pad
          go(x, depth + 1)
        }
        out += end + "]"
      case .object(let o):
        guard !o.isEmpty else {
          out += "{}"
          return
        }
        out += "{"
        for (i, k) in o.keys.sorted(by: { Array($0.unicodeScalars).lexicographicallyPrecedes(Array($1.unicodeScalars)) }).enumerated() {
          out += (i > 0 ? "," : "") + pad
          out += JSONText.quoted(k)
          out += ": "
          go(o[k]!, depth + 1)
        }
        out += end + "}"
      }
    }
    go(v, 0)
    return out
  }
}
