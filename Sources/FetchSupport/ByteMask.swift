/// Eight bytes at a time in one 64-bit word ("SIMD within a register"):
/// which bytes of a word equal a given byte, as one flag bit per byte.
/// The first byte in memory is the word's lowest (little-endian loads).
package enum ByteMask {
  /// 0x80 in each byte of `w` that is zero, 0 in the others (exact: no
  /// borrow reaches the next byte).
  @inlinable @inline(__always) package static func zeroBytes(_ w: UInt64) -> UInt64 {
    let low7: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
    return ~(((w & low7) &+ low7) | w | low7)
  }

  /// 0x80 in each byte of `w` equal to `byte`, 0 in the others.
  @inlinable @inline(__always) package static func equalBytes(_ w: UInt64, _ byte: UInt8) -> UInt64 {
    zeroBytes(w ^ (0x0101_0101_0101_0101 &* UInt64(byte)))
  }

  /// Bit j set for each byte j of `m` that is 0x80 (from ``zeroBytes(_:)``),
  /// the others 0: the eight flags gathered by one multiplication.
  @inlinable @inline(__always) package static func bits(_ m: UInt64) -> UInt64 {
    ((m >> 7) &* 0x0102_0408_1020_4080) >> 56
  }
}
