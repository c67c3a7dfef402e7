import FetchTraces
import Foundation

// MARK: - Grouped design

/// The time-of-day groups of a user's design rows.
///
/// The first 10 features of a row (intercept, the three hour-of-day Fourier
/// pairs, the weekend flag and the weekend × first pair) depend only on the
/// local hour of the bin start and the weekend flag: 15-min bins take 96 ×
/// 2 distinct values however long the window. Only the two recency features
/// are the row's own. So the IRLS sums split into per-group sums of the
/// weights (O(rows), a few adds per row) and a small product over the
/// groups (O(groups · 10²)), instead of O(rows · 12²):
///
///     XᵀWX[j,k] = Σ_g f_gj f_gk Σ_{i∈g} wᵢ          (j, k < 10)
///     XᵀWX[j,r] = Σ_g f_gj Σ_{i∈g} wᵢ r_i           (j < 10, r recency)
///     XᵀWz[j]   = Σ_g f_gj Σ_{i∈g} wᵢ zᵢ
///
/// The same sums as the row-wise ones up to rounding (a different order of
/// additions). Rows are grouped by the bit patterns of (sin₁, cos₁,
/// weekend), which determine the other seven time features
/// (``HabitModel/forEachFeature(weekend:sin:cos:recency:_:)``).
struct HabitTimeGroups {
  /// Number of time-of-day features (indices 0..<10 of ``HabitModel/featureNames``).
  static let timeCount = 10
  /// Number of (j ≤ k) pairs of time features: 55.
  static let pairCount = 55

  /// Time features of each group, ``timeCount`` per group, row-major.
  let time: [Double]
  /// Number of groups.
  let count: Int
  /// f_gj · f_gk for j ≤ k < 10 of each group, ``pairCount`` per group, in
  /// the order k = 0..<10, j = 0...k, each group's padded with zeros to
  /// ``pairStride`` (for 8-wide vector adds).
  let outer: [Double]
  /// Doubles per group in ``outer``: ``pairCount`` rounded up to 8.
  static let pairStride = 56
  /// The group of each row.
  let group: [Int32]

  /// Groups the `rows` rows of a column-major 12-feature design.
  ///
  /// - Complexity: O(rows); a hash lookup only where a row's group differs
  ///   from the row one day earlier.
  init(x: [Double], rows n: Int, binSeconds: Double) {
    struct Key: Hashable {
      var s: UInt64, c: UInt64, w: UInt64
    }
    var index: [Key: Int32] = [:]
    var time: [Double] = []
    var group = [Int32](repeating: 0, count: n)
    let perDay = binSeconds > 0 && (86_400 / binSeconds).rounded() == 86_400 / binSeconds ? Int(86_400 / binSeconds) : 0
    func key(_ i: Int) -> Key {
      Key(s: x[i + n].bitPattern, c: x[i + 2 * n].bitPattern, w: x[i + 7 * n].bitPattern)
    }
    for i in 0..<n {
      let k = key(i)
      if perDay > 0 && i >= perDay && key(i - perDay) == k {
        group[i] = group[i - perDay]
        continue
      }
      if let g = index[k] {
        group[i] = g
        continue
      }
      let g = Int32(index.count)
      index[k] = g
      group[i] = g
      for j in 0..<Self.timeCount { time.append(x[i + j * n]) }
    }
    self.time = time
    count = index.count
    self.group = group
    var outer = [Double](repeating: 0, count: index.count * Self.pairStride)
    for g in 0..<index.count {
      var q = g * Self.pairStride
      for k in 0..<Self.timeCount {
        for j in 0...k {
          outer[q] = time[g * Self.timeCount + j] * time[g * Self.timeCount + k]
          q += 1
        }
      }
    }
    self.outer = outer
  }
}

/// The columns of a user's design that do not depend on the app: the bins
/// of the whole trace, their time features and `recency_any`, their
/// exposures, and the time-of-day groups. Built once per user and shared
/// by the apps' ``HabitDesignTable``s.
final class HabitUserDesign {
  let bins: HabitBins
  /// `bins.count` × 12, column-major; `recency_app` (column 10) is 0, a
  /// placeholder (each app's table has its own column).
  let x: [Double]
  let exposure: [Double]
  /// log of each exposure (the same for every app's table), on first use.
  private(set) lazy var logExposure: [Double] = exposure.map { log($0) }
  /// The rows' time-of-day groups, built on first use.
  private(set) lazy var groups = HabitTimeGroups(x: x, rows: bins.count, binSeconds: bins.binSeconds)

