import FetchLinearAlgebra
import Foundation
import Testing

/// |a − b| ≤ tol · max(1, |b|), elementwise.
private func close(_ a: [Double], _ b: [Double], tol: Double = 1e-10) -> Bool {
  a.count == b.count && zip(a, b).allSatisfy { abs($0 - $1) <= tol * max(1, abs($1)) }
}

/// The error a throwing call produced, or nil.
private func error<T>(_ body: () throws -> T) -> LinearAlgebraError? {
  do {
    _ = try body()
    return nil
  } catch let e as LinearAlgebraError {
    return e
  } catch {
    return nil
  }
}

@Suite struct MatrixTests {
  @Test func columnMajorLayoutAndSubscript() {
    var m = Matrix(rows: [[1, 2, 3], [4, 5, 6]])
    #expect(m.rows == 2 && m.cols == 3)
    #expect(m.elements == [1, 4, 2, 5, 3, 6])
    #expect(m[1, 2] == 6)
    m[0, 1] = 9
    #expect(m.row(0) == [1, 9, 3])
    #expect(m.column(1) == [9, 5])
    #expect(m.transposed == Matrix(rows: [[1, 4], [9, 5], [3, 6]]))
  }

  @Test func identityAndEmpty() {
    #expect(Matrix.identity(2) == Matrix(rows: [[1, 0], [0, 1]]))
    #expect(Matrix(rows: []).rows == 0)
    #expect(Matrix.identity(0).elements.isEmpty)
  }

  @Test func products() throws {
    let a = Matrix(rows: [[1, 2], [3, 4], [5, 6]])
    let b = Matrix(rows: [[1, 0, 2], [0, 1, 3]])
    #expect(try a.multiplied(by: b) == Matrix(rows: [[1, 2, 8], [3, 4, 18], [5, 6, 28]]))
    #expect(try a.multiplied(by: [1, -1]) == [-1, -1, -1])
    #expect(error { try a.multiplied(by: a) }?.code == .dimensionMismatch)
    #expect(error { try a.multiplied(by: [1, 2, 3]) }?.code == .dimensionMismatch)
  }
}

@Suite struct LinearAlgebraTests {
  init() { LinearAlgebra.setSingleThreaded() }

  @Test func choleskySolvesKnownSystem() throws {
    // [4 1; 1 3] x = [1; 2]  →  x = [1/11; 7/11]
    let a = Matrix(rows: [[4, 1], [1, 3]])
    let x = try LinearAlgebra.symmetricPositiveDefiniteSolve(a, [1, 2])
    #expect(close(x, [1.0 / 11, 7.0 / 11]))
  }

  @Test("after OpenBLAS's pool is stopped (setSingleThreaded, twice), a 400 × 400 solve, large enough for its blocked routines, is still exact")
  func solvesAfterThreadShutdown() throws {
    LinearAlgebra.setSingleThreaded()
    LinearAlgebra.setSingleThreaded()
    // A = n·I + (i + j mod 7) / 10, symmetric and diagonally dominant; b = A·x for a known x.
    let n = 400
    var a = Matrix(rows: n, cols: n)
    for i in 0..<n { for j in 0..<n { a[i, j] = (i == j ? Double(n) : 0) + Double((i + j) % 7) / 10 } }
    let x = (0..<n).map { Double($0 % 11) - 5 }
    let b = (0..<n).map { i in (0..<n).reduce(0.0) { $0 + a[i, $1] * x[$1] } }
    #expect(close(try LinearAlgebra.symmetricPositiveDefiniteSolve(a, b), x, tol: 1e-9))
  }

  @Test func choleskySolves3x3() throws {
    let a = Matrix(rows: [[25, 15, -5], [15, 18, 0], [-5, 0, 11]])
    let truth = [1.0, -2, 3]
    let b = try a.multiplied(by: truth)
    #expect(close(try LinearAlgebra.symmetricPositiveDefiniteSolve(a, b), truth))
  }

  @Test func indefiniteMatrixIsNotPositiveDefinite() {
    let e = error { try LinearAlgebra.symmetricPositiveDefiniteSolve(Matrix(rows: [[1, 2], [2, 1]]), [1, 1]) }
    #expect(e?.code == .notPositiveDefinite)
    #expect(e?.info == 2)
  }

  @Test func singularMatrixIsNotPositiveDefinite() {
    let e = error { try LinearAlgebra.symmetricPositiveDefiniteSolve(Matrix(rows: [[1, 1], [1, 1]]), [1, 1]) }
    #expect(e?.code == .notPositiveDefinite)
    #expect(e?.info == 2)
    #expect(e?.description.contains("not positive definite") == true)
  }

