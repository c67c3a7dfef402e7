import FetchSupport
import Foundation
import Testing

@Suite("Ordered work (the runner's pipeline)")
struct OrderedWorkTests {
  /// Submits `count` items of uneven duration with at most `window` in
  /// flight, taking results as the runner does; returns them in the order taken.
  func run(jobs: Int, count: Int, window: Int, seed: UInt64) -> (results: [Int], maxPending: Int) {
    var rng = SplitMix64(seed: seed, keys: "ordered")
    let work = OrderedWork<Int>(jobs: jobs)
    defer { work.finish() }
    var out: [Int] = []
    var maxPending = 0
    for i in 0..<count {
      while work.pending >= window { out.append(work.next()) }
      let spin = Int(rng.uniform() * 20_000)  // uneven work: later items often finish first
      work.submit {
        var x = UInt64(i)
        for _ in 0..<spin { x = x &* 6_364_136_223_846_793_005 &+ 1 }
        return i + Int(x & 0)
      }
      maxPending = max(maxPending, work.pending)
      while let r = work.nextIfReady() { out.append(r) }
    }
    while work.pending > 0 { out.append(work.next()) }
    return (out, maxPending)
  }

  @Test("results come back in submission order, whatever the thread count", arguments: [0, 1, 2, 3, 8])
  func order(jobs: Int) {
    for (seed, window) in [(1, 1), (2, 3), (3, 16), (4, 64)] as [(UInt64, Int)] {
      let r = run(jobs: jobs, count: 300, window: window, seed: seed)
      #expect(r.results == Array(0..<300), "jobs \(jobs), window \(window)")
      #expect(r.maxPending <= window, "at most \(window) items in flight, saw \(r.maxPending)")
    }
  }

  @Test("with one job, an item runs on the calling thread when its result is taken")
  func oneJobIsLazy() {
    let ran = Counter()
    let work = OrderedWork<Int>(jobs: 1)
    defer { work.finish() }
    work.submit {
      ran.add()
      return 7
    }
    #expect(ran.value == 0)
    #expect(work.nextIfReady() == nil)
    #expect(work.next() == 7)
    #expect(ran.value == 1)
  }

  @Test("finish() with results not taken and items not started returns, and drops them")
  func finishEarly() {
    let ran = Counter()
    let work = OrderedWork<Int>(jobs: 2)
    for i in 0..<2_000 {
      work.submit {
        ran.add()
        usleep(1_000)
        return i
      }
    }
    _ = work.next()
    work.finish()
    let n = ran.value
    #expect(n >= 1 && n < 2_000)
    usleep(2_000)
    #expect(ran.value == n, "no item starts after finish()")
  }
}

/// A thread-safe counter.
private final class Counter: @unchecked Sendable {
  private let lock = NSLock()
  private var n = 0
  func add() { lock.withLock { n += 1 } }
  var value: Int { lock.withLock { n } }
}
