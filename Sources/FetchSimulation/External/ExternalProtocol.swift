import FetchSupport
import FetchTraces
import Foundation

/// The `external` protocol's messages (version 3, versions 1 and 2 still
/// accepted; JSON lines; the reference is `docs/external-protocol.md`):
/// what FetchLab writes, and the parsing of what the process answers.
///
/// Every message is built from the replay's past and present only: the
/// decision's time, the device state at it, the app's own opens (of the
/// training part and of the window so far) and its fetches' outcomes.
/// A session's length, later events and content updates never cross.
enum ExternalMessage {
  /// The protocol's newest version, the one FetchLab offers.
  static let version = 3
  /// The versions a process may answer the handshake with.
  static let versions = [1, 2, 3]

  /// The handshake, first line of every process: the protocol, its
  /// versions, the run's seed and the policy's own settings.
  static func hello(seed: UInt64, timeoutS: Double, settings: [(String, String)]) -> String {
    let s = settings.map { JSONText.quoted($0.0) + ":" + JSONText.quoted($0.1) }.joined(separator: ",")
    return "{\"type\":\"hello\",\"protocol\":\"fetchlab-external\",\"version\":\(version),\"versions\":["
      + versions.map(String.init).joined(separator: ",") + "],\"seed\":\(seed),"
      + "\"timeout_s\":\(jsonNumber(timeoutS)),\"settings\":{\(s)}}"
  }

  /// A device's start: its id, seed, time zone, the replay window's start,
  /// the replayed apps, and each one's opens in the training part (Unix s,
  /// all before `window_start`). No reply.
  static func device(
    user: String, seed: UInt64, timeZone: String, windowStart: Double, apps: [String],
    training: (start: Double, end: Double, opens: [[Double]])
  ) -> String {
    var m = "{\"type\":\"device\",\"device\":" + JSONText.quoted(user) + ",\"seed\":\(seed),\"time_zone\":"
      + JSONText.quoted(timeZone) + ",\"window_start\":" + jsonNumber(windowStart) + ",\"apps\":["
      + apps.map(JSONText.quoted).joined(separator: ",") + "],\"training\":{\"start\":" + jsonNumber(training.start)
      + ",\"end\":" + jsonNumber(training.end) + ",\"opens\":{"
    for (i, app) in apps.enumerated() {
      if i > 0 { m += "," }
      m += JSONText.quoted(app) + ":[" + training.opens[i].map(jsonNumber).joined(separator: ",") + "]"
    }
    return m + "}}}"
  }

  /// Why FetchLab asks.
  enum Reason: String {
    /// The start of the replay window.
    case start
    /// The app was opened now.
    case open
    /// The ask-again time of the last reply.
    case timer
    /// One of the app's fetches finished now.
    case fetchDone = "fetch_done"
  }

  /// What happened to an app since its last message that it did not ask
  /// to be asked at (version 2's `ask`): its opens and its fetches' ends,
  /// all at or before the next message's `now`.
  struct Notes {
    var opens: [Double] = []
    var outcomes: [FetchOutcome] = []
    var isEmpty: Bool { opens.isEmpty && outcomes.isEmpty }
  }

  /// The fixed start of an app's `decide` messages: `{"type":"decide",`
  /// then, before version 3, `"device":…,`, then `"app":…`.
  static func decidePrefix(user: String, app: String, version: Int) -> String {
    "{\"type\":\"decide\"," + (version >= 3 ? "" : "\"device\":" + JSONText.quoted(user) + ",") + "\"app\":"
      + JSONText.quoted(app)
  }

