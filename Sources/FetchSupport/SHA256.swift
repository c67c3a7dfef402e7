import Foundation

/// SHA-256 (FIPS 180-4, §6.2), streaming: feed any number of byte chunks with
/// ``update(_:)``, then read ``finalize()``. Used for the input hashes in
/// `manifest.json` and to check resumable part files.
///
///     var h = SHA256()
///     h.update(Array("abc".utf8))
///     h.hexDigest()   // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
///
/// - Complexity: O(n) in the bytes hashed; O(1) memory (one 64-byte block).
package struct SHA256: Sendable {
  /// Hash state H0…H7 (§5.3.3 initial values).
  private var h: [UInt32] = [
    0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a,
    0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19,
  ]
  /// Bytes of the current, not yet full block.
  private var block = [UInt8](repeating: 0, count: 64)
  private var blockCount = 0
  /// Message length so far, bytes.
  private var length: UInt64 = 0
  private var w = [UInt32](repeating: 0, count: 64)

  package init() {}

  /// The SHA-256 of `bytes`, as 64 lowercase hex digits.
  package static func hex(_ bytes: some Sequence<UInt8>) -> String {
    var s = SHA256()
    s.update(Array(bytes))
    return s.hexDigest()
  }

  /// The SHA-256 and size of the file at `path`, read in 1 MiB chunks.
  ///
  /// - Throws: ``ExperimentError`` when the file cannot be read.
  package static func hashFile(atPath path: String) throws -> (hex: String, bytes: Int) {
    guard let f = fopen(path, "rb") else {
      throw FileError(path: path, "cannot read: \(String(cString: strerror(errno)))")
    }
    defer { fclose(f) }
    var s = SHA256()
    var buf = [UInt8](repeating: 0, count: 1 << 20)
    var total = 0
    while true {
      let n = buf.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, f) }
      if n > 0 {
        buf.withUnsafeBytes { s.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        total += n
      }
      if n < buf.count {
        guard ferror(f) == 0 else { throw FileError(path: path, "read failed") }
        break
      }
    }
    return (s.hexDigest(), total)
  }

  /// Appends bytes to the message.
  package mutating func update(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { update($0) }
  }

  /// Appends the UTF-8 bytes of `s`.
  package mutating func update(_ s: String) {
    var s = s
    s.withUTF8 { update(UnsafeRawBufferPointer($0)) }
  }

  /// Appends bytes to the message.
  package mutating func update(_ bytes: UnsafeRawBufferPointer) {
    length &+= UInt64(bytes.count)
    var i = 0
    let n = bytes.count
    // Top up a partial block first.
    if blockCount > 0 {
      let take = min(64 - blockCount, n)
      for k in 0..<take { block[blockCount + k] = bytes[k] }
      blockCount += take
      i = take
      if blockCount == 64 {
        let b = block
        b.withUnsafeBytes { compress($0) }
        blockCount = 0
      }
    }
    // Whole blocks straight from the input.
    while n - i >= 64 {
      compress(UnsafeRawBufferPointer(rebasing: bytes[i..<(i + 64)]))
      i += 64
    }
    // Keep the tail.
    while i < n {
      block[blockCount] = bytes[i]
      blockCount += 1
      i += 1
    }
  }

  /// The 32-byte digest of everything appended (padding per §5.1.1). The
  /// hasher itself is not changed, so more data may follow.
  package func finalize() -> [UInt8] {
    var s = self
    let bits = length &* 8
    var pad: [UInt8] = [0x80]
    let afterOne = (Int(length % 64) + 1) % 64
    pad += [UInt8](repeating: 0, count: (56 - afterOne + 64) % 64)
    for k in (0..<8).reversed() { pad.append(UInt8(truncatingIfNeeded: bits >> (8 * UInt64(k)))) }
    s.update(pad)
    precondition(s.blockCount == 0, "SHA256: padding did not end on a block boundary")
    var out: [UInt8] = []
    out.reserveCapacity(32)
    for x in s.h {
      out += [UInt8(x >> 24), UInt8(truncatingIfNeeded: x >> 16), UInt8(truncatingIfNeeded: x >> 8), UInt8(truncatingIfNeeded: x)]
    }
    return out
  }

  /// ``finalize()`` as 64 lowercase hex digits.
  package func hexDigest() -> String {
    let digits = Array("0123456789abcdef".utf8)
    var s: [UInt8] = []
    s.reserveCapacity(64)
    for b in finalize() {
      s.append(digits[Int(b >> 4)])
      s.append(digits[Int(b & 15)])
    }
    return String(decoding: s, as: UTF8.self)
  }

  /// The round constants K0…K63 (§4.2.2).
  private static let k: [UInt32] = [
    0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
    0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
    0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
    0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
    0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
    0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
    0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
    0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
  ]

  @inline(__always) private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }

  /// One block of the compression function (§6.2.2).
  private mutating func compress(_ p: UnsafeRawBufferPointer) {
    w.withUnsafeMutableBufferPointer { w in
      for t in 0..<16 {
        w[t] = UInt32(p[4 * t]) << 24 | UInt32(p[4 * t + 1]) << 16 | UInt32(p[4 * t + 2]) << 8 | UInt32(p[4 * t + 3])
      }
      for t in 16..<64 {
        let s0 = Self.rotr(w[t - 15], 7) ^ Self.rotr(w[t - 15], 18) ^ (w[t - 15] >> 3)
        let s1 = Self.rotr(w[t - 2], 17) ^ Self.rotr(w[t - 2], 19) ^ (w[t - 2] >> 10)
        w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
      }
    }
    var a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7]
    Self.k.withUnsafeBufferPointer { k in
      w.withUnsafeBufferPointer { w in
        for t in 0..<64 {
          let s1 = Self.rotr(e, 6) ^ Self.rotr(e, 11) ^ Self.rotr(e, 25)
          let ch = (e & f) ^ (~e & g)
          let t1 = hh &+ s1 &+ ch &+ k[t] &+ w[t]
          let s0 = Self.rotr(a, 2) ^ Self.rotr(a, 13) ^ Self.rotr(a, 22)
          let maj = (a & b) ^ (a & c) ^ (b & c)
          let t2 = s0 &+ maj
          hh = g
          g = f
          f = e
          e = d &+ t1
          d = c
          c = b
          b = a
          a = t1 &+ t2
        }
      }
    }
    h[0] &+= a
    h[1] &+= b
    h[2] &+= c
    h[3] &+= d
    h[4] &+= e
    h[5] &+= f
    h[6] &+= g
    h[7] &+= hh
  }
}
