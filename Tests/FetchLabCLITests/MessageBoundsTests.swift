import Foundation
import Testing

/// Refusals say what is wrong in a line or two: no echo of a huge input,
/// the right field, negative values read as values, suggestions that are
/// themselves valid.
@Suite("Messages of refusals", .serialized)
struct MessageBoundsTests {
  static func experiment(world: String) -> String {
    """
    {
      "name": "m",
      "datasets": [{"name": "five", "trace": "t.csv"}],
      "apps": "top:1",
      "train_fraction": 0,
      \(world),
      "policies": ["never"],
      "replications": 1,
      "seed": 3
    }
    """
  }

  @Test("a world grid of 20,000 values is refused in a short message that quotes the pattern's start and its size")
  func hugeWorldGrid() throws {
    let values = (0..<20_000).map { "\(Double($0) / 1000 + 0.01)" }.joined(separator: ",")
    let (dir, file) = try experimentDir(Self.experiment(world: "\"world\": {\"device\": {\"cpu_wake_j\": \"{\(values)}\"}}"))
    let r = try CLI.run(["run", file, "--out", dir + "/out"])
    #expect(r.status == 1)
    #expect(r.stderr.contains("world.device.cpu_wake_j") && r.stderr.contains("expands to more than 10000"), "\(r.stderr.prefix(500))")
    #expect(r.stderr.contains("bytes)"), "\(r.stderr.prefix(500))")
    #expect(r.stderr.utf8.count < 1_000, "\(r.stderr.utf8.count) bytes of message")
  }

  @Test("a variant's name that is not a string is named as such, not as missing")
  func variantNameType() throws {
    let (dir, file) = try experimentDir(Self.experiment(world: "\"world_variants\": [{\"name\": \"reference\"}, {\"name\": 5}]"))
    let r = try CLI.run(["run", file, "--out", dir + "/out"])
    #expect(r.status == 1)
    #expect(r.stderr.contains("world_variants[1].name: expected a string, got a number"), "\(r.stderr)")
    #expect(!r.stderr.contains("missing"))
  }

  @Test("negative values are read as values: --time-zone -05:00 works, --seed -1 and --days -1 get their range")
  func negativeValues() throws {
    let dir = scratch()
    try "user,timestamp,app,event\nu,2026-01-05 08:00:00,a,open\nu,2026-01-05 08:01:00,a,close\n"
      .write(toFile: dir + "/log.csv", atomically: true, encoding: .utf8)
    let tz = try CLI.run(["import-events", dir + "/log.csv", "--time-zone", "-05:00", "--out", dir + "/t.csv"])
    #expect(tz.status == 0, "\(tz.stderr)")
    #expect(!tz.stderr.contains("Missing value"))
    for args in [
      ["synth", "--users", "1", "--days", "1", "--seed", "-1", "--out", dir + "/s.csv"],
      ["synth", "--users", "1", "--days", "-1", "--out", dir + "/s.csv"],
      ["fit", "--trace", dir + "/t.csv", "--out", dir + "/m.json", "--seed", "-1"],
      ["fit", "--trace", dir + "/t.csv", "--out", dir + "/m.json", "--train-fraction", "-0.5"],
    ] {
      let r = try CLI.run(args)
      #expect(r.status == 64, "\(args): \(r.stderr)")
      #expect(!r.stderr.contains("Missing value"), "\(args): \(r.stderr)")
      #expect(r.stderr.contains("-1") || r.stderr.contains("-0.5") || r.stderr.contains("at least"), "\(args): \(r.stderr)")
    }
  }

  @Test("predict --from 1e308 is out of range, with no suggestion that is itself out of range")
  func predictFarFuture() throws {
    let dir = scratch()
    try "{}".write(toFile: dir + "/m.json", atomically: true, encoding: .utf8)
    let r = try CLI.run([
      "predict", "--model", dir + "/m.json", "--user", "u", "--app", "a", "--from", "1e308", "--to", "1e308",
    ])
    #expect(r.status == 64)
    #expect(r.stderr.contains("--from 1e308 is outside 1970-01-01...2100-01-01"), "\(r.stderr)")
    #expect(!r.stderr.contains("e+305"))
    let ms = try CLI.run(["predict", "--model", dir + "/m.json", "--user", "u", "--app", "a", "--from", "1767571200000", "--to", "1767657600000"])
    #expect(ms.stderr.contains("looks like milliseconds since 1970: give Unix seconds (1767571200)"), "\(ms.stderr)")
  }

  @Test("robustness.csv with τ = 2, an unknown world point or measure is refused by report with file, line and field")
  func tamperedRobustness() throws {
    let (dir, file) = try experimentDir(RobustnessCommandTests.experiment)
    let r = try CLI.run(["run", file, "--out", dir + "/out"])
    #expect(r.status == 0, "\(r.stderr)")
    let path = dir + "/out/robustness.csv"
    let csv = try String(contentsOfFile: path, encoding: .utf8)
    let tau = try #require(csv.range(of: "five,same,,kendall_tau_energy,1,"))
    for (bad, says) in [
      (csv.replacingCharacters(in: tau, with: "five,same,,kendall_tau_energy,2,"), "kendall_tau: 2 is not a Kendall τ"),
      (csv.replacingOccurrences(of: "five,cpu-2j,", with: "five,nowhere,"), "world_point: 'nowhere' of dataset 'five' is not a world point"),
      (csv.replacingOccurrences(of: "kendall_tau_age_in_energy_bands", with: "kendall_tau_other"), "measure: unknown measure 'kendall_tau_other'"),
    ] {
      try bad.write(toFile: path, atomically: true, encoding: .utf8)
      let rep = try CLI.run(["report", dir + "/out", "--no-timeline"])
      #expect(rep.status == 1, "\(says): \(rep.stderr)")
      #expect(rep.stderr.contains("robustness.csv:") && rep.stderr.contains(says), "\(rep.stderr)")
    }
  }

  @Test("compare on a summary.csv with energies of 1e308 refuses the value instead of printing a mean of inf")
  func hugeEnergies() throws {
    let (dir, _) = try RunSummaryTests.runAndCompare()
    let path = dir + "/run/summary.csv"
    var lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let header = lines[0].split(separator: ",").map(String.init)
    let e = try #require(header.firstIndex(of: "energy_j_per_day"))
    for i in 1..<lines.count where !lines[i].isEmpty {
      var f = lines[i].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
      f[e] = "1e308"
      lines[i] = f.joined(separator: ",")
    }
    try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
    let r = try CLI.run(["compare", dir + "/run", "--baseline", "never"])
    #expect(r.status == 1, "\(r.stdout)")
    #expect(!r.stdout.contains("inf"))
    #expect(r.stderr.contains("summary.csv:2: energy_j_per_day") && r.stderr.contains("beyond ±1e100"), "\(r.stderr)")
  }
}