  /// A decision opportunity; the reply is `{"fetch": bool, "next": t|null}`.
  /// `prefix` is ``decidePrefix(user:app:version:)``; `notes` go out as
  /// `opens` and `outcomes` when there are any. `compact` (version 3)
  /// leaves out what holds its default: `charging` and `fetch_in_flight`
  /// when false, `battery_pct` while unknown, `budget` while the OS gives
  /// none (always, here), and each gate that does not hold (`gates` with
  /// it when none does); the reader's JSON parse is most of a decision's
  /// cost in the process, and grows with the fields.
  static func decide(
    prefix: String, reason: Reason, ctx: PolicyContext, clock: inout LocalClock, lowBatteryPct: Double,
    outcome: FetchOutcome?, notes: Notes = Notes(), compact: Bool = false
  ) -> String {
    let t = ctx.now
    let offset = clock.local(t) - t
    let low = ctx.batteryPct.map { $0 < lowBatteryPct && !ctx.isCharging } ?? false
    let offline = ctx.network == .offline
    var m = prefix + ",\"why\":\"" + reason.rawValue + "\",\"now\":" + jsonNumber(t) + ",\"local_hour\":"
      + jsonNumber(clock.hourOfDay(t)) + ",\"weekday\":\(clock.dayOfWeek(t)),\"utc_offset_s\":" + jsonNumber(offset)
      + ",\"network\":\"" + ctx.network.description + "\""
    if compact {
      if ctx.isCharging { m += ",\"charging\":true" }
      if let b = ctx.batteryPct { m += ",\"battery_pct\":" + jsonNumber(b) }
      if ctx.fetchInFlight { m += ",\"fetch_in_flight\":true" }
      if offline || low {
        m += ",\"gates\":{" + (offline ? "\"offline\":true" : "") + (offline && low ? "," : "")
          + (low ? "\"low_battery\":true" : "") + "}"
      }
    } else {
      m += ",\"charging\":" + (ctx.isCharging ? "true" : "false") + ",\"battery_pct\":"
        + (ctx.batteryPct.map(jsonNumber) ?? "null") + ",\"fetch_in_flight\":" + (ctx.fetchInFlight ? "true" : "false")
        + ",\"budget\":null,\"gates\":{\"offline\":" + (offline ? "true" : "false") + ",\"low_battery\":"
        + (low ? "true" : "false") + "}"
    }
    if let o = outcome { m += ",\"outcome\":" + object(o) }
    if !notes.opens.isEmpty { m += ",\"opens\":[" + notes.opens.map(jsonNumber).joined(separator: ",") + "]" }
    if !notes.outcomes.isEmpty { m += ",\"outcomes\":[" + notes.outcomes.map(object).joined(separator: ",") + "]" }
    return m + "}"
  }

  /// A fetch's outcome as a JSON object.
  private static func object(_ o: FetchOutcome) -> String {
    "{\"start\":" + jsonNumber(o.start) + ",\"end\":" + jsonNumber(o.end) + ",\"result\":\"" + o.result.description
      + "\",\"bytes\":" + jsonNumber(o.bytes) + ",\"energy_j\":" + jsonNumber(o.energyJ) + ",\"network\":\""
      + o.network.description + "\"}"
  }
}

/// What a process chose at the handshake: the version it speaks, from
/// version 2 the optional decision opportunities it wants (`ask`; the
/// window's start and its own ask-again times are always asked), and from
/// version 3 which of those it is not asked at it is told of (`tell`).
struct ExternalHandshake: Equatable {
  var version = ExternalMessage.version
  /// Asked at each open of the app (else told of it in the next message).
  var asksOpen = true
  /// Asked at each end of one of its fetches (else told in the next message).
  var asksFetchDone = true
  /// Told of the opens it is not asked at (`opens` of the next message).
  var tellsOpens = true
  /// Told of the fetch ends it is not asked at (`outcomes` of the next message).
  var tellsOutcomes = true
}

/// A reply to a decision: fetch now or not, and when to ask again.
struct ExternalReply: Equatable {
  var fetch: Bool
  /// When to ask again: the reply's `next` (Unix s), or `null` for not
  /// before the app's next open or fetch end, or no `next` for the time
  /// asked for before.
  var next: Next

  enum Next: Equatable {
    case keep, cancel
    case at(Double)
  }

