import FetchTraces

/// Where the content-update times of an app come from.
/// What one replay covers (``WorldParameters/replayScope``).
package enum ReplayScope: String, Sendable, CaseIterable {
  /// All modelled apps of a user's device in one walk, on one radio per interface.
  case device
  /// Each app alone, with a radio of its own.
  case app
}

/// A 5G deployment measured by Narayanan et al. (SIGCOMM 2021): which
/// profile the `5g` network uses (`network.5g`).
package enum FiveGDeployment: String, Sendable, CaseIterable {
  /// Non-standalone on low-band spectrum, anchored on LTE.
  case nsaLowBand = "nsa_low_band"
  /// Non-standalone on mmWave spectrum.
  case nsaMmWave = "nsa_mmwave"
  /// Standalone low-band, with an RRC_INACTIVE stage.
  case sa
}

package enum ContentSource: String, Sendable, CaseIterable {
  /// The trace's `update` rows when it has any for the app, else the model.
  case auto
  /// Only the trace's `update` rows (an app without any never changes).
  case trace
  /// Always the stochastic model, ignoring `update` rows.
  case model
}

/// The stochastic content-update model.
package enum ContentModelKind: String, Sendable, CaseIterable {
  /// Homogeneous Poisson updates at the app's rate.
  case poisson
  /// Poisson updates whose rate follows ``WorldParameters/diurnalProfile`` in
  /// the user's local time, with the same daily mean.
  case diurnal
}

/// Every number of the world a replay runs in: radios, CPU, battery, payloads,
/// content updates and replay switches. Defaults come from published measurements
/// and documentation (cited per parameter); each is listed with its unit
/// and source by ``WorldParameters/registry`` and `fetchlab params`, and can be
/// overridden by name in a JSON config file.
public struct WorldParameters: Sendable, Equatable {
  /// LTE, AT&T ARO `lte.conf` profile (Huang et al., MobiSys 2012).
  package var lte = RadioProfile(
    promotionTimeS: 0.26, promotionPowerW: 1.21, connectedPowerW: 1.2,
    downlinkWPerMbps: 0.05197, uplinkWPerMbps: 0.43839, downlinkMbps: 13, uplinkMbps: 6,
    tail: [TailStage(durationS: 10.12, powerW: 1.06)])
  /// 3G UMTS: DCH tail then FACH tail (Qian et al., IMC 2010; PowerTutor).
  package var umts3g = RadioProfile(
    promotionTimeS: 2.0, promotionPowerW: 0.475, connectedPowerW: 0.57,
    downlinkWPerMbps: 0, uplinkWPerMbps: 0, downlinkMbps: 1, uplinkMbps: 0.5,
    tail: [
      TailStage(durationS: 5, powerW: 0.57),
      TailStage(durationS: 12, powerW: 0.401, promotionTimeS: 1.5, promotionPowerW: 0.475),
    ])
  /// WiFi, Huang et al. 2012 model (MobiSys 2012).
  package var wifi = RadioProfile(
    promotionTimeS: 0.0791, promotionPowerW: 0.1244, connectedPowerW: 0.13286,
    downlinkWPerMbps: 0.13701, uplinkWPerMbps: 0.28317, downlinkMbps: 20, uplinkMbps: 10,
    tail: [TailStage(durationS: 0.2381, powerW: 0.1193)])
  /// 5G profiles measured by Narayanan et al., "A Variegated Look at 5G in
  /// the Wild", SIGCOMM 2021 (doi:10.1145/3452296.3472923), read from its
  /// artifact (github.com/SIGCOMM21-5G/artifact); each field's file is in
  /// ``registry``. Powers are the radio's share: the whole-device linear
  /// fit in throughput less the device baseline (2.357 W). The `5g`
  /// network uses the one ``fiveG`` names.
  ///
  /// NSA low-band (Verizon): idle → LTE anchor 0.32 s, then CONNECTED
  /// until the 10.2 s inactivity timer.
  package var nr5gNSALowBand = RadioProfile(
    promotionTimeS: 0.32, promotionPowerW: 0.568, connectedPowerW: 0.568,
    downlinkWPerMbps: 0.013518, uplinkWPerMbps: 0.029148, downlinkMbps: 100, uplinkMbps: 20,
    tail: [TailStage(durationS: 10.2, powerW: 0.568)])
  /// NSA mmWave (Verizon): the same promotion, 11.2 s timer, about five
  /// times the low-band radio power.
  package var nr5gNSAmmWave = RadioProfile(
    promotionTimeS: 0.32, promotionPowerW: 2.779, connectedPowerW: 2.779,
    downlinkWPerMbps: 0.001807, uplinkWPerMbps: 0.009422, downlinkMbps: 1000, uplinkMbps: 60,
    tail: [TailStage(durationS: 11.2, powerW: 2.779)])
  /// SA low-band (T-Mobile): CONNECTED for 10.2 s, then RRC_INACTIVE until
  /// 15 s, at idle power with a fast resume, then IDLE.
  package var nr5gSA = RadioProfile(
    promotionTimeS: 0.32, promotionPowerW: 0.568, connectedPowerW: 0.568,
    downlinkWPerMbps: 0.013518, uplinkWPerMbps: 0.029148, downlinkMbps: 100, uplinkMbps: 20,
    tail: [
      TailStage(durationS: 10.2, powerW: 0.568),
      TailStage(durationS: 4.8, powerW: 0, promotionTimeS: 0.02, promotionPowerW: 0.568),
    ])
  /// Which measured 5G deployment the `5g` network is.
  package var fiveG = FiveGDeployment.nsaLowBand
  /// The profile of the `5g` network (``fiveG``'s).
  package var nr5g: RadioProfile {
    switch fiveG {
    case .nsaLowBand: nr5gNSALowBand
    case .nsaMmWave: nr5gNSAmmWave
    case .sa: nr5gSA
    }
  }
  /// The technology behind a plain `cellular` network value.
  package var defaultCellular: NetworkKind = .lte
  /// The network assumed before a trace's first `network` row (and for the
  /// whole of a trace without any).
  package var defaultNetwork: NetworkKind = .cellular