  /// - Complexity: O(events + bins).
  init(trace: UserTrace, binSeconds: Double) {
    bins = HabitBins(from: trace.start, to: trace.end, binSeconds: binSeconds)
    let n = bins.count
    var x = [Double](repeating: 0, count: n * HabitModel.featureCount)
    var y = [Double](repeating: 0, count: n)
    var exposure = [Double](repeating: 0, count: n)
    // An app index no event has: the app-independent columns, exactly as for any app.
    let sample = HabitSample(trace: trace, app: Int32.min, from: trace.start, to: trace.end)
    _ = HabitModel.fillDesign(
      sample, bins: bins, x: &x, y: &y, exposure: &exposure, rowOffset: 0, totalRows: n, appRecency: false)
    self.x = x
    self.exposure = exposure
  }
}

/// A ``HabitDesignTable``'s rows for the grouped fits: its time-of-day
/// groups (``HabitTimeGroups``) and its recency columns.
struct HabitGroupedDesign {
  static let timeCount = HabitTimeGroups.timeCount
  static let pairCount = HabitTimeGroups.pairCount

  let time: [Double]
  let groups: Int
  let outer: [Double]
  let group: [Int32]
  /// `recency_app` and `recency_any` of each table row.
  let recencyApp: [Double]
  let recencyAny: [Double]

  init(groups g: HabitTimeGroups, recencyApp: [Double], recencyAny: [Double]) {
    time = g.time
    groups = g.count
    outer = g.outer
    group = g.group
    self.recencyApp = recencyApp
    self.recencyAny = recencyAny
  }
}

/// Per-row sums of one IRLS pass over a grouped design at a β: the
/// deviance, and the pieces of XᵀWX and XᵀWz (W = diag(μ), z = η + (y − μ)/μ,
/// η without offset).
///
/// The window's last row (possibly partial, with its own count and
/// exposure) is kept apart from the others, so the sums of the rows before
/// it are those of complete rows: the frozen rows of the next refit, at no
/// extra pass.
struct HabitGroupedSums {
  /// Poisson deviance of the rows summed, the last row excluded.
  var deviance = 0.0
  /// Per group: Σ w, Σ w·r_app, Σ w·r_any, Σ w·z, interleaved (4 per group);
  /// the last row excluded.
  var perGroup: [Double]
  /// Σ w·r_app², Σ w·r_app·r_any, Σ w·r_any², Σ w·z·r_app, Σ w·z·r_any;
  /// the last row excluded.
  var raa = 0.0, rab = 0.0, rbb = 0.0, za = 0.0, zb = 0.0
  /// The last row: its group (−1: not summed), w, w·z, r_app, r_any and
  /// deviance.
  var lastGroup = -1
  var lastW = 0.0, lastWZ = 0.0, lastA = 0.0, lastB = 0.0, lastDeviance = 0.0

  /// The deviance of every row summed, the last included.
  var totalDeviance: Double { deviance + lastDeviance }

  init(groups: Int) {
    perGroup = [Double](repeating: 0, count: 4 * groups)
  }

  mutating func reset() {
    deviance = 0
    for k in perGroup.indices { perGroup[k] = 0 }
    raa = 0; rab = 0; rbb = 0; za = 0; zb = 0
    lastGroup = -1
    lastW = 0; lastWZ = 0; lastA = 0; lastB = 0; lastDeviance = 0
  }

