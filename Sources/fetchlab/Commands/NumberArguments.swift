import ArgumentParser
import FetchSupport

/// A decimal option value (``DecimalText``: no hexadecimal, `inf` or
/// `nan`), for `@Option(transform:)`; `name` is the option, for the error.
func decimalArgument(_ text: String, _ name: String) throws -> Double {
  try numberArgument(text, name, expected: "a decimal number such as 0.75") { DecimalText.finite($0) }
}

/// A duration option value (``DurationText``: `90`, `90s`, `15m`, `1h30m`;
/// a bare number is seconds), for `@Option(transform:)`.
func durationArgument(_ text: String, _ name: String) throws -> Double {
  try numberArgument(text, name, expected: "a duration such as 1800, 30m or 1h30m") { DurationText.parse($0) }
}

/// `parse(text)`, or an error naming the option `name`, what it `expected`
/// and the start of what it found (at most 40 characters: a stray file
/// name or paste stays readable).
private func numberArgument(
  _ text: String, _ name: String, expected: String, _ parse: (String) -> Double?
) throws -> Double {
  guard let x = parse(text) else { throw ValidationError("\(name): expected \(expected), found '\(text.prefix(40))'") }
  return x
}

/// How the importers cut and join sessions (`import-events`,
/// `import-ubiqlog`), declared and checked once; each command gives its
/// defaults.
struct SessionOptions: ParsableArguments {
  @Option(
    name: .customLong("max-session"), parsing: .unconditional,
    help: ArgumentHelp(
      "Cap on a session's length, 0 < d ≤ 24h (default 30m); the import's summary counts the sessions cut to it.",
      valueName: "duration"),
    transform: { try durationArgument($0, "--max-session") })
  var maxSession: Double?

  @Option(
    name: .customLong("merge-gap"), parsing: .unconditional,
    help: ArgumentHelp(
      "An app's session starting less than this long after its previous one ended continues it (0: never; default 0, import-ubiqlog 60s); the summary counts the merges.",
      valueName: "duration"),
    transform: { try durationArgument($0, "--merge-gap") })
  var mergeGap: Double?

  /// The cap a command uses when none is given, s.
  static let defaultMaximumSession = 1_800.0

  /// ``maxSession`` or its default, s.
  var maximumSession: Double { maxSession ?? Self.defaultMaximumSession }

  /// ``mergeGap`` or the command's default `fallback`, s.
  func mergeGap(default fallback: Double) -> Double { mergeGap ?? fallback }

  func validate() throws {
    guard maximumSession > 0, maximumSession <= 86_400 else {
      throw ValidationError("--max-session must be in (0, 24h] (0 < s ≤ 86400), found \(CSV.number(maximumSession)) s")
    }
    if let g = mergeGap, !(g >= 0) { throw ValidationError("--merge-gap must be at least 0, found \(CSV.number(g)) s") }
  }
}
