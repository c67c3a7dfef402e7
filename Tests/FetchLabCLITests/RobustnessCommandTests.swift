import Foundation
import Testing

/// `world_variants` end to end: `robustness.csv`, the report's section, shards.
@Suite("Robustness of a run's conclusions (world variants)")
struct RobustnessCommandTests {
  static let experiment = """
    {
      "name": "robust",
      "datasets": [{"name": "five", "trace": "t.csv"}],
      "apps": "top:2",
      "train_fraction": 0,
      "world_variants": [{"name": "reference"}, {"name": "same"}, {"name": "cpu-2j", "device.cpu_wake_j": 2}],
      "policies": ["never", "periodic:{30m,2h}", "oracle", "tailender:1h"],
      "replications": 1,
      "seed": 3,
      "unit_users": 2
    }
    """

  @Test("robustness.csv: an unchanged variant keeps τ = 1 and every claim; the report shows the section; shards merge to the same bytes")
  func endToEnd() throws {
    let (dir, file) = try experimentDir(Self.experiment)
    let r = try CLI.run(["run", file, "--out", dir + "/out", "--jobs", "2"])
    #expect(r.status == 0, "\(r.stderr)")
    let csv = try String(contentsOfFile: dir + "/out/robustness.csv", encoding: .utf8)
    let lines = csv.split(separator: "\n").map(String.init)
    #expect(lines[0] == "dataset,world_point,changed,measure,kendall_tau,n_pairs,claim,holds,reference_value,value")
    let same = lines.filter { $0.hasPrefix("five,same,,") }
    #expect(same.contains { $0.hasPrefix("five,same,,kendall_tau_energy,1,10,") })
    #expect(same.filter { $0.contains("best_within_budget") || $0.contains("beats_at_equal_energy") }.allSatisfy { $0.contains(",1,") })
    #expect(lines.contains { $0.hasPrefix("five,cpu-2j,device.cpu_wake_j=2,kendall_tau_energy,") })
    #expect(!lines.contains { $0.hasPrefix("five,reference,") })
    let report = try CLI.run(["report", dir + "/out", "--no-timeline"])
    #expect(report.status == 0, "\(report.stderr)")
    let md = try String(contentsOfFile: dir + "/out/report.md", encoding: .utf8)
    #expect(md.contains("## Robustness") && md.contains("| same |  | 1 | "))
    let merged = try shardAndMerge(file, count: 2, base: dir + "/shards", out: dir + "/merged")
    #expect(merged.status == 0, "\(merged.stderr)")
    #expect(FileManager.default.contents(atPath: dir + "/merged/robustness.csv") == Data(csv.utf8))
  }

  @Test("without world points there is no robustness.csv and no section; bad variants are refused with file, line and field")
  func absentAndRefused() throws {
    let plain = Self.experiment.replacingOccurrences(
      of: "\"world_variants\": [{\"name\": \"reference\"}, {\"name\": \"same\"}, {\"name\": \"cpu-2j\", \"device.cpu_wake_j\": 2}],", with: "")
    let (dir, file) = try experimentDir(plain)
    #expect(try CLI.run(["run", file, "--out", dir + "/out"]).status == 0)
    #expect(!FileManager.default.fileExists(atPath: dir + "/out/robustness.csv"))
    _ = try CLI.run(["report", dir + "/out", "--no-timeline"])
    #expect(try !String(contentsOfFile: dir + "/out/report.md", encoding: .utf8).contains("Robustness"))
    for (variants, says) in [
      ("[{\"name\": \"a\"}, {\"name\": \"a\"}]", "duplicate variant name 'a'"),
      ("[{\"device.cpu_wake_j\": 2}]", "world_variants[0].name"),
      ("[{\"name\": \"a\", \"device.cpu_wake_j\": -1}]", "device.cpu_wake_j"),
      ("{}", "non-empty array"),
    ] {
      let bad = Self.experiment.replacingOccurrences(
        of: "[{\"name\": \"reference\"}, {\"name\": \"same\"}, {\"name\": \"cpu-2j\", \"device.cpu_wake_j\": 2}]", with: variants)
      let (d, f) = try experimentDir(bad)
      let r = try CLI.run(["run", f, "--out", d + "/out"])
      #expect(r.status != 0 && r.stderr.contains(says) && r.stderr.contains("e.json:"), "\(variants): \(r.stderr)")
    }
  }
}
