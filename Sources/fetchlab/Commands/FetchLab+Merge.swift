import ArgumentParser
import FetchBenchmark
import FetchSupport
import Foundation

extension FetchLab {
  /// `fetchlab merge --out OUT DIR...`: the final files of a sharded
  /// experiment, as one `fetchlab run EXPERIMENT.json --out OUT` writes them.
  struct Merge: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Combine the shard directories of 'fetchlab run EXPERIMENT.json --shard K/N' into the files of a single run (summary.csv, opens.csv, fetches.csv, pooled.csv, the scores, manifest.json).",
      discussion: """
        Checks that the directories hold finished shards (shard.json) of the same experiment (configuration \
        hash), every shard 1/N to N/N exactly once, and every part against its recorded SHA-256; links (or \
        copies) the parts into OUT/parts and assembles them without computing anything. The CSVs and scores \
        are byte for byte those of a single-machine run; manifest.json differs only in command, jobs, \
        started_at, elapsed_s and units.computed/units.reused. The experiment file and its traces must be \
        reachable as the shards saw them (same working directory, or unchanged absolute paths).
        Example: fetchlab merge --out results/default results/shards/shard-*
        See docs/slurm.md for Slurm job arrays.
        """)

    @Option(name: .long, help: "Output directory (not one of the shard directories).", completion: .directory)
    var out: String

    @Argument(help: ArgumentHelp("Shard directories: every shard 1/N … N/N once.", valueName: "shard-dir"), completion: .directory)
    var shards: [String] = []

    @OptionGroup var parallel: JobsOption

    @OptionGroup var energyOption: EnergyOption

    @Flag(name: .long, help: "Replace the parts and results of a different experiment found in --out.")
    var force = false

    func validate() throws {
      guard !shards.isEmpty else { throw ValidationError("give the shard directories: fetchlab merge --out OUT DIR...") }
      let target = OutputPath.canonical(out)
      if let s = shards.first(where: { OutputPath.canonical($0) == target }) {
        throw ValidationError("--out \(out) is the shard directory \(s): merge into a directory of its own")
      }
    }

    func run() throws {
      let started = Date()
      try OutputPath.refuseRoot(out, role: "--out \(out)")
      let merge = try mergeShards(shards)
      let options = merge.options(jobs: parallel.jobs, force: force, version: fetchLabVersion)
      // A merge into a directory it creates leaves no directory when it
      // fails: its parts are copies of the shards' and its results unfinished.
      let created = OutputPath.firstMissing(out)
      do {
        let progress = ProgressLine(label: "merge")
        let outcome = try runExperiment(merge.experiment, directory: out, options: options) { p in
          progress.update(done: p.done, total: p.total, unit: "units", workDone: p.fraction, workComputed: p.computedFraction)
        }
        progress.finish()
        log("merged \(merge.shards.count) shards, \(outcome.unitsTotal) units")
        try finishExperiment(outcome, started: started, jobs: parallel.jobs, energy: energyOption.energy)
      } catch {
        if let created { try? FileManager.default.removeItem(atPath: created) }
        throw error
      }
    }
  }
}
