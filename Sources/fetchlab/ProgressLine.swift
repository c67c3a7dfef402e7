import Foundation

/// Progress on stderr: nothing for the first 2 s; then on a terminal one
/// line redrawn in place, otherwise one plain line at most every 5 s.
final class ProgressLine {
  let label: String
  let start = Date()
  var last = Date.distantPast
  var printed = false
  let animate: Bool

  init(label: String) {
    self.label = label
    let env = ProcessInfo.processInfo.environment
    animate = isatty(STDERR_FILENO) != 0 && env["TERM"] != "dumb"
  }

  func update(done: Int, unit: String, fraction: Double?) {
    let now = Date()
    let elapsed = now.timeIntervalSince(start)
    guard elapsed >= 2, now.timeIntervalSince(last) >= (animate ? 0.2 : 5) else { return }
    last = now
    var s = "\(label): \(done) \(unit), \(Int(elapsed)) s"
    if let f = fraction, f > 0.01 {
      s += ", \(Int((f * 100).rounded())) %, ETA \(Int((elapsed / f - elapsed).rounded())) s"
    }
    FileHandle.standardError.write(Data(((animate ? "\r\u{1B}[K" : "") + s + (animate ? "" : "\n")).utf8))
    printed = true
  }

  func finish() {
    if printed && animate { FileHandle.standardError.write(Data("\n".utf8)) }
  }
}
