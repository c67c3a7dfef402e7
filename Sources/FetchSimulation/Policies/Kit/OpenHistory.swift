import FetchTraces

/// What the training window says of the user's recent opens: the habit
/// tracking that `ios-minimum`, IMP, `android-standby` and
/// `android-prefetch` start a replay from.
package enum OpenHistory {
  /// Times of the last open of any app and of `app` in `training` (−∞ if
  /// none): the last ones in the (time-ordered) event list.
  ///
  /// - Complexity: O(events since the app's last open), scanning backwards.
  package static func lastOpens(_ training: UserTrace, app: Int32) -> (any: Double, app: Double) {
    var lastApp = -Double.infinity, lastAny = -Double.infinity
    var anySeen = false
    for e in training.events.reversed() where e.kind == .open {
      if !anySeen {
        lastAny = e.time
        anySeen = true
      }
      if e.app == app {
        lastApp = e.time
        break
      }
    }
    return (lastAny, lastApp)
  }
}
