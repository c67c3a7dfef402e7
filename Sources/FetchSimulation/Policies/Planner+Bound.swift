import FetchModels
import Foundation

extension PlannerPolicy {
  /// The look-ahead's bins: horizon / step, at least 1.
  var bins: Int { max(1, Int((params.horizonS / params.stepS).rounded(.down))) }

  /// An upper bound of candidate 0's value `v[0]` (the expected utility of
  /// fetching now) from O(1) model evaluations, so that a decision whose
  /// bound does not exceed the price of fetching now skips the look-ahead
  /// (it could not launch); nil where the argument below does not hold
  /// (negative or non-finite weights, the generator's truth). `terms` are
  /// the bins' credited activity factors (``ActivityTerms``).
  ///
  /// `v[0] = Σ_j p_j · g_j · toMid_j · fromEdge_0` with `fromEdge_0 = 1`,
  /// `toMid_j ∈ [0, 1]` non-increasing in j, and `g_j = U(m_j) − U(σ + m_j)`
  /// the gain at bin j's midpoint m_j, σ the time since the last sync.
  /// From U's closed form (``PlannerMath/utility(sinceSync:lambda:fresh:agePerHour:)``),
  ///
  ///     g(x) = U(x) − U(x + σ) = w·σ/3600 + e^(−λx) · pNew · (f − w/(3600·λ)),   pNew = 1 − e^(−λσ),
  ///
  /// so for f, w ≥ 0 every `g_j ≤ G = w·σ/3600 + pNew · max(0, f − w/(3600·λ))`
  /// (e^(−λx) ∈ (0, 1]), and `v[0] ≤ G · Σ_j p_j · toMid_j`. With ρ̄ at
  /// least every bin's intensity (``HabitTracker/maxIntensity(from:first:last:)``),
  /// each `p_j ≤ q̄ = 1 − e^(−ρ̄·step)` and the next open's mass over the K
  /// bins is `Σ_j p_j ≤ P = 1 − e^(−K·step·ρ̄)`, so
  /// `Σ_j p_j · toMid_j ≤ min(P · toMid_0, q̄ · Σ_j toMid_j)`. When the
  /// app-transition model conditions the distribution on q
  /// (``PlannerMath/condition(_:firstSeconds:step:on:)``: mass q in the first
  /// n bins, at most max(0, min(mass, 1) − q) after them), the sum is at most
  /// `q · toMid_0 + max(0, P − q) · toMid_n`. Relative margins of 10⁻⁹ and
  /// absolute ones (10⁻⁹ · (f + w · (σ + horizon)/3600) on G) cover the
  /// rounding of the computed values (errors of order 10⁻¹⁵ of the same
  /// terms over at most 10⁴ bins), so the bound holds for the computed bits.
  ///
  /// - Complexity: O(1 + horizon/5 min) table lookups, one `exp` and two
  ///   `expm1`.
  mutating func valueBound(at t: Double, _ now: FetchNow, terms: ActivityTerms) -> Double? {
    let f = params.freshWeight, w = params.ageWeightPerHour
    guard truth == nil, f >= 0, w >= 0, f.isFinite, w.isFinite else { return nil }
    let step = params.stepS, K = bins
    let last = (Double(K) - 0.5) * step
    let rho = habit.maxIntensity(from: t, first: 0.5 * step, last: last)
    let perBin = -expm1(-step * rho) * (1 + 1e-9) + 1e-15
    let mass = min(1, -expm1(-(Double(K) * step) * rho)) * (1 + 1e-9) + 1e-15
    var credit: Double
    if let q = transitionOdds(at: t) {
      let n = min(K, max(1, Int((params.pairWindowS / step).rounded(.up))))
      let inside = q * (1 + 1e-9) + 1e-15
      let outside = n < K ? max(0, mass - q + 1e-12) * terms.toMid[n] : 0
      credit = inside * terms.toMid[0] + outside
    } else {
      credit = min(mass * terms.toMid[0], perBin * terms.toMidSum)
    }
    credit = credit * (1 + 1e-9) + 1e-15
    let sigma = now.since, lambda = now.lambda
    let gain = w * sigma / 3600 + now.pNew * max(0, f - w / (3600 * lambda))
    let g = gain * (1 + 1e-9) + 1e-9 * (f + w * (sigma + last + step) / 3600)
    let bound = credit * g * (1 + 1e-9)
    return bound.isNaN ? nil : bound
  }

  /// The app-transition model's odds of an open of the app within
  /// ``PlannerParameters/pairWindowS`` when it conditions the look-ahead at
  /// `t`: at another app's open at `t`, the app's own last open stale
  /// (``TransitionModel/staleAfterS``); nil otherwise.
  func transitionOdds(at t: Double) -> Double? {
    guard params.pairWindowS > 0, let o = otherOpen, o.time == t, t - habit.lastAppOpen >= TransitionModel.staleAfterS
    else { return nil }
    return transitions.probability(after: o.app)
  }
}
