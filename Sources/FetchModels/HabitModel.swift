import FetchTraces
import Foundation

/// A fitted model of when one user opens one app: a Poisson GLM on time bins
/// with a log link (McCullagh & Nelder, *Generalized Linear Models*, 2nd ed.,
/// Chapman & Hall 1989, DOI 10.1007/978-1-4899-3242-6).
///
/// The expected number of opens in a bin of ``binSeconds`` that starts at `t`
/// is `exp(x(t) · β)`, where `x(t)` are the features of
/// ``featureNames`` at `t` in the user's local time (``features(at:clock:recency:)``)
/// and β are the ``coefficients``. The intensity, in opens per second, is
///
///     λ(t) = exp(x(t) · β) / binSeconds
///
/// Fit one with ``HabitFitter``: ``HabitFitter/fitPopulation(_:)`` for a
/// population prior, ``HabitFitter/fit(_:prior:)`` for one (user, app) pair.
///
/// `Codable` round-trips exactly (coefficients are always finite, and the
/// feature list is stored and checked on decoding, so a file written for a
/// different feature set is rejected instead of being misread).
public struct HabitModel: OpenPredictor, Codable, Sendable, Equatable {
  /// β, one per entry of ``featureNames``, in that order; always finite.
  /// The intercept is the log of the expected opens per bin at all-zero other
  /// features; the others are log rate ratios per unit of their feature.
  package let coefficients: [Double]
  /// Length of the time bins the model was fitted on, s (> 0).
  package let binSeconds: Double
  /// How the fit went; does not affect predictions.
  package let diagnostics: Diagnostics

  /// A model with the given coefficients.
  ///
  /// - Precondition: `coefficients.count == HabitModel.featureNames.count`,
  ///   all finite; `binSeconds` finite and > 0.
  package init(coefficients: [Double], binSeconds: Double = 900, diagnostics: Diagnostics = Diagnostics()) {
    precondition(
      coefficients.count == HabitModel.featureNames.count,
      "HabitModel needs \(HabitModel.featureNames.count) coefficients, got \(coefficients.count)")
    precondition(coefficients.allSatisfy(\.isFinite), "HabitModel coefficients must be finite")
    precondition(binSeconds.isFinite && binSeconds > 0, "HabitModel binSeconds must be finite and > 0")
    self.coefficients = coefficients
    self.binSeconds = binSeconds
    self.diagnostics = diagnostics
  }

  /// The names of this model's features: always ``featureNames`` (static).
  package var featureNames: [String] { HabitModel.featureNames }

  /// Expected opens per second at Unix time `t` (s):
  /// `exp(clamp(x(t) · β)) / binSeconds`, with the linear predictor clamped to
  /// ±30 so the result is finite and > 0.
  ///
  /// - Precondition: `t` is finite.
  /// - Complexity: O(1) (12 features, one `sin`/`cos` pair, one `exp`).
  package func intensity(at t: Double, clock: inout LocalClock, recency: Recency) -> Double {
    exp(linearPredictor(at: t, clock: &clock, recency: recency)) / binSeconds
  }

  /// The clamped linear predictor `x(t) · β`: log expected opens per bin.
  package func linearPredictor(at t: Double, clock: inout LocalClock, recency: Recency) -> Double {
    var eta = 0.0
    HabitModel.forEachFeature(at: t, clock: &clock, recency: recency) { j, v in
      eta += coefficients[j] * v
    }
    return HabitModel.clampEta(eta)
  }

  /// Bounds of the linear predictor η (log opens per bin) in fitting and
  /// prediction: exp(±30) keeps μ, the IRLS weights and the working response
  /// finite.
  static let etaBound = 30.0

  @inline(__always)
  static func clampEta(_ eta: Double) -> Double {
    eta.isNaN ? -etaBound : min(max(eta, -etaBound), etaBound)
  }

  // MARK: - Diagnostics

