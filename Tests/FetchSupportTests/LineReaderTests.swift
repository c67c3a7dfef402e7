import Foundation
import Testing

@testable import FetchSupport

/// Reads `text` through a pipe-less temporary file.
private func records(_ text: String, max: Int = 1 << 16, quoted: Bool = true) throws -> [(line: Int, text: String)] {
  let path = NSTemporaryDirectory() + "/linereader-\(UUID().uuidString)"
  try text.write(toFile: path, atomically: false, encoding: .utf8)
  defer { try? FileManager.default.removeItem(atPath: path) }
  let fd = open(path, O_RDONLY)
  defer { close(fd) }
  let r = LineReader(fd: fd, maxLineBytes: max, quotedLineBreaks: quoted)
  var out: [(Int, String)] = []
  while let s = try r.next() { out.append((r.line, String(decoding: s, as: UTF8.self))) }
  #expect(r.bytesRead == text.utf8.count)
  return out
}

@Suite("LineReader")
struct LineReaderTests {
  @Test("LF and CRLF endings, a last line without one, empty lines kept")
  func endings() throws {
    let r = try records("a,b\r\nc\n\nd")
    #expect(r.map(\.text) == ["a,b", "c", "", "d"])
    #expect(r.map(\.line) == [1, 2, 3, 4])
  }

  @Test("a quoted line break stays in its record; the next record's line number counts it")
  func quotedLineBreaks() throws {
    let r = try records("u,\"two\nlines\",x\nv,\"\"\"q\"\"\",y\n\"a\r\nb\",z\n")
    #expect(r.map(\.text) == ["u,\"two\nlines\",x", "v,\"\"\"q\"\"\",y", "\"a\r\nb\",z"])
    #expect(r.map(\.line) == [1, 3, 4])
    // Without quote awareness the same text is five lines.
    #expect(try records("u,\"two\nlines\",x\n", quoted: false).count == 2)
  }

  @Test("records across buffer refills are whole (a 64 KiB buffer, 200 KB of records)")
  func refills() throws {
    var text = ""
    for i in 0..<10_000 { text += i % 7 == 0 ? "r\(i),\"x\ny\"\n" : "r\(i),plain\n" }
    let r = try records(text)
    #expect(r.count == 10_000)
    #expect(r[7].text == "r7,\"x\ny\"" && r[7].line == 9 && r[8].line == 11)
  }

  @Test(
    "nextShort() returns what next() would (record, line, bytes read) with a bit per comma, or nil; random text",
    arguments: [1, 2, 3])
  func shortRecords(seed: UInt64) throws {
    // Short and long lines, commas, quotes (some with line breaks inside),
    // CRLF and empty lines: 300 KB, so records cross the 64 KiB buffer's refills.
    var rng = SplitMix64(seed: seed)
    let pieces = ["a", "bc", "1767571511.042", ",", ",", ",", "\"", "\n", "\n", "\r\n", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"]
    var text = ""
    while text.utf8.count < 300_000 { text += pieces[Int(rng.next() % UInt64(pieces.count))] }
    if text.utf8.filter({ $0 == 34 }).count % 2 == 1 { text += "\"" }  // no quote left open
    text += "\n"
    let path = NSTemporaryDirectory() + "/linereader-\(UUID().uuidString)"
    try text.write(toFile: path, atomically: false, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let (fdA, fdB) = (open(path, O_RDONLY), open(path, O_RDONLY))
    defer { close(fdA); close(fdB) }
    let plain = LineReader(fd: fdA, maxLineBytes: 1 << 16, quotedLineBreaks: true)
    let fused = LineReader(fd: fdB, maxLineBytes: 1 << 16, quotedLineBreaks: true)
    var records = 0
    var short = 0
    while let a = try plain.next() {
      let b: UnsafeBufferPointer<UInt8>
      if let s = try fused.nextShort() {
        short += 1
        b = s.record
        #expect(!b.contains(34))
        var bits: UInt64 = 0
        for (j, c) in b.enumerated() where c == 44 { bits |= 1 << UInt64(j) }
        #expect(s.commas == bits)
      } else {
        b = try #require(try fused.next())
      }
      records += 1
      #expect(Array(a) == Array(b))
      #expect(plain.line == fused.line && plain.bytesRead == fused.bytesRead)
    }
    #expect(try fused.nextShort() == nil && fused.next() == nil)
    #expect(fused.bytesRead == text.utf8.count)
    // Both kinds of record occur, so both paths were compared.
    #expect(short > records / 4 && short < records)
  }

  @Test("too long, and an unterminated quote at the end, are errors with the line")
  func failures() {
    #expect(throws: LineReader.Failure.tooLong(line: 2, limit: 4)) { try records("ab\nabcdef\n", max: 4) }
    #expect(throws: LineReader.Failure.unterminatedQuote(line: 2)) { try records("a\n\"b\nc\n") }
  }
}
