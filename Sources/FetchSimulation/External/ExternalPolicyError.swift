import Foundation

/// A failure of an `external` policy's process: what went wrong, in which
/// exchange, and the tail of the child's stderr.
///
/// The run stops at the first one and writes no result (the result
/// directory keeps its old content, or stays absent).
package struct ExternalPolicyError: Error, CustomStringConvertible, Sendable {
  /// What went wrong.
  package enum Kind: String, Sendable {
    /// The process could not be started.
    case spawn
    /// A reply that is not the protocol's JSON object.
    case badReply = "bad-reply"
    /// An ask-again time before the decision's time.
    case past
    /// The process exited or closed its end.
    case exited
    /// No reply (or no reading) within the timeout.
    case timeout
    /// Output nobody asked for, or a reply line over the limit.
    case flood
    /// The process speaks another version of the protocol.
    case version
    /// An earlier process of the same policy failed; this run stops.
    case earlier
  }

  package let kind: Kind
  /// The shell command of the process.
  package let command: String
  /// What happened, in words.
  package let detail: String
  /// Where in the run (`device u1, app news, at t = …`), when known.
  package var context = ""
  /// The last lines the process wrote to its stderr.
  package var stderrTail = ""

  package init(_ kind: Kind, command: String, detail: String) {
    self.kind = kind
    self.command = command
    self.detail = detail
  }

  /// `external policy process 'cmd' <detail> (<context>); its stderr ended with: …`.
  package var description: String {
    var s = "external policy process '\(command)' \(detail)"
    if !context.isEmpty { s += " (\(context))" }
    let tail = stderrTail.trimmingCharacters(in: .whitespacesAndNewlines)
    s += tail.isEmpty ? "; it wrote nothing to stderr" : "; its stderr ended with:\n" + tail
    return s
  }
}

/// `x` as a JSON number (`null` when not finite).
func jsonNumber(_ x: Double) -> String {
  x.isFinite ? x.description : "null"
}
