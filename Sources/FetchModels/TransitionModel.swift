import FetchTraces

/// P(the app is opened within a window after another app's open), per
/// other app, learned from the training window: among the other apps'
/// opens at least ``staleAfterS`` after the app's last open (the moments
/// where the app's content is likely stale), the share followed by an open
/// of the app within the window. Each other app's share is shrunk toward
/// the share over all other apps with ``prior`` pseudo-opens. The planning
/// scheduler conditions its next-open distribution on it at another app's
/// open.
package struct TransitionModel: Sendable {
  /// Pseudo-opens of the shrinkage toward the user's overall share.
  package static let prior = 5.0
  /// Least time since the app's own last open for an other-app open to count, s.
  package static let staleAfterS = 1800.0
  /// Per other app: (opens counted, followed by the app within the window).
  var counts: [Int32: (n: Double, hits: Double)] = [:]
  var overall = (n: 0.0, hits: 0.0)

  /// Counts on `training` for `app` and the window `w` (s; 0: an empty model).
  ///
  /// - Complexity: O(events).
  package init(_ training: UserTrace, app: Int32, window w: Double) {
    guard w > 0 else { return }
    let opens = training.events.filter { $0.kind == .open }
    let own = opens.filter { $0.app == app }.map(\.time)
    var next = 0
    var lastOwn = -Double.infinity
    for e in opens {
      if e.app == app {
        lastOwn = e.time
        continue
      }
      while next < own.count && own[next] <= e.time { next += 1 }
      guard e.time - lastOwn >= Self.staleAfterS else { continue }
      let hit = next < own.count && own[next] - e.time <= w ? 1.0 : 0
      counts[e.app, default: (0, 0)].n += 1
      counts[e.app, default: (0, 0)].hits += hit
      overall.n += 1
      overall.hits += hit
    }
  }

  /// The shrunk share for `other`; nil when training counted no other-app open.
  package func probability(after other: Int32) -> Double? {
    guard overall.n > 0 else { return nil }
    let base = overall.hits / overall.n
    let c = counts[other] ?? (0, 0)
    return (c.hits + Self.prior * base) / (c.n + Self.prior)
  }
}
