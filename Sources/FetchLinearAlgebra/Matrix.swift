import CBLAS

/// A dense matrix of `Double`s stored column-major, as BLAS and LAPACK expect.
///
/// Element (i, j) lives at `elements[i + j * rows]`. Value semantics: copies
/// are cheap until one is mutated (copy-on-write of the backing array).
///
///     var a = Matrix(rows: [[4, 1], [1, 3]])
///     a[0, 1] = 2
package struct Matrix: Sendable, Equatable, CustomStringConvertible {
  /// Number of rows, ≥ 0.
  package let rows: Int
  /// Number of columns, ≥ 0.
  package let cols: Int
  /// The elements in column-major order; `rows * cols` of them.
  package private(set) var elements: [Double]

  /// A `rows` × `cols` matrix with every element equal to `value`.
  package init(rows: Int, cols: Int, repeating value: Double = 0) {
    precondition(rows >= 0 && cols >= 0, "Matrix dimensions must be non-negative")
    let (count, overflow) = rows.multipliedReportingOverflow(by: cols)
    precondition(!overflow, "Matrix dimensions \(rows) x \(cols) overflow Int")
    self.rows = rows
    self.cols = cols
    self.elements = [Double](repeating: value, count: count)
  }

  /// A matrix over existing column-major `elements`.
  ///
  /// - Precondition: `elements.count == rows * cols`.
  package init(rows: Int, cols: Int, columnMajor elements: [Double]) {
    precondition(rows >= 0 && cols >= 0, "Matrix dimensions must be non-negative")
    let (count, overflow) = rows.multipliedReportingOverflow(by: cols)
    precondition(!overflow && count == elements.count, "Matrix(rows:cols:columnMajor:) needs exactly rows * cols elements")
    self.rows = rows
    self.cols = cols
    self.elements = elements
  }

  /// A matrix from a list of rows, convenient in tests: `Matrix(rows: [[1, 2], [3, 4]])`.
  ///
  /// An empty list gives a 0 × 0 matrix.
  /// - Precondition: all rows have the same length.
  package init(rows rowList: [[Double]]) {
    let r = rowList.count
    let c = rowList.first?.count ?? 0
    precondition(rowList.allSatisfy { $0.count == c }, "Matrix(rows:) needs rows of equal length")
    self.init(rows: r, cols: c)
    for i in 0..<r {
      for j in 0..<c { elements[i + j * r] = rowList[i][j] }
    }
  }

  /// The `n` × `n` identity matrix.
  package static func identity(_ n: Int) -> Matrix {
    var m = Matrix(rows: n, cols: n)
    for i in 0..<n { m.elements[i + i * n] = 1 }
    return m
  }

  /// Element in row `i`, column `j` (both 0-based).
  package subscript(i: Int, j: Int) -> Double {
    get {
      precondition(i >= 0 && i < rows && j >= 0 && j < cols, "Matrix index (\(i), \(j)) out of range \(rows) x \(cols)")
      return elements[i + j * rows]
    }
    set {
      precondition(i >= 0 && i < rows && j >= 0 && j < cols, "Matrix index (\(i), \(j)) out of range \(rows) x \(cols)")
      elements[i + j * rows] = newValue
    }
  }

  /// Row `i` as an array.
  package func row(_ i: Int) -> [Double] { (0..<cols).map { self[i, $0] } }

  /// Column `j` as an array.
  package func column(_ j: Int) -> [Double] {
    precondition(j >= 0 && j < cols, "Matrix column \(j) out of range 0..<\(cols)")
    return Array(elements[(j * rows)..<((j + 1) * rows)])
  }

  /// The transpose.
  ///
  /// - Complexity: O(rows · cols).
  package var transposed: Matrix {
    var t = Matrix(rows: cols, cols: rows)
    for j in 0..<cols {
      for i in 0..<rows { t.elements[j + i * cols] = elements[i + j * rows] }
    }
    return t
  }

  /// Whether every element is finite (no NaN, no ±∞).
  package var isFinite: Bool { elements.allSatisfy { $0.isFinite } }

  package var description: String {
    (0..<rows).map { i in "[" + row(i).map { $0.description }.joined(separator: ", ") + "]" }
      .joined(separator: "\n")
  }

  /// The matrix product `a · b` (BLAS `dgemm`).
  ///
  /// - Complexity: O(a.rows · a.cols · b.cols) flops.
  /// - Throws: ``LinearAlgebraError`` `.dimensionMismatch` when
  ///   `a.cols != b.rows`; `.sizeOutOfRange` when a dimension does not fit BLAS's
  ///   32-bit integers.
  package func multiplied(by b: Matrix) throws -> Matrix {
    guard cols == b.rows else {
      throw LinearAlgebraError(.dimensionMismatch, "cannot multiply \(rows) x \(cols) by \(b.rows) x \(b.cols)")
    }
    var c = Matrix(rows: rows, cols: b.cols)
    guard rows > 0, b.cols > 0 else { return c }
    guard cols > 0 else { return c }  // inner dimension 0: the zero matrix
    let m = try blasInt(rows, "rows"), n = try blasInt(b.cols, "columns"), k = try blasInt(cols, "inner dimension")
    elements.withUnsafeBufferPointer { pa in
      b.elements.withUnsafeBufferPointer { pb in
        c.elements.withUnsafeMutableBufferPointer { pc in
          cblas_dgemm(
            CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k,
            1, pa.baseAddress, m, pb.baseAddress, k, 0, pc.baseAddress, m)
        }
      }
    }
    return c
  }

  /// The matrix-vector product `a · x` (BLAS `dgemv`).
  ///
  /// - Complexity: O(rows · cols) flops.
  /// - Throws: ``LinearAlgebraError`` `.dimensionMismatch` when
  ///   `x.count != cols`.
  package func multiplied(by x: [Double]) throws -> [Double] {
    guard x.count == cols else {
      throw LinearAlgebraError(.dimensionMismatch, "cannot multiply \(rows) x \(cols) by a vector of length \(x.count)")
    }
    var y = [Double](repeating: 0, count: rows)
    guard rows > 0, cols > 0 else { return y }
    let m = try blasInt(rows, "rows"), n = try blasInt(cols, "columns")
    elements.withUnsafeBufferPointer { pa in
      x.withUnsafeBufferPointer { px in
        y.withUnsafeMutableBufferPointer { py in
          cblas_dgemv(CblasColMajor, CblasNoTrans, m, n, 1, pa.baseAddress, m, px.baseAddress, 1, 0, py.baseAddress, 1)
        }
      }
    }
    return y
  }

  /// Mutable access to the column-major storage for the BLAS/LAPACK wrappers.
  mutating func withUnsafeMutableElements<R>(_ body: (UnsafeMutableBufferPointer<Double>) throws -> R) rethrows -> R {
    try elements.withUnsafeMutableBufferPointer { try body($0) }
  }
}

