import Dispatch
import Foundation

/// `transform(i)` for every i in `0..<count`, computed on up to `jobs`
/// threads (each takes the next index as soon as it is free), returned in
/// index order: the result does not depend on `jobs`. The one parallel map
/// of the runner, the experiments, the benchmark and `fetchlab fit`.
package func parallelMap<R>(_ count: Int, jobs: Int, _ transform: @Sendable (Int) -> R) -> [R] {
  if jobs <= 1 || count <= 1 { return (0..<count).map { transform($0) } }
  let work = ParallelWork<R>(count: count)
  DispatchQueue.concurrentPerform(iterations: min(jobs, count)) { _ in
    while let i = work.take() { work.set(i, transform(i)) }
  }
  return work.results()
}

/// The indices still to compute, handed out one at a time, and a slot for
/// each result (each written by one thread only).
private final class ParallelWork<R>: @unchecked Sendable {
  private let slots: UnsafeMutablePointer<R?>
  private let count: Int
  private var next = 0
  private let lock = NSLock()

  init(count: Int) {
    self.count = count
    slots = .allocate(capacity: count)
    slots.initialize(repeating: nil, count: count)
  }

  deinit {
    slots.deinitialize(count: count)
    slots.deallocate()
  }

  func take() -> Int? {
    lock.lock()
    defer { lock.unlock() }
    guard next < count else { return nil }
    next += 1
    return next - 1
  }

  func set(_ i: Int, _ r: R) { slots[i] = r }

  func results() -> [R] {
    (0..<count).map { i in
      guard let r = slots[i] else { preconditionFailure("parallelMap: item \(i) was not computed") }
      return r
    }
  }
}
