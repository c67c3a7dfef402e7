import FetchLinearAlgebra
import FetchSupport
import FetchTraces
import Foundation

// MARK: - IRLS

/// Penalised Poisson IRLS on an explicit design matrix (log link).
///
/// Internal so tests can fit a design directly; ``HabitFitter`` builds the
/// designs from traces.
enum PoissonIRLS {
  struct Result {
    /// Final coefficients; finite. The start when ``failed``.
    var beta: [Double]
    /// Linear solves performed.
    var iterations: Int
    var converged: Bool
    /// The most drastic linear-algebra fallback any step used.
    var fallback: HabitModel.Fallback
    /// Unpenalised Poisson deviance at ``beta``.
    var deviance: Double
    /// Penalised deviance at ``beta``.
    var penalizedDeviance: Double
    /// True when every solver failed at some step (``beta`` is then the start).
    var failed: Bool
    /// The last linear-algebra error seen, in words.
    var lastError: String?
    /// √diag((Xᵀ W X + Λ)⁻¹) at ``beta`` when requested: the standard errors
    /// of an unpenalised fit.
    var standardErrors: [Double]?
  }

  /// Solutions with a coefficient beyond this are treated as failed solves
  /// (exp(10⁴) is no rate; such values come from near-singular systems).
  static let coefficientBound = 1e4

  /// Minimises `D(β) + (β − m)ᵀ diag(penalty) (β − m)` from `start`.
  ///
  /// - Parameters:
  ///   - x: m × n design; `y`: m counts ≥ 0; `offset`: m log exposures/offsets.
  ///   - penalty: n ridge terms ≥ 0 (0 = unpenalised); `mean`: n prior means.
  /// - Complexity: O(m · n² + n³) per iteration.
  static func fit(
    x: Matrix, y: [Double], offset: [Double], penalty: [Double], mean: [Double], start: [Double],
    maxIterations: Int, tolerance: Double, computeStandardErrors: Bool = false
  ) -> Result {
    let m = x.rows, n = x.cols
    precondition(y.count == m && offset.count == m, "PoissonIRLS: y and offset need one entry per row")
    precondition(penalty.count == n && mean.count == n && start.count == n, "PoissonIRLS: one penalty, mean and start per column")
    var beta = start
    guard LinearAlgebra.isFinite(x) else {
      return Result(
        beta: start, iterations: 0, converged: false, fallback: .prior, deviance: .nan, penalizedDeviance: .nan,
        failed: true, lastError: "the design matrix has a non-finite element")
    }
    // y log y, the constant part of the deviance.
    let yLogY = y.map { $0 > 0 ? $0 * log($0) : 0 }
    var mu = [Double](repeating: 0, count: m)
    var lin = linearPredictor(x, beta)
    var (dev, pdev) = objective(
      lin: lin, y: y, yLogY: yLogY, offset: offset, beta: beta, penalty: penalty, mean: mean, mu: &mu)
    var iterations = 0
    var converged = false
    var fallback = HabitModel.Fallback.none
    var lastError: String?
    var wz = [Double](repeating: 0, count: m)
    var newMu = mu
    var scratch: [Double] = []

    while iterations < maxIterations {
      iterations += 1
      for i in 0..<m { wz[i] = mu[i] * lin[i] + (y[i] - mu[i]) }  // W z, z = lin + (y − μ)/μ
      guard
        let solved = solveStep(
          x: x, w: mu, wz: wz, penalty: penalty, mean: mean, scratch: &scratch, lastError: &lastError)
      else {
        return Result(
          beta: start, iterations: iterations, converged: false, fallback: max(fallback, .prior),
          deviance: dev, penalizedDeviance: pdev, failed: true, lastError: lastError)
      }
      let (candidate, used) = solved
      fallback = max(fallback, used)
      // Step-halving while the penalised deviance increases (or is not finite).
      var step = candidate
      var accepted = false
      var newLin = lin, newDev = dev, newPdev = pdev
      for _ in 0..<30 {
        newLin = linearPredictor(x, step)
        (newDev, newPdev) = objective(
          lin: newLin, y: y, yLogY: yLogY, offset: offset, beta: step, penalty: penalty, mean: mean, mu: &newMu)
        if newPdev.isFinite && newPdev <= pdev + tolerance * (abs(pdev) + 0.1) {
          accepted = true
          break
        }
        for j in 0..<n { step[j] = (step[j] + beta[j]) / 2 }
      }
      guard accepted else { break }  // no descent from here: keep β
      let change = abs(newPdev - pdev) / (abs(newPdev) + 0.1)
      beta = step
      lin = newLin
      swap(&mu, &newMu)
      dev = newDev
      pdev = newPdev
      if change < tolerance {
        converged = true
        break
      }
    }
    var result = Result(
      beta: beta, iterations: iterations, converged: converged, fallback: fallback,
      deviance: dev, penalizedDeviance: pdev, failed: false, lastError: lastError)
    if computeStandardErrors {
      result.standardErrors = standardErrors(x: x, lin: lin, offset: offset, penalty: penalty)
    }
    return result
  }