  /// The least time between a decision and the ask-again time it asks for,
  /// s: a shorter one would let a policy stall the replay at one instant.
  static let leastDelayS = 1.0

  /// Parses a reply to a decision at `now`.
  /// - Throws: ``ExternalPolicyError`` (``ExternalPolicyError/Kind/badReply``
  ///   with the line, or ``ExternalPolicyError/Kind/past``).
  static func parse(_ line: String, now: Double, command: String) throws -> ExternalReply {
    let (fetch, next): (Bool, Next)
    if let quick = QuickReply(line) {
      (fetch, next) = (quick.fetch, quick.next)
    } else {
      guard let o = object(line) else { throw bad(line, command: command, why: "is not a JSON object") }
      guard let f = o["fetch"] as? Bool else {
        throw bad(line, command: command, why: "has no boolean \"fetch\"")
      }
      fetch = f
      if o["next"] is NSNull {
        next = .cancel
      } else if let n = o["next"] {
        guard let x = (n as? NSNumber)?.doubleValue, x.isFinite else {
          throw bad(line, command: command, why: "has a \"next\" that is neither a number nor null")
        }
        next = .at(x)
      } else {
        next = .keep
      }
    }
    if case .at(let x) = next {
      guard x >= now else {
        throw ExternalPolicyError(
          .past, command: command,
          detail: "answered with an ask-again time in the past: next = \(jsonNumber(x)) is before now = \(jsonNumber(now)) (reply \(JSONText.quoted(line)))")
      }
      guard x >= now + leastDelayS else {
        throw ExternalPolicyError(
          .past, command: command,
          detail: "answered with an ask-again time less than \(formatDuration(leastDelayS)) after now: next = \(jsonNumber(x)), now = \(jsonNumber(now)) (reply \(JSONText.quoted(line)))")
      }
    }
    return ExternalReply(fetch: fetch, next: next)
  }

  /// The reasons a version 2 process may list in the handshake's `ask`.
  static let askable = ["open", "fetch_done"]
  /// The notes a version 3 process may list in the handshake's `tell`.
  static let tellable = ["opens", "outcomes"]

  /// Checks the handshake's reply: `{"version": 1}`, or `{"version": 2}`
  /// with an optional `"ask": [...]` of ``askable`` reasons, or
  /// `{"version": 3}` with `ask` and an optional `"tell": [...]` of
  /// ``tellable`` notes.
  static func checkHello(_ line: String, command: String) throws -> ExternalHandshake {
    let offered = ExternalMessage.versions.map(String.init).joined(separator: " or ")
    guard let o = object(line) else {
      throw bad(line, command: command, why: "is not a JSON object (the handshake expects {\"version\": \(offered)})")
    }
    guard let v = o["version"] as? NSNumber, let k = ExternalMessage.versions.first(where: { Double($0) == v.doubleValue })
    else {
      throw ExternalPolicyError(
        .version, command: command,
        detail: "speaks another protocol version: it answered the handshake with \(JSONText.quoted(line)); FetchLab speaks version \(offered)")
    }
    var h = ExternalHandshake(version: k)
    if let ask = try names(o, "ask", of: askable, since: 2, version: k, line: line, command: command) {
      h.asksOpen = ask.contains("open")
      h.asksFetchDone = ask.contains("fetch_done")
    }
    if let tell = try names(o, "tell", of: tellable, since: 3, version: k, line: line, command: command) {
      h.tellsOpens = tell.contains("opens")
      h.tellsOutcomes = tell.contains("outcomes")
    }
    return h
  }

