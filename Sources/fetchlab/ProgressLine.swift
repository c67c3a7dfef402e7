import Foundation

/// Progress on stderr: nothing for the first 2 s; then on a terminal one
/// line redrawn in place every second (and at every update), otherwise one
/// plain line at most every 5 s, at an update.
///
/// The line reads "experiment: 5 of 14 units, 12 s, 36 %, ETA 21 s": the
/// units finished of the run's, the time so far, the share of the
/// estimated work done, and the time left at the rate of the work this
/// process computed (reused units take no time).
final class ProgressLine: @unchecked Sendable {
  let label: String
  let start = Date()
  let animate: Bool
  private let lock = NSLock()
  private var last = Date.distantPast
  private var printed = false
  private var finished = false
  private var state: State?
  private var timer: DispatchSourceTimer?

  /// The figures of one update.
  struct State {
    var done: Int
    var total: Int?
    var unit: String
    /// Share of the work done, and computed by this process, in [0, 1].
    var workDone: Double?
    var workComputed: Double?
    var at: Date
  }

  init(label: String) {
    self.label = label
    let env = ProcessInfo.processInfo.environment
    animate = isatty(STDERR_FILENO) != 0 && env["TERM"] != "dumb"
    guard animate else { return }
    let t = DispatchSource.makeTimerSource(queue: .global())
    t.schedule(deadline: .now() + 2, repeating: 1)
    t.setEventHandler { [weak self] in self?.redraw(force: true) }
    t.resume()
    timer = t
  }

  deinit { timer?.cancel() }

  /// The latest units finished and of the total (nil: not known), if any.
  var units: (done: Int, total: Int?)? {
    lock.withLock { state.map { ($0.done, $0.total) } }
  }

  func update(done: Int, total: Int? = nil, unit: String, workDone: Double?, workComputed: Double? = nil) {
    lock.withLock {
      state = State(
        done: done, total: total, unit: unit, workDone: workDone, workComputed: workComputed ?? workDone, at: Date())
    }
    redraw(force: false)
  }

  func finish() {
    timer?.cancel()
    lock.withLock {
      finished = true
      if printed && animate { FileHandle.standardError.write(Data("\n".utf8)) }
    }
  }

  /// Clears the redrawn line (before another message on a terminal) and
  /// stops drawing.
  func clear() {
    timer?.cancel()
    lock.withLock {
      finished = true
      if printed && animate { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
  }

  private func redraw(force: Bool) {
    lock.withLock {
      let now = Date()
      let elapsed = now.timeIntervalSince(start)
      guard !finished, let s = state, elapsed >= 2 else { return }
      guard force || now.timeIntervalSince(last) >= (animate ? 0.2 : 5) else { return }
      last = now
      let line = Self.text(label: label, s, elapsed: elapsed, now: now, start: start)
      FileHandle.standardError.write(Data(((animate ? "\r\u{1B}[K" : "") + line + (animate ? "" : "\n")).utf8))
      printed = true
    }
  }

  /// The line for state `s` at `now`: the ETA is the time the work left
  /// takes at the rate of the work computed until the update, less the
  /// time since the update; past 0, the time it takes at the rate of the
  /// whole run so far.
  static func text(label: String, _ s: State, elapsed: Double, now: Date, start: Date) -> String {
    var t = "\(label): " + (s.total.map { "\(s.done) of \($0) \(s.unit)" } ?? "\(s.done) \(s.unit)")
    t += ", " + duration(elapsed)
    guard let done = s.workDone else { return t }
    t += ", \(Int((min(1, done) * 100).rounded(.down))) %"
    let computed = s.workComputed ?? done
    let atUpdate = s.at.timeIntervalSince(start)
    if computed > 0.001, done < 1, atUpdate > 0 {
      // Counting down from the estimate at the update; once past it (the
      // work is slower than estimated), the rate over the whole run so far.
      let countdown = atUpdate * (1 - done) / computed - now.timeIntervalSince(s.at)
      let left = countdown > 0 ? countdown : elapsed * (1 - done) / computed
      t += ", ETA " + duration(left)
    }
    return t
  }

  /// `42 s`, `3 min 5 s`, `2 h 10 min`.
  static func duration(_ s: Double) -> String {
    let n = Int(s.rounded())
    if n < 90 { return "\(n) s" }
    if n < 3_600 { return "\(n / 60) min \(n % 60) s" }
    return "\(n / 3_600) h \(n % 3_600 / 60) min"
  }
}