  @Test func dimensionMismatchThrows() {
    let sq = Matrix.identity(2)
    #expect(error { try LinearAlgebra.symmetricPositiveDefiniteSolve(Matrix(rows: 2, cols: 3), [1, 2]) }?.code == .dimensionMismatch)
    #expect(error { try LinearAlgebra.symmetricPositiveDefiniteSolve(sq, [1, 2, 3]) }?.code == .dimensionMismatch)
    #expect(error { try LinearAlgebra.leastSquares(Matrix(rows: 3, cols: 2), [1, 2]) }?.code == .dimensionMismatch)
    #expect(error { try LinearAlgebra.weightedGram(sq, weights: [1]) }?.code == .dimensionMismatch)
    #expect(error { try LinearAlgebra.weightedCrossProduct(sq, [1]) }?.code == .dimensionMismatch)
    #expect(error { try LinearAlgebra.solveNormalEquations(sq, [1, 2], weights: [1, 2, 3]) }?.code == .dimensionMismatch)
  }

  @Test func nonFiniteAndNegativeInputsThrow() {
    let sq = Matrix.identity(2)
    #expect(error { try LinearAlgebra.symmetricPositiveDefiniteSolve(sq, [.nan, 1]) }?.code == .invalidInput)
    #expect(error { try LinearAlgebra.leastSquares(Matrix(rows: [[1, .infinity]]), [1]) }?.code == .invalidInput)
    #expect(error { try LinearAlgebra.weightedGram(sq, weights: [1, -1]) }?.code == .invalidInput)
    #expect(error { try LinearAlgebra.weightedGram(sq, ridge: -0.5) }?.code == .invalidInput)
  }

  @Test func emptyProblems() throws {
    #expect(try LinearAlgebra.symmetricPositiveDefiniteSolve(Matrix(rows: 0, cols: 0), []) == [])
    #expect(try LinearAlgebra.leastSquares(Matrix(rows: 0, cols: 2), []) == [0, 0])
    #expect(try LinearAlgebra.weightedGram(Matrix(rows: 0, cols: 2), ridge: 1) == Matrix.identity(2))
  }

  @Test func leastSquaresRecoversNoiselessLinearModel() throws {
    // z = 2 − 3·t + 0.5·t², sampled at 20 points.
    let truth = [2.0, -3, 0.5]
    let ts = (0..<20).map { Double($0) / 4 }
    let x = Matrix(rows: ts.map { [1, $0, $0 * $0] })
    let z = try x.multiplied(by: truth)
    #expect(close(try LinearAlgebra.leastSquares(x, z), truth, tol: 1e-9))
    // The unweighted normal equations without ridge agree.
    #expect(close(try LinearAlgebra.solveNormalEquations(x, z), truth, tol: 1e-7))
    // Positive weights do not change an exact fit.
    let w = ts.map { 1 + $0 }
    #expect(close(try LinearAlgebra.solveNormalEquations(x, z, weights: w), truth, tol: 1e-7))
  }

  @Test func leastSquaresOverdeterminedKnownAnswer() throws {
    // Fit y = a + b t to (0,1), (1,3), (2,4): a = 7/6, b = 3/2.
    let x = Matrix(rows: [[1, 0], [1, 1], [1, 2]])
    #expect(close(try LinearAlgebra.leastSquares(x, [1, 3, 4]), [7.0 / 6, 1.5]))
  }

  @Test func leastSquaresUnderdeterminedIsMinimumNorm() throws {
    // x + y = 2 → minimum-norm solution (1, 1).
    #expect(close(try LinearAlgebra.leastSquares(Matrix(rows: [[1, 1]]), [2]), [1, 1]))
  }

  @Test func leastSquaresRankDeficientThrowsSingular() {
    // An exactly zero column: LAPACK reports info = 2.
    let exact = error { try LinearAlgebra.leastSquares(Matrix(rows: [[1, 0], [2, 0], [3, 0]]), [1, 2, 3]) }
    #expect(exact?.code == .singular)
    #expect(exact?.info == 2)
    // Collinear columns: rank-deficient to working precision.
    let collinear = error { try LinearAlgebra.leastSquares(Matrix(rows: [[1, 2], [2, 4], [3, 6]]), [1, 2, 3]) }
    #expect(collinear?.code == .singular)
  }

  @Test func weightedGramMatchesDefinition() throws {
    let x = Matrix(rows: [[1, 2], [3, 4], [5, 6]])
    let w = [1.0, 0.5, 2]
    let g = try LinearAlgebra.weightedGram(x, weights: w, ridge: 0.25)
    for i in 0..<2 {
      for j in 0..<2 {
        let expected = (0..<3).reduce(0.0) { $0 + w[$1] * x[$1, i] * x[$1, j] } + (i == j ? 0.25 : 0)
        #expect(abs(g[i, j] - expected) <= 1e-12 * abs(expected))
      }
    }
    #expect(g == g.transposed)
    let c = try LinearAlgebra.weightedCrossProduct(x, [1, -1, 2], weights: w)
    let expected: [Double] = [19.5, 24]  // [1·1 − 3·0.5 + 5·4, 2·1 − 4·0.5 + 6·4]
    #expect(close(c, expected))
  }

