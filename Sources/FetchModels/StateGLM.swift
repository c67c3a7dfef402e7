import FetchLinearAlgebra
import Foundation

/// A generalised linear model with a ridge penalty toward a prior
/// coefficient vector: logistic (P(y = 1) = σ(xᵀβ)) or Gaussian
/// (E y = xᵀβ), fitted by iteratively reweighted least squares on the
/// project's LAPACK path (``LinearAlgebra/normalEquations(_:weights:_:scratch:)``
/// and a Cholesky solve).
///
/// The fit maximises the penalised log-likelihood
///
///     ℓ(β) − (λ/2)·‖β − β₀‖²
///
/// so each IRLS step solves `(XᵀWX + λI) β = XᵀWz + λβ₀` with the working
/// weights `W` and response `z` of the family (logistic: w = p(1 − p),
/// z = η + (y − p)/w; Gaussian: w = 1, z = y, one step). With β₀ the
/// population model's coefficients this is the usual "shrink a user toward
/// the population" estimator: a user with few rows stays near β₀, one with
/// many rows moves to their own maximum-likelihood fit (Gelman et al.,
/// *Bayesian Data Analysis*, 3rd ed., §16: a normal prior on GLM
/// coefficients; the posterior mode is this ridge estimate).
package struct StateGLM: Codable, Sendable, Equatable {
  /// The link and likelihood.
  package enum Family: String, Codable, Sendable {
    case logistic, gaussian
  }

  package private(set) var family: Family
  /// β, one per feature (the first feature is the constant 1).
  package private(set) var coefficients: [Double]
  /// Rows the model was fitted on.
  package private(set) var rows: Int
  /// Gaussian: root mean squared residual on the training rows; logistic: 0.
  package private(set) var residualSD: Double

  package init(family: Family, coefficients: [Double], rows: Int = 0, residualSD: Double = 0) {
    precondition(coefficients.allSatisfy(\.isFinite), "GLM coefficients must be finite")
    self.family = family
    self.coefficients = coefficients
    self.rows = rows
    self.residualSD = residualSD
  }

  /// The prediction for feature row `x`: a probability (logistic) or the
  /// mean (Gaussian).
  package func predict(_ x: [Double]) -> Double {
    precondition(x.count == coefficients.count, "feature row has \(x.count) values, model \(coefficients.count)")
    var eta = 0.0
    for i in 0..<x.count { eta += x[i] * coefficients[i] }
    switch family {
    case .gaussian: return eta
    case .logistic: return 1 / (1 + exp(-eta))
    }
  }

  /// Fits the model to `rows` (each of the same length n, the first entry
  /// 1) and outcomes `y` (logistic: 0 or 1), shrunk toward `prior` (n
  /// values; nil: zeros) with strength `ridge` (λ > 0).
  ///
  /// - Complexity: per IRLS iteration m·n² + n³/3 flops for m rows; at most
  ///   `maxIterations` (logistic) or 1 (Gaussian) iterations.
  /// - Throws: ``StateGLMError`` (no rows and no prior, a non-finite row) or
  ///   ``LinearAlgebraError`` from the solver.
  package static func fit(
    rows: [[Double]], y: [Double], family: Family, prior: [Double]? = nil, ridge: Double,
    maxIterations: Int = 30, tolerance: Double = 1e-8
  ) throws -> StateGLM {
    precondition(rows.count == y.count, "one outcome per row")
    precondition(ridge > 0, "ridge must be > 0")
    guard let n = rows.first?.count ?? prior?.count else {
      throw StateGLMError("no rows and no prior: cannot size the model")
    }
    let beta0 = prior ?? [Double](repeating: 0, count: n)
    precondition(beta0.count == n, "prior has \(beta0.count) coefficients, rows \(n)")
    let m = rows.count
    var elements = [Double](repeating: 0, count: m * n)
    for (i, r) in rows.enumerated() {
      precondition(r.count == n, "row \(i) has \(r.count) values, expected \(n)")
      for j in 0..<n { elements[i + j * m] = r[j] }
    }
    let x = Matrix(rows: m, cols: n, columnMajor: elements)
    guard LinearAlgebra.isFinite(x) else {
      throw StateGLMError("a feature row holds NaN or ±∞")
    }
    var beta = beta0
    var scratch: [Double] = []
    var w = [Double](repeating: 1, count: m), z = y  // z holds W·(working response)
    for _ in 0..<(family == .gaussian ? 1 : maxIterations) {
      if family == .logistic {
        let eta = try x.multiplied(by: beta)
        for i in 0..<m {
          let p = 1 / (1 + exp(-eta[i]))
          let wi = max(p * (1 - p), 1e-10)
          w[i] = wi
          z[i] = wi * eta[i] + (y[i] - p)  // W·z, the right-hand side normalEquations takes
        }
      }
      var (gram, xtv) = try LinearAlgebra.normalEquations(x, weights: w, z, scratch: &scratch)
      for j in 0..<n {
        gram[j, j] += ridge
        xtv[j] += ridge * beta0[j]
      }
      let next = try LinearAlgebra.symmetricPositiveDefiniteSolve(gram, xtv)
      let change = zip(next, beta).map { abs($0 - $1) }.max() ?? 0
      beta = next
      if change < tolerance { break }
    }
    var sd = 0.0
    if family == .gaussian, m > 0 {
      let fitted = try x.multiplied(by: beta)
      sd = (zip(fitted, y).reduce(0) { $0 + ($1.0 - $1.1) * ($1.0 - $1.1) } / Double(m)).squareRoot()
    }
    return StateGLM(family: family, coefficients: beta, rows: m, residualSD: sd)
  }

  enum CodingKeys: String, CodingKey {
    case family, coefficients, rows
    case residualSD = "residual_sd"
  }

  package init(from decoder: any Decoder) throws {
    let c = try decoder.container(keyedBy: CodingKeys.self)
    family = try c.decode(Family.self, forKey: .family)
    coefficients = try c.decode([Double].self, forKey: .coefficients)
    rows = try c.decode(Int.self, forKey: .rows)
    residualSD = try c.decode(Double.self, forKey: .residualSD)
    guard coefficients.allSatisfy(\.isFinite), residualSD.isFinite, residualSD >= 0, rows >= 0 else {
      throw DecodingError.dataCorruptedError(
        forKey: .coefficients, in: c, debugDescription: "coefficients and residual_sd must be finite, rows ≥ 0")
    }
  }
}

/// A GLM that cannot be fitted (see ``StateGLM/fit(rows:y:family:prior:ridge:maxIterations:tolerance:)``).
package struct StateGLMError: Error, Sendable, Equatable, CustomStringConvertible {
  package let description: String
  init(_ s: String) { description = s }
}
