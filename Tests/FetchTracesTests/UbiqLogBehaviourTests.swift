import Foundation
import Testing
import FetchTestSupport

@testable import FetchTraces

/// `YYYY-MM-DD HH:MM:SS` of wall-clock seconds since 1970.
private func wall(_ t: Int64) -> String {
  let day = Int(UbiqLogAdapter.floorDiv(t, 86_400))
  let s = Int(t - Int64(day) * 86_400)
  let c = CivilDate.civil(fromDays: day)
  func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
  return "\(c.year)-\(two(c.month))-\(two(c.day)) \(two(s / 3600)):\(two(s / 60 % 60)):\(two(s % 60))"
}

/// Options with no name rules at all, so only the behavioural cues decide.
private func cuesOnly(_ filter: UbiqLogBehaviouralFilter?) -> UbiqLogAdapter.Options {
  var o = UbiqLogAdapter.Options(
    maximumIdleDays: 0, dropSecondaryProcesses: false, dropSubstrings: [], keepAppNames: [], dropPrefixes: [])
  o.behaviouralFilter = filter
  return o
}

@Suite("UbiqLog behavioural filter")
struct UbiqLogBehaviourTests {
  /// Two days of one participant: a service logged for 120 s every 300 s, a
  /// settings-like process started 25 times with the service, a reader
  /// opened 30 times at the user's own times, and a process started 5 times
  /// with the service (too few records to judge). None has a telling name.
  static func fixture() -> String {
    let t0 = Int64(CivilDate.days(year: 2014, month: 3, day: 1)) * 86_400
    var rows: [(Int64, String, Int64)] = []  // start, process, length
    for i in 0..<(2 * 288) { rows.append((t0 + 300 * Int64(i), "net.example.heartbeatd", 120)) }
    for k in 0..<25 { rows.append((t0 + 300 * 7 * Int64(k), "org.example.prefs", 10)) }
    for k in 0..<30 { rows.append((t0 + 3000 * Int64(k) + 137, "org.example.reader", 60)) }
    for k in 0..<5 { rows.append((t0 + 300 * 11 * Int64(k), "org.example.rare", 10)) }
    rows.sort { ($0.0, $0.1) < ($1.0, $1.1) }
    return "user_dir\tprocess_name\tstart_local\tend_local\tduration_s\n"
      + rows.map { "P\t\($0.1)\t\(wall($0.0))\t\(wall($0.0 + $0.2))\t\($0.2)\n" }.joined()
  }

  @Test("a service and a process started with it are dropped whatever their names; the user's app and a rare one stay")
  func fixtureCues() throws {
    let path = tempFile(Self.fixture(), name: "ubiqlog.tsv")
    let plain = try UbiqLogAdapter(options: cuesOnly(nil)).read(path: path)
    #expect(Set(plain.users[0].apps) == ["net.example.heartbeatd", "org.example.prefs", "org.example.reader", "org.example.rare"])
    let out = try UbiqLogAdapter(options: cuesOnly(UbiqLogBehaviouralFilter())).read(path: path)
    #expect(Set(out.users[0].apps) == ["org.example.reader", "org.example.rare"])
    #expect(out.behaviourDrops.map(\.process) == ["net.example.heartbeatd", "org.example.prefs"])
    #expect(out.behaviourDrops[0].reason.hasPrefix("always running (100 %"))
    #expect(out.behaviourDrops[1].reason.hasPrefix("starts in lockstep"))
    #expect(out.behaviourDrops.map(\.records) == [576, 25])
    #expect(out.droppedByBehaviour == 576 + 25)
    #expect(out.keptRecords == 30 + 5)
    #expect(out.users[0].events.count == 35)
    // With the name rules back on, names and cues combine; the bundled default (no filter) is unchanged.
    var named = UbiqLogAdapter.Options()
    named.behaviouralFilter = UbiqLogBehaviouralFilter()
    #expect(try UbiqLogAdapter(options: named).read(path: path).users[0].apps.sorted() == ["org.example.rare", "org.example.reader"])
    #expect(UbiqLogAdapter.Options().commentLines.allSatisfy { !$0.contains("behavioural") })
  }

