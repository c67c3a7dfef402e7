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
  // The declared metrics (``AdditiveMetric/all``) follow: stored here for
  // the engine's hot path, pooled and reported from their declaration.
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
  /// declaration per field; the part record's writer and reader follow.
  /// The declared metrics (``AdditiveMetric/all``) come last.
  package static let recordFields: [RecordField<AppSummary>] = [
    RecordField("days", "days", "length of the scored window", .sum, \.days),
    RecordField("opens", "scored opens of the app", count: \.opens),
    RecordField("fetches", "background fetches", count: \.fetches),
    RecordField("new_data", "fetches that found new content", count: \.newData),
    RecordField("no_data", "fetches that found none", count: \.noData),
    RecordField("failed", "fetches that failed", count: \.failed),
    RecordField("wasted", "NewData fetches superseded before an open", count: \.wasted),
    RecordField("mean_age_s", "s", "mean age at open (NaN without opens)", .opensWeighted, \.meanAgeS),
    RecordField("p50_age_s", "s", "median age at open", .none, \.p50AgeS),
    RecordField("p90_age_s", "s", "90th percentile of the age at open", .none, \.p90AgeS),
    RecordField("p99_age_s", "s", "99th percentile of the age at open", .none, \.p99AgeS),
    RecordField("fresh_ratio", "ratio", "share of opens that showed fresh content", .opensWeighted, \.freshRatio),
    RecordField("mean_aoi_s", "s", "mean Age of Information at open", .opensWeighted, \.meanAoiS),
    RecordField("time_avg_age_s", "s", "time-averaged age over the window", .none, \.timeAvgAgeS),
    RecordField("time_fresh_ratio", "ratio", "share of the window with fresh content", .none, \.timeFreshRatio),
    RecordField("energy_j", "J", "background fetch energy, CPU and marginal radio", .sum, \.energyJ),
    RecordField("charging_energy_j", "J", "the part of energy_j drawn while charging", .sum, \.chargingEnergyJ),
    RecordField("cellular_bytes", "bytes", "background bytes on cellular networks", .sum, \.cellularBytes),
    RecordField("wifi_bytes", "bytes", "background bytes on WiFi", .sum, \.wifiBytes),
    RecordField("updates", "content updates of the app in the window", count: \.updates),
    RecordField("delivered", "updates whose content reached the device", count: \.delivered),
    RecordField("delivery_delay_sum_s", "s", "sum of the delivery delays (publication → on the device)", .sum, \.deliveryDelaySumS),
    RecordField("transfers_completed", "background transfers that completed", count: \.transfersCompleted),
  ] + AdditiveMetric.all.map { $0.recordField($0.app) }
}

/// One device's totals over its modelled apps under one policy
/// configuration: the sums of the apps' ``AppSummary`` figures (at device
/// scope the per-fetch charges sum exactly to the device's radio energy
/// with the fetches minus without them), and the wait pooled over the
/// apps' opens.
public struct DeviceSummary: Sendable, Equatable {
  /// Window length, days.
  public var days = 0.0
  /// Modelled apps.
  public var apps = 0
  /// Scored opens of all the apps.
  public var opens = 0
  /// Background fetches of all the apps.
  public var fetches = 0
  /// Background (policy) fetch energy, CPU and marginal radio, J.
  public var energyJ = 0.0
  /// The part of ``energyJ`` drawn while the device was charging, J.
  package var chargingEnergyJ = 0.0
  /// Background bytes on cellular networks.
  public var cellularBytes = 0.0
  /// Background bytes on WiFi.
  public var wifiBytes = 0.0
  /// Foreground refreshes of all the apps.
  public var foregroundRefreshes = 0
  /// User-initiated foreground refresh radio energy, J, and bytes.
  public var foregroundEnergyJ = 0.0
  /// Foreground refresh bytes on cellular networks.
  public var foregroundCellularBytes = 0.0
  /// Foreground refresh bytes on WiFi.
  public var foregroundWifiBytes = 0.0
  /// Wait at opens, pooled over the apps (see ``AppSummary/meanWaitS``).
  public var meanWaitS = 0.0
  /// 90th percentile of the pooled wait, s.
  public var p90WaitS = 0.0
  /// Updates of all the apps delivered to the device, and the sum of
  /// their delivery delays, s (see ``AppSummary/delivered``).
  package var delivered = 0
  /// Sum of the delivery delays, s.
  package var deliveryDelaySumS = 0.0
  /// The declared metrics (``AdditiveMetric``) pooled over the apps: sums,
  /// or means weighted by the apps' opens.
  package var metrics = MetricValues()

  package init() {}

  /// Mean delivery delay over all the apps' delivered updates, s; NaN when none.
  package var meanDeliveryDelayS: Double { delivered > 0 ? deliveryDelaySumS / Double(delivered) : .nan }

  /// Sums the apps' summaries (all over the same window) and pools their waits.
  package init(_ replays: [AppReplay]) {
    apps = replays.count
    days = replays.first?.summary.days ?? 0
    var zeros = 0
    var waits = 0
    // By index: a loop over the replays copied each one (six arrays retained
    // and released).
    for i in replays.indices {
      let a = replays[i].summary
      zeros += replays[i].zeroWaits
      waits += replays[i].waits.count
      opens += a.opens
      fetches += a.fetches
      energyJ += a.energyJ
      chargingEnergyJ += a.chargingEnergyJ
      cellularBytes += a.cellularBytes
      wifiBytes += a.wifiBytes
      foregroundRefreshes += a.foregroundRefreshes
      foregroundEnergyJ += a.foregroundEnergyJ
      foregroundCellularBytes += a.foregroundCellularBytes
      foregroundWifiBytes += a.foregroundWifiBytes
      delivered += a.delivered
      deliveryDelaySumS += a.deliveryDelaySumS
      metrics.add(a)
    }
    metrics = metrics.pooled(opens: opens)

    guard zeros + waits > 0 else { return }
    // The apps' waits concatenated in a buffer on the stack (when small).
    (meanWaitS, p90WaitS) = withUnsafeTemporaryAllocation(of: Double.self, capacity: waits) { p in
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

  /// Background energy per day, J.
  public var energyJPerDay: Double { days > 0 ? energyJ / days : 0 }
  /// Background cellular bytes per day.
  public var cellularBytesPerDay: Double { days > 0 ? cellularBytes / days : 0 }
  /// Background WiFi bytes per day.
  public var wifiBytesPerDay: Double { days > 0 ? wifiBytes / days : 0 }
  /// Foreground refresh energy per day, J.
  public var foregroundEnergyJPerDay: Double { days > 0 ? foregroundEnergyJ / days : 0 }
  /// Foreground refresh bytes per day, all networks.
  public var foregroundBytesPerDay: Double { days > 0 ? (foregroundCellularBytes + foregroundWifiBytes) / days : 0 }

  /// Background energy drawn from the battery (not while charging) per
  /// day, as % of a battery of `capacityJ` joules.
  public func batteryPctPerDay(capacityJ: Double) -> Double {
    days > 0 ? (energyJ - chargingEnergyJ) / days / capacityJ * 100 : 0
  }
  /// Background energy drawn while charging, J per day.
  package var chargingEnergyJPerDay: Double { days > 0 ? chargingEnergyJ / days : 0 }
}
