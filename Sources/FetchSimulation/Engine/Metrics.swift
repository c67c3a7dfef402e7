import FetchSupport
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

/// One background fetch: what its policy learned when it finished
/// (``FetchOutcome``: start, end, result, bytes, energy, network, read
/// through it as `record.start`, …) and why it failed.
@dynamicMemberLookup
public struct FetchRecord: Sendable, Equatable {
  /// What the fetch did, as its policy saw it.
  public var outcome: FetchOutcome
  /// Why it failed, or empty.
  public var failure: String

  /// A field of ``outcome``.
  public subscript<T>(dynamicMember field: WritableKeyPath<FetchOutcome, T>) -> T {
    get { outcome[keyPath: field] }
    set { outcome[keyPath: field] = newValue }
  }
}

/// Per (user, app, policy) metrics of one replay.
///
/// Quantiles interpolate linearly between order statistics (Hyndman & Fan
/// type 7, NumPy's default). Age ≥ 0; `freshRatio` ∈ [0, 1]; a policy that
/// never fetches has zero energy and zero bytes. With no opens the
/// open-sampled staleness (age quantiles and mean, fresh ratio, AoI) is NaN:
/// undefined, written as an empty field.
public struct AppSummary: Sendable, Equatable {
  /// Window length, days.
  public var days = 0.0
  /// Scored opens of the app.
  public var opens = 0
  /// Background fetches.
  public var fetches = 0
  /// Fetches that found new content.
  public var newData = 0
  /// Fetches that found none.
  public var noData = 0
  /// Fetches that failed (offline, out of time, injected failure).
  public var failed = 0
  /// NewData fetches superseded by another NewData fetch, or by the end of
  /// the window, before the user opened the app.
  public var wasted = 0
  /// Mean age at open, s.
  public var meanAgeS = 0.0
  /// Median age at open, s.
  public var p50AgeS = 0.0
  /// 90th percentile of the age at open, s.
  public var p90AgeS = 0.0
  /// 99th percentile of the age at open, s.
  public var p99AgeS = 0.0
  /// Share of opens that showed fresh content, in [0, 1].
  public var freshRatio = 0.0
  /// Mean Age of Information at open, s.
  public var meanAoiS = 0.0
  /// Time-averaged age and freshness over the window (crawler literature).
  public var timeAvgAgeS = 0.0
  /// Share of the window during which the cache was fresh.
  public var timeFreshRatio = 0.0
  /// Energy charged to background fetches (CPU and marginal radio), J.
  public var energyJ = 0.0
  /// The part of ``energyJ`` drawn while the device was charging (from
  /// the charger, not the battery), J.
  package var chargingEnergyJ = 0.0
  /// Background bytes on cellular networks.
  public var cellularBytes = 0.0
  /// Background bytes on WiFi.
  public var wifiBytes = 0.0
  /// Content updates of the app in the window.
  public var updates = 0
  /// Foreground refreshes (stale opens on a network) and their radio
  /// energy (J) and bytes: user-initiated, not charged to the policy.
  public var foregroundRefreshes = 0
  /// Radio energy of the foreground refreshes, J.
  public var foregroundEnergyJ = 0.0
  /// Foreground refresh bytes on cellular networks.
  public var foregroundCellularBytes = 0.0
  /// Foreground refresh bytes on WiFi.
  public var foregroundWifiBytes = 0.0
  /// The user's wait at an open until fresh content is on screen, s: 0 when
  /// the cache is fresh, else the foreground fetch's duration (promotion
  /// from the radio state before the open, request, server latency,
  /// response); opens offline are not counted. Mean and p90 (type 7) over
  /// the counted opens; 0 with foreground refresh off or no counted opens.
  /// FALCON's launch delay (Yan et al., MobiSys 2012).
  public var meanWaitS = 0.0
  /// 90th percentile of the wait, s.
  public var p90WaitS = 0.0
  /// Updates whose content reached the device in the window (by a fetch,
  /// a background transfer or a foreground refresh).
  package var delivered = 0
  /// Sum over the delivered updates of publication → on the device, s.
  package var deliveryDelaySumS = 0.0
  /// Background transfers handed over by the policy's fetches (large
  /// items, `TransferQueue.swift`), and those that completed.
  package var transfersQueued = 0
  /// Background transfers that completed (the item reached the app).
  package var transfersCompleted = 0
  /// Chunks the transfers moved in (one per stretch of eligible network).
  package var transferChunks = 0
  // Every stored figure here is declared once in the metric table
  // (``Metric/all``), which pools and reports it.
  /// Energy of the background transfers, J (CPU and marginal radio; also
  /// in ``energyJ``).
  package var transferEnergyJ = 0.0
  /// Background transfer bytes on cellular networks (also in ``cellularBytes``).
  package var transferCellularBytes = 0.0
  /// Background transfer bytes on WiFi (also in ``wifiBytes``).
  package var transferWifiBytes = 0.0
  /// Energy of location monitoring, J (also in ``energyJ``): the standing
  /// cost `device.location_monitoring_w` over the window, and a CPU wake
  /// (`device.cpu_wake_j`) for each location wake that started no fetch.
  /// Zero for policies that do not monitor location.
  package var monitoringEnergyJ = 0.0

