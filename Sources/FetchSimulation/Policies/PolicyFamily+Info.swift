/// What help texts, `docs/policies.md` and charts say about a family, in
/// one value (``PolicyFamily/info``): its name, how its argument is written
/// (from which the syntax and the default example follow), what it models,
/// whether it learns, and its chart style.
public struct FamilyInfo: Sendable {
  /// How a family's argument is written after `name`.
  public enum Argument: Sendable {
    /// No argument: `name`.
    case none
    /// Settings only: `name[:key=value,...]`.
    case settings
    /// Settings, the main ones named first: `name[:<first>,key=value,...]`,
    /// e.g. `threshold=<interval>`.
    case settingsAfter(String)
    /// A required interval, then settings: `name:<interval>[,key=value,...]`.
    case interval
    /// Any other form, the text after the name as it is (`:<N per day>|<X>J`).
    case other(String)
  }

  /// What a family learns from the training part of each user's window.
  public enum Learning: Sendable {
    /// Nothing.
    case nothing
    /// Usage, without a habit model.
    case usage
    /// A habit model shrunk toward the population's.
    case habitModel
  }

  let name: String
  let syntax: String
  let example: String
  let summary: String
  let learning: Learning
  let style: PolicyStyle

  /// A family's description; `example` defaults to the name alone, or to
  /// `name:1h` for an interval argument.
  public init(
    _ name: String, _ argument: Argument, example: String? = nil, learning: Learning = .nothing, style: PolicyStyle,
    summary: String
  ) {
    self.name = name
    switch argument {
    case .none: syntax = name
    case .settings: syntax = name + "[:key=value,...]"
    case .settingsAfter(let first): syntax = name + "[:" + first + ",key=value,...]"
    case .interval: syntax = name + ":<interval>[,key=value,...]"
    case .other(let rest): syntax = name + rest
    }
    if case .interval = argument {
      self.example = example ?? name + ":1h"
    } else {
      self.example = example ?? name
    }
    self.summary = summary
    self.learning = learning
    self.style = style
  }
}

extension PolicyFamily {
  /// ``info``'s name.
  public static var name: String { info.name }
  /// ``info``'s syntax.
  public static var syntax: String { info.syntax }
  /// ``info``'s example.
  public static var example: String { info.example }
  /// ``info``'s summary.
  public static var summary: String { info.summary }
  /// Whether ``info`` says the family learns anything.
  public static var learns: Bool {
    if case .nothing = info.learning { return false }
    return true
  }
  /// Whether ``info`` says the family fits a habit model.
  public static var usesHabitModel: Bool {
    if case .habitModel = info.learning { return true }
    return false
  }
  /// ``info``'s chart style.
  public static var style: PolicyStyle { info.style }
}
