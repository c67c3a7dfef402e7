import FetchModels
import FetchWorld

/// Radio stages in one allocation of fixed size, never written after it is
/// made: the storage that ``ReplayRadios``' models point into.
final class RadioStageTable: @unchecked Sendable {
  let base: UnsafeMutablePointer<RadioStage>
  let count: Int

  init(_ stages: [RadioStage]) {
    count = stages.count
    base = .allocate(capacity: max(1, count))
    base.initialize(from: stages, count: count)
  }

  deinit {
    base.deinitialize(count: count)
    base.deallocate()
  }
}
