/// The device's own energy figures (`device.*`): what a background launch
/// costs the CPU, an app's standing location monitoring, and the battery
/// energy is expressed against. Sources per field in
/// ``WorldParameters/registry``.
package struct DeviceEnergy: Sendable, Equatable {
  /// Fixed CPU energy of launching the app in the background, J (on top
  /// of ``cpuActivePowerW`` while the fetch runs): with it a typical
  /// 100 kB LTE fetch (about 0.65 s) costs the CPU about 1 J in all, the
  /// geometric middle of the 0.5–2 J per background wake that PowerTutor
  /// figures suggest (no measured iPhone number).
  package var cpuWakeEnergyJ = 0.7
  /// CPU power while a fetch runs, W (PowerTutor, HTC Dream at 100 %).
  package var cpuActivePowerW = 0.434
  /// Standing power of an app's location monitoring (regions or
  /// significant changes), W, charged over the whole window to apps whose
  /// policy monitors location. 0 by default: the positioning behind it
  /// runs in the OS for every app at once (cell-tower changes, WiFi
  /// scans, the motion coprocessor), so one app's share is unmeasured;
  /// its own cost is its wakes, each a ``cpuWakeEnergyJ``.
  package var locationMonitoringW = 0.0
  /// Battery capacity used to express energy as % of battery, Wh
  /// (iPhone 15, regulatory listing).
  package var batteryCapacityWh = 12.98
  /// Battery level assumed before the first `battery` sample, %; a negative
  /// value means unknown (policies then see no level).
  package var initialBatteryPct = -1.0

  /// The documented defaults.
  package init() {}

  /// Battery capacity in joules.
  package var batteryCapacityJ: Double { batteryCapacityWh * 3600 }
}