  @Test func weightedRidgeTwoByTwoEqualsClosedForm() throws {
    // X = [1 0; 1 1; 1 2], W = diag(1, 2, 3), z = (1, 2, 4), λ = 0.5.
    // XᵀWX = [6 8; 8 14], XᵀWz = [17 28];  A = XᵀWX + λI = [6.5 8; 8 14.5].
    // β = A⁻¹ XᵀWz = [14.5·17 − 8·28, 6.5·28 − 8·17] / (6.5·14.5 − 64).
    let x = Matrix(rows: [[1, 0], [1, 1], [1, 2]])
    let beta = try LinearAlgebra.solveNormalEquations(x, [1, 2, 4], weights: [1, 2, 3], ridge: 0.5)
    let det = 6.5 * 14.5 - 64
    #expect(close(beta, [(14.5 * 17 - 8 * 28) / det, (6.5 * 28 - 8 * 17) / det], tol: 1e-12))
  }

  @Test func ridgeRescuesCollinearDesign() throws {
    let x = Matrix(rows: [[1, 2], [2, 4], [3, 6]])
    let z = [1.0, 2, 3]
    let e = error { try LinearAlgebra.solveNormalEquations(x, z) }
    #expect(e?.code == .notPositiveDefinite)
    // The documented fallback: a small ridge makes the system solvable.
    let beta = try LinearAlgebra.solveNormalEquations(x, z, ridge: 1e-6)
    #expect(close(try x.multiplied(by: beta), z, tol: 1e-6))
  }

  @Test func zeroWeightsDropObservations() throws {
    let x = Matrix(rows: [[1, 0], [1, 1], [1, 2], [1, 3]])
    let z = [1.0, 3, 5, 100]  // last point is an outlier with weight 0
    let beta = try LinearAlgebra.solveNormalEquations(x, z, weights: [1, 1, 1, 0])
    #expect(close(beta, [1, 2], tol: 1e-12))
  }

  @Test func errorDescriptionNamesCodeAndInfo() {
    let e = error { try LinearAlgebra.symmetricPositiveDefiniteSolve(Matrix(rows: [[-1]]), [1]) }
    #expect(e?.description.hasPrefix("not positive definite:") == true)
    #expect(e?.description.hasSuffix("(LAPACK info 1)") == true)
  }
}

@Suite struct SmallCholeskyTests {
  @Test("the small Cholesky solve agrees with LAPACK's and refuses indefinite or non-finite matrices")
  func smallCholesky() throws {
    // A = BᵀB + I for a deterministic B: positive definite.
    let n = 12
    var b = [Double](repeating: 0, count: n * n)
    for k in b.indices { b[k] = sin(Double(k) * 0.7) * 2 }
    var a = [Double](repeating: 0, count: n * n)
    for i in 0..<n {
      for j in 0..<n {
        var s = i == j ? 1.0 : 0
        for k in 0..<n { s += b[k + i * n] * b[k + j * n] }
        a[i + j * n] = s
      }
    }
    let rhs = (0..<n).map { cos(Double($0)) }
    let lapack = try LinearAlgebra.symmetricPositiveDefiniteSolve(Matrix(rows: n, cols: n, columnMajor: a), rhs)
    var factor = a
    var x = rhs
    #expect(LinearAlgebra.smallCholeskySolve(&factor, &x, n: n))
    #expect(close(x, lapack, tol: 1e-9))
    // Only the upper triangle is read.
    var upper = a
    for j in 0..<n { for i in (j + 1)..<n { upper[i + j * n] = .nan } }
    var y = rhs
    #expect(LinearAlgebra.smallCholeskySolve(&upper, &y, n: n))
    #expect(close(y, lapack, tol: 1e-9))
    // Indefinite, singular and NaN matrices fail.
    var indefinite: [Double] = [1, 2, 2, 1]
    var r2: [Double] = [1, 1]
    #expect(!LinearAlgebra.smallCholeskySolve(&indefinite, &r2, n: 2))
    var singular: [Double] = [1, 1, 1, 1]
    #expect(!LinearAlgebra.smallCholeskySolve(&singular, &r2, n: 2))
    var bad: [Double] = [.nan, 0, 0, 1]
    #expect(!LinearAlgebra.smallCholeskySolve(&bad, &r2, n: 2))
    var empty: [Double] = []
    var none: [Double] = []
    #expect(LinearAlgebra.smallCholeskySolve(&empty, &none, n: 0))
  }
}
