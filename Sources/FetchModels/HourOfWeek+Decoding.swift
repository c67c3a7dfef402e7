import Foundation

extension KeyedDecodingContainer {
  /// 168 probabilities in [0, 1], one per local hour of the week (Monday
  /// 00:00 first), as the battery and network models store them.
  /// - Throws: `DecodingError.dataCorrupted` naming the key otherwise.
  func decodeHourOfWeekProbabilities(forKey k: Key) throws -> [Double] {
    let p = try decode([Double].self, forKey: k)
    guard p.count == 168, p.allSatisfy({ $0 >= 0 && $0 <= 1 }) else {
      throw DecodingError.dataCorruptedError(
        forKey: k, in: self, debugDescription: "need 168 probabilities in [0, 1], got \(p.count) values")
    }
    return p
  }
}

extension KeyedDecodingContainer {
  /// A finite number ≥ 0 (a rate, a length in hours), as the battery and
  /// network models store their rates and observed hours.
  /// - Throws: `DecodingError.dataCorrupted` naming the key otherwise.
  func decodeNonNegative(forKey k: Key) throws -> Double {
    let x = try decode(Double.self, forKey: k)
    guard x.isFinite, x >= 0 else {
      throw DecodingError.dataCorruptedError(forKey: k, in: self, debugDescription: "must be finite and ≥ 0, got \(x)")
    }
    return x
  }
}
