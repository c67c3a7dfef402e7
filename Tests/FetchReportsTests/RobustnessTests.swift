@testable import FetchBenchmark
import Testing

@testable import FetchReports

/// `robustness.csv`: Kendall τ-b and the headline claims at each world point.
@Suite("Robustness table")
struct RobustnessTests {
  @Test("Kendall τ-b: 1 for the same order, −1 reversed, worked examples with ties and restricted pairs")
  func kendall() {
    #expect(Robustness.kendallTauB([1, 2, 3, 4], [10, 20, 30, 40]).tau == 1)
    #expect(Robustness.kendallTauB([1, 2, 3, 4], [4, 3, 2, 1]).tau == -1)
    // (1,2) discordant, (1,3) and (2,3) concordant: (2 − 1) / 3.
    #expect(abs(Robustness.kendallTauB([1, 2, 3], [2, 1, 3]).tau! - 1.0 / 3) < 1e-12)
    // Six pairs, one tied in x: five concordant, √((6 − 1)(6 − 0)).
    let t = Robustness.kendallTauB([1, 2, 2, 3], [1, 3, 2, 4])
    #expect(t.pairs == 6 && abs(t.tau! - 5 / (30.0).squareRoot()) < 1e-12)
    // Only pairs within a band: {0, 1} concordant, {2, 3} discordant.
    let banded = Robustness.kendallTauB([1, 2, 3, 4], [1, 2, 4, 3]) { $0 / 2 == $1 / 2 }
    #expect(banded.pairs == 2 && banded.tau == 0)
    #expect(Robustness.kendallTauB([1, 1], [1, 2]).tau == nil)
  }

  /// A configuration's scores: `energy` J/day in all, `battery` of it
  /// from the battery (all of it by default).
  static func score(_ dataset: String, _ policy: String, energy: Double, battery: Double? = nil, age: Double) -> PolicyScore {
    PolicyScore(
      dataset: dataset, policy: policy, users: 3,
      estimates: [
        .energy_j_per_day: MetricEstimate(mean: energy, users: 3),
        .battery_energy_j_per_day: MetricEstimate(mean: battery ?? energy, users: 3),
        .mean_age_s: MetricEstimate(mean: age, users: 3),
      ])
  }

  static func points(_ labels: [String]) -> [(dataset: String, point: Experiment.WorldPoint)] {
    labels.enumerated().map { i, l in
      ("d." + l, Experiment.WorldPoint(base: "d", label: l, changed: i == 0 ? "" : "x=\(i)", isReference: i == 0))
    }
  }

  @Test("an unchanged world keeps every claim; a world that swaps two close configurations breaks 'beats at equal energy'")
  func claims() {
    let ref: [(String, Double, Double)] = [("never", 0, 900), ("periodic:1h", 10, 300), ("tailender:1h", 10.5, 200), ("periodic:15m", 50, 60), ("oracle", 5, 0)]
    var scores = ref.map { Self.score("d.reference", $0.0, energy: $0.1, age: $0.2) }
    scores += ref.map { Self.score("d.same", $0.0, energy: $0.1, age: $0.2) }
    scores += ref.map { p in Self.score("d.swapped", p.0, energy: p.1, age: p.0 == "tailender:1h" ? 400 : p.2) }
    let rows = Robustness.rows(scores, points: Self.points(["reference", "same", "swapped"]))
    let same = rows.filter { $0.point == "same" }, swapped = rows.filter { $0.point == "swapped" }
    #expect(same.filter { $0.measure.hasPrefix("kendall") }.allSatisfy { $0.tau == 1 })
    #expect(same.filter { $0.holds != nil }.allSatisfy { $0.holds == true })
    let beats = swapped.filter { $0.measure == "beats_at_equal_energy" }
    #expect(beats.map(\.claim) == ["tailender:1h beats periodic:1h at equal energy"] && beats[0].holds == false)
    #expect(beats[0].referenceValue == "100" && beats[0].value == "-100")
    // Energies did not move: their order holds. The 10–100 J/day decade holds
    // periodic:1h, tailender:1h and periodic:15m: one of its three pairs flipped.
    #expect(swapped.first { $0.measure == "kendall_tau_energy" }?.tau == 1)
    let inBands = swapped.first { $0.measure == "kendall_tau_age_in_energy_bands" }
    #expect(inBands?.pairs == 3 && abs(inBands!.tau! - 1.0 / 3) < 1e-12)
    // The best real policy within 100 J/day (periodic:15m) and without limit did not change;
    // the oracle is never a headline winner.
    #expect(swapped.filter { $0.measure == "best_within_budget" }.allSatisfy { $0.holds == true })
    #expect(!rows.contains { $0.referenceValue == "oracle" })
  }

  /// A charging-aware policy draws 40 of its 50 J/day from the charger: on
  /// battery energy it is the best within 10 J/day, on total energy it is
  /// not.
  @Test("each reference is compared with its own scores on the other energy basis: a charger-heavy policy's claims move")
  func energyBasisAxis() {
    let ref: [(String, Double, Double, Double)] = [
      ("never", 0, 0, 900), ("periodic:1h", 10, 10, 300), ("bg-processing", 50, 10, 250), ("periodic:15m", 60, 60, 60),
    ]
    let scores = ref.map { Self.score("d.reference", $0.0, energy: $0.1, battery: $0.2, age: $0.3) }
    let rows = Robustness.rows(scores, points: Self.points(["reference"]))
    #expect(Set(rows.map(\.point)) == ["energy-total"] && rows.allSatisfy { $0.changed == "energy=total" })
    // On battery energy bg-processing (10 J/day) ties periodic:1h and beats
    // it on age; the ages do not move with the basis, so the claim holds.
    let beats = rows.first { $0.claim == "bg-processing beats periodic:1h at equal energy" }
    #expect(beats?.holds == true)
    let within10 = rows.first { $0.claim == "best real policy within 10 J/day" }
    #expect(within10?.referenceValue == "bg-processing" && within10?.value == "periodic:1h" && within10?.holds == false)
    let tau = rows.first { $0.measure == "kendall_tau_energy" }?.tau
    #expect(tau != nil && tau! < 1)
    // Ranking on total energy, the other basis is battery.
    let onTotal = Robustness.rows(scores, points: Self.points(["reference"]), basis: .total)
    #expect(Set(onTotal.map(\.point)) == ["energy-battery"])
  }
}
