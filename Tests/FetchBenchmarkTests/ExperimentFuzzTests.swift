import FetchSupport
@testable import FetchBenchmark
import FetchTraces
import Foundation
import Testing

/// A JSON value whose text the fuzzer controls: object members keep their
/// order (duplicates allowed) and numbers are raw text (`1e999`, `-0`, …).
indirect enum FuzzJSON {
  case object([(String, FuzzJSON)])
  case array([FuzzJSON])
  case string(String)
  case raw(String)

  /// From parsed JSON, members in file order, numbers as written.
  init(_ j: LocatedJSON) {
    switch j.value {
    case .object(let ms): self = .object(ms.map { ($0.key, FuzzJSON($0.value)) })
    case .array(let a): self = .array(a.map(FuzzJSON.init))
    case .string(let s): self = .string(s)
    case .number(let t): self = .raw(t)
    case .bool(let b): self = .raw(b ? "true" : "false")
    case .null: self = .raw("null")
    }
  }

  /// JSON text; `pretty` puts each member on its own line (errors then have
  /// distinct line numbers).
  func text(pretty: Bool, indent: String = "") -> String {
    let nl = pretty ? "\n" + indent + "  " : ""
    let end = pretty ? "\n" + indent : ""
    switch self {
    case .object(let ms):
      if ms.isEmpty { return "{}" }
      return "{" + ms.map { nl + JSONText.quoted($0.0) + ": " + $0.1.text(pretty: pretty, indent: indent + "  ") }
        .joined(separator: ",") + end + "}"
    case .array(let a):
      if a.isEmpty { return "[]" }
      return "[" + a.map { nl + $0.text(pretty: pretty, indent: indent + "  ") }.joined(separator: ",") + end + "]"
    case .string(let s): return JSONText.quoted(s)
    case .raw(let r): return r
    }
  }
}

/// The seeded generator of the fuzz suites.
struct JSONMutator {
  var rng: SplitMix64
  init(seed: UInt64) { rng = SplitMix64(seed: seed) }
  mutating func int(_ n: Int) -> Int { n <= 1 ? 0 : Int(rng.next() % UInt64(n)) }
  mutating func chance(_ p: Double) -> Bool { rng.uniform() < p }
  mutating func pick<T>(_ xs: [T]) -> T { xs[int(xs.count)] }

  static let keys = [
    "name", "datasets", "train_fraction", "apps", "world", "policies", "replications", "seed", "event_files",
    "unit_users", "trace", "synthetic", "users", "days", "params", "Name", "policy", "", "datasets ", "__proto__",
  ]

  static let numbers = [
    "0", "-0", "1", "-1", "2", "1.5", "1e3", "1E-3", "1e999", "-1e999", "1e-999", "0.75", "1.0", "0.9999999999999999",
    "9007199254740993", "18446744073709551615", "18446744073709551616", "-9223372036854775809", "1000000", "1000001",
    "10000000", "3650", "3651", "99999999999999999999999999999", "00", "01", "-", "1.", ".5", "+1", "0x10", "NaN",
    "Infinity", "1e", "2147483648",
  ]

  static let strings = [
    "", "never", "oracle", "periodic:1h", "periodic:0s", "periodic:-1h", "periodic:1e400h", "periodic:{1s,1m,1h}",
    "periodic:{15m,30m", "periodic:15m}", "{{{{}}}}", "{,}", "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}{s,t}",
    "ios-minimum:price={0.1,NaN,inf,-1}", "ios-minimum:price=1e999", "ios-custom:{1h,2h},price=0.1",
    "tailender:{1h,2h},key=value", "oracle-budget:{0,1,-1,1000000}", "imp:energy_budget_pct={0,100,1e9}",
    "silent-push:rate={-1,0,1e9}", "android-workmanager:1s", "android-standby:x=1", "top:3", "top:0", "top:-1",
    "top:99999999999999999999", "names:", "names:a,,b", "min-opens:1", "best:3", "t.csv", "missing.csv", "/", ".",
    "..", "../t.csv", "/dev/null", "/dev/zero", "t.csv\u{0}", "a\u{0}b", "\u{FEFF}", "é", "👍", "\u{D7FF}",
    String(repeating: "x", count: 5000), String(repeating: "{a,b}", count: 20), String(repeating: "{", count: 200),
    "radio.lte.tail_s", "-1", "true", "ios-custom:", "oracle-budget:", "ios-custom:,price=1", "oracle-budget:,x=1",
    "tailender:", "android-workmanager:,", "periodic:", "ios-minimum:", "imp:=", "periodic:99999999999999999999999999",
    "periodic:1e300", "ios-custom:99999999999999999999d", "tailender:{1e18,9007199254740993}",
  ]

