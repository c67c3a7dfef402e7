import Foundation

// MARK: - Fast fits

extension HabitDesignTable {
  /// The fast fit of the window [trace start, `to`) given the base window
  /// [trace start, `base`) (a policy's training part):
  ///
  /// - `to ≤ base`: the penalised fit of the window, by grouped IRLS from
  ///   the prior mean (the same optimum as
  ///   ``fit(to:prior:fitter:start:)`` up to the IRLS tolerance);
  /// - `to > base`: a refit from the previous link of a daily chain, the
  ///   window ending a day earlier (or the base window, when that is not
  ///   after the base): the previous window's complete rows enter by their
  ///   normal equations at the fits that had them as new rows
  ///   (``HabitFrozenRows``, each day's rows folded in at that day's fit),
  ///   the rows after them exactly; grouped IRLS from the previous fit's β.
  ///   A nightly refit thus evaluates about one day of rows per iteration.
  ///
  /// A pure function of (`to`, `base`, `prior`, `fitter`) and the table
  /// (the chain's links are fixed by `to` and `base`): it does not depend
  /// on which fits were asked for before. When a grouped solve fails it
  /// returns the row-wise ``fit(to:prior:fitter:start:)``, which has the
  /// safety nets.
  ///
  /// - Complexity: O(rows after the previous link + groups · 10²) per IRLS
  ///   iteration, plus O(window rows) adds for the prior mean; the links
  ///   not computed yet first (each kept).
  func fastFit(to: Double, base: Double, prior: HabitModel?, fitter: HabitFitter) -> HabitModel {
    base < to ? chainFit(to: to, base: base, prior: prior, fitter: fitter).model : baseFit(base: to, prior: prior, fitter: fitter).model
  }

  /// The chain link of `to` (> `base`): its fit, and the window's complete
  /// rows as frozen rows for the next link (nil when a grouped fit failed).
  func chainFit(to: Double, base: Double, prior: HabitModel?, fitter: HabitFitter) -> (model: HabitModel, frozen: HabitFrozenRows?) {
    let key = ChainKey(to: to.bitPattern, base: base.bitPattern, fitter: fitter)
    if let c = chain[key] { return c }
    let previous = to - 86_400
    let prev =
      previous > base
      ? chainFit(to: previous, base: base, prior: prior, fitter: fitter) : baseFit(base: base, prior: prior, fitter: fitter)
    let n = HabitBins(from: bins.from, to: to, binSeconds: bins.binSeconds).count
    let result: (model: HabitModel, frozen: HabitFrozenRows?)
    if let f = prev.frozen, f.rows < n, let g = groupedWindowFit(to: to, frozen: f, prior: prior, fitter: fitter) {
      // The rows between the previous window's last and this one's, at this fit.
      result = (g.model, n - 1 > f.rows ? f.appending(frozenRows(g.sums, rows: n - 1, at: g.model.coefficients)) : f)
    } else if prev.frozen == nil, n >= 2, HabitBins(from: bins.from, to: max(previous, base), binSeconds: bins.binSeconds).count < 2,
      let g = groupedWindowFit(to: to, frozen: nil, prior: prior, fitter: fitter)
    {
      // The previous window had too few rows to freeze (an empty training
      // part): this link starts the chain, as a base fit does, so later
      // links evaluate only their new rows.
      result = (g.model, frozenRows(g.sums, rows: n - 1, at: g.model.coefficients))
    } else {
      result = (fit(to: to, prior: prior, fitter: fitter, start: prev.model.coefficients), nil)
    }
    chain[key] = result
    return result
  }

  /// The base fit of [trace start, `base`) and its frozen rows (nil when the
  /// grouped fit failed or the base has fewer than 2 rows).
  func baseFit(base: Double, prior: HabitModel?, fitter: HabitFitter) -> (model: HabitModel, frozen: HabitFrozenRows?) {
    let key = BaseKey(to: base.bitPattern, fitter: fitter)
    if let b = bases[key] { return b }
    let nb = HabitBins(from: bins.from, to: base, binSeconds: bins.binSeconds).count
    let result: (model: HabitModel, frozen: HabitFrozenRows?)
    if nb >= 2 && base <= bins.to, let g = groupedWindowFit(to: base, frozen: nil, prior: prior, fitter: fitter) {
      result = (g.model, frozenRows(g.sums, rows: nb - 1, at: g.model.coefficients))
    } else if nb >= 1 && base <= bins.to {
      result = (fit(to: base, prior: prior, fitter: fitter, start: nil), nil)
    } else {
      // No rows before the base: nothing to freeze; a placeholder start.
      result = (HabitFitter.constantModel(opens: 0, exposure: 0, binSeconds: bins.binSeconds, diagnostics: .init()), nil)
    }
    bases[key] = result
    return result
  }

  /// Grouped IRLS on the window [trace start, `to`), the rows of `frozen` by
  /// their normal equations; nil when a solve failed. Also returns the
  /// sums of the rows evaluated, at the fit (``HabitGroupedSums``).
  func groupedWindowFit(
    to: Double, frozen: HabitFrozenRows?, prior: HabitModel?, fitter: HabitFitter
  ) -> (model: HabitModel, sums: HabitGroupedSums)? {
    let window = HabitBins(from: bins.from, to: to, binSeconds: bins.binSeconds)
    let n = window.count
    guard n > 0, n <= bins.count, (frozen?.rows ?? 0) < n else { return nil }
    let p = HabitModel.featureCount
    let lastY = Double(lastRowOpens(to: to, rows: n))
    let lastExposure = window.exposure(n - 1)
    let opensInWindow = opens(from: bins.from, to: to)
    // Prior mean, as HabitFitter.fit(x:y:exposure:opens:prior:start:priorShape:).
    var mean = [Double](repeating: 0, count: p)
    if let prior { for j in 1..<p { mean[j] = prior.coefficients[j] } }
    let scaled = scaledExposure(rows: n, last: lastExposure, prior: prior)
    mean[0] = log(HabitFitter.smoothedRate(opens: Double(opensInWindow), exposure: scaled))
    guard
      let r = groupedIRLS(
        lo: frozen?.rows ?? 0, n: n, lastY: lastY, lastLogExposure: log(lastExposure), frozen: frozen,
        penalty: fitter.penalty, mean: mean, start: frozen?.beta ?? mean, fitter: fitter)
    else { return nil }
    let model = HabitModel(
      coefficients: r.beta, binSeconds: bins.binSeconds,
      diagnostics: .init(
        trainingOpens: opensInWindow, bins: n, iterations: r.iterations, converged: r.converged, fallback: .none,
        deviance: r.deviance.isFinite ? r.deviance : 0))
    return (model, r.sums)
  }
}