  /// ``fit(x:y:offset:penalty:mean:start:maxIterations:tolerance:computeStandardErrors:)``
  /// on a design given as a list of rows (for tests, which do not see
  /// `FetchLinearAlgebra`).
  static func fit(
    rows: [[Double]], y: [Double], offset: [Double], penalty: [Double], mean: [Double], start: [Double],
    maxIterations: Int, tolerance: Double, computeStandardErrors: Bool = false
  ) -> Result {
    fit(
      x: Matrix(rows: rows), y: y, offset: offset, penalty: penalty, mean: mean, start: start,
      maxIterations: maxIterations, tolerance: tolerance, computeStandardErrors: computeStandardErrors)
  }

  /// One IRLS step: solves (Xᵀ W X + Λ) β = Xᵀ(W z) + Λ m, with the fallbacks
  /// Cholesky → Cholesky with 10 Λ + δ I → QR on the augmented weighted system.
  static func solveStep(
    x: Matrix, w: [Double], wz: [Double], penalty: [Double], mean: [Double], scratch: inout [Double],
    lastError: inout String?
  ) -> ([Double], HabitModel.Fallback)? {
    let n = x.cols
    /// `solve()`'s coefficients, tagged `fallback`, when they are finite
    /// and within ``coefficientBound``; else nil, with the reason in
    /// `lastError`.
    func attempt(_ fallback: HabitModel.Fallback, _ what: String, _ solve: () throws -> [Double]) -> (
      [Double], HabitModel.Fallback
    )? {
      do {
        let b = try solve()
        if b.allSatisfy({ $0.isFinite && abs($0) <= coefficientBound }) { return (b, fallback) }
        lastError = what + " out of range"
      } catch {
        lastError = "\(error)"
      }
      return nil
    }
    do {
      var (gram, rhs) = try LinearAlgebra.normalEquations(x, weights: w, wz, scratch: &scratch)
      let base = gram
      for j in 0..<n {
        gram[j, j] += penalty[j]
        rhs[j] += penalty[j] * mean[j]
      }
      let plain = attempt(.none, "Cholesky solution") { try LinearAlgebra.symmetricPositiveDefiniteSolve(gram, rhs) }
      if let solved = plain { return solved }
      // 10× the ridge, plus a small one relative to the mean diagonal so that
      // unpenalised columns get some too.
      var trace = 0.0
      for j in 0..<n { trace += base[j, j] }
      let delta = 1e-8 * max(trace / Double(max(n, 1)), 1e-12)
      var gram10 = base
      var rhs10 = rhs
      for j in 0..<n {
        gram10[j, j] += 10 * penalty[j] + delta
        rhs10[j] += 9 * penalty[j] * mean[j]
      }
      let larger = attempt(.largerRidge, "Cholesky solution with a larger ridge") {
        try LinearAlgebra.symmetricPositiveDefiniteSolve(gram10, rhs10)
      }
      if let solved = larger { return solved }
    } catch {
      lastError = "\(error)"
    }
    // QR on [√W X; √Λ] β ≈ [√W z; √Λ m].
    let m = x.rows
    let penalised = (0..<n).filter { penalty[$0] > 0 }
    let rows = m + penalised.count
    var a = [Double](repeating: 0, count: rows * n)
    var b = [Double](repeating: 0, count: rows)
    for i in 0..<m {
      let s = w[i].squareRoot()
      b[i] = s > 0 ? wz[i] / s : 0
      for j in 0..<n { a[i + j * rows] = s * x.elements[i + j * m] }
    }
    for (r, j) in penalised.enumerated() {
      let s = penalty[j].squareRoot()
      a[m + r + j * rows] = s
      b[m + r] = s * mean[j]
    }
    return attempt(.leastSquares, "least-squares solution") {
      try LinearAlgebra.leastSquares(Matrix(rows: rows, cols: n, columnMajor: a), b)
    }
  }

