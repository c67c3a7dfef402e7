import FetchSupport
import Testing

@testable import FetchTraces

@Suite("Did-you-mean suggestions")
struct SuggestionTests {
  @Test("edit distance: worked values, symmetry, transpositions cost 1")
  func distances() {
    let cases: [(String, String, Int)] = [
      ("", "", 0), ("", "abc", 3), ("run", "run", 0), ("rnu", "run", 1), ("kitten", "sitting", 3),
      ("perodic", "periodic", 1), ("iosminimum", "ios-minimum", 1), ("ca", "abc", 3), ("reprot", "report", 1),
    ]
    for (a, b, d) in cases {
      #expect(Suggestion.editDistance(a, b) == d, "\(a) → \(b)")
      #expect(Suggestion.editDistance(b, a) == d, "\(b) → \(a)")
    }
  }

  @Test("closest: typo limits by length, prefixes, ties, nothing for unrelated words")
  func closest() {
    let commands = ["validate", "synth", "run", "merge", "params", "import-ubiqlog", "import-events", "report"]
    #expect(Suggestion.closest(to: "rnu", among: commands) == "run")
    #expect(Suggestion.closest(to: "REPROT", among: commands) == "report")
    #expect(Suggestion.closest(to: "import-event", among: commands) == "import-events")
    #expect(Suggestion.closest(to: "val", among: commands) == "validate")  // unique prefix
    #expect(Suggestion.closest(to: "imp", among: commands) == nil)  // two prefixes, too far from both
    #expect(Suggestion.closest(to: "frobnicate", among: commands) == nil)
    #expect(Suggestion.closest(to: "xyz", among: commands) == nil)
    #expect(Suggestion.closest(to: "", among: commands) == nil)
    #expect(Suggestion.closest(to: "ab", among: ["ac", "ad"]) == "ac")  // tie: the earlier
    #expect(Suggestion.didYouMean("synht", among: commands) == " Did you mean 'synth'?")
    #expect(Suggestion.didYouMean("zzzzzz", among: commands) == "")
  }
}
