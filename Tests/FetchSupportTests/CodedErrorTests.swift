import FetchSupport
import Testing

/// The error envelope: what a conforming type gets from declaring its
/// codes and storing code, message and location.
@Suite("Coded errors")
struct CodedErrorTests {
  struct LineError: CodedError {
    enum Code: String, Sendable, Hashable, CustomStringConvertible {
      case bad = "bad-thing"
      var description: String { rawValue }
    }
    let code: Code
    let message: String
    var location: Int?
    init(code: Code, message: String, location: Int?) {
      (self.code, self.message, self.location) = (code, message, location)
    }
  }

  @Test("the description is the message; the location defaults to unknown; equality covers all three")
  func envelope() {
    let e = LineError(.bad, "line 3: not a number")
    #expect("\(e)" == "line 3: not a number")
    #expect(e.description == e.message)
    #expect(e.location == nil)
    #expect(e.code.description == "bad-thing")
    var located = LineError(.bad, "line 3: not a number", location: 3)
    #expect(located.location == 3)
    #expect(located != e)
    located.location = .unknown
    #expect(located == e)
    let thrown: any Error = e
    #expect((thrown as? LineError)?.code == .bad)
  }
}
