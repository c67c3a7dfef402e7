import ArgumentParser
import FetchBenchmark

extension EnergyBasis: ExpressibleByArgument {}

/// `--energy battery|total`, declared once for the commands that score and
/// report a run (`run`, `merge`, `report`).
struct EnergyOption: ParsableArguments {
  @Option(
    name: .customLong("energy"),
    help: ArgumentHelp(
      "The energy that the frontier, the headline and its budgets, matched.csv, oracle_gap.csv, the report's order and "
        + "the robustness claims rank on: battery (charger energy left out; the default) or total. Default: the "
        + "experiment file's \"energy\" key for run and merge, the run's manifest (energy_basis) for report. Both "
        + "energies are in every result file; the budgets of planner, imp and oracle-budget:XJ always count battery "
        + "energy.",
      valueName: "battery|total"))
  var energy: EnergyBasis?
}
