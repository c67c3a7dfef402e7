import CBLAS
import CLAPACKE

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Dense solvers over ``Matrix`` backed by OpenBLAS and LAPACKE.
///
/// No pointer leaves this module: inputs are copied into column-major scratch
/// buffers, LAPACK overwrites the copies, and the results come back as arrays.
/// Every failure is a ``LinearAlgebraError``; nothing traps on bad data.
///
/// The typical use is iteratively reweighted least squares: each step solves
/// the weighted ridge normal equations
///
///     (Xᵀ W X + λ I) β = Xᵀ W z
///
/// with ``solveNormalEquations(_:_:weights:ridge:)`` (Cholesky, fast) and
/// falls back to ``leastSquares(_:_:)`` (QR, more stable) or a larger λ when
/// that throws ``LinearAlgebraError/Code/notPositiveDefinite``.
package enum LinearAlgebra {
  /// Makes OpenBLAS compute on the calling thread only
  /// (`openblas_set_num_threads(1)`) and stops the worker threads it
  /// started when it was loaded (`blas_thread_shutdown_`, where the
  /// library has it), once per process; later calls do nothing.
  ///
  /// Every solver of this module calls it before its first BLAS or LAPACK
  /// call (through `blasInt` and `lapackInt`): FetchLab runs many small
  /// solves in parallel on its own threads, and OpenBLAS's pool then only
  /// adds contention. The `fetchlab` command also calls it first thing, for
  /// runs that never solve: OpenBLAS (0.3.21, pthreads)
  /// starts its pool when the library loads, and an idle worker polls with
  /// `sched_yield` for about 0.1 s of CPU before it sleeps, a second core
  /// busy in every run, `--jobs 1` included (`strace -f` shows 3,326
  /// `sched_yield` calls from that thread in a one-job `run`). Setting
  /// the environment variable `OPENBLAS_NUM_THREADS=1` before the process
  /// starts has the same effect.
  ///
  /// Because every solver passes through it first, the pool is stopped
  /// before any call could be spread over it: OpenBLAS deadlocks when its
  /// pool is stopped while such a call is in flight (a population fit on
  /// one thread while another thread stops the pool).
  package static func setSingleThreaded() {
    _ = openBLASSingleThreaded
  }

  /// Solves `A x = b` for a symmetric positive definite `A` by Cholesky
  /// factorisation (LAPACK `dposv`).
  ///
  /// Only the upper triangle of `a` is read; the lower one is assumed to mirror
  /// it. Units: `x` has the units of `b` divided by those of `a`.
  ///
  /// - Complexity: n³/3 + 2n² flops for an n × n `a`; O(n²) memory for the copy.
  /// - Throws: ``LinearAlgebraError`` with code
  ///   - `.notPositiveDefinite` (and the LAPACK `info` = order of the failing
  ///     leading minor) when `a` is indefinite or singular;
  ///   - `.dimensionMismatch` when `a` is not square or `b.count != a.rows`;
  ///   - `.invalidInput` when an input holds NaN or ±∞;
  ///   - `.sizeOutOfRange` when n does not fit 32 bits.
  package static func symmetricPositiveDefiniteSolve(_ a: Matrix, _ b: [Double]) throws -> [Double] {
    guard a.rows == a.cols else {
      throw LinearAlgebraError(.dimensionMismatch, "symmetricPositiveDefiniteSolve needs a square matrix, got \(a.rows) x \(a.cols)")
    }
    guard b.count == a.rows else {
      throw LinearAlgebraError(.dimensionMismatch, "right-hand side has \(b.count) entries, matrix has \(a.rows) rows")
    }
    try requireFinite(a, "matrix")
    try requireFinite(b, "right-hand side")
    let n = a.rows
    guard n > 0 else { return [] }
    let n32 = try lapackInt(n, "n")
    var factor = a
    var x = b
    let info = factor.withUnsafeMutableElements { pa in
      x.withUnsafeMutableBufferPointer { px in
        LAPACKE_dposv(LAPACK_COL_MAJOR, upper, n32, 1, pa.baseAddress, n32, px.baseAddress, n32)
      }
    }
    if info > 0 {
      throw LinearAlgebraError(
        .notPositiveDefinite, info: Int(info),
        "the leading minor of order \(info) of the \(n) x \(n) matrix is not positive definite")
    }
    try checkArgumentInfo(info, "dposv")
    return x
  }

  /// The weighted Gram matrix `Xᵀ W X + λ I`, W = diag(`weights`) (BLAS `dsyrk`).
  ///
  /// Computed as `Aᵀ A` with `A = diag(√w) X`, so the result is symmetric to
  /// the last bit and positive semi-definite; λ > 0 makes it positive definite.
  /// `weights == nil` means all weights are 1.
  ///
  /// - Parameters:
  ///   - x: the m × n design matrix (m observations, n coefficients).
  ///   - weights: m non-negative, finite observation weights, or `nil`.
  ///   - ridge: λ ≥ 0, added to the diagonal.
  /// - Returns: the n × n matrix, both triangles filled.
  /// - Complexity: m·n² flops (half of a general product), O(m·n) scratch.
  /// - Throws: `.dimensionMismatch` when `weights.count != m`; `.invalidInput`
  ///   for NaN, ±∞, a negative weight or a negative λ; `.sizeOutOfRange`.
  package static func weightedGram(_ x: Matrix, weights: [Double]? = nil, ridge: Double = 0) throws -> Matrix {
    try requireFinite(x, "design matrix")
    guard ridge.isFinite, ridge >= 0 else {
      throw LinearAlgebraError(.invalidInput, "ridge λ must be finite and ≥ 0, got \(ridge)")
    }
    if let w = weights { try checkWeights(w, rows: x.rows) }
    var scratch: [Double] = []
    var gram = try scaledGram(x, rootWeights: weights?.map { $0.squareRoot() }, scratch: &scratch)
    gram.withUnsafeMutableElements { c in
      for j in 0..<x.cols { c[j + j * x.cols] += ridge }
    }
    return gram
  }

  /// `Xᵀ W X` and `Xᵀ v` together (BLAS `dsyrk` and `dgemv`), for iterative
  /// solvers such as IRLS that form both every iteration on one design.
  ///
  /// The design is *not* checked for NaN or ±∞ here (an O(m·n) scan per
  /// iteration): check it once with ``isFinite(_:)``. The weights and `v`
  /// are checked. `scratch` holds the scaled copy `diag(√w) X` and is reused
  /// across calls.
  ///
  /// - Returns: the n × n Gram matrix (both triangles) and the n entries of `Xᵀ v`.
  /// - Complexity: m·n² + 2·m·n flops; no allocation once `scratch` has grown.
  /// - Throws: `.dimensionMismatch`, `.invalidInput` (a bad weight or entry of
  ///   `v`), `.sizeOutOfRange`.
  package static func normalEquations(
    _ x: Matrix, weights w: [Double], _ v: [Double], scratch: inout [Double]
  ) throws -> (gram: Matrix, xtv: [Double]) {
    let m = x.rows, n = x.cols
    try checkWeights(w, rows: m)
    guard v.count == m else {
      throw LinearAlgebraError(.dimensionMismatch, "right-hand side has \(v.count) entries, design matrix has \(m) rows")
    }
    try requireFinite(v, "right-hand side")
    let gram = try scaledGram(x, rootWeights: w.map { $0.squareRoot() }, scratch: &scratch)
    var xtv = [Double](repeating: 0, count: n)
    guard m > 0, n > 0 else { return (gram, xtv) }
    let m32 = try blasInt(m, "rows"), n32 = try blasInt(n, "columns")
    x.elements.withUnsafeBufferPointer { e in
      v.withUnsafeBufferPointer { pv in
        xtv.withUnsafeMutableBufferPointer { py in
          cblas_dgemv(CblasColMajor, CblasTrans, m32, n32, 1, e.baseAddress, m32, pv.baseAddress, 1, 0, py.baseAddress, 1)
        }
      }
    }
    return (gram, xtv)
  }

  /// `Aᵀ A` for `A = diag(r) X` (`r` nil: all 1), both triangles, by `dsyrk`
  /// on `A` formed in `scratch`. Nothing is checked.
  private static func scaledGram(_ x: Matrix, rootWeights r: [Double]?, scratch: inout [Double]) throws -> Matrix {
    let m = x.rows, n = x.cols
    var gram = Matrix(rows: n, cols: n)
    guard m > 0, n > 0 else { return gram }
    let m32 = try blasInt(m, "rows"), n32 = try blasInt(n, "columns")
    if scratch.count < m * n { scratch = [Double](repeating: 0, count: m * n) }
    x.elements.withUnsafeBufferPointer { e in
      scratch.withUnsafeMutableBufferPointer { a in
        if let r {
          for j in 0..<n {
            let base = j * m
            for i in 0..<m { a[base + i] = e[base + i] * r[i] }
          }
        } else {
          for k in 0..<(m * n) { a[k] = e[k] }
        }
        gram.withUnsafeMutableElements { pc in
          cblas_dsyrk(CblasColMajor, CblasUpper, CblasTrans, n32, m32, 1, a.baseAddress, m32, 0, pc.baseAddress, n32)
        }
      }
    }
    gram.withUnsafeMutableElements { c in
      for j in 0..<n {
        for i in (j + 1)..<n { c[i + j * n] = c[j + i * n] }  // mirror upper → lower
      }
    }
    return gram
  }

  /// Whether every element of `x` is finite.
  package static func isFinite(_ x: Matrix) -> Bool { x.elements.allSatisfy(\.isFinite) }

  /// The weighted cross product `Xᵀ W z`, W = diag(`weights`) (BLAS `dgemv`).
  ///
  /// - Parameters:
  ///   - x: the m × n design matrix.
  ///   - z: the m responses.
  ///   - weights: m non-negative, finite weights, or `nil` for all 1.
  /// - Returns: n entries.
  /// - Complexity: 2·m·n flops.
  /// - Throws: `.dimensionMismatch`, `.invalidInput`, `.sizeOutOfRange`.
  package static func weightedCrossProduct(_ x: Matrix, _ z: [Double], weights: [Double]? = nil) throws -> [Double] {
    let m = x.rows, n = x.cols
    guard z.count == m else {
      throw LinearAlgebraError(.dimensionMismatch, "response has \(z.count) entries, design matrix has \(m) rows")
    }
    try requireFinite(x, "design matrix")
    try requireFinite(z, "response")
    var wz = z
    if let w = weights {
      try checkWeights(w, rows: m)
      for i in 0..<m { wz[i] *= w[i] }
    }
    var y = [Double](repeating: 0, count: n)
    guard m > 0, n > 0 else { return y }
    let m32 = try blasInt(m, "rows"), n32 = try blasInt(n, "columns")
    x.elements.withUnsafeBufferPointer { pa in
      wz.withUnsafeBufferPointer { pz in
        y.withUnsafeMutableBufferPointer { py in
          cblas_dgemv(CblasColMajor, CblasTrans, m32, n32, 1, pa.baseAddress, m32, pz.baseAddress, 1, 0, py.baseAddress, 1)
        }
      }
    }
    return y
  }

  /// Solves the weighted ridge normal equations `(Xᵀ W X + λ I) β = Xᵀ W z`
  /// by Cholesky: the minimiser of Σᵢ wᵢ (zᵢ − xᵢ·β)² + λ‖β‖².
  ///
  /// Fast, but squares the condition number of X; for ill-conditioned X with
  /// λ = 0 prefer ``leastSquares(_:_:)`` (unweighted) or a small λ > 0.
  ///
  /// - Complexity: m·n² + n³/3 flops for an m × n `x`.
  /// - Throws: `.notPositiveDefinite` when `XᵀWX + λI` is not positive definite
  ///   (e.g. collinear columns, fewer positive weights than columns, λ = 0);
  ///   `.dimensionMismatch`, `.invalidInput`, `.sizeOutOfRange` as the helpers.
  package static func solveNormalEquations(
    _ x: Matrix, _ z: [Double], weights: [Double]? = nil, ridge: Double = 0
  ) throws -> [Double] {
    let rhs = try weightedCrossProduct(x, z, weights: weights)
    let gram = try weightedGram(x, weights: weights, ridge: ridge)
    return try symmetricPositiveDefiniteSolve(gram, rhs)
  }

  /// The least-squares solution of `A x ≈ b` by QR (LAPACK `dgels`).
  ///
  /// For m ≥ n, the x minimising ‖b − A x‖₂; for m < n, the minimum-norm
  /// solution of the underdetermined system. A must have full rank.
  ///
  /// - Returns: n entries.
  /// - Complexity: 2·m·n² − 2n³/3 flops for m ≥ n; O(m·n) memory.
  /// - Throws: `.singular` when A is rank-deficient: exactly (LAPACK `info` > 0,
  ///   a zero diagonal element of the triangular factor) or to working
  ///   precision (|R_ii| ≤ max(m, n) · ε · maxⱼ|R_jj|, `info` nil);
  ///   `.dimensionMismatch` when `b.count != m`; `.invalidInput`;
  ///   `.sizeOutOfRange`.
  package static func leastSquares(_ a: Matrix, _ b: [Double]) throws -> [Double] {
    let m = a.rows, n = a.cols
    guard b.count == m else {
      throw LinearAlgebraError(.dimensionMismatch, "right-hand side has \(b.count) entries, matrix has \(m) rows")
    }
    try requireFinite(a, "matrix")
    try requireFinite(b, "right-hand side")
    guard m > 0, n > 0 else { return [Double](repeating: 0, count: n) }
    let m32 = try lapackInt(m, "rows"), n32 = try lapackInt(n, "columns")
    let ldb = try lapackInt(max(m, n), "max(rows, columns)")
    var factor = a
    var rhs = b + [Double](repeating: 0, count: max(0, n - m))
    let info = factor.withUnsafeMutableElements { pa in
      rhs.withUnsafeMutableBufferPointer { pb in
        LAPACKE_dgels(LAPACK_COL_MAJOR, noTranspose, m32, n32, 1, pa.baseAddress, m32, pb.baseAddress, ldb)
      }
    }
    if info > 0 {
      throw LinearAlgebraError(
        .singular, info: Int(info),
        "the \(m) x \(n) matrix does not have full rank: diagonal element \(info) of its triangular factor is zero")
    }
    try checkArgumentInfo(info, "dgels")
    // The triangular factor (R for m ≥ n, L for m < n) is on the diagonal of `factor`.
    let k = min(m, n)
    let diag = (0..<k).map { abs(factor.elements[$0 + $0 * m]) }
    let largest = diag.max() ?? 0
    let tolerance = Double(max(m, n)) * Double.ulpOfOne * largest
    if let i = diag.firstIndex(where: { $0 <= tolerance }) {
      throw LinearAlgebraError(
        .singular,
        "the \(m) x \(n) matrix is rank-deficient to working precision: |R[\(i + 1),\(i + 1)]| = \(diag[i]) ≤ \(tolerance)")
    }
    return Array(rhs.prefix(n))
  }

  // MARK: - Helpers

  static let upper = CChar(UInt8(ascii: "U"))
  static let noTranspose = CChar(UInt8(ascii: "N"))

  static func requireFinite(_ m: Matrix, _ what: String) throws {
    if let k = m.elements.firstIndex(where: { !$0.isFinite }) {
      throw LinearAlgebraError(.invalidInput, "\(what) element (\(k % max(1, m.rows)), \(k / max(1, m.rows))) is \(m.elements[k])")
    }
  }

  static func requireFinite(_ v: [Double], _ what: String) throws {
    if let k = v.firstIndex(where: { !$0.isFinite }) {
      throw LinearAlgebraError(.invalidInput, "\(what) entry \(k) is \(v[k])")
    }
  }

  static func checkWeights(_ w: [Double], rows: Int) throws {
    guard w.count == rows else {
      throw LinearAlgebraError(.dimensionMismatch, "\(w.count) weights for \(rows) rows")
    }
    if let k = w.firstIndex(where: { !($0.isFinite && $0 >= 0) }) {
      throw LinearAlgebraError(.invalidInput, "weight \(k) is \(w[k]); weights must be finite and ≥ 0")
    }
  }

  /// Turns a negative LAPACK `info` (illegal argument -info) into an error.
  static func checkArgumentInfo(_ info: Int32, _ routine: String) throws {
    if info < 0 {
      throw LinearAlgebraError(.lapackFailure, info: Int(info), "\(routine): argument \(-info) had an illegal value")
    }
  }
}

/// Runs `openblas_set_num_threads(1)` and `blas_thread_shutdown_()`
/// exactly once (lazy global, thread-safe). The shutdown is looked up at
/// run time: it is not in `cblas.h`, and a BLAS without it (not OpenBLAS,
/// or another build) simply keeps its threads.
private let openBLASSingleThreaded: Void = {
  openblas_set_num_threads(1)
  if let f = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "blas_thread_shutdown_") {
    typealias Shutdown = @convention(c) () -> Int32
    _ = unsafeBitCast(f, to: Shutdown.self)()
  }
}()
