import Foundation

/// The generator's intensity of an app's opens given the opens seen so far:
/// what a scheduler that knew the generator's models (not its draws) would
/// expect next.
///
/// The generator (``SyntheticPopulation``) draws pickups from the daily
/// rhythm at the rate ρ(t) = (1 − q)/A × the marginal open rate of
/// ``SyntheticTruth/openIntensity(app:at:)`` summed over the apps; after each
/// pickup, with probability q, another pickup follows once a log-normal delay
/// has passed since the pickup's last session ended (+ 1 s). A pickup opens
/// a geometric number of apps (mean A); its first is, with probability r,
/// one of the last M apps opened, else drawn from the hour's app shares
/// s_a(h). So, with f and F the delay's density and distribution and e_j the
/// ends of the recent pickups:
///
///     λ_pickup(t) = ρ(t) + Σ_{j < last} q·f(t − e_j − 1) + q·f(x)/(1 − q·F(x)),  x = t − e_last − 1
///     λ_a(t)      = λ_pickup(t) · (first_a + (A − 1)·s_a(h)),
///     first_a     = (1 − r)·s_a(h) + r·(opens of a among the last M)/M
///
/// (the last pickup's term is the hazard of its repickup given that none
/// came yet; an earlier pickup's is not conditioned, as a later pickup may
/// have been its repickup). Averaged over histories λ_a is the marginal
/// intensity. Left out: the pickups a session delays, and the order of the
/// apps within a pickup (the planner's transition model sees it).
///
/// Opens are grouped into pickups as the trace shows them: an open that
/// starts within ``groupGapS`` of the last session's end continues that
/// pickup (the generator's switch gaps between apps have median 4 s and
/// 99.9 % below 40 s).
package struct ConditionalOpens: Sendable {
  /// Seconds after a session's end within which an open continues its pickup.
  package static let groupGapS = 60.0
  /// Pickups older than this are left out, s: at the generator's defaults
  /// a repickup comes later than 6 h with probability 0.0014, and a pickup
  /// 6 h old adds q·f(6 h) ≈ 3·10⁻⁴ pickups per hour.
  package static let memoryS = 6 * 3600.0
  /// At most this many recent pickups are kept.
  static let maxPickups = 16

  let truth: SyntheticTruth
  /// Ends of the recent pickups' last sessions, UTC s, oldest first.
  private(set) var pickupEnds: [Double] = []
  /// The last apps opened (a ring of `repeatMemory`), and how many opens were seen.
  private var recent: [String]
  private var seen = 0

  /// No opens recorded yet: the rhythm alone, no repickup pending.
  package init(truth: SyntheticTruth) {
    self.truth = truth
    recent = Array(repeating: "", count: truth.clustering.repeatMemory)
  }

  /// Records an open of `app` at `t` whose session lasts `length` s.
  package mutating func record(openAt t: Double, length: Double, app: String) {
    let end = t + max(0, length)
    if let last = pickupEnds.last, t <= last + Self.groupGapS {
      pickupEnds[pickupEnds.count - 1] = max(last, end)
    } else {
      pickupEnds.append(end)
      let old = pickupEnds.firstIndex { $0 >= t - Self.memoryS } ?? pickupEnds.count
      let drop = max(old, pickupEnds.count - Self.maxPickups)
      if drop > 0 { pickupEnds.removeFirst(drop) }
    }
    recent[seen % recent.count] = app
    seen += 1
  }

  /// The intensity of the opens of `app` at `t`, per s, given the opens
  /// recorded (all before `t`) and none between the last of them and `t`.
  ///
  /// - Complexity: O(recent pickups + M).
  package func intensity(app: String, at t: Double) -> Double {
    let c = truth.clustering
    let marginal = truth.openIntensity(app: app, at: t)
    let total = truth.totalOpenIntensity(at: t)
    guard total > 0, marginal > 0 else { return 0 }
    let share = marginal / total
    let rhythm = total * (1 - c.repickup) / c.appsPerPickup
    var pending = 0.0
    for (j, e) in pickupEnds.enumerated() {
      let x = t - e - 1
      guard x > 0 else { continue }
      let density = c.repickup * Self.logNormalDensity(x, median: c.delayMedianS, sigma: c.delaySigma)
      if j == pickupEnds.count - 1 {
        let waited = 1 - c.repickup * Self.logNormalCDF(x, median: c.delayMedianS, sigma: c.delaySigma)
        pending += waited > 0 ? density / waited : 0
      } else {
        pending += density
      }
    }
    let m = min(seen, recent.count)
    let repeats = m > 0 ? Double(recent[..<m].reduce(0) { $0 + ($1 == app ? 1 : 0) }) / Double(m) : share
    let first = m > 0 ? (1 - c.repeatProbability) * share + c.repeatProbability * repeats : share
    return (rhythm + pending) * (first + (c.appsPerPickup - 1) * share)
  }

  static func logNormalDensity(_ x: Double, median: Double, sigma: Double) -> Double {
    guard x > 0 else { return 0 }
    guard sigma > 0 else { return 0 }
    let z = (log(x) - log(median)) / sigma
    return exp(-0.5 * z * z) / (x * sigma * (2 * Double.pi).squareRoot())
  }

  static func logNormalCDF(_ x: Double, median: Double, sigma: Double) -> Double {
    guard x > 0 else { return 0 }
    guard sigma > 0 else { return x >= median ? 1 : 0 }
    return 0.5 * erfc(-(log(x) - log(median)) / (sigma * 2.0.squareRoot()))
  }
}

extension SyntheticTruth {
  /// Intensity of the opens of all the user's apps at `t`, per s.
  func totalOpenIntensity(at t: Double) -> Double {
    let b = Int(((t - start) / SyntheticPopulation.binSeconds).rounded(.down))
    return b >= 0 && b < openRate.count ? openRate[b] : 0
  }
}
