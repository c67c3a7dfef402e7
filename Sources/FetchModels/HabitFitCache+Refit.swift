import FetchLinearAlgebra
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

/// The training rows of a base fit summarised by their IRLS normal
/// equations at the base fit's β_b: a quadratic approximation of their
/// deviance around β_b,
///
///     D_b(β) ≈ D_b(β_b) − 2 u_bᵀ(β − β_b) + (β − β_b)ᵀ H_b (β − β_b),
///     H_b = X_bᵀ W X_b,  u_b = X_bᵀ(y − μ),  both at β_b,
///
/// so a later refit on more rows only evaluates the rows after them. The
/// error of the approximation is third order in β − β_b.
struct HabitFrozenRows {
  /// Rows summarised: table rows 0..<rows.
  let rows: Int
  /// β_b.
  let beta: [Double]
  /// H_b, 12 × 12 column-major, upper triangle.
  let h: [Double]
  /// X_bᵀ W z at β_b (= H_b β_b + u_b), the right-hand side's share.
  let c: [Double]
  /// u_b.
  let u: [Double]
  /// D_b(β_b).
  let deviance: Double

  /// The same quadratic centred at `b`: D_b(b), u_b − H_b(b − β_b).
  func recentered(at b: [Double]) -> HabitFrozenRows {
    let p = HabitModel.featureCount
    var u = self.u
    for j in 0..<p {
      for k in 0..<p {
        let hjk = j <= k ? h[j + k * p] : h[k + j * p]
        u[j] -= hjk * (b[k] - beta[k])
      }
    }
    return HabitFrozenRows(rows: rows, beta: b, h: h, u: u, deviance: deviance(at: b))
  }

  /// These rows and the block `next` of the rows after them (its own
  /// quadratic, centred at its β): the sum of the two quadratics, centred
  /// at `next`'s β.
  func appending(_ next: HabitFrozenRows) -> HabitFrozenRows {
    let r = recentered(at: next.beta)
    var h = r.h, u = r.u
    for k in h.indices { h[k] += next.h[k] }
    for j in u.indices { u[j] += next.u[j] }
    return HabitFrozenRows(rows: next.rows, beta: next.beta, h: h, u: u, deviance: r.deviance + next.deviance)
  }

  /// - Parameters: `h` the upper triangle of H_b; `u` = u_b; the right-hand
  ///   side's share c = H_b β_b + u_b is computed.
  init(rows: Int, beta: [Double], h: [Double], u: [Double], deviance: Double) {
    let p = HabitModel.featureCount
    self.rows = rows
    self.beta = beta
    self.h = h
    self.u = u
    self.deviance = deviance
    var c = u
    for j in 0..<p {
      for k in 0..<p {
        let hjk = j <= k ? h[j + k * p] : h[k + j * p]
        c[j] += hjk * beta[k]
      }
    }
    self.c = c
  }

  /// The approximate deviance of the frozen rows at β.
  func deviance(at b: [Double]) -> Double {
    let p = HabitModel.featureCount
    var d = [Double](repeating: 0, count: p)
    for j in 0..<p { d[j] = b[j] - beta[j] }
    var quad = 0.0, lin = 0.0
    for k in 0..<p {
      lin += u[k] * d[k]
      var s = h[k + k * p] * d[k]
      for j in 0..<k { s += 2 * h[j + k * p] * d[j] }
      quad += s * d[k]
    }
    return deviance - 2 * lin + quad
  }
}

