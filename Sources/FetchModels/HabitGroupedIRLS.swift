import FetchLinearAlgebra
import Foundation

// MARK: - Grouped IRLS

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