  /// A random JSON value of any type, sometimes large or deep.
  mutating func value(depth: Int = 0) -> FuzzJSON {
    switch int(depth > 2 ? 4 : 40) {
    case 0, 1, 9...18: return .raw(pick(Self.numbers))
    case 2, 3, 19...30: return .string(pick(Self.strings))
    case 4, 31...35: return .raw(pick(["true", "false", "null"]))
    case 5, 36, 37: return .array((0..<int(4)).map { _ in value(depth: depth + 1) })
    case 6, 38, 39: return .object((0..<int(4)).map { _ in (pick(Self.keys), value(depth: depth + 1)) })
    case 7:  // deep nesting, around the parser's limit
      let n = pick([10, 255, 256, 300, 5_000])
      return .raw(String(repeating: "[", count: n) + String(repeating: "]", count: n))
    default:  // a huge array
      return .array([FuzzJSON](repeating: .string(pick(Self.strings.prefix(8).map { $0 })), count: pick([100, 1_000, 10_001])))
    }
  }

  /// Replaces, deletes, adds or duplicates a member somewhere in `j`.
  mutating func mutateTree(_ j: FuzzJSON, depth: Int = 0) -> FuzzJSON {
    switch j {
    case .object(var ms):
      if ms.isEmpty || int(3) == 0 || depth > 4 {
        switch int(5) {
        case 0: ms.append((pick(Self.keys), value()))  // unknown or repeated key
        case 1 where !ms.isEmpty: ms.remove(at: int(ms.count))  // missing key
        case 2 where !ms.isEmpty: ms.append(ms[int(ms.count)])  // duplicate key
        case 3 where !ms.isEmpty:  // a known key, a wrong type or range
          let k = int(ms.count)
          ms[k].1 = value()
        default: return value()
        }
        return .object(ms)
      }
      let k = int(ms.count)
      ms[k].1 = mutateTree(ms[k].1, depth: depth + 1)
      return .object(ms)
    case .array(var a):
      if a.isEmpty || int(3) == 0 || depth > 4 {
        switch int(4) {
        case 0: a.append(value())
        case 1 where !a.isEmpty: a.remove(at: int(a.count))
        case 2 where !a.isEmpty: a.append(a[int(a.count)])
        default: return value()
        }
        return .array(a)
      }
      let k = int(a.count)
      a[k] = mutateTree(a[k], depth: depth + 1)
      return .array(a)
    default:
      return value()
    }
  }

  static let tokens: [[UInt8]] = [
    [0x7B], [0x7D], [0x5B], [0x5D], [0x22], [0x2C], [0x3A], [0x5C], Array("\\u".utf8), Array("\\ud800".utf8),
    Array("null".utf8), Array("1e999".utf8), Array("/* */".utf8), Array("//".utf8), [0], [0xFF], [0xC3], [0xED, 0xA0, 0x80],
    [0xEF, 0xBB, 0xBF], [13], [13, 10], [10], [9], Array("\"\":".utf8),
  ]

  /// Text-level damage: truncation, stray tokens, cut or repeated ranges,
  /// flipped bytes, BOM, invalid UTF-8, NUL, CR/LF mixes.
  mutating func mutateBytes(_ b: [UInt8]) -> [UInt8] {
    var b = b
    switch int(7) {
    case 0: b.removeSubrange(int(b.count + 1)...)
    case 1: b.insert(contentsOf: pick(Self.tokens), at: int(b.count + 1))
    case 2:
      let i = int(b.count + 1), j = int(b.count + 1)
      b.removeSubrange(min(i, j)..<max(i, j))
    case 3:
      let i = int(b.count + 1), j = min(b.count, i + int(200))
      b.insert(contentsOf: b[i..<j], at: int(b.count + 1))
    case 4: if !b.isEmpty { b[int(b.count)] ^= UInt8(truncatingIfNeeded: 1 << int(8)) }
    case 5: b = [0xEF, 0xBB, 0xBF] + b
    default: b = b.flatMap { $0 == 10 && chance(0.5) ? [13, 10] : [$0] }
    }
    return b
  }
}

