import Foundation
import FetchTraces

/// ``UsagePacing/pacing(training:app:)`` of every app of one training
/// window, computed in one pass over it when first asked and shared by the
/// policies replayed with one ``LearningContext`` (each `ios-minimum` and
/// `ios-custom` setting, each `planner` and each `imp` paces every app the
/// same way).
/// The same values, bit for bit: each app's counts are summed in the same
/// order.
///
/// Thread-safe (a lock).
package final class TrainingPacing: @unchecked Sendable {
  private var window: (user: String, start: UInt64, end: UInt64, events: Int)?
  private var paces: [[Double]] = []
  private let lock = NSLock()

  package init() {}

  /// The pacing of `app` in `training` (for the window first asked about;
  /// another window is computed alone).
  ///
  /// - Complexity: O(training events) on first use, then O(1).
  func pace(_ training: UserTrace, app: Int32) -> [Double] {
    let key = (training.user, training.start.bitPattern, training.end.bitPattern, training.events.count)
    lock.lock()
    defer { lock.unlock() }
    if window == nil {
      window = key
      paces = UsagePacing.pacing(training: training, apps: (0..<training.apps.count).map(Int32.init))
    }
    guard let window, window == key, app >= 0, Int(app) < paces.count else {
      return UsagePacing.pacing(training: training, app: app)
    }
    return paces[Int(app)]
  }
}
