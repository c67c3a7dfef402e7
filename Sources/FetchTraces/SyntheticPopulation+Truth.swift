import FetchSupport
import Foundation

/// What the generator of one synthetic user drew before drawing its events:
/// the intensity of each app's opens and the rate of each app's content
/// updates, as functions of time. A reference that plans with these knows
/// the models, not the future: the events are still random draws from them.
///
/// - Opens: the rhythm's rate of the user's opens (all apps) in each 15-min
///   bin of the window (the day's drawn open count spread over the shifted
///   daily curve, ``SyntheticPopulation/pickupRates``, times the apps per
///   pickup, repickups included at their mean), times the app's share of
///   the opens at that local hour (the balanced app shares of the pickups).
///   It is the marginal intensity; ``ConditionalOpens`` adds the clustering
///   of repickups a few minutes after a session and the repeats of the last
///   apps opened, given the opens seen so far.
/// - Updates: the app's daily mean rate (``SyntheticPopulation/App/updatesPerHour``)
///   times the update hourly shape, for the apps the generator writes
///   `update` rows for (the ``SyntheticPopulation/Parameters/updateTopApps``
///   most popular); nil for the others, whose content the world's model draws.
public struct SyntheticTruth: Sendable {
  /// The user's id (`u00001`).
  public let user: String
  /// Window start, UTC s (local midnight).
  let start: Double
  /// Opens per s of all the user's apps, per 15-min bin from `start`.
  let openRate: [Double]
  /// P(an open is of this app | local hour), 24 values per app name.
  let hourShares: [String: [Double]]
  /// Content updates per s by local hour, per app name with `update` rows.
  let updateRates: [String: [Double]]
  /// The pickup process's clustering and app-repeat parameters.
  let clustering: Clustering

  /// The generator's parameters of how pickups cluster and which app a
  /// pickup starts with (``SyntheticPopulation/Parameters``).
  struct Clustering: Sendable {
    /// P(a pickup is followed by a repickup), and the repickup's delay after
    /// the pickup's last session ended: log-normal median, s, and log-scale SD.
    var repickup = 0.0, delayMedianS = 240.0, delaySigma = 1.5
    /// P(a pickup starts with one of the last `repeatMemory` apps opened).
    var repeatProbability = 0.0, repeatMemory = 1
    /// Mean apps per pickup (geometric, ≥ 1).
    var appsPerPickup = 1.0
  }

  /// Hours since the window start, as the local hour 0–23 (the window
  /// starts at local midnight).
  func localHour(_ t: Double) -> Int {
    let rel = t - start
    return min(23, max(0, Int((rel - (rel / 86_400).rounded(.down) * 86_400) / 3600)))
  }

  /// Intensity of the opens of `app` at `t`, per s (0 outside the window or
  /// for an app the user does not have).
  public func openIntensity(app: String, at t: Double) -> Double {
    let b = Int(((t - start) / SyntheticPopulation.binSeconds).rounded(.down))
    guard b >= 0 && b < openRate.count, let share = hourShares[app] else { return 0 }
    return openRate[b] * share[localHour(t)]
  }

  /// The content-update rate of `app` at `t`, per s; nil when the generator
  /// writes no `update` rows for it.
  public func updateRate(app: String, at t: Double) -> Double? {
    updateRates[app].map { $0[localHour(t)] }
  }

  /// The mean content-update rate of `app` over a day, per s; nil as
  /// ``updateRate(app:at:)``.
  public func meanUpdateRate(app: String) -> Double? {
    updateRates[app].map { $0.reduce(0, +) / 24 }
  }
}

extension SyntheticPopulation {
  /// The truth of user `index` (0-based): the same draws as ``user(_:)``.
  public func truth(_ index: Int) -> SyntheticTruth {
    let key = String(index)
    var rng = SplitMix64(seed: seed, keys: "user", key, "traits")
    let tr = traits(id: Self.userID(index), using: &rng)
    let p = parameters
    // generateOpens' first draws, in its order.
    var orng = SplitMix64(seed: seed, keys: "user", key, "opens")
    let userMedian = normalDayMedian * exp(p.opensPerDayUserSigma * orng.normal())
    _ = orng.normal()  // the session scale
    let pickupsPerOpen = (1 - p.repickupProbability) / p.appsPerPickupMean
    let pickups = pickupRates(tr, userMedian: userMedian, pickupsPerOpen: pickupsPerOpen, using: &orng)
    let opens = pickups.map { $0 / pickupsPerOpen }
    let n = tr.apps.count
    var joint = AppChooser.preferences(p, tr)
    AppChooser.balance(&joint, hourShare: AppChooser.hourShares(openCurve, tr), popularity: tr.popularity, n: n)
    var shares: [String: [Double]] = [:]
    for (k, a) in tr.apps.enumerated() {
      shares[p.apps[a].name] = (0..<24).map { h in
        let row = (0..<n).reduce(0.0) { $0 + joint[h * n + $1] }
        return row > 0 ? joint[h * n + k] / row : 0
      }
    }
    var updates: [String: [Double]] = [:]
    for a in tr.apps.prefix(p.updateTopApps) where p.apps[a].updatesPerHour > 0 {
      updates[p.apps[a].name] = updateShape.map { $0 * p.apps[a].updatesPerHour / 3600 }
    }
    let clustering = SyntheticTruth.Clustering(
      repickup: p.repickupProbability, delayMedianS: p.repickupDelayMedianSeconds, delaySigma: p.repickupDelaySigma,
      repeatProbability: p.appRepeatProbability, repeatMemory: max(1, p.appRepeatMemory), appsPerPickup: p.appsPerPickupMean)
    return SyntheticTruth(
      user: tr.id, start: tr.start, openRate: opens, hourShares: shares, updateRates: updates, clustering: clustering)
  }

  /// The truth of the user with id `user` (`u00001`: index 0), nil for an id
  /// this generator does not make.
  public func truth(user: String) -> SyntheticTruth? {
    guard user.hasPrefix("u"), let k = Int(user.dropFirst()), k >= 1, Self.userID(k - 1) == user else { return nil }
    return truth(k - 1)
  }
}
