extension LinearAlgebra {
  /// Solves `A x = b` in place for a small symmetric positive definite `A`
  /// (n × n, column-major in `a`, only the upper triangle read) by Cholesky
  /// factorisation in Swift, without LAPACK's call and copy overhead: meant
  /// for the 12 × 12 systems of one IRLS step.
  ///
  /// On success `b` holds x and `a`'s upper triangle holds the factor U
  /// (A = UᵀU); on failure (a pivot ≤ 0 or not finite: A is not positive
  /// definite, or holds NaN or ±∞) it returns false and `b` is unspecified.
  /// Units: `x` has the units of `b` divided by those of `a`.
  ///
  /// - Precondition: `a.count == n * n`, `b.count == n`.
  /// - Complexity: n³/6 + n² multiply-adds; no allocation.
  package static func smallCholeskySolve(_ a: inout [Double], _ b: inout [Double], n: Int) -> Bool {
    precondition(a.count == n * n && b.count == n, "smallCholeskySolve needs an n x n matrix and n right-hand sides")
    return a.withUnsafeMutableBufferPointer { u in
      b.withUnsafeMutableBufferPointer { x in
        // U column by column: U[i, j] for i ≤ j at u[i + j n].
        for j in 0..<n {
          for i in 0..<j {
            var s = u[i + j * n]
            for k in 0..<i { s -= u[k + i * n] * u[k + j * n] }
            u[i + j * n] = s / u[i + i * n]
          }
          var d = u[j + j * n]
          for k in 0..<j { d -= u[k + j * n] * u[k + j * n] }
          guard d > 0 && d.isFinite else { return false }
          u[j + j * n] = d.squareRoot()
        }
        // Uᵀ y = b, then U x = y.
        for i in 0..<n {
          var s = x[i]
          for k in 0..<i { s -= u[k + i * n] * x[k] }
          x[i] = s / u[i + i * n]
        }
        for i in stride(from: n - 1, through: 0, by: -1) {
          var s = x[i]
          for k in (i + 1)..<n { s -= u[i + k * n] * x[k] }
          x[i] = s / u[i + i * n]
        }
        return x.allSatisfy(\.isFinite)
      }
    }
  }
}
