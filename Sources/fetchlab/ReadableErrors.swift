import FetchBenchmark
import Foundation

/// A failure caused by the input (not the usage): printed as `Error: ...`, exit 1.
struct CommandError: Error, CustomStringConvertible {
  let description: String
  init(_ s: String) { description = s }
}

/// `error` as a FetchLab message when it is a Foundation file error (which
/// would print as an `Error Domain=NSCocoaErrorDomain Code=… UserInfo=…`
/// dump): the path, the reason in words, and what to do. Other errors are
/// returned unchanged.
func readable(_ error: Error) -> Error {
  let ns = error as NSError
  guard ns.domain == NSCocoaErrorDomain || ns.domain == NSPOSIXErrorDomain else { return error }
  let path = (ns.userInfo[NSFilePathErrorKey] as? String) ?? (ns.userInfo[NSURLErrorKey] as? URL)?.path
  return CommandError(
    (path.map { $0 + ": " } ?? "") + ResultDirectory.reason(error)
      + "; check that the path exists and is writable, and that the disk has free space")
}
