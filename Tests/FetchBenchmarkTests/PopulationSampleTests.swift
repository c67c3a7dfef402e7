import FetchModels
import FetchSimulation
import FetchSupport
import FetchTestSupport
import FetchTraces
import Foundation
import Testing

@testable import FetchBenchmark

/// The population pass reads in full only the users that can enter the
/// sample (``fitPopulationHashed(_:limits:)``).
@Suite("Population sample")
struct PopulationSampleTests {
  /// 40 synthetic users of 4 days, as text lines (header first), renamed
  /// `p<k>-<i>`: the population's ids `u00001`, `u00002`, … hash in
  /// nearly increasing order, so the sample would fill with the first
  /// users and none would enter it later.
  static func traceLines() throws -> [String] {
    let path = Scratch.directory("population") + "/synthetic.csv"
    try SyntheticPopulation(seed: 29, days: 4).write(to: path, users: 40)
    let text = try String(contentsOfFile: path, encoding: .utf8)
    return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.hasPrefix("#") }
      .map { line in
        guard line.hasPrefix("u"), let comma = line.firstIndex(of: ","), let i = Int(line.dropFirst().prefix(while: \.isNumber))
        else { return line }
        return "p\(i * 17 % 40)-\(i)" + line[comma...]
      }
  }

  static func config(_ path: String, sample: Int, jobs: Int) throws -> RunConfiguration {
    var c = RunConfiguration(
      tracePath: path, policies: [try PolicySpec(parsing: "ios-minimum")], jobs: jobs, trainFraction: 0.5,
      populationUsers: sample)
    c.readChunkBytes = 20_000  // several chunks a run with 2 jobs
    return c
  }

  /// The users a sequential pass keeps, as the documented rule says: the
  /// `sample` smallest id hashes; for each user in file order, whether the
  /// sample was full with a largest hash not above the user's before it
  /// (the pass need not read it).
  static func sample(_ users: [UserTrace], _ sample: Int) -> (kept: [UserTrace], passable: [Bool]) {
    var kept: [UserTrace] = []
    var passable: [Bool] = []
    for u in users {
      let h = StableHash.fnv1a(u.user)
      passable.append(kept.count == sample && StableHash.fnv1a(kept.last!.user) <= h)
      kept.append(u)
      kept.sort { StableHash.fnv1a($0.user) < StableHash.fnv1a($1.user) }
      if kept.count > sample { kept.removeLast() }
    }
    return (kept, passable)
  }

  @Test("users that cannot enter the sample are passed over; the model is the fit of the sample, for any jobs")
  func sameModel() throws {
    let path = Scratch.directory("population") + "/t.csv"
    try Self.traceLines().joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
    var users: [UserTrace] = []
    let reader = try TraceReader(path: path)
    while let u = try reader.next() { users.append(u) }
    for sample in [1, 4, 12, 40] {
      let (kept, passable) = Self.sample(users, sample)
      let config = try Self.config(path, sample: sample, jobs: 1)
      let samples = kept.flatMap { u in
        let train = splitForRun(u, config).train
        return config.apps.select(in: u).map { HabitSample(trace: train, app: $0, from: train.start, to: train.end) }
      }
      let want = try HabitFitter().fitPopulation(samples)
      for jobs in [1, 2] {
        let got = try fitPopulationHashed(try Self.config(path, sample: sample, jobs: jobs), limits: .current)
        #expect(got.models.habit == want, "a sample of \(sample), \(jobs) jobs")
        #expect(got.sha256 == (try SHA256.hashFile(atPath: path)).hex)
        // One job reads exactly the users the rule cannot pass over; two
        // may read more (a worker can see the bound late), never fewer.
        let needed = passable.filter { !$0 }.count
        #expect(jobs == 1 ? got.usersRead == needed : got.usersRead >= needed && got.usersRead <= 40)
      }
      if sample == 4 { #expect(passable.filter { $0 }.count > 20, "most users passed over") }
    }
  }

  @Test("an error in a user passed over: the population pass reports the file's first error, the replay pass finds it alone")
  func firstError() throws {
    var lines = try Self.traceLines()
    let path = Scratch.directory("population") + "/errors.csv"
    try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
    var users: [UserTrace] = []
    let reader = try TraceReader(path: path)
    while let u = try reader.next() { users.append(u) }
    let sample = 4
    let passable = Self.sample(users, sample).passable
    // A user passed over, and after it one read in full (a candidate then).
    let skipped = try #require(passable.firstIndex(of: true))
    let entering = try #require(users.indices.first { i in i > skipped && !passable[i] })
    // A row of an app open inside each (the line after its begin row).
    func openRow(_ user: String) throws -> Int {
      try #require(lines.firstIndex { $0.hasPrefix(user + ",") && $0.contains(",open,") })
    }
    let a = try openRow(users[skipped].user)
    let b = try openRow(users[entering].user)
    lines[b] = lines[b].replacingOccurrences(of: ",open,", with: ",opne,")
    try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
    // Only the later error: the population pass reports it.
    for jobs in [1, 2] {
      #expect(throws: TraceFormatError.self) { try fitPopulationHashed(try Self.config(path, sample: sample, jobs: jobs), limits: .current) }
    }
    // The earlier error too, in the user passed over: reported first, as a full read does.
    lines[a] = lines[a].replacingOccurrences(of: ",open,", with: ",opne,")
    try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
    for jobs in [1, 2] {
      let e = try #require(throws: TraceFormatError.self) {
        try fitPopulationHashed(try Self.config(path, sample: sample, jobs: jobs), limits: .current)
      }
      #expect(e.line == a + 1 && e.field == "event", "\(jobs) jobs: \(e)")
    }
    // Only the error in the user passed over: the population pass does
    // not see it; the replay reports it.
    lines[b] = lines[b].replacingOccurrences(of: ",opne,", with: ",open,")
    try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
    let config = try Self.config(path, sample: sample, jobs: 1)
    #expect(try fitPopulationHashed(config, limits: .current).models.habit != nil)
    var sink = CountingSink()
    let e = try #require(throws: TraceFormatError.self) { try runReplay(config, into: &sink) }
    #expect(e.line == a + 1 && e.field == "event", "\(e)")
  }

  @Test("the population device models come from the sampled training parts only, and the planner's shrink toward them")
  func populationDeviceModels() throws {
    let dir = Scratch.directory("population-device")
    let path = dir + "/t.csv"
    try Self.traceLines().joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
    let config = try Self.config(path, sample: 12, jobs: 1)
    let models = try fitPopulationHashed(config, limits: .current).models
    let population = try #require(models.device)
    #expect(population.plugged != nil && population.wifi != nil && population.offline != nil)
    // The same trace without any network or charging row in the scored parts.
    let reader = try TraceReader(path: path)
    let writer = try TraceWriter(path: dir + "/scored-parts-cut.csv")
    var users: [UserTrace] = []
    while var u = try reader.next() {
      users.append(u)
      let split = splitForRun(u, config).train.end
      u.events.removeAll { $0.time >= split && [.network, .chargeStart, .chargeEnd].contains($0.kind) }
      try writer.write(u)
    }
    try writer.commit()
    let cut = try fitPopulationHashed(try Self.config(dir + "/scored-parts-cut.csv", sample: 12, jobs: 1), limits: .current)
    #expect(cut.models.device == population)
    // A user's own models move toward the population's.
    let train = splitForRun(try #require(users.first), config).train
    let own = try #require(PlannerPolicy.fitDeviceModels(train))
    let shrunk = try #require(PlannerPolicy.fitDeviceModels(train, population: population))
    let distance = { (m: DeviceModels) in
      zip(try! #require(m.wifi).coefficients, population.wifi!.coefficients).map { ($0 - $1) * ($0 - $1) }.reduce(0, +)
    }
    #expect(distance(shrunk) < distance(own), "\(distance(shrunk)) against \(distance(own))")
  }
}
