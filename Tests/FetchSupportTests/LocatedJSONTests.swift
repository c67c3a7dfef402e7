import Testing

@testable import FetchSupport

@Suite("LocatedJSON")
struct LocatedJSONTests {
  static let text = """
    {
      "radio": {
        "wifi": {"tail_s": 1},
        "lte": {
          "tail_s": 5
        }
      },
      "list": [1,
        {"deep": true}]
    }
    """

  @Test("every value and member knows its line; paths and names find them")
  func lines() throws {
    let j = try LocatedJSON.parse(Self.text)
    #expect(j.line == 1)
    #expect(j.line(at: ["radio", "lte", "tail_s"]) == 5)
    #expect(j.line(at: ["radio", "wifi", "tail_s"]) == 3)
    #expect(j.line(at: ["list", "1", "deep"]) == 9)
    // A path that leaves the tree stops at the deepest value that exists.
    #expect(j.line(at: ["radio", "nr5g", "tail_s"]) == 2)
    #expect(j.firstMember(named: "tail_s")?.line == 3)
    #expect(j.firstMember(named: "deep")?.line == 9)
    #expect(j.firstMember(named: "absent") == nil)
  }

  @Test("syntax errors and duplicate keys name the line (and the key)")
  func errors() {
    #expect(throws: SyntaxError(line: 3, message: "not valid JSON: expected a \"key\"")) {
      try LocatedJSON.parse("{\n  \"a\": 1,\n  }")
    }
    #expect(throws: SyntaxError(
      line: 3, field: "a", message: "duplicate key \"a\" in one object (first on line 2): keep one")) {
      try LocatedJSON.parse("{\n  \"a\": 1,\n  \"a\": 2}")
    }
  }
}