  @Test("the cues by hand: coverage of logged bins, lockstep share, the record floor")
  func cueValues() {
    var f = UbiqLogBehaviouralFilter()
    f.minimumRecords = 2
    // Bins of 900 s. App 0 touches bins 0–3 (4 of 4 logged), app 1 starts with it twice and once alone,
    // app 2 once with it.
    let records: [(start: Int64, end: Int64, app: Int32)] = [
      (0, 100, 0), (1000, 1100, 0), (2000, 2100, 0), (3000, 3100, 0),
      (1001, 1010, 1), (2000, 2010, 1), (2500, 2510, 1),
      (3000, 3005, 2),
    ]
    let c = f.cues(records: records, appCount: 3, mergeGap: 60)
    #expect(c.map(\.coverage) == [1, 0.5, 0.25])
    #expect(c.map(\.records) == [4, 3, 1])
    #expect(c[0].reason != nil && c[0].lockstep == 0)
    #expect(abs(c[1].lockstep - 2.0 / 3) < 1e-12 && c[1].reason == nil)
    #expect(c[2].lockstep == 1 && c[2].reason == nil)  // lockstep, but below the record floor
    f.lockstepShare = 0.6
    #expect(f.cues(records: records, appCount: 3, mergeGap: 60)[1].reason != nil)
    f.lockstepToleranceSeconds = 0
    #expect(f.cues(records: records, appCount: 3, mergeGap: 60)[1].lockstep == 1.0 / 3)
    #expect(UbiqLogBehaviouralFilter().problem == nil)
    f.alwaysRunningCoverage = 0
    #expect(f.problem != nil)
  }

  /// The UbiqLog input (not in a clone): `FETCHLAB_UBIQLOG_TSV`, else the
  /// copy next to the package, as in `UbiqLogAdapterTests`.
  static let fullDataPath: String = ProcessInfo.processInfo.environment["FETCHLAB_UBIQLOG_TSV"]
    ?? UbiqLogAdapterTests.fullDataPath

  /// Participants held out of the tuning: every third in file order (8 of 24).
  static func heldOut(_ ids: [String]) -> Set<String> {
    Set(ids.enumerated().filter { $0.offset % 3 == 2 }.map(\.element))
  }

  /// Generalisation, judged against the name rules on the 8 held-out
  /// participants with **no name list**: the cues must catch most records of processes the name rules call
  /// background, drop few of the apps' records, cut the background
  /// processes among each participant's top 5 by at least 40 % (29 → 15), and do no worse on the
  /// held-out participants than on the tuning ones (recall −0.1, false drops +0.05).
  @Test(.enabled(
    if: FileManager.default.fileExists(atPath: UbiqLogBehaviourTests.fullDataPath),
    "skipped: the UbiqLog input file was not found (set FETCHLAB_UBIQLOG_TSV)"))
  func behaviouralCuesGeneraliseToHeldOutParticipants() throws {
    let out = try UbiqLogAdapter(options: cuesOnly(UbiqLogBehaviouralFilter())).read(path: Self.fullDataPath)
    let names = UbiqLogAdapter.Options()
    // (participant, process) → (merged records, dropped by the cues)
    var table: [String: [(process: String, records: Int, flagged: Bool)]] = [:]
    var order: [String] = []
    for u in out.users {
      order.append(u.user)
      var counts = [Int](repeating: 0, count: u.apps.count)
      for e in u.events { counts[Int(e.app)] += 1 }
      table[u.user, default: []] += zip(u.apps, counts).map { ($0, $1, false) }
    }
    for d in out.behaviourDrops { table[d.participant, default: []].append((d.process, d.records, true)) }
    #expect(order.count == 24)
    let held = Self.heldOut(order)
    func score(_ users: [String]) -> (recall: Double, falseDrops: Double) {
      var tp = 0, fn = 0, fp = 0, tn = 0
      for u in users {
        for r in table[u]! where r.records >= UbiqLogBehaviouralFilter().minimumRecords {
          switch (names.keeps(process: r.process), r.flagged) {
          case (false, true): tp += r.records
          case (false, false): fn += r.records
          case (true, true): fp += r.records
          case (true, false): tn += r.records
          }
        }
      }
      return (Double(tp) / Double(tp + fn), Double(fp) / Double(fp + tn))
    }
    let tuning = score(order.filter { !held.contains($0) })
    let test = score(order.filter { held.contains($0) })
    print("UbiqLog cues, recall / false drops: tuning \(tuning), held out \(test)")
    #expect(test.recall >= 0.65, "held-out recall \(test.recall)")
    #expect(test.falseDrops <= 0.10, "held-out false drops \(test.falseDrops)")
    #expect(test.recall >= tuning.recall - 0.1, "held-out \(test) vs tuning \(tuning)")
    #expect(test.falseDrops <= tuning.falseDrops + 0.05, "held-out \(test) vs tuning \(tuning)")
    // Top-5 processes of each held-out participant that the name rules call background.
    func backgroundInTop5(flaggedToo: Bool) -> Int {
      held.reduce(0) { n, u in
        let top = table[u]!.filter { flaggedToo || !$0.flagged }.sorted { ($0.records, $0.process) > ($1.records, $1.process) }
          .prefix(5)
        return n + top.filter { !names.keeps(process: $0.process) }.count
      }
    }
    let before = backgroundInTop5(flaggedToo: true), after = backgroundInTop5(flaggedToo: false)
    #expect(after * 10 <= before * 6, "background processes in the held-out top 5s: \(before) without the cues, \(after) with")
  }
}
