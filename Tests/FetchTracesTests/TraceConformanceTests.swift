import FetchSupport
import Foundation
import Testing

@testable import FetchTraces

/// The trace conformance corpus (`Tests/Conformance/traces`, written by
/// `Tests/Conformance/make-corpus.py`): each file's first line is its
/// verdict, `# expect: accept` or `# expect: refuse LINE FIELD`. The Python
/// loader is held to the same files (`python/tests/test_conformance.py`),
/// so no file is accepted by one reader and refused by the other.
@Suite("Trace conformance corpus")
struct TraceConformanceTests {
  static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Conformance/traces")

  static var files: [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: corpus.path)) ?? []).filter { $0.hasSuffix(".csv") }.sorted()
  }

  /// The verdict on a file's first line: nil to accept, else the line and field of the error.
  static func expected(_ path: String) throws -> (line: Int, field: String)?? {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    var first = Array(data.prefix { $0 != 10 })
    if first.starts(with: [0xEF, 0xBB, 0xBF]) { first.removeFirst(3) }
    if first.last == 13 { first.removeLast() }
    let words = String(decoding: first, as: UTF8.self).split(separator: " ").map(String.init)
    guard words.count >= 3, words[0] == "#", words[1] == "expect:" else { return .none }
    if words[2] == "accept" { return .some(nil) }
    guard words.count == 5, words[2] == "refuse", let line = Int(words[3]) else { return .none }
    return .some((line, words[4]))
  }

  @Test func theCorpusHoldsBothVerdicts() throws {
    let verdicts = try Self.files.map { try Self.expected(Self.corpus.appendingPathComponent($0).path) }
    #expect(verdicts.allSatisfy { $0 != nil })
    #expect(verdicts.filter { $0 ?? nil == nil }.count >= 10)
    #expect(verdicts.filter { ($0 ?? nil) != nil }.count >= 40)
  }

  @Test("every listed zone name is one this platform's zone library knows (else the readers would part)")
  func listedZonesResolve() {
    let missing = TraceTimeZone.ianaNames.filter { TimeZone(identifier: $0) == nil }.sorted()
    #expect(missing.isEmpty, "not known to Foundation: \(missing)")
    #expect(TraceTimeZone.ianaNames.count == 598 && TraceTimeZone.ianaRelease == "2025b")
    for refused in ["UTC+1", "UTC-3", "GMT+0530", "US/Pacific-New", "localtime", "utc", "europe/berlin"] {
      #expect(TraceTimeZone(parsing: refused) == nil, "\(refused)")
    }
    #expect(TraceTimeZone.unknownHint("UTC+1").hasPrefix("an offset is written ±HH:MM: +01:00"))
    #expect(TraceTimeZone.unknownHint("GMT+0530").hasPrefix("an offset is written ±HH:MM: +05:30"))
    #expect(TraceTimeZone.unknownHint("Europe/Berln").hasSuffix("did you mean Europe/Berlin?"))
    // A long value gets the forms at once, not an edit distance to every name.
    #expect(!TraceTimeZone.unknownHint(String(repeating: "Europe/Berlin", count: 100)).contains("did you mean"))
  }

  @Test(arguments: TraceConformanceTests.files)
  func theReaderAgreesWithTheCorpus(_ name: String) throws {
    let path = Self.corpus.appendingPathComponent(name).path
    let want = try #require(try Self.expected(path), "\(name): first line is not a verdict")
    do {
      let users = try readAll(path)
      #expect(want == nil, "\(name): accepted (\(users.count) users), expected a refusal at \(want.map { "\($0.line) \($0.field)" } ?? "")")
      #expect(!users.isEmpty)
    } catch let e as TraceFormatError {
      #expect(want != nil, "\(name): refused, expected to be accepted: \(e)")
      if let want { #expect(e.line == want.line && e.field == want.field, "\(name): \(e)") }
    }
  }
}
