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
  /// `responseBytes[v]`: the response bringing the device to version `v`
  /// (``newDataBytes(version:)``), drawn once here so that every policy
  /// replayed on this timeline reads the same sizes without drawing again.
  @usableFromInline let responseBytes: [Double]
  /// The server's version (``version(at:)``) at each open of the app in the
  /// trace the timeline was built from, in the trace's order; empty for a
  /// timeline of explicit updates. Worked out once here (a merge) so that
  /// a replay of any policy reads it instead of searching at each open
  /// (which checks each value read against ``updates``).
  package internal(set) var versionsAtOpens: [Int32]

  /// Builds the timeline of `app` in `trace` under `world`, drawing model
  /// updates from the stream keyed by (`seed`, "content", user, app).
  ///
  /// - Complexity: O(events + updates).
  package init(trace: UserTrace, app: Int32, world: WorldParameters, seed: UInt64) {
    let name = trace.apps[Int(app)]
    var fromTrace: [Double] = []
    var itemBytes: [Double] = []
    // One pass over the events: the app's update rows (unless the content
    // is the model's) and its opens' times (for ``versionsAtOpens``).
    var openTimes: [Double] = []
    let readsUpdates = world.content.source != .model
    for e in trace.events where e.app == app {
      if e.kind == .open {
        openTimes.append(e.time)
      } else if readsUpdates && e.kind == .update {
        fromTrace.append(e.time)
        itemBytes.append(e.value)
      }
    }
    // A trace with `update` rows for the app decides for its whole window,
    // including a held-out part that holds none of them.
    let traceHasRows = !fromTrace.isEmpty || trace.splitUpdateApps.contains(app)
    if world.content.source == .trace || (world.content.source == .auto && traceHasRows) {
      updates = fromTrace
      self.fromTrace = true
    } else {
      itemBytes = []
      var rng = SplitMix64(seed: seed, keys: "content", trace.user, name)
      updates = ContentTimeline.sample(
        rate: world.content.updateRate(app: name), model: world.content.model, profile: world.content.diurnalProfile,
        from: trace.start, to: trace.end, timeZone: trace.timeZone, using: &rng)
      self.fromTrace = false
    }
    let sizeSeed = StableHash.combine(seed, StableHash.combine(StableHash.fnv1a(trace.user), StableHash.fnv1a(name)))
    var sizes = ContentTimeline.responseSizes(
      versions: updates.count, seed: sizeSeed, medianBytes: world.fetch.newDataMedianBytes, sigma: world.fetch.newDataSigma)
    ContentTimeline.overrideSizes(&sizes, items: itemBytes)
    responseBytes = sizes
    var atOpens: [Int32] = []
    atOpens.reserveCapacity(openTimes.count)
    var v = 0
    for t in openTimes {
      while v < updates.count && updates[v] <= t { v += 1 }
      atOpens.append(Int32(v))
    }
    versionsAtOpens = atOpens
  }

  /// Updates at explicit times (tests); `itemBytes[i]` > 0 is the size of
  /// the item update `i` publishes (as an `update` row's value).
  public init(updates: [Double], world: WorldParameters = WorldParameters(), seed: UInt64 = 0, itemBytes: [Double] = []) {
    self.updates = updates
    fromTrace = true
    var sizes = ContentTimeline.responseSizes(
      versions: updates.count, seed: seed, medianBytes: world.fetch.newDataMedianBytes, sigma: world.fetch.newDataSigma)
    ContentTimeline.overrideSizes(&sizes, items: itemBytes)
    responseBytes = sizes
    versionsAtOpens = []
  }

  /// Large content: the response bringing version `v` ≥ 1 carries the item
  /// update `v − 1` published when the trace gave its size (an `update`
  /// row's value > 0); otherwise the drawn size stays (the drawn sizes are
  /// drawn whatever, so the others do not move). As for drawn sizes, the
  /// newest item supersedes the older ones (one response per fetch).
  private static func overrideSizes(_ sizes: inout [Double], items: [Double]) {
    for (i, b) in items.enumerated() where b > 0 && i + 1 < sizes.count { sizes[i + 1] = b }
  }

  /// The response size of every version `0...versions`: lognormal with
  /// median `medianBytes` and log-sd `sigma`, rounded to whole bytes, each
  /// from its own stream keyed by (`seed`, version), so a version's size does
  /// not depend on which others are drawn (common random numbers).
  ///
  /// - Complexity: O(versions).
  private static func responseSizes(versions: Int, seed: UInt64, medianBytes: Double, sigma: Double) -> [Double] {
    guard sigma > 0 else { return [Double](repeating: medianBytes, count: versions + 1) }
    return (0...versions).map { v in
      var rng = SplitMix64(seed: StableHash.combine(seed, UInt64(v)))
      return (medianBytes * exp(sigma * rng.normal())).rounded()
    }
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
  @inlinable package func version(at t: Double, hint: inout Int) -> Int {
    updates.withUnsafeBufferPointer { u in
      hint = firstIndex(count: u.count, from: hint) { u[$0] > t }
    }
    return hint
  }

  /// Size of the response that brings the device to content version
  /// `version` (the number of updates it includes), bytes. The same for every
  /// policy (common random numbers).
  ///
  /// - Precondition: `0 <= version <= updates.count`.
  /// - Complexity: O(1) (drawn when the timeline is built).
  @inlinable package func newDataBytes(version: Int) -> Double { responseBytes[version] }

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
