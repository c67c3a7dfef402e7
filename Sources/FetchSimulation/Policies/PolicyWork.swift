import FetchModels
import FetchSupport

/// What a configuration's settings imply for the work of one replay: the
/// decision steps its policy instance takes per replayed (user, app) day
/// beyond its fetches, and the settings that drive them, for the up-front
/// resource check (``ResourceLimits/checkPolicyWork(stepsPerDay:days:policy:settings:)``).
///
/// The settings' bounds (``SettingBound``) keep each setting finite; this
/// estimate refuses in-bound combinations that would still cost too much,
/// such as a week's horizon in one-minute steps checked every minute.
public struct SettingWork: Sendable, Equatable {
  /// Decision steps per replayed day (an upper bound: gates that decide
  /// first are not counted off).
  public var stepsPerDay: Double
  /// The settings that drive it, as written (`horizon=7d, step=1m, check=5m`).
  public var settings: String

  /// A cost of `stepsPerDay` driven by `settings`.
  public init(stepsPerDay: Double, settings: String) {
    self.stepsPerDay = stepsPerDay
    self.settings = settings
  }

  /// The habit model's probability of an open within `horizon` s, asked
  /// every `check` s: one intensity per ``HabitOpenMemo/defaultStep`` of
  /// the horizon at each check.
  static func openProbability(horizon: Double, check: Double) -> SettingWork {
    let points = (horizon / HabitOpenMemo.defaultStep).rounded(.up)
    return SettingWork(
      stepsPerDay: 86_400 / check * max(1, points),
      settings: "horizon=\(formatDuration(horizon)), check=\(formatDuration(check))")
  }
}

extension IOSMinimumFamily {
  /// An open probability over the horizon at each check.
  package static func settingWork(_ p: MinimumParameters) -> SettingWork? {
    .openProbability(horizon: p.horizonS, check: p.checkIntervalS)
  }
}

extension IOSCustomFamily {
  /// As `ios-minimum`.
  package static func settingWork(_ c: Configuration) -> SettingWork? {
    .openProbability(horizon: c.parameters.horizonS, check: c.parameters.checkIntervalS)
  }
}

extension BGAppRefreshFamily {
  /// As `ios-minimum` (its scheduler).
  package static func settingWork(_ c: BGAppRefreshConfiguration) -> SettingWork? {
    .openProbability(horizon: c.minimum.horizonS, check: c.minimum.checkIntervalS)
  }
}

extension IMPFamily {
  /// An open probability over the horizon at each decision period.
  package static func settingWork(_ p: IMPParameters) -> SettingWork? {
    .openProbability(horizon: p.horizonS, check: p.checkIntervalS)
  }
}

extension PlannerFamily {
  /// K = horizon / step look-ahead bins, each decision O(K²) (every
  /// candidate against every bin), a decision every check.
  package static func settingWork(_ p: PlannerParameters) -> SettingWork? {
    let bins = max(1, (p.horizonS / p.stepS).rounded(.down))
    return SettingWork(
      stepsPerDay: 86_400 / p.checkIntervalS * bins * bins,
      settings: "horizon=\(formatDuration(p.horizonS)), step=\(formatDuration(p.stepS)), check=\(formatDuration(p.checkIntervalS))")
  }
}

extension PerAppFamily {
  /// The costliest part's (each app runs one part).
  package static func settingWork(_ c: Configuration) -> SettingWork? {
    c.parts.compactMap(\.policy.settingWork).max { $0.stepsPerDay < $1.stepsPerDay }
  }
}
