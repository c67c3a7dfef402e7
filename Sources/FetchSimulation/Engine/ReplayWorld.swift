import FetchTraces
import FetchWorld

/// The pieces of ``WorldParameters`` that one replay reads, held apart so
/// that the engine's hot path reads small, plain values (no arrays or
/// dictionaries of the world's content model are copied with them).
struct ReplayWorld {
  /// Request, responses, latency, budget and failures of a fetch.
  let fetch: FetchExchange
  /// CPU, location monitoring and battery.
  let device: DeviceEnergy
  /// The replay's switches (radio sharing, timed or instant transfers).
  let replay: ReplaySwitches
  /// ``WorldParameters/refreshesAtOpen``.
  let refreshesAtOpen: Bool
  /// ``WorldParameters/openSetupS(on:)`` by network raw value.
  let openSetupS: [Double]

  init(_ w: WorldParameters) {
    fetch = w.fetch
    device = w.device
    replay = w.replay
    refreshesAtOpen = w.refreshesAtOpen
    openSetupS = NetworkKind.allCases.map { w.openSetupS(on: $0) }
  }
}
