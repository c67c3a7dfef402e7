import FetchSupport
import FetchTraces
import Foundation

/// One device's exchange with an `external` policy process: taken from
/// the pool when the device's replay starts, given back when its policies
/// are gone (this object's end), or killed at the first protocol error.
///
/// After an error the session answers nothing (its policies stop
/// fetching) and the error is recorded for the replaying thread
/// (``PolicyFailure``), which stops the run.
final class ExternalSession {
  private let pool: ExternalProcessPool
  private var process: ExternalProcess?
  private let user: String
  /// Decisions asked so far (for `fetchlab bench`).
  private(set) var decisions = 0
  /// What the process chose at its handshake (every opportunity asked
  /// when it could not start).
  private(set) var handshake = ExternalHandshake()

  /// Takes a process and sends it the device.
  init(pool: ExternalProcessPool, user: String, deviceMessage: String) {
    self.pool = pool
    self.user = user
    do {
      let p = try pool.checkout()
      process = p
      handshake = p.handshake
      try p.send(deviceMessage)
    } catch let e as ExternalPolicyError {
      fail(e, context: "device \(user), its start")
    } catch {
      fail(ExternalPolicyError(.spawn, command: pool.command, detail: "\(error)"), context: "device \(user)")
    }
  }

  deinit {
    ExternalProcessPool.count(decisions: decisions)
    if let p = process { pool.checkin(p) }
  }

  /// The reply to a decision at `now` (`app` for the error text); nil
  /// after an error.
  func ask(_ message: String, now: Double, app: String) -> ExternalReply? {
    guard let p = process else { return nil }
    decisions += 1
    do {
      try p.send(message)
      return try ExternalReply.parse(try p.readLine(), now: now, command: pool.command)
    } catch let e as ExternalPolicyError {
      fail(e, context: "device \(user), app \(app), deciding at t = \(jsonNumber(now))")
      return nil
    } catch {
      fail(ExternalPolicyError(.exited, command: pool.command, detail: "\(error)"), context: "device \(user)")
      return nil
    }
  }

  private func fail(_ error: ExternalPolicyError, context: String) {
    var e = error
    if e.context.isEmpty { e.context = context }
    if let p = process {
      e.stderrTail = p.stderrTail()
      p.abort()
    }
    process = nil
    pool.fail(e)
    PolicyFailure.record(e)
  }
}
