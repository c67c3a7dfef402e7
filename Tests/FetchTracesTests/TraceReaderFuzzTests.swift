import FetchSupport
import Foundation
import Testing

@testable import FetchTraces

/// Hostile-input generation for the fuzz suites: valid inputs mutated by a
/// seeded ``SplitMix64``, so every failure reproduces from its seed and index.
struct Mutator {
  var rng: SplitMix64

  init(seed: UInt64) { rng = SplitMix64(seed: seed) }

  mutating func int(_ n: Int) -> Int { n <= 1 ? 0 : Int(rng.next() % UInt64(n)) }
  mutating func chance(_ p: Double) -> Bool { rng.uniform() < p }
  mutating func pick<T>(_ xs: [T]) -> T { xs[int(xs.count)] }

  /// Numbers and words that break parsers: non-finite, huge, negative,
  /// locale forms, quotes, separators, control characters, non-ASCII digits.
  static let hostileValues: [String] = [
    "", "NaN", "nan", "inf", "-inf", "Infinity", "1e308", "1e309", "-1e309", "1e-400", "-1", "-0", "0", "-0.0",
    "99999999999999999999999", "9007199254740993", "18446744073709551616", "0x1p3", "1,5", "1.2.3", ".", "-", "+1",
    " 1", "1 ", "1e", "e5", "٣", "１", "\"", "\"\"", "\"a,b\"", "\"unterminated", "a\"b", "\u{0}", "x\u{0}y", "\r",
    "é", "👍", "UTC", "+01:00", "+99:99", "-14:00", "+14:59", "Europe/Vienna", "Mars/Olympus", "../../etc/passwd",
    "GMT+5", "open", "begin", "end", "wifi", "5g", "offline", "satellite", String(repeating: "9", count: 400),
    String(repeating: "a", count: 3000), "1767571200", "1767657600.5", "-1767571200", "1e11", "99999999999",
    "86400", "86400.0001", "100", "100.5", "54.5",
  ]

  /// Byte sequences that break decoders: NUL, invalid and overlong UTF-8,
  /// lone surrogates, BOM, quotes, separators, line endings.
  static let hostileBytes: [[UInt8]] = [
    [0], [0xFF], [0xFE, 0xFF], [0xC3], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xEF, 0xBB, 0xBF],
    [34], [44], [13], [10], [13, 10], [10, 13], [34, 34], [44, 44], [35], [0x7F], [9],
  ]

  /// Lines split at LF (each without its LF).
  static func lines(_ b: [UInt8]) -> [[UInt8]] {
    b.withUnsafeBufferPointer { p in
      var out: [[UInt8]] = []
      var from = 0
      while let base = p.baseAddress, from <= p.count {
        let rest = p.count - from
        if let hit = memchr(base + from, 10, rest) {
          let at = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
          out.append(Array(p[from..<at]))
          from = at + 1
        } else {
          out.append(Array(p[from...]))
          break
        }
      }
      return out
    }
  }

  /// `ls` joined with LF (no final LF), by block copies.
  static func join(_ ls: [[UInt8]]) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(ls.reduce(ls.count) { $0 + $1.count })
    for (k, l) in ls.enumerated() {
      if k > 0 { out.append(10) }
      out.append(contentsOf: l)
    }
    return out
  }

  static func fields(_ l: [UInt8]) -> [[UInt8]] {
    l.split(separator: 44, omittingEmptySubsequences: false).map(Array.init)
  }

  static func joinFields(_ f: [[UInt8]]) -> [UInt8] {
    var out: [UInt8] = []
    for (k, x) in f.enumerated() {
      if k > 0 { out.append(44) }
      out.append(contentsOf: x)
    }
    return out
  }
}