  /// Fixed CPU energy of launching the app in the background, J (on top
  /// of ``cpuActivePowerW`` while the fetch runs): with it a typical
  /// 100 kB LTE fetch (about 0.65 s) costs the CPU about 1 J in all, the
  /// geometric middle of the 0.5–2 J per background wake that PowerTutor
  /// figures suggest (no measured iPhone number).
  package var cpuWakeEnergyJ = 0.7
  /// CPU power while a fetch runs, W.
  package var cpuActivePowerW = 0.434
  /// Standing power of an app's location monitoring (regions or
  /// significant changes), W, charged over the whole window to apps whose
  /// policy monitors location. 0 by default: the positioning behind it
  /// runs in the OS for every app at once (cell-tower changes, WiFi
  /// scans, the motion coprocessor), so one app's share is unmeasured;
  /// its own cost is its wakes, each a ``cpuWakeEnergyJ``.
  package var locationMonitoringW = 0.0
  /// Battery capacity used to express energy as % of battery, Wh.
  package var batteryCapacityWh = 12.98
  /// Battery level assumed before the first `battery` sample, %; a negative
  /// value means unknown (policies then see no level).
  package var initialBatteryPct = -1.0

  /// Median size of a NewData response, bytes.
  package var newDataMedianBytes = 100_000.0
  /// Log-scale spread of NewData sizes (log-normal σ).
  package var newDataSigma = 0.5
  /// Size of a NoData response (headers, 304), bytes.
  package var noDataBytes = 2_000.0
  /// Size of the request, bytes (uplink).
  package var requestBytes = 1_000.0
  /// Server think time plus round trip, s.
  package var serverLatencyS = 0.3
  /// Round trips of connection setup before an open's own request (TCP's
  /// handshake, then TLS 1.3's), part of the foreground wait at a stale
  /// open: the launch opens a new connection. Background fetches are
  /// timed without them.
  package var openHandshakeRTTs = 2.0
  /// Round-trip time on each network, s, for ``openHandshakeRTTs``.
  package var rtt = NetworkRTT()
  /// Wall-clock budget of one background launch, s; longer fetches fail.
  package var fetchBudgetS = 30.0
  /// Probability that a fetch fails on the server side.
  package var failureProbability = 0.0