  /// Adds XᵀWX (upper triangle, 12 × 12 column-major) and XᵀWz to `h` and `c`.
  ///
  /// - Complexity: O(groups · 10²), as contiguous multiply-adds over the
  ///   groups' precomputed ``HabitGroupedDesign/outer`` products.
  func addNormalEquations(_ d: HabitGroupedDesign, h: inout [Double], c: inout [Double], includingLast: Bool = true) {
    let p = HabitModel.featureCount
    let tc = HabitGroupedDesign.timeCount
    let ps = HabitTimeGroups.pairStride
    // Σ_g S_g f_g f_gᵀ (upper triangle, packed), and the cross sums: the
    // same products and the same order of additions in each lane as one
    // scalar sum per entry (8-wide vectors add lane by lane, without
    // fused multiply-adds), so the same bits.
    var pairs = [Double](repeating: 0, count: ps)
    var cross = [Double](repeating: 0, count: 3 * tc)
    typealias V8 = SIMD8<Double>
    typealias V2 = SIMD2<Double>
    var a0 = V8(), a1 = V8(), a2 = V8(), a3 = V8(), a4 = V8(), a5 = V8(), a6 = V8()
    var xa = V8(), xb = V8(), xz = V8(), xa2 = V2(), xb2 = V2(), xz2 = V2()
    d.time.withUnsafeBytes { f in
      d.outer.withUnsafeBytes { o in
        perGroup.withUnsafeBufferPointer { s in
          for g in 0..<d.groups {
            let w = s[4 * g], wa = s[4 * g + 1], wb = s[4 * g + 2], wz = s[4 * g + 3]
            if w == 0 && wz == 0 { continue }
            let og = 8 * g * ps
            let wv = V8(repeating: w)
            a0 += wv * o.loadUnaligned(fromByteOffset: og, as: V8.self)
            a1 += wv * o.loadUnaligned(fromByteOffset: og + 64, as: V8.self)
            a2 += wv * o.loadUnaligned(fromByteOffset: og + 128, as: V8.self)
            a3 += wv * o.loadUnaligned(fromByteOffset: og + 192, as: V8.self)
            a4 += wv * o.loadUnaligned(fromByteOffset: og + 256, as: V8.self)
            a5 += wv * o.loadUnaligned(fromByteOffset: og + 320, as: V8.self)
            a6 += wv * o.loadUnaligned(fromByteOffset: og + 384, as: V8.self)
            let fg = 8 * g * tc
            let f8 = f.loadUnaligned(fromByteOffset: fg, as: V8.self)
            let f2 = f.loadUnaligned(fromByteOffset: fg + 64, as: V2.self)
            xa += V8(repeating: wa) * f8
            xb += V8(repeating: wb) * f8
            xz += V8(repeating: wz) * f8
            xa2 += V2(repeating: wa) * f2
            xb2 += V2(repeating: wb) * f2
            xz2 += V2(repeating: wz) * f2
          }
        }
      }
    }
    for l in 0..<8 {
      pairs[l] = a0[l]
      pairs[8 + l] = a1[l]
      pairs[16 + l] = a2[l]
      pairs[24 + l] = a3[l]
      pairs[32 + l] = a4[l]
      pairs[40 + l] = a5[l]
      pairs[48 + l] = a6[l]
      cross[l] = xa[l]
      cross[tc + l] = xb[l]
      cross[2 * tc + l] = xz[l]
    }
    for l in 0..<2 {
      cross[8 + l] = xa2[l]
      cross[tc + 8 + l] = xb2[l]
      cross[2 * tc + 8 + l] = xz2[l]
    }
    if includingLast && lastGroup >= 0 {
      let og = lastGroup * ps, fg = lastGroup * tc
      for q in 0..<HabitGroupedDesign.pairCount { pairs[q] += lastW * d.outer[og + q] }
      for k in 0..<tc {
        let fk = d.time[fg + k]
        cross[k] += lastW * lastA * fk
        cross[tc + k] += lastW * lastB * fk
        cross[2 * tc + k] += lastWZ * fk
      }
    }
    var q = 0
    for k in 0..<tc {
      for j in 0...k {
        h[j + k * p] += pairs[q]
        q += 1
      }
      h[k + 10 * p] += cross[k]
      h[k + 11 * p] += cross[tc + k]
      c[k] += cross[2 * tc + k]
    }
    h[10 + 10 * p] += raa
    h[10 + 11 * p] += rab
    h[11 + 11 * p] += rbb
    c[10] += za
    c[11] += zb
    if includingLast && lastGroup >= 0 {
      h[10 + 10 * p] += lastW * lastA * lastA
      h[10 + 11 * p] += lastW * lastA * lastB
      h[11 + 11 * p] += lastW * lastB * lastB
      c[10] += lastWZ * lastA
      c[11] += lastWZ * lastB
    }
  }
}
