import FetchTraces

/// One background fetch's exchange with its server (`fetch.*`): the sizes
/// of request and responses, the server's latency, the connection setup a
/// foreground open pays, the OS's wall-clock budget for a launch, and
/// server-side failures. Sources per field in ``WorldParameters/registry``.
package struct FetchExchange: Sendable, Equatable {
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

  /// The documented defaults.
  package init() {}

  /// The connection setup before an open's request on the radio
  /// `technology` (a network resolved by ``RadioSet/technology(of:)``), s:
  /// ``openHandshakeRTTs`` round trips; 0 offline.
  package func openSetupS(technology: NetworkKind) -> Double {
    if technology == .offline { return 0 }
    let r = technology == .wifi ? rtt.wifiS : technology == .umts3g ? rtt.umts3gS : technology == .nr5g ? rtt.nr5gS : rtt.lteS
    return openHandshakeRTTs * r
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
