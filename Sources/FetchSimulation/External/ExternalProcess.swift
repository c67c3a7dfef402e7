import FetchSupport
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A child process that speaks JSON lines on its standard input and output
/// (the `external` policy protocol, `docs/external-protocol.md`).
///
/// The child runs `/bin/sh -c command` in its own process group, its stdin
/// and stdout one end of a Unix socket pair (written with `MSG_NOSIGNAL`,
/// so a child that exits is an error, never a SIGPIPE of FetchLab), its
/// stderr an unlinked temporary file whose tail errors quote. Every wait
/// is bounded by ``timeoutS`` (the socket's send and receive timeouts, so
/// that a decision costs three system calls: a non-blocking check for
/// unasked output, the write, and a read that waits for the reply); a
/// reply line is bounded by ``maxLineBytes``; output nobody asked for is
/// an error (a flood).
///
/// Used by one thread at a time (the pool hands it out).
final class ExternalProcess: @unchecked Sendable {
  /// The shell command line.
  let command: String
  /// The longest wait for the child to read a request or answer it, s.
  let timeoutS: Double
  /// The longest reply line, bytes.
  let maxLineBytes: Int
  private(set) var pid: pid_t = 0
  private var fd: Int32 = -1
  private var stderrFD: Int32 = -1
  private var buffer: [UInt8] = []
  private var head = 0
  private var scratch = [UInt8](repeating: 0, count: 65_536)
  private(set) var closed = false
  /// What the process chose at the handshake (set by the pool).
  var handshake = ExternalHandshake()

