import FetchTraces

/// Which of a user's apps are replayed as "the app that fetches".
public enum AppSelection: Sendable, Equatable, CustomStringConvertible {
  /// The user's `k` most-opened apps (ties broken by name).
  case top(Int)
  /// Every app the user opened at least `n` times.
  case minOpens(Int)
  /// These apps, where the user opened them at least once.
  case named([String])

  /// Parses `top:3`, `min-opens:20` or `names:mail,news`.
  public init(parsing s: String) throws {
    let parts = s.split(separator: ":", maxSplits: 1).map(String.init)
    switch (parts.first, parts.count) {
    case ("top", 2):
      guard let k = Int(parts[1]), k >= 1 else { throw Self.bad(.badCount, "--apps top:K needs K ≥ 1, got '\(s)'") }
      self = .top(k)
    case ("min-opens", 2):
      guard let n = Int(parts[1]), n >= 1 else { throw Self.bad(.badCount, "--apps min-opens:N needs N ≥ 1, got '\(s)'") }
      self = .minOpens(n)
    case ("names", 2):
      let names = parts[1].split(separator: ",").map(String.init).filter { !$0.isEmpty }
      guard !names.isEmpty else { throw Self.bad(.noNames, "--apps names: needs at least one app name") }
      self = .named(names)
    default:
      throw Self.bad(.unknownForm, "bad app selection '\(s)'; use top:K, min-opens:N or names:A,B")
    }
  }

  /// The selection in the syntax ``init(parsing:)`` reads.
  public var description: String {
    switch self {
    case .top(let k): "top:\(k)"
    case .minOpens(let n): "min-opens:\(n)"
    case .named(let a): "names:" + a.joined(separator: ",")
    }
  }

  /// The selected app indices of `trace`, most-opened first.
  public func select(in trace: UserTrace) -> [Int32] {
    let counts = trace.openCounts()
    let ranked = counts.indices.filter { counts[$0] > 0 }.sorted {
      counts[$0] != counts[$1] ? counts[$0] > counts[$1] : trace.apps[$0] < trace.apps[$1]
    }
    switch self {
    case .top(let k): return ranked.prefix(k).map { Int32($0) }
    case .minOpens(let n): return ranked.filter { counts[$0] >= n }.map { Int32($0) }
    case .named(let names): return ranked.filter { names.contains(trace.apps[$0]) }.map { Int32($0) }
    }
  }
}

/// A bad `--apps` value (or `apps` key of an experiment).
///
/// Match on ``code`` (a struct of named codes, so new codes do not break
/// callers), show ``message``.
public struct AppSelectionError: Error, CustomStringConvertible, Sendable, Equatable {
  /// The category of a ``AppSelectionError``.
  public struct Code: Sendable, Hashable, CustomStringConvertible {
    /// A stable kebab-case name.
    public let description: String

    /// `top:K` or `min-opens:N` with a count below 1 or not a number.
    public static let badCount = Code(description: "bad-count")
    /// `names:` without an app name.
    public static let noNames = Code(description: "no-names")
    /// Not one of `top:K`, `min-opens:N`, `names:A,B`.
    public static let unknownForm = Code(description: "unknown-form")
  }

  /// The category.
  public let code: Code
  /// What is wrong, in words (also the ``description``).
  public let message: String
  /// The option at fault, `--apps`.
  public var location: InputLocation

  init(_ code: Code, _ message: String, location: InputLocation = InputLocation()) {
    self.code = code
    self.message = message
    self.location = location
  }

  /// The message.
  public var description: String { message }
}

extension AppSelection {
  /// An ``AppSelectionError`` located at the `--apps` option.
  static func bad(_ code: AppSelectionError.Code, _ message: String) -> AppSelectionError {
    AppSelectionError(code, message, location: InputLocation(field: "--apps"))
  }
}
