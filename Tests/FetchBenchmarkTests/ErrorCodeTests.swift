import FetchBenchmark
import FetchTraces
import Testing

/// The public error structs: a stable code, the message users see, and a
/// location when the input has one.
@Suite("Error codes and locations")
struct ErrorCodeTests {
  @Test("--apps errors: code per form, located at the option", arguments: [
    ("top:0", "bad-count"), ("min-opens:x", "bad-count"), ("names:,", "no-names"), ("all", "unknown-form"),
  ])
  func appSelection(_ s: String, _ code: String) {
    #expect(throws: AppSelectionError.self) { try AppSelection(parsing: s) }
    do {
      _ = try AppSelection(parsing: s)
    } catch let e as AppSelectionError {
      #expect(e.code.description == code, "\(s): \(e)")
      #expect(e.location == InputLocation(field: "--apps"))
      #expect(e.description == e.message)
    } catch {
      Issue.record("unexpected \(error)")
    }
  }

  @Test("experiment errors: bad shards and brace patterns have their codes; the message is unchanged")
  func experiment() {
    func code(_ body: () throws -> Void) -> (ExperimentError.Code, String)? {
      do { try body() } catch let e as ExperimentError { return (e.code, e.message) } catch {}
      return nil
    }
    let shard = code { _ = try ExperimentShard(parsing: "3/2") }
    #expect(shard?.0 == .badShard && shard?.1 == "'3/2': the shard K must be in 1...2")
    let braces = code { _ = try expandBraces("periodic:{15m") }
    #expect(braces?.0 == .badPolicyPattern && braces?.1 == "unbalanced '{' in 'periodic:{15m'")
    #expect(ExperimentError("x\u{1B}").code == .other && ExperimentError("x\u{1B}").message == "x\\u{1B}")
  }

  @Test("trace format errors expose file, line and field as an InputLocation")
  func traceLocation() {
    let row = TraceFormatError(file: "t.csv", line: 3, field: "time", message: "bad")
    #expect(row.location == InputLocation(file: "t.csv", line: 3, field: "time"))
    #expect(row.location.description == "t.csv:3: time")
    let whole = TraceFormatError(file: "t.csv", line: 0, field: "-", message: "empty")
    #expect(whole.location == InputLocation(file: "t.csv") && whole.location.description == "t.csv")
    #expect(InputLocation(field: "--apps").description == "--apps" && InputLocation().isUnknown)
  }
}