  /// Starts `command`.
  /// - Throws: ``ExternalPolicyError`` when the socket, the stderr file or
  ///   the spawn fails.
  init(command: String, timeoutS: Double, maxLineBytes: Int = 65_536) throws {
    self.command = command
    self.timeoutS = timeoutS
    self.maxLineBytes = maxLineBytes
    var pair: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
      throw ExternalPolicyError(.spawn, command: command, detail: "cannot make a socket pair: \(Self.errnoText())")
    }
    var template = Array((NSTemporaryDirectory() + "/fetchlab-external-stderr-XXXXXX").utf8CString)
    let errFD = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    guard errFD >= 0 else {
      close(pair[0])
      close(pair[1])
      throw ExternalPolicyError(.spawn, command: command, detail: "cannot make a file for its stderr: \(Self.errnoText())")
    }
    _ = fcntl(errFD, F_SETFD, FD_CLOEXEC)
    template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
    fd = pair[0]
    stderrFD = errFD
    let status = Self.spawn(command, io: pair[1], stderr: errFD, pid: &pid)
    close(pair[1])
    guard status == 0 else {
      close(fd)
      close(stderrFD)
      closed = true
      throw ExternalPolicyError(.spawn, command: command, detail: "cannot start /bin/sh: \(String(cString: strerror(status)))")
    }
    setTimeouts(timeoutS)
  }

  deinit { terminate() }

  private static func spawn(_ command: String, io: Int32, stderr: Int32, pid: inout pid_t) -> Int32 {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, io, 0)
    posix_spawn_file_actions_adddup2(&actions, io, 1)
    posix_spawn_file_actions_adddup2(&actions, stderr, 2)
    var attr = posix_spawnattr_t()
    posix_spawnattr_init(&attr)
    defer { posix_spawnattr_destroy(&attr) }
    posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETPGROUP))
    posix_spawnattr_setpgroup(&attr, 0)
    let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup(command), nil]
    defer { for a in argv { free(a) } }
    return posix_spawn(&pid, "/bin/sh", &actions, &attr, argv, environ)
  }

  private static func errnoText() -> String { String(cString: strerror(errno)) }

  private static func monotonic() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
  }

  /// The socket's send and receive timeouts now, s (``setTimeouts(_:)``).
  private var socketTimeoutS = -1.0

  /// Sets the socket's send and receive timeouts to `seconds` (at least
  /// 1 ms), so that one blocking call waits at most that long; a system
  /// call only when they change.
  private func setTimeouts(_ seconds: Double) {
    let s = max(seconds, 0.001)
    guard s != socketTimeoutS else { return }
    socketTimeoutS = s
    var tv = timeval(tv_sec: Int(s), tv_usec: Int((s - s.rounded(.down)) * 1e6))
    for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
      _ = setsockopt(fd, SOL_SOCKET, option, &tv, socklen_t(MemoryLayout<timeval>.size))
    }
  }

  /// Whether a blocking call that failed with the current errno ran out
  /// of time (or was interrupted) before `deadline`: then the caller
  /// tries again with the time left.
  private func retry(until deadline: Double) -> Bool {
    guard errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK else { return false }
    let left = deadline - Self.monotonic()
    guard left > 0 else { return false }
    setTimeouts(left)
    return true
  }

  /// Writes `line` and a line feed.
  /// - Throws: ``ExternalPolicyError`` when the child has exited, sent
  ///   output nobody asked for, or does not read within ``timeoutS``.
  func send(_ line: String, timeoutS limit: Double? = nil) throws {
    let timeoutS = limit ?? self.timeoutS
    try checkNoPendingOutput()
    var bytes = Array(line.utf8)
    bytes.append(10)
    let deadline = Self.monotonic() + timeoutS
    setTimeouts(timeoutS)
    var off = 0
    while off < bytes.count {
      let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + off, bytes.count - off, Int32(MSG_NOSIGNAL)) }
      if n > 0 {
        off += n
        continue
      }
      if n < 0 && retry(until: deadline) { continue }
      if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
        throw ExternalPolicyError(.timeout, command: command, detail: "did not read its input within \(formatDuration(timeoutS)) (timeout)")
      }
      throw exitError(reading: false)
    }
  }

  /// Output that arrived unasked: an error (the child floods), or its exit.
  /// One non-blocking read, which finds nothing when all is well.
  private func checkNoPendingOutput() throws {
    guard head == buffer.count else { throw floodError() }
    let n = recv(fd, &scratch, scratch.count, Int32(MSG_DONTWAIT))
    if n > 0 {
      buffer.append(contentsOf: scratch[0..<n])
      throw floodError()
    }
    if n == 0 { throw exitError(reading: true) }
  }

  /// Reads one line (without its line feed).
  /// - Throws: ``ExternalPolicyError`` on a timeout, an exit, a line over
  ///   ``maxLineBytes`` or a second line sent with it.
  func readLine(timeoutS limit: Double? = nil) throws -> String {
    let timeoutS = limit ?? self.timeoutS
    let deadline = Self.monotonic() + timeoutS
    setTimeouts(timeoutS)
    var searched = head
    while true {
      if let nl = buffer[searched...].firstIndex(of: 10) {
        let line = String(decoding: buffer[head..<nl], as: UTF8.self)
        head = nl + 1
        if head == buffer.count {
          buffer.removeAll(keepingCapacity: true)
          head = 0
        } else {
          throw floodError()
        }
        return line
      }
      searched = buffer.count
      if buffer.count - head > maxLineBytes { throw floodError() }
      // One blocking read, bounded by the socket's receive timeout: a
      // reply is hardly ever there at once, and a wait (poll) before the
      // read would be one more system call per decision.
      let n = read(fd, &scratch, scratch.count)
      if n > 0 {
        buffer.append(contentsOf: scratch[0..<n])
        continue
      }
      if n == 0 { throw exitError(reading: true) }
      if retry(until: deadline) { continue }
      if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
        throw ExternalPolicyError(.timeout, command: command, detail: "sent no reply within \(formatDuration(timeoutS)) (timeout)")
      }
      throw exitError(reading: true)
    }
  }

  private func floodError() -> ExternalPolicyError {
    let extra = buffer.count - head
    let preview = String(decoding: buffer[head..<min(buffer.count, head + 120)], as: UTF8.self)
    return ExternalPolicyError(
      .flood, command: command,
      detail: extra > maxLineBytes
        ? "flooded its output: a reply line longer than \(maxLineBytes) bytes, starting \(JSONText.quoted(preview))"
        : "flooded its output: it wrote more than one line for one request; the extra output starts \(JSONText.quoted(preview))")
  }

  /// The child's end: its exit status when it has gone, else a hint.
  private func exitError(reading: Bool) -> ExternalPolicyError {
    var status: Int32 = 0
    var reaped = false
    for _ in 0..<200 {
      if waitpid(pid, &status, WNOHANG) == pid {
        reaped = true
        break
      }
      usleep(5_000)
    }
    let how: String
    if reaped {
      let signal = status & 0x7f
      how = signal == 0 ? "exited with status \((status >> 8) & 0xff)" : "was killed by signal \(signal)"
      pid = 0
    } else {
      how = reading ? "closed its output" : "closed its input"
    }
    return ExternalPolicyError(.exited, command: command, detail: how)
  }

  /// The last `limit` bytes the child wrote to its stderr (whole lines
  /// where possible).
  func stderrTail(_ limit: Int = 2_000) -> String {
    guard stderrFD >= 0 else { return "" }
    let size = lseek(stderrFD, 0, SEEK_END)
    guard size > 0 else { return "" }
    let start = max(0, Int(size) - limit)
    var bytes = [UInt8](repeating: 0, count: Int(size) - start)
    let n = pread(stderrFD, &bytes, bytes.count, off_t(start))
    guard n > 0 else { return "" }
    var text = String(decoding: bytes[0..<n], as: UTF8.self)
    if start > 0, let nl = text.firstIndex(of: "\n") { text = String(text[text.index(after: nl)...]) }
    return text
  }

  /// Ends the child: closes its input (a well-behaved child exits on end
  /// of input), waits up to `graceS`, then kills its process group.
  func terminate(graceS: Double = 2) {
    guard !closed else { return }
    closed = true
    closeInput()
    if pid > 0 {
      var status: Int32 = 0
      let deadline = Self.monotonic() + graceS
      var reaped = false
      while Self.monotonic() < deadline {
        if waitpid(pid, &status, WNOHANG) == pid {
          reaped = true
          break
        }
        usleep(2_000)
      }
      if !reaped {
        kill(-pid, SIGKILL)
        kill(pid, SIGKILL)
        _ = waitpid(pid, &status, 0)
      }
    }
    if stderrFD >= 0 { close(stderrFD) }
  }

  /// Closes FetchLab's end of the socket: the child reads end of input
  /// (``terminate(graceS:)`` then waits for it to exit). Closing every
  /// idle process's end first lets them exit side by side.
  func closeInput() {
    if fd >= 0 { close(fd) }
    fd = -1
  }

  /// Kills the child's process group at once (after a protocol error).
  func abort() {
    guard !closed else { return }
    if pid > 0 {
      Glibc.kill(-pid, SIGKILL)
      Glibc.kill(pid, SIGKILL)
    }
    terminate(graceS: 1)
  }
}
