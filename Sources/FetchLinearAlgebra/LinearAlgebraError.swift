/// Why a linear-algebra routine could not produce a result.
///
/// A public struct over an internal enum, so new cases do not break callers.
/// Match on ``code``; callers usually fall back, e.g. from a Cholesky solve to
/// QR least squares, or add a ridge term, when they see
/// ``Code-swift.struct/notPositiveDefinite`` or ``Code-swift.struct/singular``:
///
///     do {
///       beta = try LinearAlgebra.symmetricPositiveDefiniteSolve(a, b)
///     } catch let e as LinearAlgebraError where e.code == .notPositiveDefinite {
///       beta = try LinearAlgebra.leastSquares(x, z)
///     }
package struct LinearAlgebraError: Error, Sendable, Equatable, CustomStringConvertible {
  enum Kind: Sendable, Equatable {
    case notPositiveDefinite
    case singular
    case dimensionMismatch
    case invalidInput
    case sizeOutOfRange
    case lapackFailure
  }

  /// The category of a ``LinearAlgebraError``.
  package struct Code: Sendable, Hashable, CustomStringConvertible {
    let kind: Kind

    /// Cholesky factorisation failed: the leading minor of order ``LinearAlgebraError/info``
    /// is not positive definite (the matrix is indefinite, singular or badly
    /// conditioned).
    package static let notPositiveDefinite = Code(kind: .notPositiveDefinite)
    /// The matrix does not have full rank (exactly, or to working precision).
    package static let singular = Code(kind: .singular)
    /// Operand shapes do not agree.
    package static let dimensionMismatch = Code(kind: .dimensionMismatch)
    /// An input holds NaN or ±∞, or a weight or ridge term is negative.
    package static let invalidInput = Code(kind: .invalidInput)
    /// A dimension does not fit the 32-bit integers of BLAS / LAPACK.
    package static let sizeOutOfRange = Code(kind: .sizeOutOfRange)
    /// LAPACK reported an illegal argument (a bug in this module).
    package static let lapackFailure = Code(kind: .lapackFailure)

    package var description: String {
      switch kind {
      case .notPositiveDefinite: "not positive definite"
      case .singular: "singular"
      case .dimensionMismatch: "dimension mismatch"
      case .invalidInput: "invalid input"
      case .sizeOutOfRange: "size out of range"
      case .lapackFailure: "LAPACK failure"
      }
    }
  }

  /// The category.
  package let code: Code
  /// The LAPACK `info` value when LAPACK reported the problem, else `nil`.
  package let info: Int?
  /// Details in words.
  package let message: String

  init(_ kind: Kind, info: Int? = nil, _ message: String) {
    self.code = Code(kind: kind)
    self.info = info
    self.message = message
  }

  package var description: String {
    "\(code): \(message)" + (info.map { " (LAPACK info \($0))" } ?? "")
  }
}