  /// Where content-update times come from.
  package var contentSource = ContentSource.auto
  /// The stochastic update model.
  package var contentModel = ContentModelKind.poisson
  /// Mean content-update rate of an app, per hour.
  package var contentRatePerHour = 1.0
  /// Per-app overrides of the update rate, per hour.
  package var appRatePerHour: [String: Double] = [:]
  /// Relative update intensity by local hour 00…23 for the diurnal model
  /// (normalised to mean 1 when used).
  package var diurnalProfile: [Double] = WorldParameters.ubiqlogHourlyShare

  /// Whether an app open refreshes the content in the foreground (resets
  /// staleness; not charged to the policy).
  package var foregroundRefresh = true

  /// What one replay covers: a whole device (all modelled apps on one radio
  /// and one walk) or one app on a radio of its own (the literature's and
  /// FetchLab's earlier per-app semantics). Default `device`: a phone has
  /// one radio, so apps that fetch together share a promotion and a tail.
  package var replayScope = ReplayScope.device
  /// Whether background fetches share the radio with the user's own
  /// activity (sessions and other apps' wakes): a fetch inside a session's
  /// tail pays only its increment. Default on (the radio is physically
  /// shared); off gives the per-flow models of papers that charge each
  /// fetch from its own radio state.
  package var shareUserRadio = true
  /// Whether a fetch's content lands at its start (instantaneous, as in
  /// analytic freshness models; its energy still counts its duration)
  /// rather than at its completion. Default timed: the content is as of
  /// the response, which arrives after promotion, request, latency and
  /// transfer.
  package var instantTransfers = false
  /// Whether every app's own timers start together, one interval after the
  /// window start (perfect OS batching), rather than at each (user, app)'s
  /// own phase drawn from the seed. Default off: independent apps are
  /// independent.
  package var alignedTimers = false
  /// What the user's foreground sessions do to the radio.
  package var sessions = SessionNetworkParameters()

  /// The documented defaults (`fetchlab params`).
  public init() {}

  /// Share of app opens by local hour in UbiqLog (D, computed from the UbiqLog dataset).
  package static let ubiqlogHourlyShare: [Double] = [
    0.046, 0.020, 0.012, 0.009, 0.004, 0.005, 0.017, 0.025, 0.030, 0.041, 0.051, 0.051,
    0.057, 0.052, 0.050, 0.046, 0.046, 0.056, 0.058, 0.062, 0.064, 0.061, 0.069, 0.068,
  ]

  /// The radio profile for a network; `nil` when offline.
  ///
  /// - Complexity: O(1): one profile read (its tail arrays retained).
  package func radio(for network: NetworkKind) -> RadioProfile? {
    switch network {
    case .offline: nil
    case .wifi: wifi
    case .lte: lte
    case .umts3g: umts3g
    case .nr5g: nr5g
    case .cellular: defaultCellular == .cellular ? lte : radio(for: defaultCellular)
    }
  }

  /// ``radio(for:)`` of every network, by raw value (the replay's radio
  /// ledger keeps one profile per interface).
  package var radiosByNetwork: [RadioProfile?] { NetworkKind.allCases.map { radio(for: $0) } }

  /// Whether an open refreshes its content in the foreground: on
  /// (``foregroundRefresh``) unless the app makes no exchange at its opens
  /// (`session.open_exchange none`).
  package var refreshesAtOpen: Bool { foregroundRefresh && sessions.openExchange != .none }

  /// The connection setup before an open's request on `network`, s:
  /// ``openHandshakeRTTs`` round trips; 0 offline.
  package func openSetupS(on network: NetworkKind) -> Double {
    if network == .offline { return 0 }
    if network == .cellular { return openSetupS(on: defaultCellular == .cellular ? .lte : defaultCellular) }
    let r = network == .wifi ? rtt.wifiS : network == .umts3g ? rtt.umts3gS : network == .nr5g ? rtt.nr5gS : rtt.lteS
    return openHandshakeRTTs * r
  }

  /// Battery capacity in joules.
  package var batteryCapacityJ: Double { batteryCapacityWh * 3600 }

  /// Update rate of `app`, per second.
  package func updateRate(app: String) -> Double {
    (appRatePerHour[app] ?? contentRatePerHour) / 3600
  }
}

/// Round-trip times by network, s (`fetch.rtt_*`).
package struct NetworkRTT: Sendable, Equatable {
  package var lteS = 0.07
  package var umts3gS = 0.2
  package var wifiS = 0.05
  package var nr5gS = 0.05

  package init() {}
}
