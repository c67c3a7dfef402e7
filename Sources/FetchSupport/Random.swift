import Foundation

/// SplitMix64 (Steele, Lea & Flood, *Fast Splittable Pseudorandom Number
/// Generators*, OOPSLA 2014, DOI 10.1145/2660193.2660195): a small, fast,
/// seedable generator. Every random draw in FetchLab goes through one of these,
/// seeded from the master seed and a stable key, so results do not depend on
/// thread count or scheduling.
package struct SplitMix64: RandomNumberGenerator, Sendable {
  @usableFromInline var state: UInt64

  package init(seed: UInt64) { state = seed }

  /// A generator for the stream named by `keys` under `seed`.
  ///
  ///     var rng = SplitMix64(seed: seed, keys: "content", userID, appName)
  package init(seed: UInt64, keys: String...) {
    var h = seed ^ 0x6A09_E667_F3BC_C908
    for k in keys { h = StableHash.combine(h, StableHash.fnv1a(k)) }
    state = h
  }

  @inlinable package mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// Uniform in [0, 1) with 53 random bits.
  package mutating func uniform() -> Double {
    Double(next() >> 11) * 0x1.0p-53
  }

  /// Uniform in (0, 1]: safe to take the logarithm of.
  package mutating func uniformPositive() -> Double {
    Double((next() >> 11) + 1) * 0x1.0p-53
  }

  /// Exponential with the given rate (mean 1/rate).
  package mutating func exponential(rate: Double) -> Double {
    -log(uniformPositive()) / rate
  }

  /// Standard normal (Box–Muller; one of the pair is discarded for simplicity).
  package mutating func normal() -> Double {
    let u1 = uniformPositive(), u2 = uniform()
    return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
  }

  /// Log-normal with the given median and log-scale standard deviation.
  package mutating func logNormal(median: Double, sigma: Double) -> Double {
    median * exp(sigma * normal())
  }

  /// Poisson-distributed count (inversion for small means, normal
  /// approximation above 50).
  package mutating func poisson(mean: Double) -> Int {
    guard mean > 0 else { return 0 }
    if mean > 50 { return max(0, Int((mean + mean.squareRoot() * normal()).rounded())) }
    let l = exp(-mean)
    var k = 0
    var p = uniform()
    while p > l { k += 1; p *= uniform() }
    return k
  }
}

/// Hashes that are the same in every process and on every machine (Swift's
/// `Hasher` is randomly seeded per process, so it must never key random streams).
package enum StableHash {
  /// 64-bit FNV-1a of the UTF-8 bytes.
  package static func fnv1a(_ s: String) -> UInt64 {
    var h: UInt64 = 0xCBF2_9CE4_8422_2325
    for b in s.utf8 {
      h ^= UInt64(b)
      h = h &* 0x0000_0100_0000_01B3
    }
    return h
  }

  /// Mixes two 64-bit values (the SplitMix64 finaliser on a rotate-xor).
  package static func combine(_ a: UInt64, _ b: UInt64) -> UInt64 {
    var z = (a ^ ((b << 21) | (b >> 43))) &+ 0x9E37_79B9_7F4A_7C15 &* (b | 1)
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
