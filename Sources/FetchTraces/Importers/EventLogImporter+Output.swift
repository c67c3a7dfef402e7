extension EventLogImporter {
  /// The traces and what happened to the rows.
  package struct Output: Sendable, Equatable {
    /// One trace per user with at least one open, in order of first appearance.
    package var users: [UserTrace] = []
    /// Data rows read (blank lines excluded).
    package var rows = 0
    /// Opens written (after merging).
    package var opens = 0
    /// Rows with an ignored event name.
    package var ignoredRows = 0
    /// Close events with no open session of that app.
    package var unmatchedCloses = 0
    /// Sessions never closed (given ``Options/unclosedSession``).
    package var unclosedSessions = 0
    /// Sessions cut to ``Options/maximumSession``.
    package var cappedSessions = 0
    /// Opens merged into the previous session by ``Options/mergeGap``.
    package var mergedOpens = 0
    /// The time unit used (the one decided for ``TimeUnit/auto``).
    package var timeUnit: TimeUnit = .auto
    /// Users whose rows held no open.
    package var usersWithoutOpens: [String] = []
    /// Problems that do not stop the import, as `file:line: field: message`
    /// (a user whose zone or offsets change, an ambiguous local time).
    package var warnings: [String] = []
    /// Rows of ``Options/excludedApps``.
    package var excludedRows = 0
    /// Sessions ended by the next app's open (``Options/foregroundStream``).
    package var endedByNextApp = 0
    /// Rows whose local time occurs twice in their zone (the hour repeated
    /// when daylight saving time ends), read as its first occurrence.
    package var ambiguousTimes = 0
  }
}
