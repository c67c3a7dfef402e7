import FetchTraces

/// Choosing the policy configurations a report's charts show.
extension RunReport {
  /// A `--policies` name that is not a configuration of the run.
  package struct PolicySelectionError: Error, CustomStringConvertible {
    /// The names asked for that the run does not have.
    package var unknown: [String]
    /// The run's configurations, in `policies.csv` order.
    package var valid: [String]
    /// The file the configurations were read from.
    package var file: String

    package var description: String {
      let quoted = unknown.map { "'" + escaped($0) + "'" }
      return escaped(file) + ": no policy \(quoted.joined(separator: ", ")) in this run; valid policies: "
        + valid.joined(separator: ", ")
    }
  }

  /// The configurations to draw: all of `rows`' policies when `wanted` is
  /// nil, else `wanted` (each must be one of them; an empty list is an error).
  static func selectPolicies(_ wanted: [String]?, from rows: [PolicyRow], file: String) throws -> Set<String> {
    var valid: [String] = []
    for r in rows where !valid.contains(r.policy) { valid.append(r.policy) }
    guard let wanted else { return Set(valid) }
    let unknown = wanted.filter { !valid.contains($0) }
    guard unknown.isEmpty, !wanted.isEmpty else {
      throw PolicySelectionError(unknown: wanted.isEmpty ? [""] : unknown, valid: valid, file: file)
    }
    return Set(wanted)
  }
}