extension Mutator {
  /// One to five mutations of a valid trace given as lines (or, rarely, an
  /// extreme file).
  mutating func mutateTrace(_ base: [[UInt8]]) -> [UInt8] {
    switch int(200) {
    case 0: return []
    case 1: return Array(traceHeader.utf8)
    case 2: return Array(traceHeader.utf8) + [10] + [UInt8](repeating: 10, count: int(5000))
    case 3: return (0..<int(2000)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    default: break
    }
    var ls = base
    var prefix: [UInt8] = []
    for _ in 0...int(4) { mutateTraceOnce(&ls, prefix: &prefix) }
    return prefix + Mutator.join(ls)
  }

  mutating func mutateTraceOnce(_ ls: inout [[UInt8]], prefix: inout [UInt8]) {
    if ls.isEmpty { ls = [[]] }
    let i = int(ls.count)
    let short = ls[i].count < 4_096  // split only ordinary lines into fields
    switch int(16) {
    case 0:  // truncate at a random byte
      ls.removeSubrange((i + 1)...)
      ls[i].removeSubrange(int(ls[i].count + 1)...)
    case 1:  // drop a line
      ls.remove(at: i)
    case 2:  // duplicate a line (duplicate events, a second begin/end)
      ls.insert(ls[i], at: i)
    case 3:  // swap two lines (unsorted times, rows before begin)
      ls.swapAt(i, int(ls.count))
    case 4 where short, 5 where short, 6 where short:  // a field replaced by a hostile value
      var f = Mutator.fields(ls[i])
      f[int(f.count)] = Array(pick(Mutator.hostileValues).utf8)
      ls[i] = Mutator.joinFields(f)
    case 7:  // a field too many or too few
      if chance(0.5) {
        ls[i] += Array(",\(pick(Mutator.hostileValues))".utf8)
      } else if let c = ls[i].lastIndex(of: 44) {
        ls[i].removeSubrange(c...)
      }
    case 8:  // hostile bytes inserted anywhere (a LF or CR splits the line)
      ls[i].insert(contentsOf: pick(Mutator.hostileBytes), at: int(ls[i].count + 1))
    case 9:  // a byte flipped
      guard !ls[i].isEmpty else { break }
      ls[i][int(ls[i].count)] ^= UInt8(truncatingIfNeeded: 1 << int(8))
    case 10:  // CRLF and lone CR line endings
      for k in ls.indices where chance(0.3) { ls[k].append(13) }
      if chance(0.2) { ls = [Array(ls.joined(separator: [13]))] }
    case 11:  // a byte order mark
      prefix = [0xEF, 0xBB, 0xBF]
    case 12:  // a long line (up to 64 kB; the 10 MB line has its own test)
      ls[i] += [UInt8](repeating: pick([UInt8(ascii: "x"), 44, 34, 48]), count: 1 + int(65_536))
    case 13:  // a run of lines copied to the end (a split user, repeated rows)
      let j = int(ls.count)
      ls.append(contentsOf: ls[min(i, j)..<max(i, j)])
    case 14 where short:  // quote a field, or its start only
      var f = Mutator.fields(ls[i])
      let k = int(f.count)
      f[k] = chance(0.5) ? [34] + f[k] + [34] : [34] + f[k]
      ls[i] = Mutator.joinFields(f)
    case 15 where short:  // an event name or user replaced
      var f = Mutator.fields(ls[i])
      guard f.count == 5 else { break }
      let events = ["begin", "end", "open", "wake", "battery", "charge_start", "charge_end", "network", "update", "Open"]
      if chance(0.5) { f[2] = Array(pick(events).utf8) } else { f[0] = Array(pick(["u1", "u2", "a", "", "#"]).utf8) }
      ls[i] = Mutator.joinFields(f)
    default:
      break
    }
  }
}

/// Writes `bytes` to `path` (replacing it), without syncing.
func writeBytes(_ bytes: [UInt8], to path: String) throws {
  guard let f = fopen(path, "wb") else { throw CocoaError(.fileWriteUnknown) }
  defer { fclose(f) }
  guard bytes.withUnsafeBufferPointer({ fwrite($0.baseAddress, 1, $0.count, f) }) == bytes.count else {
    throw CocoaError(.fileWriteUnknown)
  }
}

/// The columns an error may name.
let traceFields: Set<String> = ["-", "user", "time", "event", "app", "value"]

/// Reads `path` to the end; returns the users, or the error.
func readOutcome(_ path: String, limits: ResourceLimits = .current) -> Result<[UserTrace], Error> {
  Result {
    let r = try TraceReader(path: path, limits: limits)
    var out: [UserTrace] = []
    while let u = try r.next() { out.append(u) }
    return out
  }
}

@Suite("Trace reader fuzzing", .serialized)
struct TraceReaderFuzzTests {
  /// Valid starting points: the reader tests' trace and a synthetic one.
  static func bases() throws -> [[UInt8]] {
    let synthetic = tempFile("", name: "synthetic.csv")
    let pop = SyntheticPopulation(seed: 11, days: 1)
    try pop.write(to: synthetic, users: 2)
    let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: synthetic)))
    // Keep the synthetic trace short: the header and two users' first rows.
    var ls = Mutator.lines(bytes)
    let header = ls.firstIndex { $0.elementsEqual(traceHeader.utf8) } ?? 0
    var kept = Array(ls[..<(header + 1)])
    ls = Array(ls[(header + 1)...])
    for user in ["u00001", "u00002"] {
      let rows = ls.filter { $0.starts(with: Array((user + ",").utf8)) }
      kept += rows.prefix(60) + [Array("\(user),1800000000,end,,".utf8)]
    }
    return [Array(TraceReaderTests.good.utf8), Mutator.join(kept) + [10], Array(smallCRLF.utf8)]
  }

  static let smallCRLF = "user,time,event,app,value\r\nu1,10,begin,,UTC\r\nu1,11,open,\"a \"\"b\"\"\",1\r\nu1,20,end,,"

  @Test("thousands of mutated traces: no crash, no hang, users or file:line: field: message")
  func mutatedTraces() throws {
    let bases = try Self.bases()
    let baseLines = bases.map(Mutator.lines)
    for b in bases { if case .failure(let e) = readOutcome(tempFile(String(decoding: b, as: UTF8.self))) { Issue.record("base does not parse: \(e)") } }
    let path = tempFile("", name: "fuzz.csv")
    let back = tempFile("", name: "back.csv")
    var m = Mutator(seed: 0xF0CC_7ACE)
    var tried = 0, accepted = 0, rejected = 0
    var slowest = 0.0
    var messages: [String: Int] = [:]
    let started = Date()
    for n in 0..<4_000 {
      let input = m.mutateTrace(baseLines[n % bases.count])
      try writeBytes(input, to: path)
      let t0 = Date()
      let outcome = readOutcome(path)
      let dt = Date().timeIntervalSince(t0)
      slowest = max(slowest, dt)
      #expect(dt < 2, "input \(n) took \(dt) s")
      tried += 1
      let physicalLines = input.reduce(1) { $1 == 10 ? $0 + 1 : $0 }
      switch outcome {
      case .success(let users):
        accepted += 1
        for u in users {
          u._checkInvariants()
          #expect(u.events.allSatisfy { $0.time.isFinite && $0.value.isFinite && $0.time >= u.start && $0.time <= u.end })
        }
        // What was accepted round-trips through the writer exactly
        // (every 4th: the writer syncs to disk).
        guard accepted % 4 == 0 else { continue }
        let w = try TraceWriter(path: back)
        for u in users { try w.write(u) }
        try w.commit()
        #expect(try readAll(back) == users, "input \(n)")
      case .failure(let error):
        rejected += 1
        guard let e = error as? TraceFormatError else {
          Issue.record("input \(n): not a TraceFormatError: \(error)")
          continue
        }
        #expect(e.file == path, "input \(n): \(e)")
        #expect(traceFields.contains(e.field), "input \(n): \(e)")
        #expect(e.line >= 0 && e.line <= physicalLines, "input \(n): line \(e.line) of \(physicalLines): \(e)")
        #expect(e.field == "-" || e.line >= 1, "input \(n): \(e)")
        #expect(!e.message.isEmpty && e.description.hasPrefix(location(path, e.line, e.field)))
        let key = e.field + ": " + e.message.prefix(24)
        messages[key, default: 0] += 1
      }
    }
    let elapsed = Date().timeIntervalSince(started)
    print(
      "trace reader fuzz: \(tried) inputs, \(accepted) accepted, \(rejected) rejected with file:line: field, "
        + "\(messages.count) kinds of error, slowest \(Int(slowest * 1000)) ms, \(Int(elapsed)) s")
    #expect(tried == 4_000)
    // The mutations must reach both outcomes and many distinct checks.
    #expect(accepted > 100 && rejected > 1_000 && messages.count > 25, "\(messages.keys.sorted())")
  }

  @Test("every truncation of a valid trace: the users before the cut, then a located error")
  func truncations() throws {
    let base = try Self.bases()[1]
    let path = tempFile("", name: "cut.csv")
    var m = Mutator(seed: 7)
    var tried = 0
    // Every line boundary and 300 random byte offsets.
    var cuts = base.indices.filter { base[$0] == 10 }.map { $0 + 1 }
    cuts += (0..<300).map { _ in m.int(base.count) }
    let full = try readAll(tempFile(String(decoding: base, as: UTF8.self)))
    for cut in cuts {
      try writeBytes(Array(base.prefix(cut)), to: path)
      tried += 1
      switch readOutcome(path) {
      case .success(let users):
        // A cut at a user boundary is a valid, shorter trace: it must
        // hold the first users exactly.
        #expect(users.count <= full.count && users == Array(full.prefix(users.count)), "cut \(cut): \(users.count) users")
      case .failure(let e as TraceFormatError):
        #expect(e.file == path && traceFields.contains(e.field), "cut \(cut): \(e)")
        #expect(e.line <= base.prefix(cut).reduce(1) { $1 == 10 ? $0 + 1 : $0 }, "cut \(cut): \(e)")
      case .failure(let e):
        Issue.record("cut \(cut): \(e)")
      }
    }
    print("trace reader truncations: \(tried) inputs")
  }

  @Test("a 10 MB line, a 10 MB unterminated quote and a 10 MB file without newlines are refused quickly")
  func hugeLines() throws {
    let big = String(repeating: "x", count: 10_000_000)
    let cases: [(String, Int)] = [
      ("user,time,event,app,value\nu1,10,begin,,UTC\nu1,11,open," + big + ",1\nu1,20,end,,\n", 3),
      ("user,time,event,app,value\nu1,10,begin,,UTC\nu1,11,open,\"" + big + "\n", 3),
      (big, 1),
      ("user,time,event,app,value\n" + big + "\r\n", 2),
    ]
    for (i, (text, line)) in cases.enumerated() {
      let path = tempFile(text, name: "long\(i).csv")
      let t0 = Date()
      do {
        _ = try readAll(path)
        Issue.record("case \(i): a 10 MB line was accepted")
      } catch let e as TraceFormatError {
        #expect(e.file == path && e.line == line && e.field == "-", "case \(i): \(e)")
        // An open quote may span lines (a quoted line break), so case 1 is
        // an unterminated quoted field, not a long line.
        let expected = i == 1 ? "unterminated quoted field" : "longer than \(TraceReader.maxLineBytes) bytes"
        #expect(e.message.contains(expected), "case \(i): \(e)")
      }
      #expect(Date().timeIntervalSince(t0) < 5)
    }
  }

  @Test("a user with more events than the limit is refused at that row, naming file, line and user")
  func gigantUser() throws {
    var text = "user,time,event,app,value\nbig,0,begin,,UTC\n"
    for k in 0..<5_000 { text += "big,\(k),open,news,1\n" }
    text += "big,6000,end,,\nsmall,0,begin,,UTC\nsmall,1,end,,\n"
    let path = tempFile(text)
    var limits = ResourceLimits()
    limits.maxEventsPerUser = 1_000
    switch readOutcome(path, limits: limits) {
    case .failure(let e as TraceFormatError):
      // Header, begin, 1,000 accepted events: the 1,001st is line 1,003.
      #expect(e.file == path && e.line == 1_003 && e.field == "user", "\(e)")
      #expect(e.message.contains("user 'big' (begun on line 2) has more than 1000 events"), "\(e)")
      #expect(e.message.contains("FETCHLAB_MAX_EVENTS_PER_USER"), "\(e)")
    case let other:
      Issue.record("expected a refusal, got \(other)")
    }
    // At the limit exactly it is accepted; the default accepts it.
    limits.maxEventsPerUser = 5_000
    #expect(try readOutcome(path, limits: limits).get().map(\.events.count) == [5_000, 0])
    #expect(try readOutcome(path).get().count == 2)
  }

  @Test("the line limit is configurable")
  func lineLimit() throws {
    let path = tempFile("user,time,event,app,value\nu1,10,begin,,UTC\nu1,11,open," + String(repeating: "a", count: 200) + ",1\nu1,20,end,,\n")
    var limits = ResourceLimits()
    limits.maxLineBytes = 100
    switch readOutcome(path, limits: limits) {
    case .failure(let e as TraceFormatError):
      #expect(e.line == 3 && e.field == "-" && e.message.contains("longer than 100 bytes"), "\(e)")
    case let other:
      Issue.record("expected a refusal, got \(other)")
    }
    limits.maxLineBytes = 300
    #expect(try readOutcome(path, limits: limits).get().count == 1)
  }
}