/// `n` as a BLAS integer (`blasint`, 32-bit in Debian's OpenBLAS).
///
/// Every BLAS call of this module converts its sizes here or in
/// ``lapackInt(_:_:)`` first, so these two are where OpenBLAS is made
/// single-threaded (``LinearAlgebra/setSingleThreaded()``), once per
/// process, before its first call: no caller has to remember it.
///
/// - Throws: `.sizeOutOfRange` when `n` does not fit.
func blasInt(_ n: Int, _ what: String) throws -> blasint {
  LinearAlgebra.setSingleThreaded()
  guard let v = blasint(exactly: n) else {
    throw LinearAlgebraError(.sizeOutOfRange, "\(what) = \(n) does not fit BLAS's \(blasint.bitWidth)-bit integers")
  }
  return v
}

/// `n` as a LAPACK integer (`lapack_int`, 32-bit: `int32_t` unless LAPACK_ILP64),
/// after making OpenBLAS single-threaded as ``blasInt(_:_:)`` does.
///
/// - Throws: `.sizeOutOfRange` when `n` does not fit.
func lapackInt(_ n: Int, _ what: String) throws -> Int32 {
  LinearAlgebra.setSingleThreaded()
  guard let v = Int32(exactly: n) else {
    throw LinearAlgebraError(.sizeOutOfRange, "\(what) = \(n) does not fit LAPACK's 32-bit integers")
  }
  return v
}
