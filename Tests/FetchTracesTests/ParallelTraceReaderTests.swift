import FetchSupport
import FetchTestSupport
import Foundation
import Testing

@testable import FetchTraces

/// What a reader made of a file: each user with the line it ends on, then
/// the bytes read and the hash of the bytes read (`onRead`, `hasher`), or the
/// error (file, line, field, message).
private struct Transcript: Equatable, CustomStringConvertible {
  var users: [UserTrace] = []
  var lines: [Int] = []
  var end = ""

  var description: String {
    "\(users.count) users (\(zip(users.map(\.user), lines).map { "\($0)@\($1)" }.joined(separator: " "))), \(end)"
  }
}

/// Reads every user with `next` (the reader's line after each from
/// `line`), then the byte count and digest from `end`, or the error.
private func transcript(
  _ open: () throws -> (next: () throws -> UserTrace?, line: () -> Int, end: () -> String)
) -> Transcript {
  var t = Transcript()
  do {
    let r = try open()
    while let u = try r.next() {
      t.users.append(u)
      t.lines.append(r.line())
    }
    t.end = r.end()
  } catch {
    t.end = "\(error)"
  }
  return t
}

private func sequentialTranscript(
  _ path: String, limits: ResourceLimits = .current, skip: (@Sendable (UInt64) -> Bool)? = nil
) -> Transcript {
  var hash = SHA256()
  return transcript {
    let r = try TraceReader(path: path, limits: limits)
    r.onRead = { hash.update($0) }
    r.skip = skip
    return (r.next, { r.line }, { "\(r.bytesRead) bytes, \(hash.hexDigest())" })
  }
}

private func parallelTranscript(
  _ path: String, jobs: Int, chunkBytes: Int, maxChunkBytes: Int = ParallelTraceReader.maxChunkBytes,
  limits: ResourceLimits = .current, skip: (@Sendable (UInt64) -> Bool)? = nil
) -> Transcript {
  let hash = BackgroundSHA256()
  return transcript {
    let r = try ParallelTraceReader(
      path: path, limits: limits, jobs: jobs, chunkBytes: chunkBytes, maxChunkBytes: maxChunkBytes)
    r.hasher = hash
    r.skip = skip
    return (r.next, { r.line }, { "\(r.bytesRead) bytes, \(hash.hexDigest())" })
  }
}

@Suite("Parallel trace reader", .serialized)
struct ParallelTraceReaderTests {
  /// A synthetic trace of `users` users, `rows` rows each at most.
  static func synthetic(users: Int, rows: Int, days: Int = 1) throws -> [UInt8] {
    let path = Scratch.directory("ptr") + "/synthetic.csv"
    try SyntheticPopulation(seed: 13, days: days).write(to: path, users: users)
    let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    var ls = Mutator.lines(bytes)
    let header = ls.firstIndex { $0.elementsEqual(traceHeader.utf8) } ?? 0
    var kept = Array(ls[..<(header + 1)])
    ls = Array(ls[(header + 1)...])
    var byUser: [String: [[UInt8]]] = [:]
    var order: [String] = []
    for l in ls where !l.isEmpty {
      let u = String(decoding: l.prefix { $0 != 44 }, as: UTF8.self)
      if byUser[u] == nil { order.append(u) }
      byUser[u, default: []].append(l)
    }
    for u in order {
      let r = byUser[u]!
      kept += r.count <= rows ? r : Array(r.prefix(rows - 1)) + [r.last!]
    }
    return Mutator.join(kept) + [10]
  }

  /// Users whose id hashes to a multiple of 3 (about a third).
  static let skipThird: @Sendable (UInt64) -> Bool = { $0 % 3 == 0 }

  @Test(
    "the same users, lines, bytes and hash as the sequential reader, for any chunk size and jobs; with a third of the users skipped, the others exactly as a full read gives them",
    arguments: [false, true])
  func sameAsSequential(skipping: Bool) throws {
    let base = try Self.synthetic(users: 40, rows: 80)
    let path = Scratch.directory("ptr") + "/t-\(skipping).csv"
    try writeBytes(base, to: path)
    var want = sequentialTranscript(path)
    #expect(want.users.count == 40)
    let skip = skipping ? Self.skipThird : nil
    if skipping {
      let full = want
      let kept = full.users.indices.filter { !Self.skipThird(StableHash.fnv1a(full.users[$0].user)) }
      #expect(kept.count > 15 && kept.count < 35, "\(kept.count) of 40 users not skipped")
      want.users = kept.map { full.users[$0] }
      want.lines = kept.map { full.lines[$0] }
      #expect(sequentialTranscript(path, skip: skip) == want)
    }
    for jobs in [1, 2, 3] {
      for chunk in [1, 100, 700, 3_000, 20_000, 1 << 22] {
        let got = parallelTranscript(path, jobs: jobs, chunkBytes: chunk, skip: skip)
        #expect(got == want, "jobs \(jobs), chunks of \(chunk) bytes: \(got) against \(want)")
      }
    }
  }

