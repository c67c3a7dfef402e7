import FetchModels
import FetchSupport
import FetchTraces

/// Everything one replay of one (user, app, policy) produced.
public struct AppReplay: Sendable {
  /// The app's metrics.
  public var summary: AppSummary
  /// One record per open of the app (empty unless `recordEvents`).
  public var opens: [OpenRecord]
  /// One record per fetch (empty unless `recordEvents`).
  public var fetches: [FetchRecord]
  /// The ages at stale opens (age ≥ 0: an update at the open's instant
  /// leaves it stale at age 0), s, in no particular order, and the number
  /// of fresh opens (age 0): together the age at every open (always kept;
  /// small).
  package var staleAges: [Double]
  package var freshOpens: Int
  /// Age at each open, s, sorted ascending: `freshOpens` zeros, then
  /// ``staleAges`` sorted.
  package var sortedAges: [Double] { [Double](repeating: 0, count: freshOpens) + staleAges.sorted() }
  /// The user's non-zero waits at opens (see ``AppSummary/meanWaitS``), s,
  /// in time order, and the number of opens that waited 0 s (fresh).
  package var waits: [Double] = []
  package var zeroWaits = 0
  /// One record per background transfer chunk (empty unless `recordEvents`).
  package var transferChunks: [TransferChunkRecord] = []
}

/// Everything one replay of one device (a user's modelled apps under one
/// policy configuration) produced.
public struct DeviceReplay: Sendable {
  /// One replay per app, in the order the apps were given.
  public var apps: [AppReplay]
  /// The device's totals.
  public var summary: DeviceSummary
}
