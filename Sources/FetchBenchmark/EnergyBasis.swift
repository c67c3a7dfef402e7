import FetchSimulation

/// Which energy ranks policies: the Pareto frontier the report draws, the
/// headline and its energy budgets, staleness at matched energy
/// (`matched.csv`), the gap to the budgeted oracle (`oracle_gap.csv`), the
/// report's order and the robustness claims.
///
/// Battery energy by default: the part of the fetch energy drawn while the
/// device is not on the charger (`battery_energy_j_per_day`), the energy a
/// user pays for in battery life. Total energy (`energy_j_per_day`, charger
/// energy included) is the experiment file's `"energy": "total"` or
/// `--energy total` on `run`, `merge` and `report`. Both columns are in
/// every result file whatever the basis; the budgets of the policies
/// (`planner`, `imp`, `oracle-budget:XJ`) always count battery energy.
public enum EnergyBasis: String, CaseIterable, Sendable {
  /// `battery_energy_j_per_day`: energy drawn from the battery.
  case battery
  /// `energy_j_per_day`: all fetch energy, charger energy included.
  case total

  /// The basis a run ranks on unless it says otherwise.
  public static let standard = EnergyBasis.battery

  /// The declared metric it counts.
  package var metric: Metric { self == .battery ? Metric.batteryEnergy : Metric.energy }
  /// Its per-day column (`battery_energy_j_per_day`, `energy_j_per_day`).
  package var column: String { metric.name + "_per_day" }
  /// How reports name it: `battery energy`, `energy`.
  package var label: String { self == .battery ? "battery energy" : "total energy" }

}
