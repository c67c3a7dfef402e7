import FetchWorld

/// What pricing a background launch reads from the world: the radios it
/// may run on, the exchange with the server, and the CPU's share. The
/// learning schedulers (ios-minimum, IMP, the planner) and the budgeted
/// oracle each hold one, taken from ``WorldParameters`` when they are made.
package struct LaunchPricing: Sendable {
  /// The radios a launch is priced on (``RadioSet/radio(for:)``).
  package let radios: RadioSet
  /// Request and response sizes, the server's latency and the launch budget.
  package let fetch: FetchExchange
  /// The CPU's share of a launch, and the battery budgets are shares of.
  package let device: DeviceEnergy

  package init(_ world: WorldParameters) {
    radios = world.radios
    fetch = world.fetch
    device = world.device
  }

  /// Estimated marginal energy of a launch, J: the CPU wake plus the
  /// radio's marginal energy on `radio` for `downBytes` down and the
  /// request up after a quiet gap of `gap` s, connected through the
  /// server's latency (``RadioProfile/marginalEnergyEstimate(afterQuietGap:downBytes:upBytes:extraConnectedS:)``).
  @inline(__always)
  package func energyJ(on radio: RadioProfile, afterQuietGap gap: Double, downBytes: Double) -> Double {
    device.cpuWakeEnergyJ
      + radio.marginalEnergyEstimate(
        afterQuietGap: gap, downBytes: downBytes, upBytes: fetch.requestBytes, extraConnectedS: fetch.serverLatencyS)
  }
}