@Suite("Experiment file fuzzing", .serialized)
struct ExperimentFuzzTests {
  /// Valid experiments (over the golden tiny trace `t.csv`).
  static let bases = [
    """
    {"name": "resume", "datasets": [{"name": "tiny", "trace": "t.csv"},
      {"name": "syn", "synthetic": {"users": 4, "days": 2, "seed": 5, "params": {"sessionMedianSeconds": 30}}}],
     "apps": "top:2", "policies": ["never", "periodic:{30m,2h}", "oracle", "ios-minimum:price={0.1,1}"],
     "replications": 2, "seed": 9, "unit_users": 2, "train_fraction": 0.5, "event_files": false,
     "world": {"radio.lte.tail_s": 8, "content": {"rate_per_hour": 2}}}
    """,
    #"{"datasets": [{"name": "a", "trace": "t.csv"}], "policies": ["never"]}"#,
  ]

  /// Limits that do not depend on the machine.
  static let limits = ResourceLimits(maxMemoryBytes: 16e9)

  @Test("thousands of mutated experiment files: no crash, no hang, an experiment or file:line: key: message")
  func mutatedFiles() throws {
    let dir = tempDir()
    try FileManager.default.copyItem(atPath: goldenURL("tiny-trace.csv").path, toPath: dir + "/t.csv")
    let path = dir + "/e.json"
    let bases = try Self.bases.map { FuzzJSON(try LocatedJSON.parse($0, file: "base")) }
    for b in bases {
      _ = try Experiment(
        text: b.text(pretty: true), file: path, baseDirectory: dir, currentDirectory: dir, limits: Self.limits)
    }
    var m = JSONMutator(seed: 0xE4_9E21)
    var tried = 0, accepted = 0, rejected = 0, slowest = 0.0
    var kinds = Set<String>()
    let started = Date()
    for n in 0..<3_000 {
      var tree = bases[n % bases.count]
      for _ in 0...(m.chance(0.7) ? 0 : m.int(3)) { tree = m.mutateTree(tree) }
      var bytes = Array(tree.text(pretty: m.chance(0.7)).utf8)
      if m.chance(0.2) { bytes = m.mutateBytes(bytes) }
      if n % 500 == 499 { bytes = m.pick([[], Array(" ".utf8), [0], [0xEF, 0xBB, 0xBF]]) }
      try Data(bytes).write(to: URL(fileURLWithPath: path))
      let t0 = Date()
      let outcome = Result { try Experiment(contentsOf: path, currentDirectory: dir, limits: Self.limits) }
      let dt = Date().timeIntervalSince(t0)
      slowest = max(slowest, dt)
      #expect(dt < 2, "input \(n) took \(dt) s")
      tried += 1
      let lines = bytes.reduce(1) { $1 == 10 ? $0 + 1 : $0 }
      switch outcome {
      case .success(let e):
        accepted += 1
        #expect(!e.datasets.isEmpty && !e.configurations.isEmpty && e.configurations.count <= 10_000)
        #expect(e.replications >= 1 && e.unitUsers >= 1 && e.trainFraction >= 0 && e.trainFraction < 1)
        #expect(e.check(limits: Self.limits) == nil)
      case .failure(let error):
        rejected += 1
        guard let e = error as? TraceFormatError else {
          Issue.record("input \(n): not a TraceFormatError: \(error)")
          continue
        }
        #expect(e.file == path, "input \(n): \(e)")
        #expect(!e.field.isEmpty && !e.field.contains(where: \.isNewline), "input \(n): \(e)")
        #expect(e.line >= 0 && e.line <= lines, "input \(n): line \(e.line) of \(lines): \(e)")
        #expect(!e.message.isEmpty && e.description.hasPrefix(location(path, e.line, e.field)), "input \(n)")
        kinds.insert(e.field.prefix { $0 != "[" && $0 != "." } + ": " + e.message.prefix(20))
      }
    }
    print(
      "experiment file fuzz: \(tried) inputs, \(accepted) accepted, \(rejected) rejected with file:line: key, "
        + "\(kinds.count) kinds of error, slowest \(Int(slowest * 1000)) ms, \(Int(Date().timeIntervalSince(started))) s")
    #expect(tried == 3_000)
    #expect(accepted > 100 && rejected > 1_000 && kinds.count > 40, "\(kinds.sorted())")
  }

