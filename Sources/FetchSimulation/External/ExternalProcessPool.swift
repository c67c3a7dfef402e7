import Foundation

/// The processes of one `external` policy configuration in one run: each
/// replaying thread takes one, uses it for a device, and gives it back, so
/// a run with `--jobs N` starts at most N processes, each serving many
/// devices in turn.
///
/// After a process fails, the pool is broken: it starts no more, and every
/// later device of the run fails at once (the run stops at the first
/// error anyway). Thread-safe (a lock).
package final class ExternalProcessPool: @unchecked Sendable {
  /// The command, the handshake line, and the limits of its processes.
  let command: String
  let hello: String
  let timeoutS: Double
  private let lock = NSLock()
  private var idle: [ExternalProcess] = []
  private var broken: ExternalPolicyError?
  /// Processes started so far.
  private(set) var started = 0

  private init(command: String, hello: String, timeoutS: Double) {
    self.command = command
    self.hello = hello
    self.timeoutS = timeoutS
  }

  /// The least wait for the handshake's reply, s: an interpreter and its
  /// libraries may take a while to start on a loaded machine.
  static let handshakeTimeoutS = 60.0

  private static let poolsLock = NSLock()
  nonisolated(unsafe) private static var pools: [String: ExternalProcessPool] = [:]

  /// The pool of a configuration (`key`: the canonical policy string and
  /// the run's seed), made on first use.
  static func pool(key: String, command: String, hello: String, timeoutS: Double) -> ExternalProcessPool {
    poolsLock.withLock {
      if let p = pools[key] { return p }
      let p = ExternalProcessPool(command: command, hello: hello, timeoutS: timeoutS)
      pools[key] = p
      return p
    }
  }

  /// Ends every idle process of every pool and forgets the pools (at the
  /// end of a run). Processes in use end when their device is done.
  package static func closeAll() {
    let all = poolsLock.withLock {
      let ps = Array(pools.values)
      pools.removeAll()
      return ps
    }
    let idle = all.flatMap { $0.retire() }
    // End of input to all first, so that they exit side by side.
    for p in idle { p.closeInput() }
    for p in idle { p.terminate() }
  }

  nonisolated(unsafe) private static var decisions = 0
  /// Decisions asked of every `external` process so far, in this process
  /// (for `fetchlab bench`).
  package static var decisionsAsked: Int { poolsLock.withLock { decisions } }
  static func count(decisions n: Int) { poolsLock.withLock { decisions += n } }

  /// Processes started by the pools of `key` so far (for tests).
  static func started(key: String) -> Int? {
    poolsLock.withLock { pools[key]?.started }
  }

  private var retired = false

  /// Takes no more processes back, and hands over the idle ones.
  private func retire() -> [ExternalProcess] {
    lock.withLock {
      retired = true
      let ps = idle
      idle.removeAll()
      return ps
    }
  }

  /// An idle process, or a new one after its handshake.
  /// - Throws: ``ExternalPolicyError`` when the pool is broken or the new
  ///   process fails its handshake.
  func checkout() throws -> ExternalProcess {
    let reused: ExternalProcess? = try lock.withLock {
      if let b = broken {
        throw ExternalPolicyError(.earlier, command: command, detail: "failed earlier in this run: \(b.detail)")
      }
      if let p = idle.popLast() { return p }
      started += 1
      return nil
    }
    if let reused { return reused }
    let p = try ExternalProcess(command: command, timeoutS: timeoutS)
    do {
      let t = max(timeoutS, Self.handshakeTimeoutS)
      try p.send(hello, timeoutS: t)
      let reply = try p.readLine(timeoutS: t)
      p.handshake = try ExternalReply.checkHello(reply, command: command)
    } catch var e as ExternalPolicyError {
      e.context = "the handshake"
      e.stderrTail = p.stderrTail()
      p.abort()
      fail(e)
      throw e
    }
    return p
  }

  /// Takes back a process that served a device without error.
  func checkin(_ p: ExternalProcess) {
    let keep = lock.withLock {
      guard broken == nil, !retired else { return false }
      idle.append(p)
      return true
    }
    if !keep { p.terminate() }
  }

  /// Marks the pool broken by `error`.
  func fail(_ error: ExternalPolicyError) {
    lock.withLock { if broken == nil { broken = error } }
  }
}

/// The first failure of a policy in the replays on this thread (an
/// `external` process that misbehaves, a schedule's refused request), so
/// that a replay, which cannot throw, can stop its run.
package enum PolicyFailure {
  private final class Box {
    var error: (any Error)?
  }
  private static let key = "fetchlab.policy-failure"

  private static var box: Box {
    let d = Thread.current.threadDictionary
    if let b = d[key] as? Box { return b }
    let b = Box()
    d[key] = b
    return b
  }

  /// Records `error` unless an earlier one is recorded.
  static func record(_ error: any Error) {
    let b = box
    if b.error == nil { b.error = error }
  }

  /// `body()`, run on this thread; throws the first policy failure
  /// recorded while it ran.
  package static func checking<R>(_ body: () throws -> R) throws -> R {
    let b = box
    b.error = nil
    let r = try body()
    if let e = b.error {
      b.error = nil
      throw e
    }
    return r
  }
}