  @Test("cut points: only before a begin row outside quotes")
  func cuts() {
    func cut(_ s: String) -> Int? {
      var b = Array(s.utf8)
      return b.withUnsafeMutableBufferPointer { ParallelTraceReader.lastCut($0.baseAddress!, $0.count) }
    }
    #expect(cut("user,time,event,app,value\nu1,1,begin,,UTC\nu1,2,end,,\nu2,3,begin,,UTC\nu2,4,") == 53)
    #expect(cut("user,time,event,app,value\nu1,1,begin,,UTC\nu1,2,end,,\n") == 26)
    // After a line feed, even inside a quoted field (that chunk's parse
    // then ends inside the quote and the sequential reader takes over).
    #expect(cut("h\nu1,1,open,\"a\nu2,3,begin,,UTC\n\",1\n") == 15)
    #expect(cut("h\nu1,1,open,\"a\"\nu2,3,begin,,UTC\n") == 16)
    // Not a begin row, or a quoted user id, or cut off.
    #expect(cut("h\nu1,1,open,,1\n\"u2\",3,begin,,UTC\nu3,4,beg") == nil)
    #expect(cut("u0,0,begin,,UTC\n") == nil)
  }

  /// Mutated multi-user traces: the parallel reader, with chunks of a few
  /// rows to a few users, must give exactly the sequential reader's
  /// transcript (users, lines, then the same bytes and hash or the same
  /// error with the same file, line, field and message).
  @Test("mutated traces: the parallel reader's transcript is the sequential one's")
  func mutatedTraces() throws {
    let base = Mutator.lines(try Self.synthetic(users: 8, rows: 25))
    let path = Scratch.directory("ptr") + "/fuzz.csv"
    var m = Mutator(seed: 0x9A7A_11E1)
    var failures = 0, successes = 0
    for n in 0..<1_500 {
      let input = m.mutateTrace(base)
      try writeBytes(input, to: path)
      let want = sequentialTranscript(path)
      if want.end.hasPrefix(path) { failures += 1 } else { successes += 1 }
      let chunk = [1, 64, 300, 1_000, 5_000][n % 5]
      let got = parallelTranscript(path, jobs: 2 + n % 2, chunkBytes: chunk)
      #expect(got == want, "input \(n), chunks of \(chunk) bytes:\n\(got)\nagainst\n\(want)")
      if got != want { break }
    }
    // Both outcomes, often.
    #expect(failures > 300 && successes > 100, "\(failures) refused, \(successes) accepted")
  }

  @Test("a begin row inside a quoted field spanning lines is no cut point: the same users as the sequential reader")
  func cutInsideQuotes() throws {
    var text = traceHeader + "\n"
    for u in 1...6 {
      text += "u\(u),1767571200,begin,,UTC\n"
      // An app name with line breaks, one of them looking like a begin row.
      text += "u\(u),1767571201,open,\"a\nu9,1767571200,begin,,UTC\nb\",5\n"
      text += "u\(u),1767571300,end,,\n"
    }
    let path = Scratch.directory("ptr") + "/quoted.csv"
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    let want = sequentialTranscript(path)
    #expect(want.users.count == 6 && want.users[0].apps == ["a\nu9,1767571200,begin,,UTC\nb"])
    for chunk in [1, 40, 70, 100, 200] {
      let got = parallelTranscript(path, jobs: 2, chunkBytes: chunk)
      #expect(got == want, "chunks of \(chunk) bytes: \(got)")
    }
  }

