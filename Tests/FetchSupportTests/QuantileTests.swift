import FetchSupport
import Foundation
import Testing

/// ``Quantile/type7(zeros:selectingIn:_:placed:)`` for ascending `qs` in
/// turn on one buffer, as the replay calls it.
private func type7(zeros: Int, selecting v: inout [Double], _ qs: [Double]) -> [Double] {
  v.withUnsafeMutableBufferPointer { p in
    var placed = 0
    return qs.map { Quantile.type7(zeros: zeros, selectingIn: p, $0, placed: &placed) }
  }
}

/// The one quantile definition (type 7), by hand and by its properties.
@Suite("Quantile (type 7)")
struct QuantileTests {
  @Test("worked examples: [1, 2, 3, 4] at 0, 0.25, 0.5, 0.9, 1; one value; none")
  func workedExamples() {
    let v = [1.0, 2, 3, 4]
    // h = 3q: q = 0.25 → 0.75 → 1 + 0.75·1; q = 0.9 → 2.7 → 3 + 0.7·1.
    let want: [(Double, Double)] = [(0, 1), (0.25, 1.75), (0.5, 2.5), (0.9, 3.7), (1, 4)]
    for (q, x) in want { #expect(abs(Quantile.type7(sorted: v, q) - x) < 1e-12, "q = \(q)") }
    #expect(Quantile.type7(sorted: [7], 0.3) == 7)
    #expect(Quantile.type7(sorted: [], 0.5).isNaN)
    #expect(Quantile.type7(zeros: 0, thenSorted: [], 0.5).isNaN)
  }

  @Test("implicit zeros give the padded array's quantile", arguments: [0, 1, 3, 10])
  func zeroPadded(zeros: Int) {
    var rng = SplitMix64(seed: UInt64(zeros), keys: "q")
    let v = (0..<7).map { _ in rng.uniform() * 10 }.sorted()
    let padded = [Double](repeating: 0, count: zeros) + v
    for q in [0, 0.1, 0.5, 0.9, 0.99, 1] {
      #expect(abs(Quantile.type7(zeros: zeros, thenSorted: v, q) - Quantile.type7(sorted: padded, q)) < 1e-12)
    }
  }

  @Test("selection gives exactly the sorted quantiles: ties, zeros, sizes across the insertion-sort cutoff", arguments: 1...40)
  func selectionMatchesSort(seed: UInt64) {
    var rng = SplitMix64(seed: seed, keys: "select")
    let n = Int(rng.uniform() * 300)
    let zeros = Int(rng.uniform() * 20)
    // Few distinct values for some seeds (ties around the pivots).
    let distinct = seed % 3 == 0 ? 4.0 : 1e6
    let v = (0..<n).map { _ in (1 + (rng.uniform() * distinct).rounded(.down)) * 0.37 }
    let sorted = v.sorted()
    let qs = [0.0, 0.1, 0.5, 0.5, 0.9, 0.99, 1]
    var w = v
    let got = type7(zeros: zeros, selecting: &w, qs)
    for (q, x) in zip(qs, got) {
      let want = Quantile.type7(zeros: zeros, thenSorted: sorted, q)
      #expect(x == want || (x.isNaN && want.isNaN), "n \(n), zeros \(zeros), q \(q)")
    }
    #expect(w.sorted() == sorted)  // reordered, nothing lost
  }

  @Test("selection with every value tied, or two values, at every quantile: exact, and nothing lost")
  func selectionTies() {
    for v in [[Double](repeating: 2.5, count: 5_000), (0..<4_001).map { $0 % 2 == 0 ? 1.0 : 7.0 }] {
      let sorted = v.sorted()
      let qs = [0.0, 0.25, 0.5, 0.75, 0.9, 0.99, 1]
      var w = v
      let got = type7(zeros: 3, selecting: &w, qs)
      for (q, x) in zip(qs, got) { #expect(x == Quantile.type7(zeros: 3, thenSorted: sorted, q), "q = \(q)") }
      #expect(w.sorted() == sorted)
    }
  }

  @Test("selection worked example: 2 zeros then 5, 1, 4, 2, 3")
  func selectionWorkedExample() {
    // Padded and sorted: 0, 0, 1, 2, 3, 4, 5 (n = 7). q = 0.5: h = 3 → 2;
    // q = 0.9: h = 5.4 → 4 + 0.4 · (5 − 4) = 4.4; q = 0.1: h = 0.6 → 0 + 0.6 · (0 − 0) = 0.
    var v = [5.0, 1, 4, 2, 3]
    let got = type7(zeros: 2, selecting: &v, [0.1, 0.5, 0.9])
    #expect(got[0] == 0 && got[1] == 2 && abs(got[2] - 4.4) < 1e-12)
    var empty: [Double] = []
    #expect(type7(zeros: 0, selecting: &empty, [0.5])[0].isNaN)
  }

  @Test("monotone in q, between the minimum and the maximum", arguments: 1...20)
  func monotone(seed: UInt64) {
    var rng = SplitMix64(seed: seed, keys: "monotone")
    let n = 1 + Int(rng.uniform() * 50)
    let v = (0..<n).map { _ in rng.uniform() * 100 - 50 }.sorted()
    var last = -Double.infinity
    for i in 0...100 {
      let x = Quantile.type7(sorted: v, Double(i) / 100)
      #expect(x >= last && x >= v.first! && x <= v.last!)
      last = x
    }
  }
}
