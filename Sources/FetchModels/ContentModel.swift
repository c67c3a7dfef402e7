import FetchSupport
import FetchTraces
import Foundation

/// Server-side content-update times of one app for one user, and the sizes of
/// the responses that carry them.
public struct ContentTimeline: Sendable {
  /// Update times, Unix s, sorted, within the trace window.
  public let updates: [Double]
  /// Whether the times came from the trace's `update` rows.
  package let fromTrace: Bool
  private let sizeSeed: UInt64
  private let medianBytes: Double
  private let sigma: Double

  /// Builds the timeline of `app` in `trace` under `world`, drawing model
  /// updates from the stream keyed by (`seed`, "content", user, app).
  ///
  /// - Complexity: O(events + updates).
  package init(trace: UserTrace, app: Int32, world: WorldParameters, seed: UInt64) {
    let name = trace.apps[Int(app)]
    var fromTrace: [Double] = []
    if world.contentSource != .model {
      for e in trace.events where e.kind == .update && e.app == app { fromTrace.append(e.time) }
    }
    // A trace with `update` rows for the app decides for its whole window,
    // including a held-out part that holds none of them.
    let traceHasRows = !fromTrace.isEmpty || trace.splitUpdateApps.contains(app)
    if world.contentSource == .trace || (world.contentSource == .auto && traceHasRows) {
      updates = fromTrace
      self.fromTrace = true
    } else {
      var rng = SplitMix64(seed: seed, keys: "content", trace.user, name)
      updates = ContentTimeline.sample(
        rate: world.updateRate(app: name), model: world.contentModel, profile: world.diurnalProfile,
        from: trace.start, to: trace.end, timeZone: trace.timeZone, using: &rng)
      self.fromTrace = false
    }
    sizeSeed = StableHash.combine(seed, StableHash.combine(StableHash.fnv1a(trace.user), StableHash.fnv1a(name)))
    medianBytes = world.newDataMedianBytes
    sigma = world.newDataSigma
  }

  /// Updates at explicit times (tests).
  public init(updates: [Double], world: WorldParameters = WorldParameters(), seed: UInt64 = 0) {
    self.updates = updates
    fromTrace = true
    sizeSeed = seed
    medianBytes = world.newDataMedianBytes
    sigma = world.newDataSigma
  }

  /// The server's content version at `t`: the number of updates at or
  /// before `t`.
  ///
  /// - Complexity: O(log updates).
  public func version(at t: Double) -> Int {
    firstIndex(in: 0..<updates.count) { updates[$0] > t }
  }

  /// ``version(at:)``, searched from `hint` (the previous answer), which is
  /// updated; O(log distance).
  package func version(at t: Double, hint: inout Int) -> Int {
    updates.withUnsafeBufferPointer { u in
      hint = firstIndex(count: u.count, from: hint) { u[$0] > t }
    }
    return hint
  }

  /// Size of the response that brings the device to content version
  /// `version` (the number of updates it includes), bytes. The same for every
  /// policy (common random numbers).
  package func newDataBytes(version: Int) -> Double {
    guard sigma > 0 else { return medianBytes }
    var rng = SplitMix64(seed: StableHash.combine(sizeSeed, UInt64(version)))
    return (medianBytes * exp(sigma * rng.normal())).rounded()
  }

  /// Poisson (or diurnally modulated Poisson, by thinning) event times in
  /// [from, to), rate per second.
  package static func sample(
    rate: Double, model: ContentModelKind, profile: [Double], from: Double, to: Double,
    timeZone: TraceTimeZone, using rng: inout SplitMix64
  ) -> [Double] {
    guard rate > 0, to > from else { return [] }
    var out: [Double] = []
    out.reserveCapacity(Int((to - from) * rate * 1.2) + 4)
    switch model {
    case .poisson:
      var t = from + rng.exponential(rate: rate)
      while t < to {
        out.append(t)
        t += rng.exponential(rate: rate)
      }
    case .diurnal:
      let mean = profile.reduce(0, +) / Double(profile.count)
      guard mean > 0 else { return [] }
      let shape = profile.map { $0 / mean }
      let peak = shape.max()!
      var clock = LocalClock(timeZone)
      var t = from + rng.exponential(rate: rate * peak)
      while t < to {
        let h = min(23, Int(clock.hourOfDay(t)))
        if rng.uniform() * peak < shape[h] { out.append(t) }
        t += rng.exponential(rate: rate * peak)
      }
    }
    return out
  }
}
