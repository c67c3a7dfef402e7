import FetchLinearAlgebra
import FetchSupport
import FetchTraces
import Foundation

/// One (user, app) training window: the opens of `app` in [`from`, `to`) of
/// `trace` are the responses; the trace's opens before each bin (also before
/// `from`) give the recency features.
package struct HabitSample: Sendable, Equatable {
  /// The user's whole trace (events outside the window only feed recency).
  package var trace: UserTrace
  /// Index of the app into ``UserTrace/apps``.
  package var app: Int32
  /// Start of the training window, Unix s.
  package var from: Double
  /// End of the training window (exclusive), Unix s.
  package var to: Double

  /// - Precondition: `from` and `to` finite, `from ≤ to`.
  package init(trace: UserTrace, app: Int32, from: Double, to: Double) {
    precondition(from.isFinite && to.isFinite && from <= to, "HabitSample needs finite from ≤ to, got [\(from), \(to))")
    self.trace = trace
    self.app = app
    self.from = from
    self.to = to
  }

  /// The whole observation window of `trace`.
  package init(trace: UserTrace, app: Int32) {
    self.init(trace: trace, app: app, from: trace.start, to: trace.end)
  }
}

/// Why ``HabitFitter/fitPopulation(_:)`` could not produce a model.
package struct HabitFitError: Error, Sendable, Equatable, CustomStringConvertible {
  enum Kind: Sendable, Equatable {
    case noBins
    case noOpens
    case solveFailed
  }

  let kind: Kind
  /// Whether the fit had nothing to fit: no bins or no opens in its windows.
  package var isEmptyData: Bool { kind == .noBins || kind == .noOpens }
  /// Details in words.
  package let message: String

  init(_ kind: Kind, _ message: String) {
    self.kind = kind
    self.message = message
  }

  package var description: String { message }
}

