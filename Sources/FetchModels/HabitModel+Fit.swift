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
/// Call `LinearAlgebra.setSingleThreaded()` (or set `OPENBLAS_NUM_THREADS=1`)
/// before fitting many pairs in parallel.
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

// MARK: - Shared fits

/// Habit fits shared by the policies replayed for one user.
///
/// Every learning policy of a run (each `ios-minimum` and `ios-custom`
/// setting, IMP) fits the same (user, app) pairs on the same windows: the
/// training part, then nightly the history up to the same refit times. A fit
/// depends only on its sample window, prior, fitter and IRLS start, so the
/// first policy to ask computes it and the others reuse it.
///
/// Given the user's whole trace, the cache also builds each app's design
/// once for the whole window (features, counts and exposures of every bin;
/// ``HabitDesignTable``): a window starting at the trace start is a prefix
/// of it (the bins, their features and their counts are the same, only the
/// last bin is cut at the window end), so a nightly refit costs its IRLS
/// iterations only. The results are bit for bit those of
/// ``HabitFitter/fit(_:prior:start:)`` (tested).
///
/// Thread-safe (a lock), but meant for one user's replays on one thread.
package final class HabitFitCache: @unchecked Sendable {
  struct Key: Hashable {
    var user: String
    var app: Int32
    var from: UInt64
    var to: UInt64
    var fitter: HabitFitter
    var start: [UInt64]?
  }

  /// The user's whole trace, for the design tables (nil: none).
  private let trace: UserTrace?
  private var fits: [Key: HabitModel] = [:]
  private var tables: [Int32: HabitDesignTable] = [:]
  private let lock = NSLock()
  /// Fits computed and fits reused, for tests and benchmarks.
  package private(set) var computed = 0
  package private(set) var reused = 0

  /// - Parameter trace: the user's whole trace; samples of this user starting
  ///   at its start (and ending within it) are fitted from per-app design
  ///   tables. Their traces must hold the same opens before the window end
  ///   (a training part and the opens seen since, as the policies keep).
  package init(trace: UserTrace? = nil) {
    self.trace = trace
  }

  /// `fitter.fit(sample, prior:, start:)`, computed once per distinct
  /// (user, app, window, fitter, start); `prior` must be the same on every
  /// call (one population model per run).
  package func fit(_ sample: HabitSample, prior: HabitModel?, fitter: HabitFitter, start: [Double]? = nil) -> HabitModel {
    let key = Key(
      user: sample.trace.user, app: sample.app, from: sample.from.bitPattern, to: sample.to.bitPattern,
      fitter: fitter, start: start?.map(\.bitPattern))
    lock.lock()
    defer { lock.unlock() }
    if let m = fits[key] {
      reused += 1
      return m
    }
    let m: HabitModel
    if let trace, sample.trace.user == trace.user, sample.from == trace.start, sample.to <= trace.end,
      sample.app >= 0, Int(sample.app) < trace.apps.count, sample.to > sample.from,
      HabitBins(from: sample.from, to: sample.to, binSeconds: fitter.binSeconds).count > 0
    {
      let table = tables[sample.app] ?? HabitDesignTable(trace: trace, app: sample.app, binSeconds: fitter.binSeconds)
      tables[sample.app] = table
      m = table.fit(to: sample.to, prior: prior, fitter: fitter, start: start)
    } else {
      m = fitter.fit(sample, prior: prior, start: start)
    }
    fits[key] = m
    computed += 1
    return m
  }
}

/// One app's design over a user's whole trace: the rows of every bin from
/// the trace start (features at the bin start, opens in the bin, exposure),
/// the app's open times, and the prior's per-row shape once known.
final class HabitDesignTable {
  let bins: HabitBins
  /// `bins.count` × 12, column-major.
  let x: [Double]
  let y: [Double]
  let exposure: [Double]
  /// The app's open times in the window, sorted.
  let opens: [Double]
  /// ``HabitFitter/priorShape(x:row:rows:mean:)`` of every row, and the prior it is for.
  private var shape: (prior: [Double], values: [Double])?

