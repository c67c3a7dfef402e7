import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld
import Foundation

/// Replays fetch requests made offline: at each listed time the app asks
/// for a background fetch, which the engine runs with the same radio, OS
/// rules and scoring as every other policy's (a request while the app's
/// previous fetch still runs is dropped, as a second request is).
package struct SchedulePolicy: FetchPolicy {
  package static var observedEvents: ObservedEvents { .none }
  let times: [Double]
  var next = 0

  package mutating func start(_ ctx: inout PolicyContext) { arm(&ctx) }

  package mutating func timerFired(_ ctx: inout PolicyContext) {
    ctx.requestFetch()
    while next < times.count && times[next] <= ctx.now { next += 1 }
    arm(&ctx)
  }

  private mutating func arm(_ ctx: inout PolicyContext) {
    if next < times.count { ctx.setTimer(at: times[next]) }
  }
}

/// `schedule:file=<path>`: fetch requests from a CSV file of `user,app,time`
/// rows (Unix s or ISO 8601 with an offset), e.g. a schedule another tool
/// computed offline.
package enum ScheduleFamily: PolicyFamily {
  /// One request and the file line it came from.
  package struct Request: Sendable, Hashable {
    package var time: Double
    package var line: Int
  }

  /// The file and its requests by user and app, each list in time order.
  package struct Configuration: Sendable {
    package var path: String
    package var requests: [String: [String: [Request]]]
  }

  package static let info = FamilyInfo(
    "schedule", .other(":file=<path>"), example: "schedule:file=docs/examples/schedule.csv",
    style: PolicyStyle(color: "#994F00", marker: .openOctagon),
    summary:
      "fetch requests read from a CSV file of user,app,time rows (a schedule made offline by any tool), replayed through the same OS rules, radio and scoring; requests in the training part or outside the window are refused with their line")

  package static let settings = [
    PolicySettingInfo(
      name: "file", defaultValue: "(required)", range: "a CSV file with the columns user, app, time",
      help: "the requests: one fetch request of the app on the user's phone at time (Unix s, or ISO 8601 with an offset) per row; users and apps the run does not replay are ignored")
  ]

  package static func parse(_ argument: String?, spec: String) throws -> Configuration {
    guard let a = argument, a.hasPrefix("file="), a.count > 5 else {
      throw PolicySpecError(.missingArgument, "policy '\(spec)': needs file=<path>, e.g. schedule:file=fetches.csv")
    }
    guard !a.contains(",") else {
      throw PolicySpecError(.unknownSetting, "policy '\(spec)': schedule takes one setting, file=<path> (a path without commas)")
    }
    let path = String(a.dropFirst(5))
    do {
      return try read(path)
    } catch let e as TraceFormatError {
      throw PolicySpecError(.badValue, "policy '\(spec)': file: \(e)")
    }
  }

  /// The requests of the CSV file at `path`.
  /// - Throws: ``TraceFormatError`` naming the file, line and column.
  private static func read(_ path: String) throws -> Configuration {
    var columns: [String: Int] = [:]
    var requests: [String: [String: [Request]]] = [:]
    try StrictCSV.read(
      path: path,
      header: { h in
        for (i, name) in h.enumerated() { columns[name] = i }
        for c in ["user", "app", "time"] where columns[c] == nil {
          throw TraceFormatError(file: path, line: 1, field: c, message: "missing column '\(c)' (the header must name user, app and time)")
        }
      },
      record: { line, f in
        let (u, app, text) = (f[columns["user"]!], f[columns["app"]!], f[columns["time"]!])
        guard !u.isEmpty, !app.isEmpty else {
          throw TraceFormatError(file: path, line: line, field: u.isEmpty ? "user" : "app", message: "empty")
        }
        guard let t = time(text), t.isFinite else {
          throw TraceFormatError(
            file: path, line: line, field: "time", message: "'\(text)' is not a time (Unix s, or ISO 8601 with an offset)")
        }
        requests[u, default: [:]][app, default: []].append(Request(time: t, line: line))
      })
    for (u, apps) in requests {
      for (app, rs) in apps { requests[u]![app] = rs.sorted { ($0.time, $0.line) < ($1.time, $1.line) } }
    }
    return Configuration(path: path, requests: requests)
  }

  private static func time(_ s: String) -> Double? {
    if let x = Double(s) { return x }
    return TimeText.parseISO8601(s).flatMap(\.unixSeconds)
  }

  package static func describe(_ c: Configuration) -> String { "schedule:file=" + c.path }
  package static func fetchSpacingBound(_ c: Configuration) -> Double? { 1 }

  package static func makePolicies(_ c: Configuration, _ device: DeviceReplayInput) -> (Int32, ContentTimeline) -> SchedulePolicy {
    let trace = device.user.trace
    let mine = c.requests[trace.user] ?? [:]
    var refused: TraceFormatError?
    var times: [Int32: [Double]] = [:]
    for app in device.apps {
      for r in mine[trace.apps[Int(app)]] ?? [] {
        guard refused == nil else { break }
        if r.time < trace.start || r.time >= trace.end {
          let whereText =
            r.time < trace.start
            ? "before the user's scored window [\(jsonNumber(trace.start)), \(jsonNumber(trace.end))): in its training part, or before its trace"
            : "at or after the end of the user's scored window [\(jsonNumber(trace.start)), \(jsonNumber(trace.end)))"
          refused = TraceFormatError(
            file: c.path, line: r.line, field: "time",
            message: "request of user \(trace.user), app \(trace.apps[Int(app)]) at \(jsonNumber(r.time)) is \(whereText)")
        }
        times[app, default: []].append(r.time)
      }
    }
    if let refused { PolicyFailure.record(refused) }
    return { app, _ in SchedulePolicy(times: refused == nil ? times[app] ?? [] : []) }
  }
}
