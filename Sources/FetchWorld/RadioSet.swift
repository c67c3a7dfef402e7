import FetchTraces

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

/// The radios of the world (`radio.*`) and which of them a trace's network
/// values mean (`network.*`): one ``RadioProfile`` per technology, the
/// measured 5G deployment the `5g` network is, the technology behind a
/// plain `cellular` value, and the network before a trace's first
/// `network` row. Each field's source is in ``WorldParameters/registry``.
package struct RadioSet: Sendable, Equatable {
  /// LTE, AT&T ARO `lte.conf` profile (Huang et al., MobiSys 2012).
  package var lte = RadioProfile(
    promotionTimeS: 0.26, promotionPowerW: 1.21, connectedPowerW: 1.2,
    downlinkWPerMbps: 0.05197, uplinkWPerMbps: 0.43839, downlinkMbps: 13, uplinkMbps: 6,
    tail: [TailStage(durationS: 10.12, powerW: 1.06)]) { didSet { resolve() } }
  /// 3G UMTS: DCH tail then FACH tail (Qian et al., IMC 2010; PowerTutor).
  package var umts3g = RadioProfile(
    promotionTimeS: 2.0, promotionPowerW: 0.475, connectedPowerW: 0.57,
    downlinkWPerMbps: 0, uplinkWPerMbps: 0, downlinkMbps: 1, uplinkMbps: 0.5,
    tail: [
      TailStage(durationS: 5, powerW: 0.57),
      TailStage(durationS: 12, powerW: 0.401, promotionTimeS: 1.5, promotionPowerW: 0.475),
    ]) { didSet { resolve() } }
  /// WiFi, Huang et al. 2012 model (MobiSys 2012).
  package var wifi = RadioProfile(
    promotionTimeS: 0.0791, promotionPowerW: 0.1244, connectedPowerW: 0.13286,
    downlinkWPerMbps: 0.13701, uplinkWPerMbps: 0.28317, downlinkMbps: 20, uplinkMbps: 10,
    tail: [TailStage(durationS: 0.2381, powerW: 0.1193)]) { didSet { resolve() } }
  /// 5G profiles measured by Narayanan et al., "A Variegated Look at 5G in
  /// the Wild", SIGCOMM 2021 (doi:10.1145/3452296.3472923), read from its
  /// artifact (github.com/SIGCOMM21-5G/artifact); each field's file is in
  /// ``WorldParameters/registry``. Powers are the radio's share: the
  /// whole-device linear fit in throughput less the device baseline
  /// (2.357 W). The `5g` network uses the one ``fiveG`` names.
  ///
  /// NSA low-band (Verizon): idle → LTE anchor 0.32 s, then CONNECTED
  /// until the 10.2 s inactivity timer.
  package var nr5gNSALowBand = RadioSet.lowBand5G { didSet { resolve() } }
  /// NSA mmWave (Verizon): the same promotion, 11.2 s timer, about five
  /// times the low-band radio power.
  package var nr5gNSAmmWave = RadioProfile(
    promotionTimeS: 0.32, promotionPowerW: 2.779, connectedPowerW: 2.779,
    downlinkWPerMbps: 0.001807, uplinkWPerMbps: 0.009422, downlinkMbps: 1000, uplinkMbps: 60,
    tail: [TailStage(durationS: 11.2, powerW: 2.779)]) { didSet { resolve() } }
  /// SA low-band (T-Mobile): the NSA low-band radio, CONNECTED for 10.2 s,
  /// then RRC_INACTIVE until 15 s, at idle power with a fast resume, then
  /// IDLE.
  package var nr5gSA = RadioSet.lowBand5G.appendingTail(
    TailStage(durationS: 4.8, powerW: 0, promotionTimeS: 0.02, promotionPowerW: 0.568)) { didSet { resolve() } }
  /// Which measured 5G deployment the `5g` network is.
  package var fiveG = FiveGDeployment.nsaLowBand { didSet { resolve() } }
  /// The technology behind a plain `cellular` network value.
  package var defaultCellular: NetworkKind = .lte { didSet { resolve() } }
  /// The network assumed before a trace's first `network` row (and for the
  /// whole of a trace without any).
  package var defaultNetwork: NetworkKind = .cellular

  /// ``radio(for:)`` of every network, by raw value, kept in step with the
  /// fields above by their observers.
  package private(set) var byNetwork: [RadioProfile?] = []

  /// The documented defaults (`fetchlab params`).
  package init() { resolve() }

  /// The low-band 5G radio both the NSA and the SA deployment use
  /// (Verizon NSA low-band fit; the SA values are that fit, NV).
  static let lowBand5G = RadioProfile(
    promotionTimeS: 0.32, promotionPowerW: 0.568, connectedPowerW: 0.568,
    downlinkWPerMbps: 0.013518, uplinkWPerMbps: 0.029148, downlinkMbps: 100, uplinkMbps: 20,
    tail: [TailStage(durationS: 10.2, powerW: 0.568)])

  /// The profile of the `5g` network (``fiveG``'s).
  package var nr5g: RadioProfile {
    switch fiveG {
    case .nsaLowBand: nr5gNSALowBand
    case .nsaMmWave: nr5gNSAmmWave
    case .sa: nr5gSA
    }
  }

  /// The technology a network value stands for: `cellular` resolves to
  /// ``defaultCellular`` (LTE when that is `cellular` itself); every other
  /// value is its own.
  package func technology(of network: NetworkKind) -> NetworkKind {
    network == .cellular ? (defaultCellular == .cellular ? .lte : defaultCellular) : network
  }

  /// The radio profile for a network; `nil` when offline.
  ///
  /// - Complexity: O(1): one read of ``byNetwork`` (the profile's tail
  ///   arrays retained), nothing else copied.
  @inline(__always)
  package func radio(for network: NetworkKind) -> RadioProfile? { byNetwork[Int(network.rawValue)] }

  /// Rebuilds ``byNetwork`` from the profiles and the network choices.
  private mutating func resolve() {
    byNetwork = NetworkKind.allCases.map { n in
      switch technology(of: n) {
      case .offline, .cellular: nil
      case .wifi: wifi
      case .lte: lte
      case .umts3g: umts3g
      case .nr5g: nr5g
      }
    }
  }
}

extension RadioProfile {
  /// This profile with one more tail stage after its last.
  func appendingTail(_ stage: TailStage) -> RadioProfile {
    var p = self
    p.tail.append(stage)
    return p
  }
}
