import ArgumentParser
import FetchBenchmark
import FetchSupport
import FetchTraces
import Foundation

extension FetchLab {
  struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "bench",
      abstract: "Measure throughput on a fixed synthetic population (or your own trace): generation, ingestion with and without the input hash, habit fitting, replay per policy, a run with 1 and 2 jobs, peak memory and a default-style experiment; print a table and write DIR/bench.csv.",
      discussion: """
        Users are streamed (generated to DIR/bench-trace.csv, then read in batches), so memory \
        does not grow with --users. The trace is deleted afterwards unless --keep-trace. \
        With --trace FILE the same stages run on FILE (a canonical trace, never deleted) instead \
        of a generated population; --users does not apply, and each user's window is split \
        --train-days/--days (3/4 by default) into training and replay. \
        bench.csv columns: metric, value, unit, target (>=X or <=X), met. \
        Per-core replay rates divide the work by the CPU time of the threads that replayed it, so \
        they mean the same with any --jobs; each learning or timer policy's CPU per policy-user-day \
        is also given as a multiple of never's (replay_*_cpu_vs_never). With --jobs 2 or more, the run \
        of never, periodic:30m, periodic:1h and oracle is timed with 1 and with 2 jobs \
        (speedup_jobs_2, target >= 1.8). With --compare FILE (an earlier run's bench.csv on the \
        same --users and --days, e.g. docs/bench/bench-0.7.0-users300.csv), every speed figure is \
        also given as a speed-up over that run (*_vs_baseline, more than 1 is better), the per-core \
        replay rates with the target >= 1 (no slower). Every target is such a ratio. \
        Build with -c release before measuring.
        Example: fetchlab bench --users 2000 --out results/bench
        Example: fetchlab bench --users 300 --compare bench-0.7.0-users300.csv
        Example: fetchlab bench --trace my-trace.csv --out results/bench-mine
        """)

    @Option(name: .long, parsing: .unconditional, help: "Users in the synthetic population (default 10000; 200 with --quick).")
    var users: Int?

    @Option(name: .long, parsing: .unconditional, help: "Days per user.")
    var days: Int = 28

    @Option(name: .long, parsing: .unconditional, help: "Training days at the start of each window; the rest is replayed (default: 3/4 of --days, 21 for 28).")
    var trainDays: Int?

    @OptionGroup var parallel: JobsOption

    @Option(name: .long, help: "Output directory for bench.csv (and the temporary trace).", completion: .directory)
    var out: String = "results/bench"

    @Flag(name: .long, help: "A small run for tests: 200 users unless --users is given.")
    var quick = false

    @Flag(name: .long, help: "Keep the generated trace DIR/bench-trace.csv.")
    var keepTrace = false

    @Option(
      name: .long, help: "Benchmark this canonical trace instead of a generated population (same stages, no generation).",
      completion: .trace)
    var trace: String?

    @Option(name: .long, help: "An earlier run's bench.csv (same --users and --days): also give every speed figure as a speed-up over it.")
    var compare: String?

    var effectiveUsers: Int { users ?? (quick ? 200 : 10_000) }
    var effectiveTrainDays: Int { trainDays ?? max(1, days * 3 / 4) }

    func validate() throws {
      guard effectiveUsers >= 1 else { throw ValidationError("--users must be at least 1") }
      guard effectiveUsers <= 10_000_000 else { throw ValidationError("--users must be at most 10000000") }
      guard days >= 2, days <= 3_650 else { throw ValidationError("--days must be in 2...3650") }
      guard effectiveTrainDays >= 1, effectiveTrainDays < days else {
        throw ValidationError("--train-days must be at least 1 and less than --days")
      }
      guard !out.isEmpty else { throw ValidationError("--out must not be empty") }
      if trace != nil {
        guard users == nil, !quick, !keepTrace else {
          throw ValidationError("--trace benchmarks the given file: --users, --quick and --keep-trace do not apply")
        }
      }
    }

    func run() throws {
      try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
      if trace == nil,
        let m = ResourceLimits.current.checkSynthetic(
          users: effectiveUsers, days: days, freeBytes: ResourceLimits.freeBytes(near: out), what: "bench")
      {
        throw CommandError(m)
      }
      let baseline: BenchBaseline?
      do {
        baseline = try compare.map { try BenchBaseline(path: $0) }
      } catch let e as BenchCompareError {
        throw CommandError(e.description)
      }
      let cfg = BenchConfiguration(
        users: effectiveUsers, days: days, trainDays: effectiveTrainDays, jobs: parallel.jobs, directory: out,
        keepTrace: keepTrace, trace: trace)
      // One progress line per stage, so the ETA is the stage's.
      var line = ProgressLine(label: "bench")
      var stage = ""
      let report: BenchReport
      do {
        report = try runBench(cfg, baseline: baseline) { p in
          if p.stage != stage {
            line.finish()
            stage = p.stage
            line = ProgressLine(label: "bench \(p.stage)")
          }
          line.update(
            done: p.done, total: p.total, unit: p.stage == "fit" ? "models" : "users",
            workDone: p.total > 0 ? Double(p.done) / Double(p.total) : nil)
        }
      } catch let e as BenchCompareError {
        line.finish()
        throw CommandError(e.description)
      }
      line.finish()
      let csvPath = out + "/bench.csv"
      do {
        try report.csv.write(toFile: csvPath, atomically: true, encoding: .utf8)
      } catch {
        throw CommandError("cannot write \(csvPath): \(FileError.reason(error))")
      }
      if let trace {
        print("bench: \(trace), train \(cfg.trainDays)/\(cfg.days) of each window, \(cfg.jobs) jobs -> \(csvPath)")
      } else {
        print(
          "bench: \(cfg.users) users × \(cfg.days) days (train \(cfg.trainDays)), \(cfg.jobs) jobs, seed "
            + "\(BenchConfiguration.populationSeed) -> \(csvPath)")
      }
      print(report.table, terminator: "")
    }
  }
}