  @Test("policy strings libFuzzer found crashing PolicySpec (empty arguments, intervals beyond Int) are errors", arguments: [
    "ios-custom:", "oracle-budget:", "ios-custom:{,1h}", "oracle-budget:{,4}", "periodic:99999999999999999999999999",
    "periodic:1e300", "ios-custom:99999999999999999999d", "tailender:9007199254740993",
    "android-workmanager:999999999999999999999999h",
  ])
  func crashers(policy: String) throws {
    let e = try refusal(#"{"datasets": [{"name": "a", "trace": "t.csv"}], "policies": ["\#(policy)"]}"#)
    #expect(e.field == "policies[0]" && e.line == 1 && (e.message.contains("bad interval '") || e.message.contains("bad budget ''")), "\(e)")
  }

  @Test("the repository's experiments fit the default limits")
  func repositoryExperiments() throws {
    let experiments = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .appendingPathComponent("../../experiments").standardized.path
    for f in ["default.json", "example.json"] {
      let e = try Experiment(contentsOf: experiments + "/" + f, limits: Self.limits)
      let est = e.estimate()
      #expect(e.check(limits: Self.limits) == nil, "\(f): \(est)")
      #expect(est.outputBytes < 5e9 && est.memoryBytes < 4e9, "\(f): \(est)")
    }
  }
}

/// Parses `json` with fixed limits and returns the refusal.
func refusal(_ json: String, limits: ResourceLimits = ExperimentFuzzTests.limits) throws -> TraceFormatError {
  let dir = tempDir()
  try FileManager.default.copyItem(atPath: goldenURL("tiny-trace.csv").path, toPath: dir + "/t.csv")
  do {
    let e = try Experiment(text: json, file: dir + "/e.json", baseDirectory: dir, currentDirectory: dir, limits: limits)
    Issue.record("accepted; estimate \(e.estimate())")
    throw ExperimentError("accepted")
  } catch let e as TraceFormatError {
    return e
  }
}

@Suite("Experiment size limits")
struct ExperimentLimitTests {
  @Test("replications × policies beyond the result-cell limit: refused at 'replications'")
  func resultCells() throws {
    let e = try refusal(
      """
      {"datasets": [{"name": "a", "trace": "t.csv"}],
       "policies": ["periodic:{1h,2h}"],
       "replications": 1000000}
      """)
    #expect(e.line == 3 && e.field == "replications", "\(e)")
    #expect(e.message.contains("1 datasets × (1000000 replications + 1) × 2 policies = 2000002 result cells"), "\(e)")
    #expect(e.message.contains("over the limit of 1000000") && e.message.contains("FETCHLAB_MAX_RESULT_CELLS"), "\(e)")
  }

  @Test("users × days × policies × replications beyond the replay limit: refused")
  func policyUserDays() throws {
    let e = try refusal(
      """
      {"datasets": [{"name": "s", "synthetic": {"users": 100000, "days": 365}}],
       "policies": ["periodic:{\((1...100).map { "\($0)h" }.joined(separator: ","))}"],
       "replications": 1000, "event_files": false}
      """)
    #expect(e.field == "replications" && e.line == 3, "\(e)")
    #expect(e.message.contains("about 3.7e12 policy-user-days") && e.message.contains("limit of 1e12"), "\(e)")
  }

