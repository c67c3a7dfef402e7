import FetchSupport
import Foundation

/// Line-by-line bytes of a plain file, or of `xz -dc <file>` for `.xz` paths.
///
/// A line is returned without its LF or CRLF and stays valid until the next
/// call. Lines longer than 1 MiB are an error.
final class UbiqLogInput {
  let path: String
  /// Lines returned so far (1-based number of the last one).
  private(set) var line = 0
  private let fd: Int32
  private let process: Process?
  private let outputPipe: Pipe?
  private let errorPipe: Pipe?
  private let capacity = 1 << 20
  private let buf: UnsafeMutablePointer<UInt8>
  private var start = 0
  private var end = 0
  private var eof = false
  private var finished = false

  init(path: String) throws {
    self.path = path
    guard access(path, R_OK) == 0 else {
      throw TraceFormatError(file: path, line: 0, field: "-", message: "cannot open: \(String(cString: strerror(errno)))")
    }
    if path.hasSuffix(".xz") {
      let p = Process()
      p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
      p.arguments = ["xz", "-dc", "--", path]
      let out = Pipe(), err = Pipe()
      p.standardInput = FileHandle.nullDevice
      p.standardOutput = out
      p.standardError = err
      do {
        try p.run()
      } catch {
        throw TraceFormatError(file: path, line: 0, field: "-", message: "cannot run 'xz -dc': \(error)")
      }
      process = p
      outputPipe = out
      errorPipe = err
      fd = out.fileHandleForReading.fileDescriptor
    } else {
      let f = open(path, O_RDONLY)
      guard f >= 0 else {
        throw TraceFormatError(file: path, line: 0, field: "-", message: "cannot open: \(String(cString: strerror(errno)))")
      }
      fd = f
      process = nil
      outputPipe = nil
      errorPipe = nil
    }
    buf = .allocate(capacity: capacity)
  }

  deinit {
    if let p = process {
      // Closing our end makes a still-writing xz exit on SIGPIPE.
      try? outputPipe?.fileHandleForReading.close()
      if p.isRunning { p.terminate() }
      p.waitUntilExit()
    } else {
      close(fd)
    }
    buf.deallocate()
  }

  /// The next line without its line ending, or `nil` at the end.
  func nextLine() throws -> UnsafeBufferPointer<UInt8>? {
    while true {
      if start < end, let nl = memchr(buf + start, 10, end - start) {
        let at = UnsafeRawPointer(buf).distance(to: UnsafeRawPointer(nl))
        var stop = at
        if stop > start && buf[stop - 1] == 13 { stop -= 1 }
        let s = UnsafeBufferPointer(start: buf + start, count: stop - start)
        start = at + 1
        line += 1
        return s
      }
      if eof {
        guard start < end else { return nil }
        var stop = end
        if buf[stop - 1] == 13 { stop -= 1 }
        let s = UnsafeBufferPointer(start: buf + start, count: stop - start)
        start = end
        line += 1
        return s
      }
      if start > 0 {
        if end > start { memmove(buf, buf + start, end - start) }
        end -= start
        start = 0
      }
      if end == capacity {
        throw TraceFormatError(file: path, line: line + 1, field: "-", message: "line longer than \(capacity) bytes")
      }
      let n = read(fd, buf + end, capacity - end)
      if n < 0 {
        if errno == EINTR { continue }
        throw TraceFormatError(file: path, line: line, field: "-", message: "read error: \(String(cString: strerror(errno)))")
      }
      if n == 0 {
        eof = true
        try finish()  // report a failing xz before its partial output is parsed
      } else {
        end += n
      }
    }
  }

  /// Waits for `xz` and reports its failure; a no-op for plain files.
  func finish() throws {
    guard let p = process, !finished else { return }
    finished = true
    p.waitUntilExit()
    guard p.terminationReason == .exit, p.terminationStatus == 0 else {
      let data = (try? errorPipe?.fileHandleForReading.readToEnd()) ?? nil
      let message = String(decoding: data ?? Data(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
      let hint = p.terminationStatus == 127 ? " (is xz installed and on PATH?)" : ""
      throw TraceFormatError(
        file: path, line: line, field: "-",
        message: "'xz -dc' failed with status \(p.terminationStatus)\(hint): \(message)")
    }
  }
}