/// Fits ``HabitModel``s by penalised iteratively reweighted least squares
/// (IRLS; Green, *Iteratively reweighted least squares for maximum likelihood
/// estimation, and some robust and resistant alternatives*, JRSS-B 46(2),
/// 1984, DOI 10.1111/j.2517-6161.1984.tb01288.x), shrinking each pair's shape
/// toward a population prior.
///
/// The fit maximises the penalised Poisson log-likelihood, i.e. minimises
///
///     D(β) + (β − m)ᵀ Λ (β − m),   D = 2 Σᵢ [yᵢ log(yᵢ/μᵢ) − (yᵢ − μᵢ)]
///
/// over bins i with counts yᵢ and means μᵢ = eᵢ exp(xᵢ·β) (eᵢ the bin's
/// exposure, < 1 only for a partial last bin, plus an offset in the
/// population fit). Λ = diag(``interceptRidge``, ``shapeRidge``, …). Each
/// step solves
///
///     (Xᵀ W X + Λ) β = Xᵀ W z + Λ m,   W = diag(μ),  z = η + (y − μ)/μ
///
/// by Cholesky (η the linear predictor without offset, clamped to ±30), halving
/// the step while the penalised deviance increases. When a Cholesky solve
/// fails the step is retried with a 10× larger ridge (plus 10⁻⁸ of the mean
/// diagonal), then by QR least squares on the weighted, penalty-augmented
/// system; when that fails too, the fit falls back to the prior mean m.
///
/// Fits of many pairs run in parallel on the caller's threads; the solvers
/// keep OpenBLAS on the calling thread (`LinearAlgebra.setSingleThreaded()`).
package struct HabitFitter: Sendable, Hashable {
  /// Bin length, s. Default 900 (15 min).
  package var binSeconds: Double
  /// λ on each shape coefficient (all but the intercept), toward the prior's
  /// (toward 0 in the population fit and without a prior). Default 20: a
  /// Fourier coefficient's Fisher information is about half the number of
  /// opens, so the prior weighs as much as ≈ 40 opens, and a pair with a few
  /// hundred opens is shrunk by under 10 %.
  package var shapeRidge: Double
  /// λ on the intercept, toward the pair's own log mean rate. Default 10⁻⁴:
  /// negligible against the data, but keeps the intercept finite (the
  /// expected opens ≈ 10⁻³ per window) for a pair with no opens.
  package var interceptRidge: Double
  /// At most this many IRLS iterations. Default 25.
  package var maxIterations: Int
  /// Convergence when |ΔD_pen| / (|D_pen| + 0.1) < tolerance (R's `glm.fit`
  /// rule). Default 10⁻⁶.
  package var tolerance: Double
  /// The population fit uses at most this many (user, app) pairs: those with
  /// the smallest stable hash of (user, app name, window start), so the choice
  /// does not depend on the input order. Default 128.
  package var maxPopulationPairs: Int
  /// The population fit uses at most the last this many bins of each pair's
  /// window. Default 2,688 (28 days of 15-min bins). With the defaults the
  /// pooled design holds ≤ 344,064 rows: ≈ 33 MB, ≈ 70 MB at peak.
  package var maxPopulationBinsPerPair: Int

  package init(
    binSeconds: Double = 900, shapeRidge: Double = 20, interceptRidge: Double = 1e-4,
    maxIterations: Int = 25, tolerance: Double = 1e-6, maxPopulationPairs: Int = 128,
    maxPopulationBinsPerPair: Int = 2_688
  ) {
    self.binSeconds = binSeconds
    self.shapeRidge = shapeRidge
    self.interceptRidge = interceptRidge
    self.maxIterations = maxIterations
    self.tolerance = tolerance
    self.maxPopulationPairs = maxPopulationPairs
    self.maxPopulationBinsPerPair = maxPopulationBinsPerPair
    _checkParameters()
  }

  /// Traps with a clear message on parameters no fit can use.
  func _checkParameters() {
    precondition(binSeconds.isFinite && binSeconds > 0, "HabitFitter.binSeconds must be finite and > 0")
    precondition(shapeRidge.isFinite && shapeRidge >= 0, "HabitFitter.shapeRidge must be finite and ≥ 0")
    precondition(interceptRidge.isFinite && interceptRidge >= 0, "HabitFitter.interceptRidge must be finite and ≥ 0")
    precondition(maxIterations >= 1, "HabitFitter.maxIterations must be ≥ 1")
    precondition(tolerance.isFinite && tolerance > 0, "HabitFitter.tolerance must be finite and > 0")
    precondition(maxPopulationPairs >= 1, "HabitFitter.maxPopulationPairs must be ≥ 1")
    precondition(maxPopulationBinsPerPair >= 1, "HabitFitter.maxPopulationBinsPerPair must be ≥ 1")
  }

  /// The diagonal of Λ: ``interceptRidge``, then ``shapeRidge`` for the rest.
  var penalty: [Double] {
    [interceptRidge] + [Double](repeating: shapeRidge, count: HabitModel.featureCount - 1)
  }

  /// Smoothed mean opens per bin: (opens + ½) / (exposure + 1), the posterior
  /// mean under a Gamma(½, 1 bin) prior. Positive and finite for any data.
  static func smoothedRate(opens: Double, exposure: Double) -> Double {
    (opens + 0.5) / (exposure + 1)
  }

  // MARK: - Population

  /// Fits the population model: the pooled shape (time of day, weekend,
  /// recency) of many (user, app) windows, ridge toward 0.
  ///
  /// Each pair p gets the offset log r̄ₚ, r̄ₚ = (opens + ½)/(bins + 1) its
  /// smoothed mean opens per bin, so pairs differing only in volume share one
  /// shape. The returned intercept is the fitted one plus the mean of log r̄ₚ:
  /// the model predicts for a pair of geometric-mean volume.
  ///
  /// Caps (deterministic, see ``maxPopulationPairs`` and
  /// ``maxPopulationBinsPerPair``) bound memory whatever the population size.
  ///
  /// - Complexity: O(events) to build, then O(rows · 12²) per iteration.
  /// - Throws: ``HabitFitError`` when there are no bins, no opens at all, or
  ///   every linear solve failed.
  package func fitPopulation(_ samples: [HabitSample]) throws -> HabitModel {
    _checkParameters()
    let chosen = Self.choosePairs(samples, limit: maxPopulationPairs)
    let layouts = chosen.map {
      HabitBins(from: $0.from, to: $0.to, binSeconds: binSeconds, lastBins: maxPopulationBinsPerPair)
    }
    let rows = layouts.reduce(0) { $0 + $1.count }
    guard rows > 0 else { throw HabitFitError(.noBins, "population fit: no bins in \(samples.count) sample windows") }
    let p = HabitModel.featureCount
    var x = [Double](repeating: 0, count: rows * p)
    var y = [Double](repeating: 0, count: rows)
    var offset = [Double](repeating: 0, count: rows)
    var logRates: [Double] = []
    var row = 0
    for (s, bins) in zip(chosen, layouts) where bins.count > 0 {
      let opens = HabitModel.fillDesign(s, bins: bins, x: &x, y: &y, exposure: &offset, rowOffset: row, totalRows: rows)
      var exposure = 0.0
      for i in row..<(row + bins.count) { exposure += offset[i] }
      let logRate = log(Self.smoothedRate(opens: Double(opens), exposure: exposure))
      logRates.append(logRate)
      for i in row..<(row + bins.count) { offset[i] = log(offset[i]) + logRate }
      row += bins.count
    }
    let totalOpens = y.reduce(0, +)
    guard totalOpens > 0 else {
      throw HabitFitError(.noOpens, "population fit: no opens in \(rows) bins of \(chosen.count) pairs")
    }
    let design = Matrix(rows: rows, cols: p, columnMajor: x)
    var start = [Double](repeating: 0, count: p)
    start[0] = log(totalOpens / offset.reduce(0) { $0 + exp($1) })
    let result = PoissonIRLS.fit(
      x: design, y: y, offset: offset, penalty: penalty, mean: [Double](repeating: 0, count: p),
      start: start, maxIterations: maxIterations, tolerance: tolerance)
    guard !result.failed else {
      throw HabitFitError(.solveFailed, "population fit: every linear solve failed (\(result.lastError ?? "?"))")
    }
    var beta = result.beta
    beta[0] += logRates.reduce(0, +) / Double(logRates.count)
    return HabitModel(
      coefficients: beta, binSeconds: binSeconds,
      diagnostics: .init(
        trainingOpens: Int(totalOpens), bins: rows, iterations: result.iterations,
        converged: result.converged, fallback: result.fallback, deviance: result.deviance))
  }

  /// At most `limit` samples, those with the smallest stable hash of
  /// (user, app name, window start), in input order.
  static func choosePairs(_ samples: [HabitSample], limit: Int) -> [HabitSample] {
    guard samples.count > limit else { return samples }
    func key(_ s: HabitSample) -> UInt64 {
      let app = s.app >= 0 && Int(s.app) < s.trace.apps.count ? s.trace.apps[Int(s.app)] : "#\(s.app)"
      let h = StableHash.combine(StableHash.fnv1a(s.trace.user), StableHash.fnv1a(app))
      return StableHash.combine(h, s.from.bitPattern)
    }
    let keyed = samples.indices.map { (key: key(samples[$0]), index: $0) }
    let picked = keyed.sorted { ($0.key, $0.index) < ($1.key, $1.index) }.prefix(limit).map(\.index).sorted()
    return picked.map { samples[$0] }
  }

  // MARK: - One pair

  /// Fits one (user, app) pair, shrinking its shape toward `prior`'s.
  ///
  /// The prior mean m has the prior's shape coefficients and the intercept
  /// m₀ = log((opens + ½) / (Σᵢ eᵢ exp(xᵢ·m_shape) + 1)): the pair's own
  /// smoothed rate under the prior's shape (so a prior fitted with another bin
  /// length still works). Without a prior, m = (log r̄, 0, …, 0), shrinking
  /// toward a constant rate.
  ///
  /// Never throws and never returns non-finite coefficients: when every solve
  /// fails the model is m (fallback `.prior`, or `.constantRate` without a
  /// prior); for an empty window (`from == to`) it is the prior itself, or a
  /// constant ½ open per bin.
  ///
  /// - Parameter start: where IRLS starts (default m); a refit on a little
  ///   more data converges in fewer iterations from the previous fit's
  ///   coefficients. The optimum does not depend on it (the objective is
  ///   strictly convex), only the rounding within ``tolerance``.
  /// - Complexity: O(events + bins · 12²) per iteration; ≈ 0.3 ms for 21
  ///   days of 15-min bins in a release build.
  package func fit(_ sample: HabitSample, prior: HabitModel?, start: [Double]? = nil) -> HabitModel {
    _checkParameters()
    let p = HabitModel.featureCount
    let bins = HabitBins(from: sample.from, to: sample.to, binSeconds: binSeconds)
    let rows = bins.count
    guard rows > 0 else {
      if let prior {
        return HabitModel(
          coefficients: prior.coefficients, binSeconds: prior.binSeconds, diagnostics: .init(fallback: .prior))
      }
      return Self.constantModel(opens: 0, exposure: 0, binSeconds: binSeconds, diagnostics: .init(fallback: .constantRate))
    }
    var x = [Double](repeating: 0, count: rows * p)
    var y = [Double](repeating: 0, count: rows)
    var exposure = [Double](repeating: 0, count: rows)
    let opens = HabitModel.fillDesign(sample, bins: bins, x: &x, y: &y, exposure: &exposure, rowOffset: 0, totalRows: rows)
    return fit(x: x, y: y, exposure: exposure, opens: opens, prior: prior, start: start)
  }

  /// The fit of ``fit(_:prior:start:)`` on a design already built
  /// (``HabitModel/fillDesign(_:bins:x:y:exposure:rowOffset:totalRows:)``'s
  /// layout). `priorShape[i]`, when given, is exp(clamp(Σ_{j≥1} x_ij m_j)) for
  /// the prior's shape m, precomputed (``HabitFitCache`` shares it between
  /// refits).
  func fit(
    x: [Double], y: [Double], exposure: [Double], opens: Int, prior: HabitModel?, start: [Double]?,
    priorShape: [Double]? = nil
  ) -> HabitModel {
    let p = HabitModel.featureCount
    let rows = y.count
    // Prior mean: the prior's shape, the pair's own rate.
    var mean = [Double](repeating: 0, count: p)
    var scaled = exposure.reduce(0, +)
    if let prior {
      for j in 1..<p { mean[j] = prior.coefficients[j] }
      scaled = 0
      for i in 0..<rows {
        scaled += exposure[i] * (priorShape?[i] ?? Self.priorShape(x: x, row: i, rows: rows, mean: mean))
      }
    }
    mean[0] = log(Self.smoothedRate(opens: Double(opens), exposure: scaled))
    let offset = exposure.map { log($0) }
    let design = Matrix(rows: rows, cols: p, columnMajor: x)
    let result = PoissonIRLS.fit(
      x: design, y: y, offset: offset, penalty: penalty, mean: mean,
      start: start.flatMap { $0.count == p && $0.allSatisfy(\.isFinite) ? $0 : nil } ?? mean,
      maxIterations: maxIterations, tolerance: tolerance)
    if result.failed {
      let fallback: HabitModel.Fallback = prior == nil ? .constantRate : .prior
      let deviance = PoissonIRLS.deviance(x: design, y: y, offset: offset, beta: mean)
      return HabitModel(
        coefficients: mean, binSeconds: binSeconds,
        diagnostics: .init(
          trainingOpens: opens, bins: rows, iterations: result.iterations, converged: false,
          fallback: fallback, deviance: deviance.isFinite ? deviance : 0))
    }
    return HabitModel(
      coefficients: result.beta, binSeconds: binSeconds,
      diagnostics: .init(
        trainingOpens: opens, bins: rows, iterations: result.iterations, converged: result.converged,
        fallback: result.fallback, deviance: result.deviance))
  }

  /// exp(clamp(Σ_{j≥1} x_ij m_j)): row i's rate under the shape m, relative
  /// to the intercept.
  @inline(__always)
  static func priorShape(x: [Double], row i: Int, rows: Int, mean: [Double]) -> Double {
    var s = 0.0
    for j in 1..<HabitModel.featureCount { s += x[i + j * rows] * mean[j] }
    return exp(HabitModel.clampEta(s))
  }

  /// A constant-rate model at the smoothed rate (opens + ½)/(exposure + 1) per bin.
  static func constantModel(
    opens: Int, exposure: Double, binSeconds: Double, diagnostics: HabitModel.Diagnostics
  ) -> HabitModel {
    var beta = [Double](repeating: 0, count: HabitModel.featureCount)
    beta[0] = log(smoothedRate(opens: Double(opens), exposure: exposure))
    return HabitModel(coefficients: beta, binSeconds: binSeconds, diagnostics: diagnostics)
  }
}
