/// The engine's lanes in one allocation of fixed size, reached by pointer:
/// an access (`lanes[j].x += 1`) is an offset, without the uniqueness and
/// bounds checks of a mutation through an array (their cost is in
/// docs/performance.md). The engine is the only owner; lanes are never
/// added or removed.
final class LaneBuffer {
  private let base: UnsafeMutablePointer<AppLane>
  /// The number of lanes.
  let count: Int

  /// `count` lanes, lane `j` made by `make(j)` in place.
  init(count: Int, _ make: (Int) -> AppLane) {
    self.count = count
    base = .allocate(capacity: max(1, count))
    for j in 0..<count { (base + j).initialize(to: make(j)) }
  }

  deinit {
    base.deinitialize(count: count)
    base.deallocate()
  }

  var indices: Range<Int> { 0..<count }

  /// Lane `j`.
  ///
  /// - Precondition: `0 <= j < count` (checked in debug builds only).
  subscript(j: Int) -> AppLane {
    unsafeAddress {
      assert(j >= 0 && j < count, "lane \(j) of \(count)")
      return UnsafePointer(base + j)
    }
    unsafeMutableAddress {
      assert(j >= 0 && j < count, "lane \(j) of \(count)")
      return base + j
    }
  }
}