  @Test("a skipped user: its end row found however it is quoted; its own errors unread; the file's structure still checked")
  func skippedUserRows() throws {
    let all: @Sendable (UInt64) -> Bool = { _ in true }
    let u2: @Sendable (UInt64) -> Bool = { $0 == StableHash.fnv1a("u2") }
    func read(_ body: String, skip: @escaping @Sendable (UInt64) -> Bool) throws -> Transcript {
      let path = Scratch.directory("ptr") + "/rows.csv"
      try (traceHeader + "\n" + body).write(toFile: path, atomically: true, encoding: .utf8)
      let t = sequentialTranscript(path, skip: skip)
      for chunk in [1, 30, 1_000] {
        let p = parallelTranscript(path, jobs: 2, chunkBytes: chunk, skip: skip)
        #expect(p == t, "chunks of \(chunk) bytes: \(p) against \(t)")
      }
      return t
    }
    let u1 = "u1,100,begin,,UTC\nu1,101,open,a,1\nu1,200,end,,\n"
    let u3 = "u3,100,begin,,UTC\nu3,200,end,,\n"
    // The end row quoted (or its time): found by the split.
    for end in ["u2,200,\"end\",,", "\"u2\",200,end,,", "u2,\"200\",end,,"] {
      let t = try read(u1 + "u2,100,begin,,UTC\nu2,150,open,b,1\n" + end + "\n" + u3, skip: u2)
      #expect(t.users.map(\.user) == ["u1", "u3"] && t.lines == [4, 9], "\(end): \(t)")
    }
    // Rows of u2 like its end row but not it (an event beginning with
    // "end", "end" as the app, a shorter event), with more than 64 bytes
    // after them (read with their commas found as the line's end is).
    let u4 = "u4,100,begin,,UTC\nu4,101,open,a,1\nu4,102,open,a,1\nu4,200,end,,\n"
    let near = try read(
      u1 + "u2,100,begin,,UTC\nu2,150,ends,b,1\nu2,160,open,end,1\nu2,170,en,,\nu2,200,end,,\n" + u3 + u4, skip: u2)
    #expect(near.users.map(\.user) == ["u1", "u3", "u4"] && near.lines == [4, 11, 15], "\(near)")
    // A skipped id with a comma (quoted in its `begin` row), its other
    // rows unquoted: passed over like any row of a skipped user.
    let comma: @Sendable (UInt64) -> Bool = { $0 == StableHash.fnv1a("u,2") }
    let unquoted = try read(
      u1 + "\"u,2\",100,begin,,UTC\nu,2,150,open,b,1\nu,2,200,end,,\n" + u3 + u4, skip: comma)
    #expect(unquoted.users.map(\.user) == ["u1", "u3", "u4"] && unquoted.lines == [4, 9, 13], "\(unquoted)")
    // A row of a user whose id begins with u2's.
    let longer = try read(u1 + "u2,100,begin,,UTC\nu22,150,end,,\nu2,200,end,,\n" + u3 + u4, skip: u2)
    #expect(longer.end.contains(":6: user: user 'u22' starts before user 'u2' has its 'end' row"), "\(longer)")
    // An unsorted time, a bad app or value inside u2: not read.
    let bad = try read(u1 + "u2,100,begin,,UTC\nu2,90,open,,x\nu2,200,end,,\n" + u3, skip: u2)
    #expect(bad.users.map(\.user) == ["u1", "u3"], "\(bad)")
    // A row of another user inside u2, u2 again later, a file ending inside u2.
    let other = try read(u1 + "u2,100,begin,,UTC\nu3,150,open,b,1\nu2,200,end,,\n", skip: u2)
    #expect(other.end.contains(":6: user: user 'u3' starts before user 'u2' has its 'end' row"), "\(other)")
    let again = try read("u2,100,begin,,UTC\nu2,200,end,,\n" + u1 + "u2,300,begin,,UTC\nu2,400,end,,\n", skip: all)
    #expect(again.end.contains(":7: user: user 'u2' appears again"), "\(again)")
    let cut = try read(u1 + "u2,100,begin,,UTC\nu2,150,open,b,1\n", skip: u2)
    #expect(cut.end.contains("file ends inside user 'u2' (begun on line 5)"), "\(cut)")
  }

  @Test("mutated traces with users skipped: the parallel reader's transcript is the sequential one's; a file a full read accepts gives the other users")
  func mutatedTracesSkipping() throws {
    let base = Mutator.lines(try Self.synthetic(users: 8, rows: 25))
    let path = Scratch.directory("ptr") + "/fuzz-skip.csv"
    var m = Mutator(seed: 0x5_C1B)
    var accepted = 0
    for n in 0..<600 {
      let input = m.mutateTrace(base)
      try writeBytes(input, to: path)
      let want = sequentialTranscript(path, skip: Self.skipThird)
      let got = parallelTranscript(path, jobs: 2, chunkBytes: [1, 64, 300, 1_000, 5_000][n % 5], skip: Self.skipThird)
      #expect(got == want, "input \(n):\n\(got)\nagainst\n\(want)")
      let full = sequentialTranscript(path)
      if !full.end.hasPrefix(path) {
        accepted += 1
        let others = full.users.filter { !Self.skipThird(StableHash.fnv1a($0.user)) }
        #expect(want.users == others && want.end == full.end, "input \(n): \(want) against \(full)")
      }
      if got != want { break }
    }
    #expect(accepted > 50, "\(accepted) inputs accepted")
  }

  @Test("a user longer than the largest chunk hands over to the sequential reader")
  func oversizedUser() throws {
    var text = traceHeader + "\n"
    text += "u1,1767571200,begin,,UTC\n"
    for k in 0..<2_000 { text += "u1,\(1767571201 + k),open,news,1\n" }
    text += "u1,1767600000,end,,\nu2,1767571200,begin,,UTC\nu2,1767571300,end,,\n"
    let path = Scratch.directory("ptr") + "/big.csv"
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    let want = sequentialTranscript(path)
    #expect(want.users.count == 2)
    for maxChunk in [10, 1_000, 100_000] {
      let got = parallelTranscript(path, jobs: 2, chunkBytes: 10, maxChunkBytes: maxChunk)
      #expect(got == want, "at most \(maxChunk) bytes a chunk: \(got)")
    }
  }
}
