import FetchSupport
import Foundation
import Testing

/// The definition ``CSV/number(_:decimals:)`` keeps: `x` rounded to
/// `digits` decimals, integral values below 2^53 as integers, others by
/// `Double.description`.
private func reference(_ x: Double, decimals digits: Int) -> String {
  if x.isNaN { return "NaN" }
  if x.isInfinite { return x < 0 ? "-inf" : "inf" }
  var p = 1.0
  for _ in 0..<digits { p *= 10 }
  let v = (x * p).rounded() / p
  if v.isInfinite { return v < 0 ? "-inf" : "inf" }
  if v == v.rounded(), abs(v) < 9_007_199_254_740_992 { return String(Int64(v)) }
  return v.description
}

/// ``CSV/number(_:decimals:)`` and ``CSV/appendNumber(_:decimals:to:)``,
/// which write the event files without making strings.
@Suite("CSV numbers with decimals")
struct CSVNumberTests {
  @Test("worked examples")
  func workedExamples() {
    let cases: [(Double, Int, String)] = [
      (1.0 / 3, 3, "0.333"), (2.0 / 3, 3, "0.667"), (1.5, 3, "1.5"), (-1.25, 1, "-1.3"), (2.5, 0, "3"),
      (1_700_000_000.1234, 3, "1700000000.123"), (1_700_000_000.0004, 3, "1700000000"), (-0.0004, 3, "0"),
      (0.000_123_45, 8, "0.00012345"), (0.000_01, 6, "1e-05"), (0.0001, 4, "0.0001"), (42, 6, "42"),
      (1e20, 3, "9.999999999999998e+19"), (.infinity, 3, "inf"), (-.infinity, 0, "-inf"), (.nan, 6, "NaN"),
      (1.7976931348623157e308, 3, "inf"), (12.000_5, 3, "12.001"), (0.1 + 0.2, 6, "0.3"),
    ]
    for (x, d, want) in cases {
      #expect(CSV.number(x, decimals: d) == want, "\(x) to \(d) decimals")
    }
  }

  @Test("the same text as Double.description of the rounded value", arguments: 0...9)
  func matchesDefinition(decimals: Int) {
    var rng = SplitMix64(seed: UInt64(decimals), keys: "csv-number")
    var p = 1.0
    for _ in 0..<decimals { p *= 10 }
    var bytes: [UInt8] = []
    for i in 0..<60_000 {
      let x: Double
      switch i % 4 {
      case 0:
        // Log-uniform magnitudes from 1e-9 to 1e18, either sign.
        x = (Bool.random(using: &rng) ? -1 : 1) * pow(10, Double.random(in: -9...18, using: &rng))
      case 1:
        // Exact decimals k / 10^d, as the replay's rounded times and energies.
        x = Double(Int64.random(in: -(1 << 53)...(1 << 53), using: &rng) >> Int.random(in: 0...50, using: &rng)) / p
      case 2:
        // Halfway between two decimals, and a double either side.
        let k = Double(Int64.random(in: 0...(1 << 40), using: &rng) >> Int.random(in: 0...38, using: &rng))
        x = [((k + 0.5) / p).nextDown, (k + 0.5) / p, ((k + 0.5) / p).nextUp][i % 3]
      default:
        // Unix times with a fraction, and small energies.
        x = Bool.random(using: &rng)
          ? Double.random(in: 1.0e9...2.0e9, using: &rng) : Double.random(in: 0...0.01, using: &rng)
      }
      let want = reference(x, decimals: decimals)
      #expect(CSV.number(x, decimals: decimals) == want, "\(x) to \(decimals) decimals")
      bytes.removeAll(keepingCapacity: true)
      bytes.append(UInt8(ascii: ","))
      CSV.appendNumber(x, decimals: decimals, to: &bytes)
      #expect(String(decoding: bytes, as: UTF8.self) == "," + want, "\(x) appended")
    }
  }
}
