import FetchSupport

extension TraceReader {
  /// The five fields of a line without quotes whose commas are the set
  /// bits of `commaBits` (bit j: byte j), if there are exactly four: the
  /// first four set bits, no branch per comma.
  @inline(__always) private static func fields(
    _ base: UnsafePointer<UInt8>, _ n: Int, commaBits: UInt64
  ) -> (Bytes, Bytes, Bytes, Bytes, Bytes)? {
    // Four commas: the bits left after clearing the lowest three are one.
    var rest = commaBits & (commaBits &- 1)
    rest &= rest &- 1
    let last = rest & (rest &- 1)
    guard last != 0 && last & (last &- 1) == 0 else { return nil }
    let c0 = commaBits.trailingZeroBitCount
    let c1 = (commaBits & (commaBits &- 1)).trailingZeroBitCount
    let c2 = rest.trailingZeroBitCount
    let c3 = last.trailingZeroBitCount
    return (
      Bytes(start: base, count: c0), Bytes(start: base + c0 + 1, count: c1 - c0 - 1),
      Bytes(start: base + c1 + 1, count: c2 - c1 - 1), Bytes(start: base + c2 + 1, count: c3 - c2 - 1),
      Bytes(start: base + c3 + 1, count: n - c3 - 1))
  }

  /// Splits a line into exactly five fields, honouring RFC 4180 quotes
  /// (a quoted field is unescaped into the scratch buffer). `commas` is
  /// the bit per comma of a line without quotes that ``nextLine()`` found
  /// in the same pass as its end, or 0.
  func split(_ s: Bytes, commas: UInt64) throws -> (Bytes, Bytes, Bytes, Bytes, Bytes) {
    let base = s.baseAddress!
    let n = s.count
    if commas != 0, let f = TraceReader.fields(base, n, commaBits: commas) { return f }
    // Lines read without their commas (longer than 64 bytes, with a
    // quote, or the few near the end of the bytes read): no quotes,
    // exactly four commas; eight bytes at a time.
    var cuts = (0, 0, 0, 0)
    var k = 0
    var quoted = false
    @inline(__always) func comma(_ i: Int) {
      switch k {
      case 0: cuts.0 = i
      case 1: cuts.1 = i
      case 2: cuts.2 = i
      case 3: cuts.3 = i
      default: break
      }
      k += 1
    }
    var i = 0
    let raw = UnsafeRawPointer(base)
    while i + 8 <= n {
      let w = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
      if ByteMask.equalBytes(w, 34) != 0 {
        quoted = true
        break
      }
      var m = ByteMask.equalBytes(w, 44)
      while m != 0 {
        comma(i + m.trailingZeroBitCount >> 3)
        m &= m &- 1
      }
      i += 8
    }
    if !quoted && i < n && n >= 8 {
      // The last bytes: the word ending at the line's end, without the
      // 1...7 bytes at its start already scanned.
      let w = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self))
      let fresh: UInt64 = ~0 << UInt64(8 * (i - (n - 8)))
      if ByteMask.equalBytes(w, 34) & fresh != 0 {
        quoted = true
      } else {
        var m = ByteMask.equalBytes(w, 44) & fresh
        while m != 0 {
          comma(n - 8 + m.trailingZeroBitCount >> 3)
          m &= m &- 1
        }
        i = n
      }
    }
    if !quoted {
      while i < n {
        let c = base[i]
        if c == 44 {
          comma(i)
        } else if c == 34 {
          quoted = true
          break
        }
        i += 1
      }
    }
    if !quoted && k == 4 {
      return (
        Bytes(start: base, count: cuts.0), Bytes(start: base + cuts.0 + 1, count: cuts.1 - cuts.0 - 1),
        Bytes(start: base + cuts.1 + 1, count: cuts.2 - cuts.1 - 1),
        Bytes(start: base + cuts.2 + 1, count: cuts.3 - cuts.2 - 1),
        Bytes(start: base + cuts.3 + 1, count: n - cuts.3 - 1))
    }
    var f: (Bytes, Bytes, Bytes, Bytes, Bytes) = (s, s, s, s, s)
    var count = 0
    var out = 0  // next free byte of `unquoted`
    i = 0
    func set(_ field: Bytes) {
      switch count {
      case 0: f.0 = field
      case 1: f.1 = field
      case 2: f.2 = field
      case 3: f.3 = field
      default: f.4 = field
      }
      count += 1
    }
    while true {
      guard count < 5 else { throw fail("-", "expected 5 fields (\(traceHeader)), found more than 5") }
      if i < n && s[i] == 34 {  // quoted field
        let first = out
        var j = i + 1
        var closed = false
        while j < n {
          if s[j] == 34 {
            if j + 1 < n && s[j + 1] == 34 { unquoted[out] = 34; out += 1; j += 2; continue }
            closed = true
            j += 1
            break
          }
          unquoted[out] = s[j]; out += 1; j += 1
        }
        guard closed else { throw fail(TraceReader.columns[count], "unterminated quoted field") }
        guard j == n || s[j] == 44 else { throw fail(TraceReader.columns[count], "text after closing quote") }
        set(Bytes(start: unquoted + first, count: out - first))
        if j == n { break }
        i = j + 1
      } else {
        var end = i
        while end < n && s[end] != 44 { end += 1 }
        set(Bytes(rebasing: s[i..<end]))
        if end == n { break }
        i = end + 1
      }
    }
    guard count == 5 else {
      throw fail("-", "expected 5 fields (\(traceHeader)), found \(count)")
    }
    return f
  }
}
