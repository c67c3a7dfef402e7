import ArgumentParser
import FetchSupport
import FetchTraces
import Foundation

extension FetchLab {
  struct Synth: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "synth",
      abstract: "Generate a synthetic population trace (calibrated users).",
      discussion: """
        User i depends only on the seed, i, --days and the parameters, so \
        the first N users of a larger population are the same users. \
        --params takes a JSON object overriding any subset of the generator \
        parameters (the defaults are recorded in the output's '#' comment \
        lines); unknown keys are an error.
        --seed defaults to 1, as in run.
        Example: fetchlab synth --users 1000 --days 28 --seed 1 --out synth.csv
        """)

    @Option(name: .long, parsing: .unconditional, help: "Number of users (u00001, u00002, ...).")
    var users: Int

    @Option(
      name: .long, parsing: .unconditional, help: "Days per user, from local midnight of the start date."
    )
    var days: Int

    @Option(name: .long, parsing: .unconditional, help: "Master seed for every random draw (1 unless given, as in run).")
    var seed: UInt64 = 1

    @Option(
      name: .long,
      help: "Output trace file (canonical FetchLab CSV, written atomically).", completion: .trace)
    var out: String

    @Option(
      name: .long,
      help: ArgumentHelp(
        "JSON file overriding generator parameters.", valueName: "file.json"), completion: .json)
    var params: String?

    func validate() throws {
      guard users >= 1 else {
        throw ValidationError("--users must be at least 1")
      }
      guard users <= 10_000_000 else {
        throw ValidationError("--users must be at most 10000000")
      }
      guard days >= 1 else {
        throw ValidationError("--days must be at least 1")
      }
      guard days <= 3_650 else {
        throw ValidationError("--days must be at most 3650")
      }
      guard !out.isEmpty else {
        throw ValidationError("--out must not be empty")
      }
      let parameters = try loadParameters()
      if let problem = parameters.windowProblem(days: days) {
        throw ValidationError((params.map { "\($0): " } ?? "") + problem)
      }
    }

    /// The defaults overridden by `--params`, validated.
    func loadParameters() throws -> SyntheticPopulation.Parameters {
      guard let params else { return SyntheticPopulation.Parameters() }
      return try SyntheticPopulation.Parameters.load(path: params)
    }

    /// Refuses a population whose trace would exceed the output limit or
    /// the free space, or whose generation would exceed the memory limit
    /// (``ResourceLimits/checkSynthetic(users:days:freeBytes:what:)``).
    func checkSize(limits: ResourceLimits = .current) throws {
      let dir = (out as NSString).deletingLastPathComponent
      let free = ResourceLimits.freeBytes(near: dir.isEmpty ? "." : dir)
      if let m = limits.checkSynthetic(users: users, days: days, freeBytes: free, what: "synth") {
        throw CommandError(m)
      }
    }

    func run() throws {
      try checkSize()
      let started = Date()
      let population = SyntheticPopulation(
        seed: seed, days: days, parameters: try loadParameters())
      let progress = ProgressLine(label: "synth")
      let events = try population.write(to: out, users: users) { done, _ in
        progress.update(
          done: done, total: users, unit: "users", workDone: Double(done) / Double(users))
      }
      progress.finish()
      let seconds = Date().timeIntervalSince(started)
      let perUserDay = Double(events) / Double(users * days)
      let rate = CSV.number(perUserDay, decimals: 1)
      let time = CSV.number(seconds, decimals: 1)
      print(
        "\(out): \(users) users × \(days) days, \(events) events "
          + "(\(rate) per user-day), seed \(seed), \(time) s")
    }
  }
}
