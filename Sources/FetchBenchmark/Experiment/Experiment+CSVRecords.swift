import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation

// Scanning CSV records of part files.

/// Prepends `prefix` to every CSV record of `text` (records end at an LF
/// outside quotes, RFC 4180).
func prefixRecords(_ text: String, _ prefix: String) -> String {
  guard !text.isEmpty else { return "" }
  let p = Array(prefix.utf8)
  var out: [UInt8] = []
  out.reserveCapacity(text.utf8.count + p.count * 64)
  var atStart = true
  var quoted = false
  for b in text.utf8 {
    if atStart {
      out += p
      atStart = false
    }
    out.append(b)
    if b == UInt8(ascii: "\"") {
      quoted.toggle()
    } else if b == UInt8(ascii: "\n"), !quoted {
      atStart = true
    }
  }
  return String(decoding: out, as: UTF8.self)
}
