import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld

/// The parameters of ``WorldParameters`` that one replay reads, held apart
/// so that the engine's hot path reads small, plain fields.
struct ReplayWorld {
  let requestBytes: Double
  let serverLatencyS: Double
  let noDataBytes: Double
  let fetchBudgetS: Double
  let failureProbability: Double
  let cpuWakeEnergyJ: Double
  let cpuActivePowerW: Double
  let locationMonitoringW: Double
  let batteryCapacityJ: Double
  let initialBatteryPct: Double
  let instantTransfers: Bool
  let foregroundRefresh: Bool
  let shareUserRadio: Bool
  /// ``WorldParameters/openSetupS(on:)`` by network raw value.
  let openSetupS: [Double]

  init(_ w: WorldParameters) {
    requestBytes = w.requestBytes
    serverLatencyS = w.serverLatencyS
    noDataBytes = w.noDataBytes
    fetchBudgetS = w.fetchBudgetS
    failureProbability = w.failureProbability
    cpuWakeEnergyJ = w.cpuWakeEnergyJ
    cpuActivePowerW = w.cpuActivePowerW
    locationMonitoringW = w.locationMonitoringW
    batteryCapacityJ = w.batteryCapacityJ
    initialBatteryPct = w.initialBatteryPct
    instantTransfers = w.instantTransfers
    foregroundRefresh = w.refreshesAtOpen
    shareUserRadio = w.shareUserRadio
    openSetupS = NetworkKind.allCases.map { w.openSetupS(on: $0) }
  }
}
