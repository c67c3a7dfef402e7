import FetchTraces

/// Staleness seen at one open of the app under study.
public struct OpenRecord: Sendable, Equatable {
  /// Open time, Unix s.
  public var time: Double
  /// Age (Cho & Garcia-Molina): time since the first update the user has not
  /// got, s; 0 when fresh.
  public var ageS: Double
  /// Age of Information: time since the newest content shown was generated
  /// (its server update; the window start for the initial content), s.
  public var aoiS: Double
  /// Whether the content shown equals the server's.
  public var fresh: Bool
}

/// One background fetch.
public struct FetchRecord: Sendable, Equatable {
  public var start: Double
  public var end: Double
  public var result: FetchResult
  /// Bytes moved, both directions.
  public var bytes: Double
  /// CPU plus marginal radio energy, J.
  public var energyJ: Double
  public var network: NetworkKind
  /// Why it failed, or empty.
  public var failure: String
}

/// Per (user, app, policy) metrics of one replay.
///
/// Quantiles interpolate linearly between order statistics (Hyndman & Fan
/// type 7, NumPy's default). Age ≥ 0; `freshRatio` ∈ [0, 1]; a policy that
/// never fetches has zero energy and zero bytes.
public struct AppSummary: Sendable, Equatable {
  public var days = 0.0
  public var opens = 0
  public var fetches = 0
  public var newData = 0
  public var noData = 0
  public var failed = 0
  /// NewData fetches superseded by another NewData fetch, or by the end of
  /// the window, before the user opened the app.
  public var wasted = 0
  public var meanAgeS = 0.0
  public var p50AgeS = 0.0
  public var p90AgeS = 0.0
  public var p99AgeS = 0.0
  public var freshRatio = 0.0
  public var meanAoiS = 0.0
  /// Time-averaged age and freshness over the window (crawler literature).
  public var timeAvgAgeS = 0.0
  public var timeFreshRatio = 0.0
  public var energyJ = 0.0
  public var cellularBytes = 0.0
  public var wifiBytes = 0.0
  /// Content updates of the app in the window.
  public var updates = 0

  public init() {}

  public var energyJPerDay: Double { days > 0 ? energyJ / days : 0 }
  public var cellularBytesPerDay: Double { days > 0 ? cellularBytes / days : 0 }
  public var fetchesPerDay: Double { days > 0 ? Double(fetches) / days : 0 }

  /// Energy per day as % of a battery of `capacityJ` joules.
  public func batteryPctPerDay(capacityJ: Double) -> Double {
    energyJPerDay / capacityJ * 100
  }
}

/// Quantile `q` ∈ [0, 1] of sorted values, linear interpolation (type 7).
public func quantile(sorted v: [Double], _ q: Double) -> Double {
  guard !v.isEmpty else { return 0 }
  let h = Double(v.count - 1) * q
  let lo = Int(h.rounded(.down))
  let hi = min(lo + 1, v.count - 1)
  return v[lo] + (h - Double(lo)) * (v[hi] - v[lo])
}
