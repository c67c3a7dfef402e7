import Dispatch
import Foundation

/// Work items computed on worker threads and handed back in the order they
/// were submitted: the pipeline of the runner and the experiments, where
/// one thread reads the input and writes the results while `jobs` workers
/// compute.
///
/// The submitting thread alone calls ``submit(_:)``, ``next()``,
/// ``nextIfReady()`` and ``finish()``; it bounds memory by taking results
/// (``pending`` is the number of items submitted and not yet taken). With
/// `jobs` ≤ 1 there is no worker thread: an item runs on the submitting
/// thread when its result is taken, so a one-job run uses one thread.
/// Either way the results, and their order, do not depend on `jobs`.
/// ``finish()`` must be called (the workers hold the pipeline until then).
///
///     let work = OrderedWork<Int>(jobs: 2)
///     defer { work.finish() }
///     for i in 0..<100 {
///       while work.pending >= 8 { use(work.next()) }
///       work.submit { i * i }
///     }
///     while work.pending > 0 { use(work.next()) }
///
/// - Complexity: O(1) amortized per item besides the work itself (one
///   lock round trip on each side).
package final class OrderedWork<Output>: @unchecked Sendable {
  /// Worker threads (0: items run on the submitting thread).
  package let workers: Int
  private let condition = NSCondition()
  /// Items not yet started, in submission order, from `head` on.
  private var queue: [(index: Int, work: @Sendable () -> Output)] = []
  private var head = 0
  /// Finished items not yet taken, by submission index.
  private var finished: [Int: Output] = [:]
  private var closed = false
  private var submitted = 0
  private var taken = 0
  private let running = DispatchGroup()

  /// A pipeline with `jobs` worker threads (none when `jobs` ≤ 1).
  package init(jobs: Int) {
    workers = jobs <= 1 ? 0 : jobs
    for k in 0..<workers {
      running.enter()
      let t = Thread { [self] in
        work()
        running.leave()
      }
      t.name = "fetchlab.work.\(k)"
      t.start()
    }
  }

  /// Items submitted and not yet taken.
  package var pending: Int { submitted - taken }

  /// Queues `work`; its result comes back from ``next()`` after the
  /// results of every item submitted before it.
  package func submit(_ work: @escaping @Sendable () -> Output) {
    condition.lock()
    precondition(!closed, "OrderedWork.submit after finish()")
    queue.append((submitted, work))
    submitted += 1
    condition.signal()
    condition.unlock()
  }

  /// The result of the oldest item not yet taken, waiting for it (or, with
  /// no workers, computing it here).
  ///
  /// - Precondition: ``pending`` > 0.
  package func next() -> Output {
    precondition(pending > 0, "OrderedWork.next() with nothing pending")
    if workers == 0 {
      let item = queue[head]
      queue[head] = (item.index, { @Sendable () -> Output in preconditionFailure("OrderedWork: item taken twice") })
      head += 1
      compact()
      taken += 1
      return item.work()
    }
    condition.lock()
    defer { condition.unlock() }
    while finished[taken] == nil { condition.wait() }
    let r = finished.removeValue(forKey: taken)!
    taken += 1
    return r
  }

  /// The result of the oldest item not yet taken if it is finished; `nil`
  /// otherwise (always with no workers: nothing runs ahead of the caller).
  package func nextIfReady() -> Output? {
    guard workers > 0, pending > 0 else { return nil }
    condition.lock()
    defer { condition.unlock() }
    guard let r = finished.removeValue(forKey: taken) else { return nil }
    taken += 1
    return r
  }

  /// Drops the items not yet started and waits for the workers to finish
  /// the ones they are computing (results not taken are discarded). Call
  /// it before the closures' captures go away, e.g. in a `defer`.
  package func finish() {
    condition.lock()
    closed = true
    head = queue.count
    compact()
    condition.broadcast()
    condition.unlock()
    running.wait()
  }

  /// A worker: takes items in order until finished.
  private func work() {
    condition.lock()
    while true {
      while head == queue.count && !closed { condition.wait() }
      if head == queue.count { break }
      let item = queue[head]
      queue[head] = (item.index, { @Sendable () -> Output in preconditionFailure("OrderedWork: item taken twice") })
      head += 1
      compact()
      condition.unlock()
      let r = item.work()
      condition.lock()
      finished[item.index] = r
      condition.broadcast()
    }
    condition.unlock()
  }

  /// Drops the started prefix of `queue` once it is most of the array
  /// (callers hold the lock or have no workers).
  private func compact() {
    if head == queue.count {
      queue.removeAll(keepingCapacity: true)
      head = 0
    } else if head >= 64 && head * 2 >= queue.count {
      queue.removeFirst(head)
      head = 0
    }
  }
}
