import FetchSupport
import Foundation

/// Line-by-line bytes of a plain file, or of `xz -dc <file>` for `.xz` paths.
///
/// A line is returned without its LF or CRLF and stays valid until the next
/// call (``LineReader``). Lines longer than 1 MiB are an error.
final class UbiqLogInput {
  let path: String
  /// Lines returned so far (1-based number of the last one).
  var line: Int { reader.line }
  private let fd: Int32
  private let process: Process?
  private let outputPipe: Pipe?
  private let errorPipe: Pipe?
  private let reader: LineReader
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
    reader = LineReader(fd: fd, maxLineBytes: 1 << 20)
    // Report a failing xz before its partial output is parsed.
    reader.onEnd = { [unowned self] in try self.finish() }
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
  }

  /// The next line without its line ending, or `nil` at the end.
  func nextLine() throws -> UnsafeBufferPointer<UInt8>? {
    do {
      return try reader.next()
    } catch let f as LineReader.Failure {
      throw TraceFormatError(file: path, f)
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
