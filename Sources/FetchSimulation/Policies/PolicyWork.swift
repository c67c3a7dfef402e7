import FetchModels
import FetchSupport
import FetchTraces

/// What a configuration's settings imply for the work of one replay: the
/// decisions its policy instance takes for one (user, app), the steps of
/// each, and the settings that drive them, for the up-front resource check
/// (``ResourceLimits/checkPolicyWork(steps:days:policy:settings:)``).
///
/// A policy decides at its own checks (``checksPerDay``) and at every event
/// that is a decision opportunity for it (``decidesAt``: another app's
/// open, a wake, plugging in, a network change, and for `bg-app-refresh` a
/// location wake), so its work on a device is
///
///     steps = Σ over replayed apps a of (checksPerDay × days + opportunities(a)) × stepsPerDecision
///
/// where opportunities(a) counts the user's rows of those kinds (other
/// apps' opens only). The settings' bounds (``SettingBound``) keep each
/// setting finite; this estimate refuses in-bound combinations that would
/// still cost too much, such as a week's horizon in one-minute steps.
public struct SettingWork: Sendable, Equatable {
  /// The policy's own checks per replayed day (its timer); 0 when it has none.
  public var checksPerDay: Double
  /// Steps of one decision (an upper bound: gates that decide first are
  /// not counted off).
  public var stepsPerDecision: Double
  /// The kinds of trace rows at which the policy also decides (an `open`
  /// counts only when it is another app's).
  public var decidesAt: Set<EventKind>
  /// The settings that drive it, as written (`horizon=7d, step=1m, check=5m`).
  public var settings: String

  /// Steps per replayed day from the checks alone.
  public var stepsPerDay: Double { checksPerDay * stepsPerDecision }

  /// A cost of `stepsPerDecision` a decision, `checksPerDay` checks a day
  /// and a decision at each trace row of the kinds `decidesAt` (an `open`
  /// only when it is another app's), driven by `settings`.
  public init(checksPerDay: Double, stepsPerDecision: Double, decidesAt: Set<EventKind>, settings: String) {
    self.checksPerDay = checksPerDay
    self.stepsPerDecision = stepsPerDecision
    self.decidesAt = decidesAt
    self.settings = settings
  }

  /// A cost of `stepsPerDay` a day from checks alone, driven by `settings`.
  @available(*, deprecated, message: "give the decisions: init(checksPerDay:stepsPerDecision:decidesAt:settings:)")
  public init(stepsPerDay: Double, settings: String) {
    self.init(checksPerDay: stepsPerDay, stepsPerDecision: 1, decidesAt: [], settings: settings)
  }

  /// The rows at which the OS schedulers, IMP and the planner decide
  /// besides their checks (``isDecisionOpportunity(_:_:)``): another app's
  /// open, a wake, plugging in, a network change.
  package static let schedulerOpportunities: Set<EventKind> = [.open, .wake, .chargeStart, .network]

  /// The decision steps for one (user, app) replay of `days` days that sees
  /// `opportunities` decision-opportunity rows.
  package func steps(days: Double, opportunities: Double) -> Double {
    (checksPerDay * max(days, 0) + opportunities) * stepsPerDecision
  }

  /// The decision opportunities of `trace` for each of `apps`: its rows of
  /// the kinds ``decidesAt``, opens of the app itself excluded.
  ///
  /// - Complexity: O(events + apps).
  package func opportunities(in trace: UserTrace, apps: [Int32]) -> [Double] {
    var opens = [Int](repeating: 0, count: trace.apps.count + 1)
    var others = 0, allOpens = 0
    for e in trace.events where decidesAt.contains(e.kind) {
      if e.kind == .open {
        allOpens += 1
        if e.app >= 0 && Int(e.app) < trace.apps.count { opens[Int(e.app)] += 1 }
      } else {
        others += 1
      }
    }
    return apps.map { a in
      let own = a >= 0 && Int(a) < trace.apps.count ? opens[Int(a)] : 0
      return Double(others + allOpens - own)
    }
  }

  /// The habit model's probability of an open within `horizon` s, asked
  /// at every check (every `check` s) and decision opportunity: one
  /// intensity per ``HabitOpenMemo/defaultStep`` of the horizon.
  static func openProbability(
    horizon: Double, check: Double, decidesAt: Set<EventKind> = schedulerOpportunities
  ) -> SettingWork {
    let points = (horizon / HabitOpenMemo.defaultStep).rounded(.up)
    return SettingWork(
      checksPerDay: 86_400 / max(check, 1), stepsPerDecision: max(1, points), decidesAt: decidesAt,
      settings: "horizon=\(formatDuration(horizon)), check=\(formatDuration(check))")
  }
}

extension IOSMinimumFamily {
  /// An open probability over the horizon at each check.
  package static func settingWork(_ p: IOSMinimumParameters) -> SettingWork? {
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
  /// As `ios-minimum` (its scheduler), deciding at location wakes too
  /// when they are launch moments.
  package static func settingWork(_ c: BGAppRefreshParameters) -> SettingWork? {
    .openProbability(
      horizon: c.minimum.horizonS, check: c.minimum.checkIntervalS,
      decidesAt: SettingWork.schedulerOpportunities.union(c.locationLaunches > 0 ? [.location] : []))
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
  /// candidate against every bin), a decision every check and at every
  /// decision opportunity.
  package static func settingWork(_ p: PlannerParameters) -> SettingWork? {
    let bins = max(1, (p.horizonS / p.stepS).rounded(.down))
    return SettingWork(
      checksPerDay: 86_400 / max(p.checkIntervalS, 1), stepsPerDecision: bins * bins,
      decidesAt: SettingWork.schedulerOpportunities,
      settings: "horizon=\(formatDuration(p.horizonS)), step=\(formatDuration(p.stepS)), check=\(formatDuration(p.checkIntervalS))")
  }
}

extension PerAppFamily {
  /// The costliest part's (each app runs one part).
  package static func settingWork(_ c: Configuration) -> SettingWork? {
    c.parts.compactMap(\.policy.settingWork).max { $0.stepsPerDay < $1.stepsPerDay }
  }
}
