import ArgumentParser
import FetchSimulation
import FetchSupport
import FetchTraces

extension FetchLab {
  struct Policies: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "List the policy families with their syntax, what they model and their settings (defaults, accepted values).",
      discussion: """
        The same text is the reference section of docs/policies.md.
        Example: fetchlab policies ios-minimum tailender
        """)

    @Argument(help: "Only these families (names as in --policy, e.g. periodic, ios-minimum).", completion: .policy)
    var names: [String] = []

    func validate() throws {
      for n in names where PolicyRegistry.family(named: n) == nil {
        let hint = Suggestion.closest(to: n, among: PolicyRegistry.names).map { " (did you mean '\($0)'?)" } ?? ""
        throw ValidationError("unknown policy family '\(n)'\(hint); known: \(PolicyRegistry.names.joined(separator: ", "))")
      }
    }

    func run() throws {
      let families = names.isEmpty ? PolicyRegistry.families : names.compactMap { PolicyRegistry.family(named: $0) }
      print(PolicyRegistry.reference(families), terminator: "")
    }
  }
}
