import Foundation

/// SHA-256 (FIPS 180-4), streaming: feed any number of byte chunks with
/// ``update(_:)``, then read ``finalize()``. Used for the input hashes in
/// `manifest.json` and to check resumable part files.
///
///     var h = SHA256()
///     h.update(Array("abc".utf8))
///     h.hexDigest()   // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
///
/// Computed by the system's libcrypto (OpenSSL 3, EVP API), which uses the
/// CPU's SHA extensions where present: 1.2–1.8 GB/s on this project's
/// machine, about 20× the portable Swift implementation it replaced
/// (77 MB/s).
/// The binding is ``SHA256Context`` (the one file here that touches C);
/// nothing here sees a pointer. A value type: a copy hashes on independently
/// (copy-on-write of the digest context).
///
/// - Complexity: O(n) in the bytes hashed; O(1) memory.
package struct SHA256: Sendable {
  private var context = SHA256Context()

  package init() {}

  /// The SHA-256 of `bytes`, as 64 lowercase hex digits.
  package static func hex(_ bytes: some Sequence<UInt8>) -> String {
    var s = SHA256()
    s.update(Array(bytes))
    return s.hexDigest()
  }

  /// The SHA-256 and size of the file at `path`, read in 1 MiB chunks.
  ///
  /// - Throws: ``FileError`` when the file cannot be read.
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
  ///
  /// - Complexity: O(`bytes.count`).
  package mutating func update(_ bytes: UnsafeRawBufferPointer) {
    guard !bytes.isEmpty else { return }
    if !isKnownUniquelyReferenced(&context) { context = context.copy() }
    context.update(bytes)
  }

  /// The 32-byte digest of everything appended. The hasher itself is not
  /// changed, so more data may follow.
  package func finalize() -> [UInt8] {
    context.copy().finish()
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
}

/// SHA-256 computed on a background thread while the caller goes on (the
/// trace reader parses the next block while the last one is hashed), so
/// the input hash of `manifest.json` costs no time on the reading thread.
/// At most ``maxPending`` blocks wait to be hashed (memory stays bounded
/// when the reader is faster than the hash); the result is the same as
/// ``SHA256``'s on the same bytes in the same order.
///
/// With `inline` (what `--jobs 1` asks for: one job, one core) every block
/// is hashed on the calling thread instead, before `update` returns, so a
/// one-job run never occupies a second core (a Slurm task given one CPU is
/// not oversubscribed); the digest is the same.
package final class BackgroundSHA256: @unchecked Sendable {
  /// Blocks that may wait at once.
  package static let maxPending = 8
  private var hasher = SHA256()
  private let queue = DispatchQueue(label: "fetchlab.sha256")
  private let slots = DispatchSemaphore(value: BackgroundSHA256.maxPending)
  /// Hash on the calling thread.
  package let inline: Bool

  /// - Parameter inline: hash each block on the calling thread (one job).
  package init(inline: Bool = false) {
    self.inline = inline
  }

  /// A hasher for a run with `jobs` worker threads: inline with one.
  package convenience init(jobs: Int) {
    self.init(inline: jobs <= 1)
  }

  /// Hashes a copy of `bytes` after every earlier block; blocks while
  /// ``maxPending`` blocks are waiting.
  package func update(_ bytes: UnsafeRawBufferPointer) {
    if inline { return queue.sync { hasher.update(bytes) } }
    let copy = [UInt8](bytes)
    slots.wait()
    queue.async {
      self.hasher.update(copy)
      self.slots.signal()
    }
  }

  /// Hashes `bytes` in place after every earlier block, keeping `owner`
  /// (which must keep the bytes valid and unchanged) alive until then; no
  /// copy. Blocks while ``maxPending`` blocks are waiting.
  package func update(_ bytes: UnsafeRawBufferPointer, keepingAlive owner: AnyObject & Sendable) {
    if inline { return queue.sync { hasher.update(bytes) } }
    let block = BorrowedBlock(bytes: bytes, owner: owner)
    slots.wait()
    queue.async {
      withExtendedLifetime(block.owner) { self.hasher.update(block.bytes) }
      self.slots.signal()
    }
  }

  /// The digest of every block given so far, as 64 lowercase hex digits
  /// (waits for the pending ones).
  package func hexDigest() -> String {
    queue.sync { hasher.hexDigest() }
  }
}

/// Bytes owned by `owner`, hashed on the background queue.
private struct BorrowedBlock: @unchecked Sendable {
  let bytes: UnsafeRawBufferPointer
  let owner: AnyObject & Sendable
}
