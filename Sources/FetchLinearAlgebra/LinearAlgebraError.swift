import FetchSupport

/// Why a linear-algebra routine could not produce a result.
///
/// Match on ``code``; callers usually fall back, e.g. from a Cholesky solve to
/// QR least squares, or add a ridge term, when they see
/// ``Code/notPositiveDefinite`` or ``Code/singular``:
///
///     do {
///       beta = try LinearAlgebra.symmetricPositiveDefiniteSolve(a, b)
///     } catch let e as LinearAlgebraError where e.code == .notPositiveDefinite {
///       beta = try LinearAlgebra.leastSquares(x, z)
///     }
package struct LinearAlgebraError: CodedError {
  /// The category of a ``LinearAlgebraError``; its description names it in words.
  package enum Code: String, Sendable, Hashable, CustomStringConvertible {
    /// Cholesky factorisation failed: the leading minor of order ``LinearAlgebraError/info``
    /// is not positive definite (the matrix is indefinite, singular or badly
    /// conditioned).
    case notPositiveDefinite = "not positive definite"
    /// The matrix does not have full rank (exactly, or to working precision).
    case singular = "singular"
    /// Operand shapes do not agree.
    case dimensionMismatch = "dimension mismatch"
    /// An input holds NaN or ±∞, or a weight or ridge term is negative.
    case invalidInput = "invalid input"
    /// A dimension does not fit the 32-bit integers of BLAS / LAPACK.
    case sizeOutOfRange = "size out of range"
    /// LAPACK reported an illegal argument (a bug in this module).
    case lapackFailure = "LAPACK failure"

    package var description: String { rawValue }
  }

  /// The category.
  package let code: Code
  /// Details in words.
  package let message: String
  /// The LAPACK `info` value when LAPACK reported the problem, else `nil`.
  package var location: Int?
  /// The LAPACK `info` value (the ``location``).
  package var info: Int? { location }

  package init(code: Code, message: String, location: Int?) {
    (self.code, self.message, self.location) = (code, message, location)
  }

  init(_ code: Code, info: Int? = nil, _ message: String) {
    self.init(code: code, message: message, location: info)
  }

  package var description: String {
    "\(code): \(message)" + (info.map { " (LAPACK info \($0))" } ?? "")
  }
}