  /// X β, m entries (column-major sweep).
  static func linearPredictor(_ x: Matrix, _ beta: [Double]) -> [Double] {
    let m = x.rows
    var lin = [Double](repeating: 0, count: m)
    x.elements.withUnsafeBufferPointer { e in
      for j in 0..<x.cols {
        let b = beta[j]
        if b == 0 { continue }
        let base = j * m
        for i in 0..<m { lin[i] += e[base + i] * b }
      }
    }
    return lin
  }

  /// (deviance, penalised deviance) at the linear predictor `lin` = X β;
  /// fills `mu` with the means μᵢ = exp(clamp(offsetᵢ + linᵢ)). `yLogY[i]`
  /// is yᵢ log yᵢ (0 for yᵢ = 0), so yᵢ log(yᵢ/μᵢ) = yLogYᵢ − yᵢ log μᵢ.
  static func objective(
    lin: [Double], y: [Double], yLogY: [Double], offset: [Double], beta: [Double], penalty: [Double],
    mean: [Double], mu: inout [Double]
  ) -> (Double, Double) {
    var dev = 0.0
    for i in 0..<lin.count {
      let eta = HabitModel.clampEta(offset[i] + lin[i])
      let m = exp(eta)
      mu[i] = m
      let yi = y[i]
      dev += yi > 0 ? 2 * (yLogY[i] - yi * eta - (yi - m)) : 2 * m
    }
    var pen = 0.0
    for j in 0..<beta.count {
      let d = beta[j] - mean[j]
      pen += penalty[j] * d * d
    }
    return (dev, dev + pen)
  }

  /// Unpenalised Poisson deviance of `beta`.
  static func deviance(x: Matrix, y: [Double], offset: [Double], beta: [Double]) -> Double {
    let lin = linearPredictor(x, beta)
    let zeros = [Double](repeating: 0, count: beta.count)
    var mu = lin
    let yLogY = y.map { $0 > 0 ? $0 * log($0) : 0 }
    return objective(lin: lin, y: y, yLogY: yLogY, offset: offset, beta: beta, penalty: zeros, mean: zeros, mu: &mu).0
  }

  /// √diag((Xᵀ W X + Λ)⁻¹) at the linear predictor `lin`; nil when singular.
  static func standardErrors(x: Matrix, lin: [Double], offset: [Double], penalty: [Double]) -> [Double]? {
    let n = x.cols
    let w = (0..<x.rows).map { exp(HabitModel.clampEta(offset[$0] + lin[$0])) }
    guard var gram = try? LinearAlgebra.weightedGram(x, weights: w) else { return nil }
    for j in 0..<n { gram[j, j] += penalty[j] }
    var se = [Double](repeating: 0, count: n)
    for j in 0..<n {
      var e = [Double](repeating: 0, count: n)
      e[j] = 1
      guard let col = try? LinearAlgebra.symmetricPositiveDefiniteSolve(gram, e) else { return nil }
      se[j] = col[j].squareRoot()
    }
    return se
  }
}
