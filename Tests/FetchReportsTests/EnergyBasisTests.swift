import FetchBenchmark
import Testing

@testable import FetchReports

/// Which energy ranks: battery energy by default, total energy on request.
@Suite("Energy basis of the rankings")
struct EnergyBasisTests {
  /// A configuration with `total` J/day, `battery` of it from the battery.
  static func row(_ policy: String, total: Double, battery: Double, age: Double, basis: EnergyBasis) -> RunReport.PolicyRow {
    RunReport.PolicyRow(
      dataset: "d", policy: policy, family: String(policy.split(separator: ":")[0]), users: 3,
      estimates: [
        "energy_j_per_day": .init(mean: total), "battery_energy_j_per_day": .init(mean: battery),
        "mean_age_s": .init(mean: age),
      ], basis: basis)
  }

  /// `bg-processing` draws 45 of its 50 J/day on the charger: within
  /// 10 J/day it is the freshest on battery energy and out of the budget
  /// on total energy, where `periodic:4h` wins.
  static func rows(_ basis: EnergyBasis) -> [RunReport.PolicyRow] {
    [
      row("never", total: 0, battery: 0, age: 9_000, basis: basis),
      row("periodic:4h", total: 8, battery: 8, age: 1_000, basis: basis),
      row("bg-processing", total: 50, battery: 5, age: 600, basis: basis),
      row("periodic:15m", total: 90, battery: 90, age: 60, basis: basis),
    ]
  }

  @Test("the headline's budgets and winners follow the basis: battery by default, total on request")
  func headline() {
    #expect(EnergyBasis.standard == .battery)
    let battery = RunReport.budgetWinners(Self.rows(.battery))
    #expect(battery.first { $0.budget == 10 }?.row.policy == "bg-processing")
    let total = RunReport.budgetWinners(Self.rows(.total))
    #expect(total.first { $0.budget == 10 }?.row.policy == "periodic:4h")
    // The frontier: bg-processing is on it at 5 battery J/day, off it at
    // 50 total J/day (periodic:15m is fresher for 90, but nothing between).
    #expect(RunReport.realFrontier(Self.rows(.battery)).map(\.policy) == ["never", "bg-processing", "periodic:15m"])
    #expect(RunReport.realFrontier(Self.rows(.total)).map(\.policy) == ["never", "periodic:4h", "bg-processing", "periodic:15m"])
    #expect(RunReport.tableOrder(Self.rows(.battery)).map(\.policy) == ["never", "bg-processing", "periodic:4h", "periodic:15m"])
  }

  @Test("matched.csv and oracle_gap.csv name the energy they are on")
  func columns() {
    #expect(MatchedColumn.header(.battery)[3] == "battery_energy_j_per_day")
    #expect(MatchedColumn.header(.total)[3] == "energy_j_per_day")
    #expect(OracleGapRow.Budget.energy.axis(.standard) == .battery_energy_j_per_day)
    #expect(OracleGapRow.Budget.fetches.axis(.total) == .fetches_per_day)
  }
}
