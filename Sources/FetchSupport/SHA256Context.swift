import CCrypto

/// One libcrypto SHA-256 context (`EVP_MD_CTX`): the binding behind
/// ``SHA256``, which owns one at a time and copies it before a shared one
/// is changed (value semantics). libcrypto uses the CPU's SHA extensions
/// where present.
///
/// The one file of FetchSupport that touches C (through `CCrypto`).
package final class SHA256Context: @unchecked Sendable {
  private let ctx: OpaquePointer

  package init() {
    guard let c = EVP_MD_CTX_new() else { fatalError("SHA256: libcrypto could not allocate a digest context") }
    ctx = c
    guard EVP_DigestInit_ex(ctx, EVP_sha256(), nil) == 1 else { fatalError("SHA256: libcrypto has no SHA-256") }
  }

  private init(copying other: SHA256Context) {
    guard let c = EVP_MD_CTX_new() else { fatalError("SHA256: libcrypto could not allocate a digest context") }
    ctx = c
    guard EVP_MD_CTX_copy_ex(ctx, other.ctx) == 1 else { fatalError("SHA256: libcrypto could not copy a digest context") }
  }

  deinit { EVP_MD_CTX_free(ctx) }

  /// An independent context in the same state.
  package func copy() -> SHA256Context { SHA256Context(copying: self) }

  /// Hashes `bytes` on.
  package func update(_ bytes: UnsafeRawBufferPointer) {
    guard EVP_DigestUpdate(ctx, bytes.baseAddress, bytes.count) == 1 else { fatalError("SHA256: libcrypto update failed") }
  }

  /// The digest; the context is finished (use on a copy).
  package func finish() -> [UInt8] {
    var out = [UInt8](repeating: 0, count: 32)
    var n: UInt32 = 0
    let ok = out.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(ctx, $0.baseAddress, &n) }
    precondition(ok == 1 && n == 32, "SHA256: libcrypto returned a \(n)-byte digest")
    return out
  }
}
