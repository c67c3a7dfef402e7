import ArgumentParser
import FetchSupport
import FetchTraces

extension FetchLab {
  struct Validate: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Check a canonical trace file; print a summary or the first error as file:line: field: message.",
      discussion: """
        The format is described in docs/trace-format.md. Exit status 0 for a valid trace, 1 for the first error.
        Example: fetchlab validate datasets/ubiqlog/ubiqlog-opens.csv
        """)

    @Argument(help: "Trace file (canonical FetchLab CSV).", completion: .trace)
    var path: String

    func run() throws {
      let reader = try TraceReader(path: path)
      var users = 0, events = 0, opens = 0
      var days = 0.0
      var apps = Set<String>()
      while let u = try reader.next() {
        users += 1
        events += u.events.count
        days += u.days
        for e in u.events where e.kind == .open {
          opens += 1
          apps.insert(u.apps[Int(e.app)])
        }
      }
      print("\(path): ok: \(users) users, \(CSV.number(days, decimals: 1)) user-days, \(events) events, \(opens) opens of \(apps.count) apps, \(reader.line) lines")
    }
  }
}
