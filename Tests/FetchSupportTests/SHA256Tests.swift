import FetchSupport
import Testing

@Suite("SHA-256 in the background")
struct BackgroundSHA256Tests {
  @Test(
    "the background hash (and the inline one of --jobs 1) equals the plain one, whatever the block sizes",
    arguments: 1...6, [false, true])
  func sameDigest(seed: UInt64, inline: Bool) {
    var rng = SplitMix64(seed: seed, keys: "sha")
    var plain = SHA256()
    let background = BackgroundSHA256(inline: inline)
    for _ in 0..<(20 + Int(rng.uniform() * 40)) {
      let n = Int(rng.uniform() * 3000)
      let block = (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
      plain.update(block)
      block.withUnsafeBytes { background.update($0) }
    }
    #expect(background.hexDigest() == plain.hexDigest())
    #expect(BackgroundSHA256(inline: inline).hexDigest() == SHA256.hex([UInt8]()))
  }
}

@Suite("SHA-256 (libcrypto)")
struct SHA256ValueTests {
  @Test("a copy of a hasher hashes on independently (value semantics)")
  func copies() {
    var a = SHA256()
    a.update("ab")
    var b = a
    b.update("c")
    let c = b
    a.update("x")
    #expect(b.hexDigest() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    #expect(c.hexDigest() == b.hexDigest())
    #expect(a.hexDigest() == SHA256.hex(Array("abx".utf8)))
    // Finalizing does not change the hasher: hashing on after it gives the
    // digest of the whole message (FIPS 180-4's two-block example).
    b.update("dbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
    #expect(b.hexDigest() == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    #expect(c.hexDigest() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "the copy is unchanged")
  }
}