  package init() {}

  /// Mean delivery delay (publication → on the device) over the delivered
  /// updates, s; NaN when none was delivered.
  package var meanDeliveryDelayS: Double { delivered > 0 ? deliveryDelaySumS / Double(delivered) : .nan }
  /// Background energy per day, J.
  public var energyJPerDay: Double { days > 0 ? energyJ / days : 0 }
  /// Background cellular bytes per day.
  public var cellularBytesPerDay: Double { days > 0 ? cellularBytes / days : 0 }
  /// Background fetches per day.
  public var fetchesPerDay: Double { days > 0 ? Double(fetches) / days : 0 }

  /// Energy drawn from the battery (not while charging) per day, as % of
  /// a battery of `capacityJ` joules.
  public func batteryPctPerDay(capacityJ: Double) -> Double {
    days > 0 ? (energyJ - chargingEnergyJ) / days / capacityJ * 100 : 0
  }
  /// Background energy drawn while charging, J per day.
  package var chargingEnergyJPerDay: Double { days > 0 ? chargingEnergyJ / days : 0 }

  /// The fields an experiment's part record keeps for each (user, app,
  /// policy), by name: what `pooled.csv` needs, at full precision. One
  /// declaration per field, the metric table's (``Metric/recorded``); the
  /// part record's writer and reader follow.
  package static let recordFields: [RecordField<AppSummary>] = Metric.recorded.map { $0.recordField(in: \AppSummary.self) }
}

/// One device's figures over its modelled apps under one policy
/// configuration: the apps' ``AppSummary`` figures pooled as the metric
/// table declares (``Metric/all``): sums (at device scope the per-fetch
/// charges sum exactly to the device's radio energy with the fetches minus
/// without them), means and shares weighted by the apps' opens, and the
/// wait pooled over the apps' opens. The apps share one window, so the
/// device's `days` are the window's. Read a figure as on an app's summary
/// (`device.energyJ`, `device.meanWaitS`); figures the table does not pool
/// at device scope (age quantiles, time averages) stay at their defaults.
@dynamicMemberLookup
public struct DeviceSummary: Sendable, Equatable {
  /// Modelled apps.
  public var apps = 0
  /// The apps' figures pooled.
  package var pooled = AppSummary()

  package init() {}

  /// A pooled figure, named as on ``AppSummary``.
  public subscript<T>(dynamicMember path: KeyPath<AppSummary, T>) -> T { pooled[keyPath: path] }
  /// A pooled figure, named as on ``AppSummary``.
  public subscript<T>(dynamicMember path: WritableKeyPath<AppSummary, T>) -> T {
    get { pooled[keyPath: path] }
    set { pooled[keyPath: path] = newValue }
  }

  /// Pools the apps' summaries (all over the same window) and their waits.
  package init(_ replays: [AppReplay]) {
    apps = replays.count
    var zeros = 0
    var waits = 0
    var sums = MetricValues()
    // By index: a loop over the replays copied each one (six arrays retained
    // and released).
    for i in replays.indices {
      zeros += replays[i].zeroWaits
      waits += replays[i].waits.count
      sums.add(replays[i].summary)
    }
    pooled = sums.pooled()
    pooled.days = replays.first?.summary.days ?? 0

    guard zeros + waits > 0 else { return }
    // The apps' waits concatenated in a buffer on the stack (when small).
    (pooled.meanWaitS, pooled.p90WaitS) = withUnsafeTemporaryAllocation(of: Double.self, capacity: waits) { p in
      var k = 0
      for i in replays.indices {
        for w in replays[i].waits {
          p.initializeElement(at: k, to: w)
          k += 1
        }
      }
      let mean = p.reduce(0, +) / Double(zeros + waits)
      var placed = 0
      return (mean, Quantile.type7(zeros: zeros, selectingIn: p, 0.9, placed: &placed))
    }
  }

  /// Background energy drawn from the battery (not while charging) per
  /// day, as % of a battery of `capacityJ` joules.
  public func batteryPctPerDay(capacityJ: Double) -> Double { pooled.batteryPctPerDay(capacityJ: capacityJ) }
}
