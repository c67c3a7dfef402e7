import Foundation

/// The plan's arithmetic, free of the replay (so tests can check it by hand).
package enum PlannerMath {
  /// Utility of showing content synced `dt` seconds before an open, for a
  /// content-update rate `lambda` per second: `fresh · e^(−λ·dt) −
  /// age/h · E[age]/3600`, with E[age] = dt − (1 − e^(−λ·dt))/λ (the
  /// expected time since the first update after the sync; Cho and
  /// Garcia-Molina's age under Poisson updates).
  package static func utility(sinceSync dt: Double, lambda: Double, fresh: Double, agePerHour: Double) -> Double {
    let x = max(0, dt)
    let pf = exp(-lambda * x)
    let age = max(0, x - (-expm1(-lambda * x)) / lambda)
    return fresh * pf - agePerHour * age / 3600
  }

  /// U((d + ½)·step) for d in 0..<`bins`: the utility at each bin's
  /// midpoint after a fetch at the start of the first (the `after` of
  /// ``candidateValues(openProbability:baseline:after:activity:)``); it
  /// depends on the update rate only, so the planner keeps it between
  /// fetches.
  ///
  /// - Complexity: O(bins).
  static func utilitiesAfter(bins K: Int, step: Double, lambda: Double, fresh: Double, agePerHour: Double) -> [Double] {
    var after = [Double](repeating: 0, count: K)
    for d in 0..<K {
      after[d] = utility(sinceSync: (Double(d) + 0.5) * step, lambda: lambda, fresh: fresh, agePerHour: agePerHour)
    }
    return after
  }

  /// Expected utility gained by fetching at the start of each candidate bin
  /// `k` (delay `k · step`): `Σ_{j≥k} p[j] · (U((j − k + ½)·step) −
  /// base[j])`, where `p[j]` is the probability that the next open falls in
  /// bin j, `base[j]` the utility at bin j's midpoint without a fetch and
  /// `after[d]` = U((d + ½)·step)
  /// (``utilitiesAfter(bins:step:lambda:fresh:agePerHour:)``).
  /// Opens before the candidate gain nothing from it (conservative).
  ///
  /// With `terms` built from the expected number of the user's other radio
  /// activities (other apps' opens and wakes) in each bin, the gain at
  /// bin j is credited to the candidate at k only with the probability
  /// `e^(−A)` that none falls between them (A: the expected count from the
  /// candidate to bin j's midpoint): such a moment is a cheaper and later
  /// chance to fetch for that open, so the open is not this fetch's to serve.
  ///
  /// - Complexity: O(K²) for K bins.
  static func candidateValues(
    openProbability p: [Double], baseline base: [Double], after: [Double], activity terms: ActivityTerms
  ) -> [Double] {
    var v = [Double](repeating: 0, count: p.count)
    candidateValues(&v, candidates: 0..<p.count, openProbability: p, baseline: base, after: after, activity: terms)
    return v
  }

  /// Fills `v[k]` for the candidates `ks` as
  /// ``candidateValues(openProbability:baseline:after:activity:)`` does (the
  /// same bits), so that a decision can stop after candidate 0.
  ///
  /// - Complexity: O(K) per candidate.
  static func candidateValues(
    _ v: inout [Double], candidates ks: Range<Int>, openProbability p: [Double], baseline base: [Double],
    after: [Double], activity terms: ActivityTerms
  ) {
    let K = p.count
    p.withUnsafeBufferPointer { p in
      base.withUnsafeBufferPointer { base in
        after.withUnsafeBufferPointer { after in
          terms.toMid.withUnsafeBufferPointer { toMid in
            for k in ks {
              var s = 0.0
              for j in k..<K { s += p[j] * (after[j - k] - base[j]) * toMid[j] }
              v[k] = s * terms.fromEdge[k]
            }
          }
        }
      }
    }
  }

  /// The part of candidate 0's value (``candidateValues(openProbability:baseline:after:activity:)``)
  /// from the opens before each candidate: `before[k] = Σ_{j<k} (candidate 0's term j)`,
  /// what a fetch now adds when another follows at candidate k.
  ///
  /// - Complexity: O(K).
  static func nowValueBefore(
    openProbability p: [Double], baseline base: [Double], after: [Double], activity terms: ActivityTerms
  ) -> [Double] {
    var before = [Double](repeating: 0, count: p.count)
    var acc = 0.0
    for j in 0..<p.count {
      before[j] = acc
      acc += p[j] * (after[j] - base[j]) * terms.credit[j]
    }
    return before
  }

  /// Probability of the next open in each bin from per-bin intensities
  /// (opens per second): `p[j] = S_j (1 − e^(−ρ_j·step))`, `S_{j+1} = S_j e^(−ρ_j·step)`.
  ///
  /// - Complexity: O(K).
  package static func nextOpenProbabilities(intensities rho: [Double], step: Double) -> [Double] {
    nextOpenProbabilities(survivals: rho.map { exp(-max(0, $0) * step) })
  }

  /// ``nextOpenProbabilities(intensities:step:)`` from each bin's survival
  /// `q_j = e^(−max(0, ρ_j)·step)`: the same bits.
  ///
  /// - Complexity: O(K).
  static func nextOpenProbabilities(survivals: [Double]) -> [Double] {
    var s = 1.0
    return survivals.map { q in
      defer { s *= q }
      return s * (1 - q)
    }
  }

  /// Rescales a next-open distribution so that the mass of the bins whose
  /// midpoints fall within the first `w` seconds is `q` (the rest keeps its
  /// shape, scaled to the remaining mass of the original).
  ///
  /// - Complexity: O(K).
  package static func condition(_ p: inout [Double], firstSeconds w: Double, step: Double, on q: Double) {
    let n = min(p.count, max(1, Int((w / step).rounded(.up))))
    let inside = p[..<n].reduce(0, +)
    let total = p.reduce(0, +)
    let outside = total - inside
    let a = inside > 0 ? q / inside : 0
    let b = outside > 0 ? max(0, min(total, 1) - q) / outside : 0
    for j in 0..<p.count { p[j] *= j < n ? a : b }
    if inside <= 0 && n > 0 { for j in 0..<n { p[j] = q / Double(n) } }
  }

  /// The odds of a state `u` seconds ahead, ramping linearly from `now`
  /// (0 or 1: the current state) to the model's answer `atHorizon` at the
  /// model's horizon `h`, then holding it.
  package static func ramp(now: Double, atHorizon: Double, after u: Double, horizon h: Double) -> Double {
    let w = min(1, max(0, u / h))
    return now + (atHorizon - now) * w
  }
}
