import ArgumentParser
import FetchBenchmark
import FetchModels
import FetchReports
import FetchSimulation
import FetchTraces
import Foundation

extension FetchLab {
  struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Replay a trace against fetch policies; write summary.csv, opens.csv, fetches.csv, policies.csv and manifest.json; print a comparison.",
      discussion: """
        Policies: \(PolicySpec.syntax).
        Example: fetchlab run --trace datasets/ubiqlog/ubiqlog-opens.csv --policy never --policy periodic:1h --policy oracle --out results/demo
        """)

    @Option(name: .long, help: "Canonical trace file.")
    var trace: String

    @Option(name: .long, help: ArgumentHelp("A policy to replay; repeat for several (default: never, periodic:15m, periodic:1h, periodic:4h, oracle).", valueName: "policy"))
    var policy: [String] = []

    @Option(name: .long, help: "Output directory.")
    var out: String

    @Option(name: .long, help: "Master seed for every random draw.")
    var seed: UInt64 = 1

    @Option(name: .long, help: "JSON file overriding world-model parameters (see 'fetchlab params').")
    var config: String?

    @Option(name: .customLong("set"), help: ArgumentHelp("Override one parameter, name=value (repeatable; applied after --config).", valueName: "name=value"))
    var overrides: [String] = []

    @Option(name: .long, help: "Which apps of each user to replay: top:K, min-opens:N or names:A,B.")
    var apps: String = "top:3"

    @Option(name: .long, help: "Share of each user's window to train on (chronological); all policies are scored on the rest. Default: 0.75 when a learning policy (ios-minimum, ios-custom) is present, else 0.")
    var trainFraction: Double?

    @Flag(name: .long, help: "Opens do not refresh content in the foreground (replay.foreground_refresh=false).")
    var noForegroundRefresh = false

    @Flag(name: .long, help: "Skip opens.csv and fetches.csv (for large runs).")
    var noEventFiles = false

    @Option(name: .long, help: "Worker threads (results do not depend on it).")
    var jobs: Int = ProcessInfo.processInfo.activeProcessorCount

    func validate() throws {
      guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
      if let f = trainFraction, !(f >= 0 && f < 1) { throw ValidationError("--train-fraction must be in [0, 1)") }
      for p in policy { _ = try parsePolicy(p) }
      do { _ = try AppSelection(parsing: apps) } catch { throw ValidationError(String(describing: error)) }
    }

    func parsePolicy(_ s: String) throws -> PolicySpec {
      do { return try PolicySpec(parsing: s) } catch { throw ValidationError(String(describing: error)) }
    }

    func run() throws {
      let started = Date()
      let names = policy.isEmpty ? ["never", "periodic:15m", "periodic:1h", "periodic:4h", "oracle"] : policy
      let specs = try names.map(parsePolicy)
      var world = WorldParameters()
      if let config { try world.apply(configPath: config) }
      try applyOverrides(overrides, to: &world)
      if noForegroundRefresh { world.foregroundRefresh = false }
      let split = trainFraction ?? (specs.contains(where: \.learns) ? 0.75 : 0)
      let cfg = RunConfiguration(
        tracePath: trace, policies: specs, seed: seed, world: world, apps: try AppSelection(parsing: apps),
        recordEvents: !noEventFiles, jobs: jobs, trainFraction: split)
      var sink = try CSVReportSink(directory: out, config: cfg)
      let progress = ProgressLine(label: "replay")
      try runReplay(cfg, into: &sink) { p in
        progress.update(done: p.users, unit: "users", fraction: p.totalBytes > 0 ? Double(p.bytesRead) / Double(p.totalBytes) : nil)
      }
      progress.finish()
      let manifest: [String: Any] = [
        "fetchlab_version": fetchLabVersion,
        "command": CommandLine.arguments.joined(separator: " "),
        "trace": ["path": trace, "bytes": fileSize(trace)],
        "seed": seed,
        "policies": specs.map(\.description),
        "apps": cfg.apps.description,
        "train_fraction": split,
        "world_overrides": world.overrides(),
        "counts": [
          "users": sink.users, "pairs": sink.aggregates.first?.pairs ?? 0,
          "opens": sink.aggregates.first?.opens ?? 0,
          "fetches": sink.aggregates.map(\.fetches).reduce(0, +),
        ],
        "event_files": !noEventFiles,
        "jobs": jobs,
        "started_at": ISO8601DateFormatter().string(from: started),
        "elapsed_s": (Date().timeIntervalSince(started) * 1000).rounded() / 1000,
      ]
      try sink.commit(manifest: manifest)
      print("\(sink.users) users, \(sink.aggregates.first?.pairs ?? 0) (user, app) pairs, \(specs.count) policies -> \(out)/")
      print(ComparisonTable.render(sink.aggregates, capacityJ: world.batteryCapacityJ), terminator: "")
    }
  }

  struct Params: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "List every world-model parameter: name, default, unit and source (Markdown table).")

    func run() {
      let w = WorldParameters()
      print("| parameter | default | unit | source |")
      print("|---|---|---|---|")
      for p in WorldParameters.registry {
        print("| `\(p.name)` | \(p.value(in: w)) | \(p.unit) | \(p.source) |")
      }
      print("| `\(WorldParameters.appRatePrefix)<app>` | (content.rate_per_hour) | 1/h | per-app override |")
    }
  }
}

/// Applies `name=value` overrides; numbers, true/false, or words.
func applyOverrides(_ items: [String], to world: inout WorldParameters) throws {
  for item in items {
    guard let eq = item.firstIndex(of: "=") else {
      throw ValidationError("--set '\(item)': expected name=value")
    }
    let name = String(item[..<eq]), raw = String(item[item.index(after: eq)...])
    let value: ParameterValue =
      raw == "true" ? .flag(true) : raw == "false" ? .flag(false) : Double(raw).map { .number($0) } ?? .word(raw)
    if let msg = world.set(name, to: value) { throw ValidationError("--set \(name): \(msg)") }
  }
}

func fileSize(_ path: String) -> Int {
  ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int) ?? 0
}