  /// Which safety net a fit needed, from none to the last resort.
  package enum Fallback: String, Codable, Sendable, CaseIterable, Comparable {
    /// Every IRLS step solved the penalised normal equations by Cholesky.
    case none
    /// A Cholesky solve failed and was retried with a 10× larger ridge.
    case largerRidge = "larger_ridge"
    /// Cholesky failed twice; the step was solved by QR least squares on the
    /// weighted, penalty-augmented system.
    case leastSquares = "least_squares"
    /// The fit failed (or there were no bins); the model is the prior's shape
    /// with the pair's own smoothed rate (or the prior itself for an empty
    /// window).
    case prior
    /// As ``prior`` without a prior: a constant rate.
    case constantRate = "constant_rate"

    var rank: Int { Fallback.allCases.firstIndex(of: self) ?? 0 }

    package static func < (a: Fallback, b: Fallback) -> Bool { a.rank < b.rank }
  }

  /// Facts about a fit, for reports and sanity checks.
  package struct Diagnostics: Codable, Sendable, Equatable {
    /// Opens of the app in the bins used for fitting.
    package var trainingOpens: Int
    /// Bins used for fitting (the last one may be partial).
    package var bins: Int
    /// IRLS iterations run (linear solves), 0 when no IRLS ran.
    package var iterations: Int
    /// Whether the penalised deviance converged to the tolerance.
    package var converged: Bool
    /// The most drastic safety net used.
    package var fallback: Fallback
    /// Poisson deviance `2 Σ [y log(y/μ) − (y − μ)]` of the fitted model on
    /// the training bins (no penalty), finite; 0 when there were no bins.
    package var deviance: Double

    enum CodingKeys: String, CodingKey {
      case trainingOpens = "training_opens", bins, iterations, converged, fallback, deviance
    }

    package init(
      trainingOpens: Int = 0, bins: Int = 0, iterations: Int = 0, converged: Bool = false,
      fallback: Fallback = .none, deviance: Double = 0
    ) {
      self.trainingOpens = trainingOpens
      self.bins = bins
      self.iterations = iterations
      self.converged = converged
      self.fallback = fallback
      self.deviance = deviance
    }
  }

  // MARK: - Codable

  /// JSON keys, snake_case like the model file that embeds this:
  /// `bin_s`, `coefficients`, `diagnostics`, `feature_names`.
  enum CodingKeys: String, CodingKey {
    case binSeconds = "bin_s", coefficients, diagnostics, featureNames = "feature_names"
  }

  /// Reads a model as written by ``encode(to:)``.
  public init(from decoder: any Decoder) throws {
    let c = try decoder.container(keyedBy: CodingKeys.self)
    let names = try c.decode([String].self, forKey: .featureNames)
    guard names == HabitModel.featureNames else {
      throw DecodingError.dataCorruptedError(
        forKey: .featureNames, in: c,
        debugDescription: "habit model features \(names) differ from this build's \(HabitModel.featureNames)")
    }
    let beta = try c.decode([Double].self, forKey: .coefficients)
    guard beta.count == names.count, beta.allSatisfy(\.isFinite) else {
      throw DecodingError.dataCorruptedError(
        forKey: .coefficients, in: c,
        debugDescription: "need \(names.count) finite coefficients, got \(beta)")
    }
    let bin = try c.decode(Double.self, forKey: .binSeconds)
    guard bin.isFinite, bin > 0 else {
      throw DecodingError.dataCorruptedError(
        forKey: .binSeconds, in: c, debugDescription: "binSeconds must be finite and > 0, got \(bin)")
    }
    coefficients = beta
    binSeconds = bin
    diagnostics = try c.decode(Diagnostics.self, forKey: .diagnostics)
  }

  /// Writes the coefficients, bin width and diagnostics.
  public func encode(to encoder: any Encoder) throws {
    var c = encoder.container(keyedBy: CodingKeys.self)
    try c.encode(binSeconds, forKey: .binSeconds)
    try c.encode(coefficients, forKey: .coefficients)
    try c.encode(diagnostics, forKey: .diagnostics)
    try c.encode(HabitModel.featureNames, forKey: .featureNames)
  }
}