extension HabitDesignTable {
  /// One pass over table rows `lo..<n` at β (the last one, `n − 1`, with
  /// count `lastY` and log exposure `lastLogExposure`): fills `sums`.
  ///
  /// - Complexity: O(n − lo): one `exp` per row.
  func accumulate(
    _ beta: [Double], lo: Int, n: Int, lastY: Double, lastLogExposure: Double, into sums: inout HabitGroupedSums,
    etaTime: inout [Double]
  ) {
    let d = grouped
    let tc = HabitGroupedDesign.timeCount
    rowsEvaluated += n - lo
    sums.reset()
    // Time part of η per group.
    d.time.withUnsafeBufferPointer { f in
      for g in 0..<d.groups {
        var e = 0.0
        for j in 0..<tc { e += beta[j] * f[g * tc + j] }
        etaTime[g] = e
      }
    }
    let ba = beta[10], bb = beta[11]
    var dev = 0.0, raa = 0.0, rab = 0.0, rbb = 0.0, za = 0.0, zb = 0.0
    d.group.withUnsafeBufferPointer { grp in
      d.recencyApp.withUnsafeBufferPointer { ra in
        d.recencyAny.withUnsafeBufferPointer { rb in
          y.withUnsafeBufferPointer { ys in
            yLogY.withUnsafeBufferPointer { yl in
              logExposure.withUnsafeBufferPointer { le in
                etaTime.withUnsafeBufferPointer { et in
                  sums.perGroup.withUnsafeMutableBufferPointer { s in
                    for i in lo..<max(lo, n - 1) {
                      let yi = ys[i]
                      let g = Int(grp[i])
                      let a = ra[i], b = rb[i]
                      let lin = et[g] + ba * a + bb * b
                      let eta = HabitModel.clampEta(le[i] + lin)
                      let mu = exp(eta)
                      dev += yi > 0 ? 2 * (yl[i] - yi * eta - (yi - mu)) : 2 * mu
                      let wz = mu * lin + (yi - mu)
                      s[4 * g] += mu
                      s[4 * g + 1] += mu * a
                      s[4 * g + 2] += mu * b
                      s[4 * g + 3] += wz
                      raa += mu * a * a
                      rab += mu * a * b
                      rbb += mu * b * b
                      za += wz * a
                      zb += wz * b
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
    sums.deviance = dev
    sums.raa = raa
    sums.rab = rab
    sums.rbb = rbb
    sums.za = za
    sums.zb = zb
    // The last row, with the window's count and exposure.
    if n - 1 >= lo {
      let i = n - 1
      let g = Int(d.group[i])
      let a = d.recencyApp[i], b = d.recencyAny[i]
      let lin = etaTime[g] + ba * a + bb * b
      let eta = HabitModel.clampEta(lastLogExposure + lin)
      let mu = exp(eta)
      let yi = lastY
      sums.lastDeviance = yi > 0 ? 2 * (yi * log(yi) - yi * eta - (yi - mu)) : 2 * mu
      sums.lastGroup = g
      sums.lastW = mu
      sums.lastWZ = mu * lin + (yi - mu)
      sums.lastA = a
      sums.lastB = b
    }
  }

  /// Result of ``groupedIRLS(lo:n:lastY:lastLogExposure:frozen:penalty:mean:start:fitter:)``.
  struct GroupedFit {
    var beta: [Double]
    var iterations: Int
    var converged: Bool
    /// Deviance of the window (the frozen rows' by their quadratic).
    var deviance: Double
    /// The rows' sums at ``beta`` (the window's last row apart).
    var sums: HabitGroupedSums
  }

  /// Penalised Poisson IRLS (as ``PoissonIRLS``: Newton steps solving
  /// `(XᵀWX + Λ)β = XᵀWz + Λm`, step-halving while the penalised deviance
  /// increases, R's convergence rule) on table rows `lo..<n`, plus the
  /// `frozen` rows `0..<lo` by their quadratic approximation.
  ///
  /// - Returns: nil when a Cholesky solve fails or gives coefficients beyond
  ///   ``PoissonIRLS/coefficientBound`` (the caller falls back to the
  ///   row-wise fit, which has the safety nets).
  /// - Complexity: O((n − lo) + groups · 10²) per iteration.
  func groupedIRLS(
    lo: Int, n: Int, lastY: Double, lastLogExposure: Double, frozen: HabitFrozenRows?, penalty: [Double],
    mean: [Double], start: [Double], fitter: HabitFitter
  ) -> GroupedFit? {
    let p = HabitModel.featureCount
    var sums = HabitGroupedSums(groups: grouped.groups)
    var etaTime = [Double](repeating: 0, count: grouped.groups)
    func objective(_ b: [Double], _ s: inout HabitGroupedSums) -> (Double, Double) {
      accumulate(b, lo: lo, n: n, lastY: lastY, lastLogExposure: lastLogExposure, into: &s, etaTime: &etaTime)
      var dev = s.totalDeviance
      if let frozen { dev += frozen.deviance(at: b) }
      var pen = 0.0
      for j in 0..<p {
        let d = b[j] - mean[j]
        pen += penalty[j] * d * d
      }
      return (dev, dev + pen)
    }
    var beta = start
    var (dev, pdev) = objective(beta, &sums)
    var next = HabitGroupedSums(groups: grouped.groups)
    var h = [Double](repeating: 0, count: p * p)
    var c = [Double](repeating: 0, count: p)
    var iterations = 0
    var converged = false
    while iterations < fitter.maxIterations {
      iterations += 1
      for k in h.indices { h[k] = frozen?.h[k] ?? 0 }
      for j in 0..<p { c[j] = frozen?.c[j] ?? 0 }
      sums.addNormalEquations(grouped, h: &h, c: &c)
      for j in 0..<p {
        h[j + j * p] += penalty[j]
        c[j] += penalty[j] * mean[j]
      }
      guard LinearAlgebra.smallCholeskySolve(&h, &c, n: p),
        c.allSatisfy({ abs($0) <= PoissonIRLS.coefficientBound })
      else { return nil }
      var step = c
      var accepted = false
      var newDev = dev, newPdev = pdev
      for _ in 0..<30 {
        (newDev, newPdev) = objective(step, &next)
        if newPdev.isFinite && newPdev <= pdev + fitter.tolerance * (abs(pdev) + 0.1) {
          accepted = true
          break
        }
        for j in 0..<p { step[j] = (step[j] + beta[j]) / 2 }
      }
      guard accepted else { break }
      let change = abs(newPdev - pdev) / (abs(newPdev) + 0.1)
      beta = step
      swap(&sums, &next)
      dev = newDev
      pdev = newPdev
      if change < fitter.tolerance {
        converged = true
        break
      }
    }
    return GroupedFit(beta: beta, iterations: iterations, converged: converged, deviance: dev, sums: sums)
  }

  /// The frozen rows `..<rows` whose sums at β are `sums` (the rows
  /// before a window's last, whose own sums are left out).
  func frozenRows(_ sums: HabitGroupedSums, rows: Int, at beta: [Double]) -> HabitFrozenRows {
    let p = HabitModel.featureCount
    var h = [Double](repeating: 0, count: p * p)
    var c = [Double](repeating: 0, count: p)
    sums.addNormalEquations(grouped, h: &h, c: &c, includingLast: false)
    // u = c − H β (H symmetric, upper triangle stored).
    var u = c
    for j in 0..<p {
      for k in 0..<p {
        let hjk = j <= k ? h[j + k * p] : h[k + j * p]
        u[j] -= hjk * beta[k]
      }
    }
    return HabitFrozenRows(rows: rows, beta: beta, h: h, u: u, deviance: sums.deviance)
  }
}

// MARK: - Fast fits

extension HabitDesignTable {
  /// The fast fit of the window [trace start, `to`) given the base window
  /// [trace start, `base`) (a policy's training part):
  ///
  /// - `to ≤ base`: the penalised fit of the window, by grouped IRLS from
  ///   the prior mean (the same optimum as
  ///   ``fit(to:prior:fitter:start:)`` up to the IRLS tolerance);
  /// - `to > base`: a refit from the previous link of a daily chain, the
  ///   window ending a day earlier (or the base window, when that is not
  ///   after the base): the previous window's complete rows enter by their
  ///   normal equations at the fits that had them as new rows
  ///   (``HabitFrozenRows``, each day's rows folded in at that day's fit),
  ///   the rows after them exactly; grouped IRLS from the previous fit's β.
  ///   A nightly refit thus evaluates about one day of rows per iteration.
  ///
  /// A pure function of (`to`, `base`, `prior`, `fitter`) and the table
  /// (the chain's links are fixed by `to` and `base`): it does not depend
  /// on which fits were asked for before. When a grouped solve fails it
  /// returns the row-wise ``fit(to:prior:fitter:start:)``, which has the
  /// safety nets.
  ///
  /// - Complexity: O(rows after the previous link + groups · 10²) per IRLS
  ///   iteration, plus O(window rows) adds for the prior mean; the links
  ///   not computed yet first (each kept).
  func fastFit(to: Double, base: Double, prior: HabitModel?, fitter: HabitFitter) -> HabitModel {
    base < to ? chainFit(to: to, base: base, prior: prior, fitter: fitter).model : baseFit(base: to, prior: prior, fitter: fitter).model
  }

  /// The chain link of `to` (> `base`): its fit, and the window's complete
  /// rows as frozen rows for the next link (nil when a grouped fit failed).
  func chainFit(to: Double, base: Double, prior: HabitModel?, fitter: HabitFitter) -> (model: HabitModel, frozen: HabitFrozenRows?) {
    let key = ChainKey(to: to.bitPattern, base: base.bitPattern, fitter: fitter)
    if let c = chain[key] { return c }
    let previous = to - 86_400
    let prev =
      previous > base
      ? chainFit(to: previous, base: base, prior: prior, fitter: fitter) : baseFit(base: base, prior: prior, fitter: fitter)
    let n = HabitBins(from: bins.from, to: to, binSeconds: bins.binSeconds).count
    let result: (model: HabitModel, frozen: HabitFrozenRows?)
    if let f = prev.frozen, f.rows < n, let g = groupedWindowFit(to: to, frozen: f, prior: prior, fitter: fitter) {
      // The rows between the previous window's last and this one's, at this fit.
      result = (g.model, n - 1 > f.rows ? f.appending(frozenRows(g.sums, rows: n - 1, at: g.model.coefficients)) : f)
    } else if prev.frozen == nil, n >= 2, HabitBins(from: bins.from, to: max(previous, base), binSeconds: bins.binSeconds).count < 2,
      let g = groupedWindowFit(to: to, frozen: nil, prior: prior, fitter: fitter)
    {
      // The previous window had too few rows to freeze (an empty training
      // part): this link starts the chain, as a base fit does, so later
      // links evaluate only their new rows.
      result = (g.model, frozenRows(g.sums, rows: n - 1, at: g.model.coefficients))
    } else {
      result = (fit(to: to, prior: prior, fitter: fitter, start: prev.model.coefficients), nil)
    }
    chain[key] = result
    return result
  }

  /// The base fit of [trace start, `base`) and its frozen rows (nil when the
  /// grouped fit failed or the base has fewer than 2 rows).
  func baseFit(base: Double, prior: HabitModel?, fitter: HabitFitter) -> (model: HabitModel, frozen: HabitFrozenRows?) {
    let key = BaseKey(to: base.bitPattern, fitter: fitter)
    if let b = bases[key] { return b }
    let nb = HabitBins(from: bins.from, to: base, binSeconds: bins.binSeconds).count
    let result: (model: HabitModel, frozen: HabitFrozenRows?)
    if nb >= 2 && base <= bins.to, let g = groupedWindowFit(to: base, frozen: nil, prior: prior, fitter: fitter) {
      result = (g.model, frozenRows(g.sums, rows: nb - 1, at: g.model.coefficients))
    } else if nb >= 1 && base <= bins.to {
      result = (fit(to: base, prior: prior, fitter: fitter, start: nil), nil)
    } else {
      // No rows before the base: nothing to freeze; a placeholder start.
      result = (HabitFitter.constantModel(opens: 0, exposure: 0, binSeconds: bins.binSeconds, diagnostics: .init()), nil)
    }
    bases[key] = result
    return result
  }

  /// Grouped IRLS on the window [trace start, `to`), the rows of `frozen` by
  /// their normal equations; nil when a solve failed. Also returns the
  /// sums of the rows evaluated, at the fit (``HabitGroupedSums``).
  func groupedWindowFit(
    to: Double, frozen: HabitFrozenRows?, prior: HabitModel?, fitter: HabitFitter
  ) -> (model: HabitModel, sums: HabitGroupedSums)? {
    let window = HabitBins(from: bins.from, to: to, binSeconds: bins.binSeconds)
    let n = window.count
    guard n > 0, n <= bins.count, (frozen?.rows ?? 0) < n else { return nil }
    let p = HabitModel.featureCount
    let lastY = Double(lastRowOpens(to: to, rows: n))
    let lastExposure = window.exposure(n - 1)
    let opensInWindow = opens(from: bins.from, to: to)
    // Prior mean, as HabitFitter.fit(x:y:exposure:opens:prior:start:priorShape:).
    var mean = [Double](repeating: 0, count: p)
    if let prior { for j in 1..<p { mean[j] = prior.coefficients[j] } }
    let scaled = scaledExposure(rows: n, last: lastExposure, prior: prior)
    mean[0] = log(HabitFitter.smoothedRate(opens: Double(opensInWindow), exposure: scaled))
    guard
      let r = groupedIRLS(
        lo: frozen?.rows ?? 0, n: n, lastY: lastY, lastLogExposure: log(lastExposure), frozen: frozen,
        penalty: fitter.penalty, mean: mean, start: frozen?.beta ?? mean, fitter: fitter)
    else { return nil }
    let model = HabitModel(
      coefficients: r.beta, binSeconds: bins.binSeconds,
      diagnostics: .init(
        trainingOpens: opensInWindow, bins: n, iterations: r.iterations, converged: r.converged, fallback: .none,
        deviance: r.deviance.isFinite ? r.deviance : 0))
    return (model, r.sums)
  }
}

extension HabitFitCache {
  /// A fast fit of `sample`'s window for the learning policies: its training
  /// part [trace start, `base`) fitted once, each later window refitted from
  /// it, only the rows after the training part evaluated
  /// (``HabitDesignTable/fastFit(to:base:prior:fitter:)``). `sample.to ≤
  /// base` is the training fit itself.
  ///
  /// The same optimum as ``fit(_:prior:fitter:start:)`` for the training
  /// window (up to the IRLS tolerance); refits approximate the training
  /// rows' deviance by its quadratic at the training fit (held-out
  /// log-likelihood within 0.01 % of full refits on the synthetic
  /// population, tested). Computed once per distinct (user, app, window,
  /// base, fitter) and shared by every learning policy of the run; a pure
  /// function of those, whichever policy asks first. Samples the design
  /// tables do not cover are fitted by ``fit(_:prior:fitter:start:)``.
  ///
  /// - Complexity: O(rows since `base`) per IRLS iteration after the
  ///   training fit.
  package func refit(_ sample: HabitSample, base: Double, prior: HabitModel?, fitter: HabitFitter) -> HabitModel {
    refit(
      user: sample.trace.user, app: sample.app, from: sample.from, to: sample.to, base: base, prior: prior,
      fitter: fitter
    ) { sample }
  }

  /// ``refit(_:base:prior:fitter:)`` of the sample of `user`'s `app` over
  /// [`from`, `to`) that `sample` makes: called only when neither a fit
  /// nor a design table covers the window, so a caller need not assemble
  /// the trace (a policy's training part and the opens since) otherwise.
  package func refit(
    user: String, app: Int32, from: Double, to: Double, base: Double, prior: HabitModel?, fitter: HabitFitter,
    sample: () -> HabitSample
  ) -> HabitModel {
    let key = FastKey(
      window: Key(user: user, app: app, from: from.bitPattern, to: to.bitPattern, fitter: fitter, start: nil),
      base: base.bitPattern)
    lock.lock()
    if let m = fastFits[key] {
      reused += 1
      lock.unlock()
      return m
    }
    guard let table = table(user: user, app: app, from: from, to: to, fitter: fitter) else {
      lock.unlock()
      return fit(sample(), prior: prior, fitter: fitter)
    }
    defer { lock.unlock() }
    let m = table.fastFit(to: to, base: base, prior: prior, fitter: fitter)
    fastFits[key] = m
    computed += 1
    return m
  }
}