  @Test("huge unit_users: refused with the memory estimate, the limit and what to change")
  func memory() throws {
    let json = """
      {"datasets": [{"name": "s", "synthetic": {"users": 200000, "days": 28}}],
       "policies": ["never", "periodic:{15m,1h}", "oracle"], "replications": 3,
       "unit_users": 1000000}
      """
    let e = try refusal(json)
    #expect(e.field == "unit_users" && e.line == 3, "\(e)")
    #expect(e.message.contains("estimated peak memory") && e.message.contains("over the limit of 16 GB"), "\(e)")
    #expect(e.message.contains("smaller unit_users") && e.message.contains("\"event_files\": false"), "\(e)")
    // The same experiment in units of 64 users fits.
    let small = json.replacingOccurrences(of: "1000000", with: "64").replacingOccurrences(of: "200000", with: "2000")
    let dir = tempDir()
    let ok = try Experiment(text: small, file: dir + "/e.json", baseDirectory: dir, currentDirectory: dir, limits: ExperimentFuzzTests.limits)
    #expect(ok.estimate().memoryBytes < 4e9, "\(ok.estimate())")
  }

  @Test("event files of an absurd size: refused at 'event_files', accepted without them")
  func output() throws {
    let json = """
      {"datasets": [{"name": "s", "synthetic": {"users": 100000, "days": 28}}],
       "policies": ["periodic:{1m,5m}", "never"], "replications": 5}
      """
    let e = try refusal(json)
    #expect(e.field == "event_files" && e.line == 1, "\(e)")
    #expect(e.message.contains("estimated output") && e.message.contains("over the limit of 1 TB"), "\(e)")
    #expect(e.message.contains("set \"event_files\": false"), "\(e)")
    let dir = tempDir()
    let without = json.replacingOccurrences(of: "\"replications\": 5", with: "\"replications\": 5, \"event_files\": false")
    _ = try Experiment(text: without, file: dir + "/e.json", baseDirectory: dir, currentDirectory: dir, limits: ExperimentFuzzTests.limits)
  }

  @Test("a synthetic population of absurd size: refused at its 'users'")
  func synthetic() throws {
    let e = try refusal(
      """
      {"datasets": [
        {"name": "s",
         "synthetic": {"days": 3650,
                       "users": 10000000}}],
       "policies": ["never"]}
      """)
    #expect(e.field == "datasets[0].synthetic.users" && e.line == 4, "\(e)")
    #expect(e.message.contains("10000000 users × 3650 days would write about 481.8 TB of trace"), "\(e)")
    var tight = ExperimentFuzzTests.limits
    tight.maxMemoryBytes = 1e8
    let m = try refusal(#"{"datasets": [{"name": "s", "synthetic": {"users": 100, "days": 3650}}], "policies": ["never"]}"#, limits: tight)
    #expect(m.field == "datasets[0].synthetic.users" && m.message.contains("of memory to generate"), "\(m)")
  }

  @Test("deep brace nesting, over-long policy strings and oversized files are refused")
  func policyStrings() throws {
    let deep = String(repeating: "{", count: 100) + "a" + String(repeating: "}", count: 100)
    let a = try refusal(#"{"datasets": [{"name": "a", "trace": "t.csv"}], "policies": ["\#(deep)"]}"#)
    #expect(a.field == "policies[0]" && a.message.contains("more than 64 brace groups"), "\(a)")
    let chained = String(repeating: "{a}", count: 100)
    let b = try refusal(#"{"datasets": [{"name": "a", "trace": "t.csv"}], "policies": ["\#(chained)"]}"#)
    #expect(b.field == "policies[0]" && b.message.contains("brace groups"), "\(b)")
    let long = String(repeating: "x", count: 5_000)
    let c = try refusal(#"{"datasets": [{"name": "a", "trace": "t.csv"}], "policies": ["\#(long)"]}"#)
    #expect(c.field == "policies[0]" && c.message.contains("longer than 4096 bytes"), "\(c)")
    let path = tempDir() + "/big.json"
    try Data(count: Experiment.maxFileBytes + 1).write(to: URL(fileURLWithPath: path))
    do {
      _ = try Experiment(contentsOf: path)
      Issue.record("a 4 MiB file was accepted")
    } catch let e as TraceFormatError {
      #expect(e.file == path && e.message.contains("larger than 4194304 bytes"), "\(e)")
    }
  }
}

/// The location prefix of a ``TraceFormatError`` description:
/// `file:line: field: `, without `line` when 0 and without `field` when `-`.
func location(_ file: String, _ line: Int, _ field: String) -> String {
  (line > 0 ? "\(file):\(line): " : "\(file): ") + (field == "-" ? "" : "\(field): ")
}
