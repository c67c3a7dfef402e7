extension TraceReader {
  /// Parses `-?digits(.digits)?` quickly (at most 18 digits, a mantissa of
  /// at most 2^53); `nil` for anything else. Exact: the mantissa and the
  /// power of ten are exact doubles, and their quotient is rounded once.
  ///
  /// - Complexity: O(bytes); the first 8 digits at once, and a fraction of
  ///   1 to 8 digits at once in a field of at least 8 bytes.
  static func fastDecimal(_ b: UnsafeBufferPointer<UInt8>) -> Double? {
    var i = 0
    let n = b.count
    guard n > 0 else { return nil }
    let p = b.baseAddress!
    var neg = false
    if p[0] == 45 { neg = true; i = 1 }
    // More than 18 digits and a dot: refused below anyway.
    guard n - i <= 19 else { return nil }
    let first = i
    var mant: UInt64 = 0
    if n - i >= 8 {
      let w = UInt64(littleEndian: UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self))
      if TraceReader.isEightDigits(w) {
        mant = TraceReader.eightDigits(w)
        i += 8
      }
    }
    while i < n {
      let c = p[i] &- 48
      if c >= 10 { break }
      mant = mant &* 10 &+ UInt64(c)
      i += 1
    }
    var digits = i - first
    var scale = 0
    if i < n {
      guard p[i] == 46 else { return nil }
      i += 1
      scale = n - i
      if scale >= 1 && scale <= 8 && n >= 8 {
        // The fraction at once: the word ending at the field's end, its
        // bytes before the fraction replaced by '0's (no loop to mispredict).
        let w = UInt64(littleEndian: UnsafeRawPointer(p + n - 8).loadUnaligned(as: UInt64.self))
        let kept: UInt64 = ~0 << UInt64(8 * (8 - scale))
        let fraction = (w & kept) | (0x3030_3030_3030_3030 & ~kept)
        guard TraceReader.isEightDigits(fraction) else { return nil }
        mant = mant &* UInt64(TraceReader.pow10(scale)) &+ TraceReader.eightDigits(fraction)
      } else {
        while i < n {
          let c = p[i] &- 48
          guard c < 10 else { return nil }
          mant = mant &* 10 &+ UInt64(c)
          i += 1
        }
      }
      digits += scale
    }
    // Above 2^53 the mantissa itself would round, and dividing a rounded
    // mantissa rounds twice; let the slow path parse those exactly.
    guard digits > 0, digits <= 18, mant <= 1 << 53 else { return nil }
    var x = Double(mant)
    if scale > 0 { x /= TraceReader.pow10(scale) }
    return neg ? -x : x
  }

  /// Whether the 8 bytes of `w` (first byte lowest) are ASCII digits.
  @inline(__always) static func isEightDigits(_ w: UInt64) -> Bool {
    (w & 0xF0F0_F0F0_F0F0_F0F0) | (((w &+ 0x0606_0606_0606_0606) & 0xF0F0_F0F0_F0F0_F0F0) >> 4)
      == 0x3333_3333_3333_3333
  }

  /// The value of 8 ASCII digits (first byte lowest, most significant).
  @inline(__always) static func eightDigits(_ w: UInt64) -> UInt64 {
    var v = w &- 0x3030_3030_3030_3030
    v = (v &* 10) &+ (v >> 8)
    let hi = (v & 0x0000_00FF_0000_00FF) &* (100 &+ (1_000_000 << 32))
    let lo = ((v >> 16) & 0x0000_00FF_0000_00FF) &* (1 &+ (10_000 << 32))
    return (hi &+ lo) >> 32
  }

  /// ``fastDecimal(_:)`` on an array (for tests).
  static func fastDecimal(_ b: [UInt8]) -> Double? { b.withUnsafeBufferPointer { fastDecimal($0) } }

  /// 10^k for k in 0...18, exact (constants: no lazy global, no bounds check).
  @inline(__always) static func pow10(_ k: Int) -> Double {
    switch k {
    case 0: 1
    case 1: 1e1
    case 2: 1e2
    case 3: 1e3
    case 4: 1e4
    case 5: 1e5
    case 6: 1e6
    case 7: 1e7
    case 8: 1e8
    case 9: 1e9
    case 10: 1e10
    case 11: 1e11
    case 12: 1e12
    case 13: 1e13
    case 14: 1e14
    case 15: 1e15
    case 16: 1e16
    case 17: 1e17
    default: 1e18
    }
  }
}
