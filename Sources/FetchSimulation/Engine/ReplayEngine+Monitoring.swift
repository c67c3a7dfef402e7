import FetchModels
import FetchSupport
import FetchTraces

/// Energy that is not a fetch's: an app's location monitoring.
///
/// Two parts, both in ``AppSummary/monitoringEnergyJ`` and in
/// ``AppSummary/energyJ``: a CPU wake (`device.cpu_wake_j`) for each
/// location wake that started no fetch (a wake that starts one pays its
/// CPU wake in the fetch), and the standing power
/// `device.location_monitoring_w` over the window for apps that monitor.
extension ReplayEngine {
  /// Charges lane `j` the CPU wakes its policy recorded without a fetch,
  /// at the current time (against the battery unless charging).
  mutating func chargeWakes(_ j: Int) {
    let energyJ = Double(lanes[j].ctx.wakesWithoutFetch) * w.device.cpuWakeEnergyJ
    lanes[j].ctx.wakesWithoutFetch = 0
    lanes[j].summary.energyJ += energyJ
    lanes[j].summary.monitoringEnergyJ += energyJ
    if u.isCharging(at: lanes[j].ctx.now) { lanes[j].summary.chargingEnergyJ += energyJ }
    drainBattery(energyJ, charging: isCharging)
  }

  /// Charges lane `j` the standing monitoring power over the replay
  /// window, the part while charging apart. Charged once at the window's
  /// end, so the battery level the policies see leaves it out.
  ///
  /// - Complexity: O(charging intervals).
  mutating func chargeStandingMonitoring(_ j: Int) {
    let p = w.device.locationMonitoringW
    guard p > 0 else { return }
    let start = u.trace.start, end = u.trace.end
    var chargingS = 0.0
    for c in u.charging where c.end > start && c.start < end {
      chargingS += min(c.end, end) - max(c.start, start)
    }
    lanes[j].summary.energyJ += p * (end - start)
    lanes[j].summary.monitoringEnergyJ += p * (end - start)
    lanes[j].summary.chargingEnergyJ += p * chargingS
  }
}
