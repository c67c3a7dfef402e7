import FetchSupport
import Foundation

extension SyntheticPopulation {
  /// Appends `wake` rows: other apps' background network use, a homogeneous
  /// Poisson process at a per-user rate (log-normal around
  /// ``Parameters/wakesPerHourMedian``, NV), durations uniform in
  /// [``Parameters/wakeMinSeconds``, ``Parameters/wakeMaxSeconds``]. The rows
  /// name no app.
  func generateWakes(
    _ tr: Traits, into events: inout [TraceEvent],
    using rng: inout SplitMix64
  ) {
    let p = parameters
    let perSecond =
      p.wakesPerHourMedian * exp(p.wakesPerHourSigma * rng.normal()) / 3600
    guard perSecond > 0 else { return }
    var t = tr.start
    while true {
      t = Self.ms(t + rng.exponential(rate: perSecond))
      if t > tr.end { break }
      let length = Self.ms(
        p.wakeMinSeconds + (p.wakeMaxSeconds - p.wakeMinSeconds) * rng.uniform()
      )
      events.append(TraceEvent(time: t, kind: .wake, value: length))
    }
  }

  /// Appends `update` rows (app = pool index) for the user's
  /// ``Parameters/updateTopApps`` most popular apps: one Poisson process per
  /// app at ``App/updatesPerHour`` times ``Parameters/updateHourlyShape`` in
  /// the user's local time (sampled by thinning).
  ///
  /// The processes are per user: the same app's content changes at
  /// independent times for different users (see ``SyntheticPopulation``).
  ///
  /// An app with ``App/contentMedianBytes`` > 0 publishes large items: each
  /// row's value is the item's size, lognormal (median, ``App/contentSigma``),
  /// whole bytes, drawn from `sizes` (its own stream, so populations without
  /// large content draw exactly as before).
  func generateUpdates(
    _ tr: Traits, into events: inout [TraceEvent],
    using rng: inout SplitMix64, sizes: inout SplitMix64
  ) {
    let p = parameters
    let peak = updateShape.max() ?? 1
    for a in tr.apps.prefix(p.updateTopApps) {
      let base = p.apps[a].updatesPerHour / 3600
      guard base > 0 else { continue }
      let bound = base * peak
      var t = tr.start
      while true {
        t += rng.exponential(rate: bound)
        if t > tr.end { break }
        let rel = t - tr.start
        let h = Int((rel - (rel / 86_400).rounded(.down) * 86_400) / 3600) % 24
        guard rng.uniform() * peak < updateShape[h] else { continue }
        let app = p.apps[a]
        let size = app.contentMedianBytes > 0 ? max(1, (app.contentMedianBytes * exp(app.contentSigma * sizes.normal())).rounded()) : 0
        events.append(
          TraceEvent(time: Self.ms(t), kind: .update, app: Int32(a), value: size))
      }
    }
  }
}
