import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation

/// A problem running an experiment that is not located in an input file
/// (a directory holding another experiment, a corrupted part, …).
///
/// Match on ``code`` (a struct of named codes, so new codes do not break
/// callers), show ``message``.
public struct ExperimentError: CodedError {
  /// The category of an ``ExperimentError``.
  public struct Code: Sendable, Hashable, CustomStringConvertible {
    /// A stable kebab-case name.
    public let description: String

    /// A `--shard K/N` value that is malformed or out of range.
    public static let badShard = Code(description: "bad-shard")
    /// A policy pattern with unbalanced braces or too many expansions.
    public static let badPolicyPattern = Code(description: "bad-policy-pattern")
    /// The output directory is in use or holds another experiment's results.
    public static let directoryConflict = Code(description: "directory-conflict")
    /// The configuration changed since the parts in the directory were computed.
    public static let configurationChanged = Code(description: "configuration-changed")
    /// An input file changed during the run.
    public static let inputChanged = Code(description: "input-changed")
    /// A part, state or shard file is missing or does not match its checksum.
    public static let damagedParts = Code(description: "damaged-parts")
    /// Shards given to a merge do not belong together.
    public static let shardMismatch = Code(description: "shard-mismatch")
    /// Any other problem (directories that cannot be created or written, …).
    public static let other = Code(description: "other")
  }

  /// The category.
  public let code: Code
  /// What is wrong, in words, control characters escaped (also the ``description``).
  public let message: String
  /// The file or option at fault, when known.
  public var location: InputLocation

  /// An error of `code`; `message` with control characters escaped (names
  /// from input files may hold them).
  package init(code: Code, message: String, location: InputLocation) {
    self.code = code
    self.message = escaped(message)
    self.location = location
  }

  /// An ``Code-swift.struct/other`` error with `message`.
  package init(_ message: String) { self.init(.other, message) }
}
