import FetchBenchmark
import FetchModels
import FetchSimulation
import FetchSupport
import FetchTestSupport
import FetchTraces
import FetchWorld
import Foundation
import Testing

/// One policy of every family (fuzz `run`, not only `validate`).
let everyPolicyFamily = [
  "never", "periodic:15m", "oracle", "oracle-budget:4", "oracle-budget:50J", "ios-minimum", "ios-custom:1h",
  "silent-push", "android-workmanager:15m", "android-standby", "tailender:30m", "imp",
]

/// Counts what a replay hands over.
struct CountingSink: RunSink {
  var users = 0
  var replays = 0
  mutating func consume(_ r: UserResult, config: RunConfiguration) throws {
    users += 1
    replays += r.replays.reduce(0) { $0 + $1.count }
    for a in r.replays {
      for x in a { precondition(x.summary.opens >= 0, "negative opens") }
    }
  }
}

/// Random traces that the reader mostly accepts: windows from 1 ms to weeks
/// (some outside plausible dates or far too long), opens, network,
/// battery, charging, wake and update rows, at random times in the window.
struct RunFuzzer {
  var rng: SplitMix64

  mutating func int(_ n: Int) -> Int { n <= 1 ? 0 : Int(rng.next() % UInt64(n)) }
  mutating func pick<T>(_ xs: [T]) -> T { xs[int(xs.count)] }

  mutating func trace() -> String {
    var s = "user,time,event,app,value\n"
    for u in 0..<(1 + int(3)) {
      let start: Double = pick([0.0, 1_767_571_200, 1_000_000_000, Double(int(2_000_000_000)), 4_102_444_000])
      let length: Double = pick([0.001, 1, 600, 3_600, 86_400, 3 * 86_400, 14 * 86_400, 1e9, Double(int(400_000))])
      let end = start + length
      let user = "u\(u)"
      s += "\(user),\(CSV.number(start)),begin,,\(pick(["UTC", "+05:30", "-08:00", "Europe/Berlin"]))\n"
      var times = (0..<int(40)).map { _ in start + length * Double(int(1_000_001)) / 1_000_000 }
      times.sort()
      for t in times {
        let tt = CSV.number(t, decimals: 3)
        switch int(8) {
        case 0, 1, 2: s += "\(user),\(tt),open,\(pick(["news", "mail", "chat"])),\(int(600))\n"
        case 3: s += "\(user),\(tt),network,,\(pick(["wifi", "lte", "3g", "5g", "offline", "cellular"]))\n"
        case 4: s += "\(user),\(tt),battery,,\(int(101))\n"
        case 5: s += "\(user),\(tt),\(pick(["charge_start", "charge_end"])),,\n"
        case 6: s += "\(user),\(tt),update,\(pick(["news", "mail"])),\n"
        default: s += "\(user),\(tt),wake,,\(int(30))\n"
        }
      }
      s += "\(user),\(CSV.number(end, decimals: 3)),end,,\n"
    }
    return s
  }

  /// 0–3 world-parameter overrides within (and sometimes at the edges of)
  /// their ranges, as `--set` would apply them; returns the names set.
  mutating func world(_ w: inout WorldParameters) -> [String] {
    var names: [String] = []
    for _ in 0..<int(4) {
      if int(4) == 0 {
        let v = pick([0.0, 0.5, 60, 1e6, 1e7])
        if w.set(WorldParameters.appRatePrefix + pick(["news", "mail"]), to: .number(v)) == nil { names.append("app_rate=\(v)") }
        continue
      }
      let p = pick(WorldParameters.registry)
      let value: ParameterValue =
        switch p.value(in: w) {
        case .flag: .flag(int(2) == 0)
        case .word: .word(pick(["lte", "3g", "5g", "wifi", "offline", "model", "trace", "auto", "poisson", "diurnal"]))
        case .number: .number(pick([0, 1e-3, 0.5, 1, 10, 100, 3_600, 1e6, 1e12]))
        }
      if w.set(p.name, to: value) == nil { names.append("\(p.name)=\(value)") }
    }
    return names
  }
}

@Suite("run fuzzing")
struct RunFuzzTests {
  @Test("random traces × every policy family × world overrides: results or a located refusal, never a crash or hang")
  func fuzzRun() throws {
    let dir = Scratch.directory("run-fuzz")
    var f = RunFuzzer(rng: SplitMix64(seed: 0x11_2026))
    let limits = ResourceLimits(maxEventsPerUser: 200_000)
    var ran = 0, refused = 0, replays = 0, overrides = 0
    var families = Set<String>()
    let t0 = Date()
    for i in 0..<240 {
      let path = dir + "/t\(i).csv"
      try f.trace().write(toFile: path, atomically: false, encoding: .utf8)
      var world = WorldParameters()
      overrides += f.world(&world).count
      let names = (0..<(1 + f.int(3))).map { _ in f.pick(everyPolicyFamily) }
      for n in names { families.insert(n) }
      let specs = try names.map { try PolicySpec(parsing: $0) }
      let config = RunConfiguration(
        tracePath: path, policies: specs, seed: UInt64(i), world: world, apps: .top(2), recordEvents: f.int(2) == 0,
        jobs: 1, trainFraction: specs.contains(where: \.learns) ? 0.5 : 0)
      var sink = CountingSink()
      do {
        try runReplay(config, into: &sink, limits: limits)
        ran += 1
        replays += sink.replays
      } catch let e as TraceFormatError {
        refused += 1
        #expect(e.file == path && e.line > 0 && !e.message.isEmpty, "\(e)")
      }
    }
    print("run fuzzing: \(ran) runs replayed (\(replays) app × policy replays), \(refused) refused with a located message, "
      + "\(families.count) policy families, \(overrides) world overrides, \(CSV.number(Date().timeIntervalSince(t0), decimals: 1)) s")
    #expect(families.count == everyPolicyFamily.count)
    #expect(ran >= 100 && refused >= 10)
  }
}
