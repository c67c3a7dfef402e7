import FetchModels
import FetchTraces

/// A policy configuration as written on the command line, e.g.
/// `periodic:30m`. Parsing is strict; ``description`` is canonical.
public enum PolicySpec: Sendable, Hashable, CustomStringConvertible {
  case never
  /// A timer every `interval` seconds.
  case periodic(interval: Double)
  case oracle

  /// The policies `--policy` accepts, for help and error texts.
  public static let syntax = "never, periodic:<interval> (e.g. periodic:30m, periodic:1h30m), oracle"

  /// Parses a policy string; throws ``PolicySpecError`` naming what is wrong.
  public init(parsing s: String) throws {
    let parts = s.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
    let name = String(parts[0])
    let arg = parts.count > 1 ? String(parts[1]) : nil
    switch (name, arg) {
    case ("never", nil): self = .never
    case ("oracle", nil): self = .oracle
    case ("periodic", let a?):
      guard let secs = parseDuration(a), secs >= 1 else {
        throw PolicySpecError("policy '\(s)': bad interval '\(a)' (use e.g. 90s, 15m, 1h, 1h30m, 1d; at least 1 s)")
      }
      self = .periodic(interval: secs)
    case ("periodic", nil):
      throw PolicySpecError("policy 'periodic' needs an interval, e.g. periodic:30m")
    case ("never", _?), ("oracle", _?):
      throw PolicySpecError("policy '\(name)' takes no parameter (got '\(s)')")
    default:
      throw PolicySpecError("unknown policy '\(s)'; known: \(PolicySpec.syntax)")
    }
  }

  public var description: String {
    switch self {
    case .never: "never"
    case .oracle: "oracle"
    case .periodic(let i): "periodic:\(formatDuration(i))"
    }
  }

  /// Replays one (user, app) under this policy.
  public func replay(
    user: PreparedUser, app: Int32, content: ContentTimeline, seed: UInt64, recordEvents: Bool
  ) -> AppReplay {
    let o = ReplayOptions(seed: seed, policyKey: description, recordEvents: recordEvents)
    switch self {
    case .never:
      var p = NeverPolicy()
      return FetchSimulation.replay(&p, user: user, app: app, content: content, options: o)
    case .periodic(let i):
      var p = PeriodicPolicy(interval: i)
      return FetchSimulation.replay(&p, user: user, app: app, content: content, options: o)
    case .oracle:
      var p = OraclePolicy(user: user, app: app, content: content)
      return FetchSimulation.replay(&p, user: user, app: app, content: content, options: o)
    }
  }
}

/// A bad policy string.
public struct PolicySpecError: Error, CustomStringConvertible, Sendable {
  public let description: String
  init(_ s: String) { description = s }
}

private let durationUnits: [(Character, Double)] = [("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)]

/// Parses `90`, `90s`, `15m`, `1h30m`, `1.5h`, `2d` into seconds; `nil` if malformed.
public func parseDuration(_ s: String) -> Double? {
  guard !s.isEmpty else { return nil }
  if let x = Double(s), x.isFinite { return x }
  var total = 0.0
  var num = ""
  var lastUnit = Double.infinity
  for c in s {
    if c.isNumber || c == "." {
      num.append(c)
    } else if let u = durationUnits.first(where: { $0.0 == c })?.1 {
      guard let x = Double(num), x.isFinite, u < lastUnit else { return nil }
      total += x * u
      lastUnit = u
      num = ""
    } else {
      return nil
    }
  }
  return num.isEmpty ? total : nil
}

/// Seconds as the shortest `1h30m`-style text; fractions of a second as `s`.
public func formatDuration(_ secs: Double) -> String {
  if secs != secs.rounded() { return CSV.number(secs) + "s" }
  var rest = Int(secs)
  var out = ""
  for (c, u) in durationUnits {
    let n = rest / Int(u)
    if n > 0 { out += "\(n)\(c)" }
    rest -= n * Int(u)
  }
  return out.isEmpty ? "0s" : out
}