  init(trace: UserTrace, app: Int32, binSeconds: Double) {
    bins = HabitBins(from: trace.start, to: trace.end, binSeconds: binSeconds)
    let n = bins.count
    var x = [Double](repeating: 0, count: n * HabitModel.featureCount)
    var y = [Double](repeating: 0, count: n)
    var exposure = [Double](repeating: 0, count: n)
    let sample = HabitSample(trace: trace, app: app, from: trace.start, to: trace.end)
    _ = HabitModel.fillDesign(sample, bins: bins, x: &x, y: &y, exposure: &exposure, rowOffset: 0, totalRows: n)
    self.x = x
    self.y = y
    self.exposure = exposure
    opens = trace.events.compactMap { $0.kind == .open && $0.app == app ? $0.time : nil }
  }

  /// Opens in [a, b).
  func opens(from a: Double, to b: Double) -> Int {
    let lo = firstIndex(in: 0..<opens.count) { opens[$0] >= a }
    let hi = firstIndex(in: 0..<opens.count) { opens[$0] >= b }
    return max(0, hi - lo)
  }

  /// The fit of the window [trace start, `to`): the first rows of the table,
  /// the last one cut at `to` as ``HabitBins`` cuts it.
  func fit(to: Double, prior: HabitModel?, fitter: HabitFitter, start: [Double]?) -> HabitModel {
    let window = HabitBins(from: bins.from, to: to, binSeconds: bins.binSeconds)
    let n = window.count
    let N = bins.count
    let p = HabitModel.featureCount
    var wx = [Double](repeating: 0, count: n * p)
    for j in 0..<p {
      for i in 0..<n { wx[i + j * n] = x[i + j * N] }
    }
    var wy = Array(y[0..<n])
    var we = Array(exposure[0..<n])
    // The last row: the opens before `to` that fillDesign's bin formula puts
    // there (a sliver too short for a bin of its own included), its exposure.
    let lo = bins.from, b = bins.binSeconds
    var i = firstIndex(in: 0..<opens.count) { opens[$0] >= to } - 1
    var last = 0
    while i >= 0 && opens[i] >= lo && Int(((opens[i] - lo) / b).rounded(.down)) >= n - 1 {
      last += 1
      i -= 1
    }
    wy[n - 1] = Double(last)
    we[n - 1] = window.exposure(n - 1)
    var shapeValues: [Double]?
    if let prior {
      var mean = [Double](repeating: 0, count: p)
      for j in 1..<p { mean[j] = prior.coefficients[j] }
      if shape?.prior != prior.coefficients {
        shape = (prior.coefficients, (0..<N).map { HabitFitter.priorShape(x: x, row: $0, rows: N, mean: mean) })
      }
      shapeValues = Array(shape!.values[0..<n])
    }
    return fitter.fit(
      x: wx, y: wy, exposure: we, opens: opens(from: bins.from, to: to), prior: prior, start: start,
      priorShape: shapeValues)
  }
}

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
    func usable(_ b: [Double]) -> Bool { b.allSatisfy { $0.isFinite && abs($0) <= coefficientBound } }
    do {
      var (gram, rhs) = try LinearAlgebra.normalEquations(x, weights: w, wz, scratch: &scratch)
      let base = gram
      for j in 0..<n {
        gram[j, j] += penalty[j]
        rhs[j] += penalty[j] * mean[j]
      }
      do {
        let b = try LinearAlgebra.symmetricPositiveDefiniteSolve(gram, rhs)
        if usable(b) { return (b, .none) }
        lastError = "Cholesky solution out of range"
      } catch {
        lastError = "\(error)"
      }
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
      do {
        let b = try LinearAlgebra.symmetricPositiveDefiniteSolve(gram10, rhs10)
        if usable(b) { return (b, .largerRidge) }
        lastError = "Cholesky solution with a larger ridge out of range"
      } catch {
        lastError = "\(error)"
      }
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
    do {
      let beta = try LinearAlgebra.leastSquares(Matrix(rows: rows, cols: n, columnMajor: a), b)
      if usable(beta) { return (beta, .leastSquares) }
      lastError = "least-squares solution out of range"
    } catch {
      lastError = "\(error)"
    }
    return nil
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
