import ArgumentParser
import FetchTraces
import Foundation

/// Runs `body` of an import command; a ``TraceFormatError`` is printed as
/// `error: …` on standard error and ends the command with exit code 1.
func exitOnFormatError<T>(_ body: () throws -> T) throws -> T {
  do {
    return try body()
  } catch let e as TraceFormatError {
    log("error: \(e)")
    throw ExitCode.failure
  }
}

/// Writes the converted `users` to the canonical trace `out`, creating its
/// directory, with `comments` at the top.
func writeImportedTrace(_ users: [UserTrace], to out: String, comments: [String]) throws {
  let dir = (out as NSString).deletingLastPathComponent
  if !dir.isEmpty { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) }
  try exitOnFormatError {
    let writer = try TraceWriter(path: out, comments: comments)
    for u in users { try writer.write(u) }
    try writer.commit()
  }
}
