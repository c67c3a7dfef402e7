import FetchSimulation
import FetchTraces
import Foundation

extension RunConfiguration {
  /// A rough, deliberately generous estimate of what `run --trace` writes,
  /// in bytes, made before anything is written so that a run whose files
  /// would not fit is refused with a message (``checkOutput(traceBytes:limits:)``).
  ///
  /// It uses the constants of ``Experiment/estimate()``: users and
  /// user-days from the trace's size, ``ResourceLimits/opensPerUserDay``
  /// opens a user-day, at most 20 replayed apps a user, each policy's
  /// ``PolicySpec/expectedFetchesPerDay`` fetches a (user, app) day over
  /// the scored share of the window. Every row of `summary.csv`,
  /// `opens.csv` and `fetches.csv` repeats its policy's name, so a row
  /// costs its base size plus the name's bytes.
  ///
  /// - Complexity: O(policies).
  package func estimatedOutput(traceBytes: Double) -> (bytes: Double, eventBytes: Double) {
    typealias L = ResourceLimits
    let apps = Double(self.apps.mostAppsPerUser(cap: 20))
    let userDays = traceBytes / L.traceBytesPerRow / L.syntheticRowsPerUserDay
    let users = max(1, userDays / 7)
    let scored = 1 - trainFraction
    let opens = userDays * L.opensPerUserDay * scored
    var bytes = 0.0, events = 0.0
    for p in policies {
      let name = Double(p.description.utf8.count)
      bytes += users * apps * (L.summaryBytesPerRow + name)
      guard recordEvents else { continue }
      let fetches = userDays * apps * scored * p.expectedFetchesPerDay
      events += opens * (L.openBytesPerRow + name) + fetches * (L.fetchBytesPerRow + name)
    }
    return (bytes + events, events)
  }

  /// The refusal of `run --trace`'s `--policy` strings past the bounds of
  /// an experiment file's: more than ``Experiment/maxConfigurations`` of
  /// them, or one longer than ``Experiment/maxPolicyBytes`` bytes (each row
  /// of the event files repeats it); `nil` when they fit. The message does
  /// not echo the string.
  package static func refusal(policyStrings policy: [String]) -> String? {
    guard policy.count <= Experiment.maxConfigurations else {
      return "\(policy.count) --policy options are more than \(Experiment.maxConfigurations), the most a run replays "
        + "(as in an experiment file's policies)"
    }
    for (i, p) in policy.enumerated() where p.utf8.count > Experiment.maxPolicyBytes {
      return "--policy #\(i + 1) of \(p.utf8.count) bytes is longer than \(Experiment.maxPolicyBytes) bytes, the longest "
        + "policy string a run accepts (as in an experiment file)"
    }
    return nil
  }

  /// The refusal of a run whose estimated output (``estimatedOutput(traceBytes:)``)
  /// exceeds `limits.maxOutputBytes`; `nil` when it fits.
  package func checkOutput(traceBytes: Double, limits: ResourceLimits = .current) -> String? {
    let e = estimatedOutput(traceBytes: traceBytes)
    guard e.bytes > limits.maxOutputBytes else { return nil }
    let events = e.eventBytes > e.bytes / 2
    return "estimated output \(ResourceLimits.bytesText(e.bytes)) for \(policies.count) policies on a trace of "
      + "\(ResourceLimits.bytesText(traceBytes))"
      + (events ? " (\(ResourceLimits.bytesText(e.eventBytes)) of opens.csv and fetches.csv)" : "")
      + ", over the limit of \(ResourceLimits.bytesText(limits.maxOutputBytes)); "
      + (events ? "pass --no-event-files (the summary and scores do not change), or use " : "use ")
      + "fewer policies, shorter policy strings or longer timer intervals (or raise FETCHLAB_MAX_OUTPUT_MB)"
  }
}
