import FetchSupport
import FetchTraces

/// How much of one user's trace a run scores: every open in the window,
/// the opens scored (the replayed apps' opens in the scored part), and the
/// apps replayed and left out.
package struct UserCoverage: Sendable, Equatable {
  /// The user id.
  package var user: String
  /// Opens of every app in the user's whole window.
  package var opens: Int
  /// Opens of the replayed apps in the scored part of the window.
  package var scoredOpens: Int
  /// The replayed apps, most-opened first.
  package var replayed: [String]
  /// Apps the user opened that are not replayed, most-opened first.
  package var leftOut: [String]

  /// The coverage of `trace` (the whole window) when `selected` (indexes
  /// into `trace.apps`) are replayed and `scored` is the scored part.
  ///
  /// - Complexity: O(events).
  package init(trace: UserTrace, scored: UserTrace, selected: [Int32]) {
    let all = trace.openCounts(), test = scored.openCounts()
    user = trace.user
    opens = all.reduce(0, +)
    scoredOpens = selected.reduce(0) { $0 + test[Int($1)] }
    replayed = selected.map { trace.apps[Int($0)] }
    let chosen = Set(selected.map(Int.init))
    leftOut = all.indices.filter { all[$0] > 0 && !chosen.contains($0) }
      .sorted { all[$0] != all[$1] ? all[$0] > all[$1] : trace.apps[$0] < trace.apps[$1] }
      .map { trace.apps[$0] }
  }

  /// The coverage of `trace` under `config`'s app selection and split.
  package init(_ trace: UserTrace, _ config: RunConfiguration) {
    self.init(trace: trace, scored: splitForRun(trace, config).test, selected: config.apps.select(in: trace))
  }
}

/// A run's coverage summed over users, with the first users' app lists: the
/// plain summary printed at the end of `fetchlab run`.
///
/// Memory is bounded: the app lists of at most ``listedUsers`` users are kept.
package struct RunCoverage: Sendable, Equatable {
  /// Users seen.
  package private(set) var users = 0
  /// Opens of every app in the users' whole windows.
  package private(set) var opens = 0
  /// Opens scored: the replayed apps' opens in the scored windows.
  package private(set) var scoredOpens = 0
  /// (user, app) pairs replayed.
  package private(set) var replayedPairs = 0
  /// (user, app) pairs with opens that are not replayed.
  package private(set) var leftOutPairs = 0
  /// Users with at least one app left out.
  package private(set) var usersWithAppsLeftOut = 0
  /// The first ``listedUsers`` users, in trace order.
  package private(set) var listed: [UserCoverage] = []
  /// Users whose app lists the summary shows.
  package static let listedUsers = 10
  /// Apps named in a list at most; longer lists are counts only.
  package static let namedApps = 5

  package init() {}

  /// Adds one user.
  package mutating func add(_ u: UserCoverage) {
    users += 1
    opens += u.opens
    scoredOpens += u.scoredOpens
    replayedPairs += u.replayed.count
    leftOutPairs += u.leftOut.count
    if !u.leftOut.isEmpty { usersWithAppsLeftOut += 1 }
    if listed.count < Self.listedUsers { listed.append(u) }
  }

  /// Reads every user of the trace at `config.tracePath` and adds its
  /// coverage (an experiment's reused parts hold no traces).
  ///
  /// - Throws: ``TraceFormatError`` from the reader.
  /// - Complexity: O(events), one user in memory at a time.
  package mutating func add(tracePath: String, config: RunConfiguration) throws {
    let reader = try TraceReader(path: tracePath)
    while let u = try reader.next() { add(UserCoverage(u, config)) }
  }

  /// The summary, one statement a line: opens scored of opens in the trace
  /// and the scored-window rule, pairs replayed and left out with the first
  /// users' apps, and what changes them. `trainFractionFlag` and `appsFlag`
  /// name the settings (`--train-fraction` and `--apps` for a trace run, the
  /// experiment file's keys for an experiment).
  package func render(
    trainFraction: Double, apps: AppSelection, trainFractionFlag: String = "--train-fraction",
    appsFlag: String = "--apps"
  ) -> String {
    func pct(_ x: Double) -> String { CSV.number((x * 100).rounded(), decimals: 0) + " %" }
    let share = opens > 0 ? " (" + pct(Double(scoredOpens) / Double(opens)) + ")" : ""
    let window =
      trainFraction > 0
      ? "the last \(pct(1 - trainFraction)) of each user's window (\(trainFractionFlag) \(CSV.number(trainFraction)))"
      : "each user's whole window (\(trainFractionFlag) 0)"
    var lines = [
      "summary: \(scoredOpens) of \(opens) opens in the trace scored\(share): the replayed apps' opens in \(window).",
      "apps: \(replayedPairs) of \(replayedPairs + leftOutPairs) opened (user, app) pairs replayed "
        + "(\(appsFlag) \(apps)); \(leftOutPairs) left out, for \(usersWithAppsLeftOut) of \(users) users.",
    ]
    for u in listed {
      var s = "  user \(escaped(u.user)): \(u.replayed.count) replayed" + Self.names(u.replayed)
      s += u.leftOut.isEmpty ? ", none left out" : ", \(u.leftOut.count) left out" + Self.names(u.leftOut)
      lines.append(s)
    }
    if users > listed.count { lines.append("  (\(users - listed.count) more users not listed)") }
    var more: [String] = []
    if trainFraction > 0 {
      more.append("\(trainFractionFlag) 0 scores whole windows (learning policies then have no training data)")
    }
    if leftOutPairs > 0 { more.append("\(appsFlag) min-opens:1 replays every opened app") }
    if !more.isEmpty { lines.append("to score more: " + more.joined(separator: "; ") + ".") }
    return lines.joined(separator: "\n") + "\n"
  }

  /// ` (a, b)` for up to ``namedApps`` names, else nothing.
  static func names(_ apps: [String]) -> String {
    apps.isEmpty || apps.count > namedApps ? "" : " (" + apps.map(escaped).joined(separator: ", ") + ")"
  }
}