  /// The handshake reply's list `key` of names among `allowed` (a key of
  /// protocol version `since` on), or nil when it has none.
  private static func names(
    _ o: [String: Any], _ key: String, of allowed: [String], since: Int, version k: Int, line: String, command: String
  ) throws -> Set<String>? {
    guard let value = o[key] else { return nil }
    guard k >= since, let list = value as? [Any], list.allSatisfy({ ($0 as? String).map(allowed.contains) == true }) else {
      throw ExternalPolicyError(
        .badReply, command: command,
        detail: "sent a handshake reply that does not parse: \(JSONText.quoted(line)) has an \"\(key)\" that is not a list of "
          + allowed.map { "\"\($0)\"" }.joined(separator: ", ")
          + (k >= since ? "" : " (\"\(key)\" is protocol version \(since)'s)"))
    }
    return Set(list.compactMap { $0 as? String })
  }

  private static func object(_ line: String) -> [String: Any]? {
    (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
  }

  private static func bad(_ line: String, command: String, why: String) -> ExternalPolicyError {
    let shown = line.count > 300 ? String(line.prefix(300)) + "…" : line
    return ExternalPolicyError(
      .badReply, command: command,
      detail: "sent a reply that does not parse: \(JSONText.quoted(shown)) \(why); protocol version \(ExternalMessage.version) expects {\"fetch\": true|false, \"next\": <Unix s>|null}")
  }
}

/// The usual reply, `{"fetch":…}` with an optional `"next"`, read without
/// Foundation's JSON parser (a decision's cost is mostly its round trip
/// and parse). Nil for anything else (other keys, escapes, a key twice,
/// odd numbers): ``ExternalReply/parse(_:now:command:)`` then parses it
/// with `JSONSerialization`, so both readings accept the same replies.
struct QuickReply {
  var fetch: Bool
  var next: ExternalReply.Next

  init?(_ line: String) {
    var line = line
    guard let r = line.withUTF8({ Self.read($0) }) else { return nil }
    self = r
  }

  private init(fetch: Bool, next: ExternalReply.Next) {
    self.fetch = fetch
    self.next = next
  }

  private static func read(_ b: UnsafeBufferPointer<UInt8>) -> QuickReply? {
    var i = 0
    func space() { while i < b.count, b[i] == 32 || b[i] == 9 || b[i] == 13 { i += 1 } }
    func take(_ c: UInt8) -> Bool {
      space()
      guard i < b.count, b[i] == c else { return false }
      i += 1
      return true
    }
    func word(_ w: StaticString) -> Bool {
      let n = w.utf8CodeUnitCount
      guard i + n <= b.count else { return false }
      for k in 0..<n where b[i + k] != w.utf8Start[k] { return false }
      i += n
      return true
    }
    var fetch: Bool?
    var next: ExternalReply.Next?
    guard take(123) else { return nil }  // {
    repeat {
      guard take(34) else { return nil }  // "
      if word("fetch\""), fetch == nil, take(58) {
        space()
        if word("true") { fetch = true } else if word("false") { fetch = false } else { return nil }
      } else if word("next\""), next == nil, take(58) {
        space()
        if word("null") {
          next = .cancel
        } else {
          guard let x = number(b, &i) else { return nil }
          next = .at(x)
        }
      } else {
        return nil
      }
    } while take(44)  // ,
    guard take(125), let fetch else { return nil }  // }
    space()
    return i == b.count ? QuickReply(fetch: fetch, next: next ?? .keep) : nil
  }

  /// A JSON number at `i` (`-? int frac? exp?`), finite.
  private static func number(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Double? {
    let start = i
    func digits() -> Int {
      let s = i
      while i < b.count, b[i] >= 48, b[i] <= 57 { i += 1 }
      return i - s
    }
    if i < b.count, b[i] == 45 { i += 1 }
    let intStart = i
    let n = digits()
    guard n > 0, n == 1 || b[intStart] != 48 else { return nil }
    if i < b.count, b[i] == 46 {
      i += 1
      guard digits() > 0 else { return nil }
    }
    if i < b.count, b[i] == 101 || b[i] == 69 {
      i += 1
      if i < b.count, b[i] == 43 || b[i] == 45 { i += 1 }
      guard digits() > 0 else { return nil }
    }
    guard let x = Double(String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self)), x.isFinite
    else { return nil }
    return x
  }
}
