import FetchTraces

/// Every number of the world a replay runs in, in pieces: the radios
/// (``RadioSet``), the device's energy (``DeviceEnergy``), a fetch's
/// exchange with its server (``FetchExchange``), content updates
/// (``ContentUpdates``), what sessions do to the radio
/// (``SessionNetworkParameters``) and the replay's switches
/// (``ReplaySwitches``). A consumer takes the piece it reads. Defaults come
/// from published measurements and documentation (cited per parameter);
/// each is listed with its unit and source by ``WorldParameters/registry``
/// and `fetchlab params`, and can be overridden by name in a JSON config
/// file.
public struct WorldParameters: Sendable, Equatable {
  /// The radio profiles and network choices (`radio.*`, `network.*`).
  package var radios = RadioSet()
  /// CPU, location monitoring and battery (`device.*`).
  package var device = DeviceEnergy()
  /// Request, responses, latency and budget of a fetch (`fetch.*`).
  package var fetch = FetchExchange()
  /// When content changes (`content.*`).
  package var content = ContentUpdates()
  /// What the user's foreground sessions do to the radio (`session.*`).
  package var sessions = SessionNetworkParameters()
  /// The replay's modelling switches (`replay.*`).
  package var replay = ReplaySwitches()

  /// The documented defaults (`fetchlab params`).
  public init() {}

  /// The radio profile for a network; `nil` when offline
  /// (``RadioSet/radio(for:)``).
  package func radio(for network: NetworkKind) -> RadioProfile? { radios.radio(for: network) }

  /// Whether an open refreshes its content in the foreground: on
  /// (``ReplaySwitches/foregroundRefresh``) unless the app makes no
  /// exchange at its opens (`session.open_exchange none`).
  package var refreshesAtOpen: Bool { replay.foregroundRefresh && sessions.openExchange != .none }

  /// The connection setup before an open's request on `network`, s
  /// (``FetchExchange/openSetupS(technology:)`` of the technology it stands for).
  package func openSetupS(on network: NetworkKind) -> Double {
    fetch.openSetupS(technology: radios.technology(of: network))
  }
}
