import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation

extension Experiment {
  /// A rough, deliberately generous estimate of an experiment's size, made
  /// before anything runs so that an absurd experiment is refused with a
  /// message instead of exhausting memory or disk (see ``ResourceLimits``).
  ///
  /// Per dataset it takes users and user-days from the synthetic settings,
  /// or from a trace's size (``ResourceLimits/traceBytesPerRow`` bytes a
  /// row, ``ResourceLimits/syntheticRowsPerUserDay`` rows a user-day, 7
  /// days a user); ``ResourceLimits/opensPerUserDay`` opens a user-day; at
  /// most 20 replayed apps a user; a timer policy (periodic, ios-custom,
  /// android-workmanager, tailender) 86,400 / interval fetches a pair-day,
  /// any other 50; every row also holds its policy's name. Output counts
  /// the part files and the final files (twice the rows). Memory is the largest block (``unitUsers`` users'
  /// traces and their results for every replication at once) plus the age
  /// histograms of every (dataset, replication, policy).
  package struct Estimate: Sendable, Equatable {
    /// Bytes written: generated traces, parts and final CSV files.
    package var outputBytes: Double
    /// Of which `opens.csv` and `fetches.csv` (and their parts).
    package var eventFileBytes: Double
    /// Peak memory, in bytes.
    package var memoryBytes: Double
    /// (policy, replication, user-day) replays.
    package var policyUserDays: Double
    /// (dataset, replication, policy) cells, each with an age histogram.
    package var resultCells: Double
  }

  /// Bytes of one age histogram (``AgeHistogram``: 2,600 bins of 8 bytes).
  static let histogramBytes = 20_800.0

  /// The experiment's estimated size (see ``Estimate``).
  package func estimate() -> Estimate {
    let R = Double(replications), C = Double(configurations.count)
    let apps = Double(self.apps.mostAppsPerUser(cap: 20))
    let scored = 1 - trainFraction
    let fetchesPerPairDay = configurations.reduce(0.0) { $0 + $1.spec.expectedFetchesPerDay }
    // Every row repeats its policy's name: the mean name length over the
    // configurations (by rows: opens equally, fetches by expected count).
    let nameBytes = configurations.reduce(0.0) { $0 + Double($1.name.utf8.count) } / max(1, C)
    let fetchNameBytes =
      configurations.reduce(0.0) { $0 + Double($1.name.utf8.count) * $1.spec.expectedFetchesPerDay }
      / max(fetchesPerPairDay, .leastNonzeroMagnitude)
    let openRow = ResourceLimits.openBytesPerRow + nameBytes
    let fetchRow = ResourceLimits.fetchBytesPerRow + fetchNameBytes
    var e = Estimate(outputBytes: 0, eventFileBytes: 0, memoryBytes: 0, policyUserDays: 0, resultCells: 0)
    var block = 0.0
    for d in datasets {
      let users: Double, userDays: Double
      switch d.source {
      case .synthetic(let s):
        users = Double(s.users)
        userDays = Double(s.users) * Double(s.days)
        e.outputBytes += ResourceLimits.syntheticEstimate(users: s.users, days: s.days).bytes
      case .trace(let p):
        let bytes = Double(((try? FileManager.default.attributesOfItem(atPath: p)[.size]) as? Int) ?? 0)
        userDays = bytes / ResourceLimits.traceBytesPerRow / ResourceLimits.syntheticRowsPerUserDay
        users = max(1, userDays / 7)
      }
      let pairs = users * apps, pairDays = userDays * apps
      let opens = userDays * ResourceLimits.opensPerUserDay * scored
      let fetches = pairDays * scored * fetchesPerPairDay  // over all policies
      let summary = R * C * pairs * (ResourceLimits.summaryBytesPerRow + nameBytes)
      let events = eventFiles ? R * (C * opens * openRow + fetches * fetchRow) : 0
      e.outputBytes += 2 * (summary + events)
      e.eventFileBytes += 2 * events
      e.policyUserDays += userDays * C * R
      // One block: its users' events, and per replication and policy their
      // results (a summary, the ages of the opens, the event records) as
      // objects and as CSV text.
      let share = min(Double(unitUsers), users) / users
      let traceMemory = share * userDays * ResourceLimits.syntheticRowsPerUserDay * ResourceLimits.memoryBytesPerEvent
      let results =
        share * R
        * (C * (pairs * 1_000 + opens * (8 + (eventFiles ? 2 * openRow : 0)))
          + (eventFiles ? fetches * 2 * fetchRow : 0))
      block = max(block, traceMemory + results)
    }
    e.resultCells = Double(datasets.count) * (R + 1) * C
    e.memoryBytes = block + (e.resultCells + C) * Self.histogramBytes
    return e
  }

  /// The key to blame and the message when the experiment exceeds `limits`;
  /// `nil` when it fits. Messages give the estimate, the limit and what to
  /// change.
  package func check(limits: ResourceLimits) -> (key: String?, message: String)? {
    typealias L = ResourceLimits
    for (i, d) in datasets.enumerated() {
      if case .synthetic(let s) = d.source,
        let m = limits.checkSynthetic(users: s.users, days: s.days, what: "synthetic dataset '\(d.name)'")
      {
        return ("datasets[\(i)].synthetic.users", m)
      }
    }
    let e = estimate()
    let R = replications, C = configurations.count, D = datasets.count
    let biggest = R >= C ? "replications" : "policies"
    if e.resultCells > Double(limits.maxResultCells) {
      return (
        biggest,
        "\(D) datasets × (\(R) replications + 1) × \(C) policies = \(L.countText(e.resultCells)) result cells "
          + "(\(L.bytesText(e.resultCells * Self.histogramBytes)) of age histograms), over the limit of "
          + "\(limits.maxResultCells); use fewer replications or policies (or raise FETCHLAB_MAX_RESULT_CELLS)"
      )
    }
    if e.policyUserDays > limits.maxPolicyUserDays {
      return (
        biggest,
        "about \(L.countText(e.policyUserDays)) policy-user-days to replay (user-days × \(C) policies × \(R) "
          + "replications), over the limit of \(L.countText(limits.maxPolicyUserDays)); use fewer replications, "
          + "policies or users (or raise FETCHLAB_MAX_POLICY_USER_DAYS)"
      )
    }
    if e.memoryBytes > limits.maxMemoryBytes {
      return (
        unitUsers > 1 ? "unit_users" : biggest,
        "estimated peak memory \(L.bytesText(e.memoryBytes)) (\(unitUsers) users a unit × \(R) replications × "
          + "\(C) policies), over the limit of \(L.bytesText(limits.maxMemoryBytes)); use a smaller unit_users, "
          + "fewer replications or policies\(eventFiles ? ", or \"event_files\": false" : "") "
          + "(or raise FETCHLAB_MAX_MEMORY_MB)"
      )
    }
    if e.outputBytes > limits.maxOutputBytes {
      let events = e.eventFileBytes > e.outputBytes / 2
      return (
        events ? "event_files" : biggest,
        "estimated output \(L.bytesText(e.outputBytes))"
          + (events ? " (\(L.bytesText(e.eventFileBytes)) of opens.csv and fetches.csv)" : "")
          + ", over the limit of \(L.bytesText(limits.maxOutputBytes)); "
          + (events ? "set \"event_files\": false (the summary and scores do not change), or use " : "use ")
          + "fewer replications, policies or users, or longer timer intervals (or raise FETCHLAB_MAX_OUTPUT_MB)"
      )
    }
    return nil
  }
}
