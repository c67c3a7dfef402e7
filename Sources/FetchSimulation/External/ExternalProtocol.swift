import FetchSupport
import FetchTraces
import Foundation

/// The `external` protocol's messages (version 1, JSON lines; the
/// reference is `docs/external-protocol.md`): what FetchLab writes, and
/// the parsing of what the process answers.
///
/// Every message is built from the replay's past and present only: the
/// decision's time, the device state at it, the app's own opens (of the
/// training part and of the window so far) and its fetches' outcomes.
/// A session's length, later events and content updates never cross.
enum ExternalMessage {
  /// The protocol's version.
  static let version = 1

  /// The handshake, first line of every process: the protocol, its
  /// version, the run's seed and the policy's own settings.
  static func hello(seed: UInt64, timeoutS: Double, settings: [(String, String)]) -> String {
    let s = settings.map { JSONText.quoted($0.0) + ":" + JSONText.quoted($0.1) }.joined(separator: ",")
    return "{\"type\":\"hello\",\"protocol\":\"fetchlab-external\",\"version\":\(version),\"seed\":\(seed),"
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

  /// A decision opportunity; the reply is `{"fetch": bool, "next": t|null}`.
  /// `prefix` is the fixed `{"type":"decide","device":…,"app":…` part.
  static func decide(
    prefix: String, reason: Reason, ctx: PolicyContext, clock: inout LocalClock, lowBatteryPct: Double,
    outcome: FetchOutcome?
  ) -> String {
    let t = ctx.now
    let offset = clock.local(t) - t
    let battery = ctx.batteryPct.map(jsonNumber) ?? "null"
    let low = ctx.batteryPct.map { $0 < lowBatteryPct && !ctx.isCharging } ?? false
    var m = prefix + ",\"why\":\"" + reason.rawValue + "\",\"now\":" + jsonNumber(t) + ",\"local_hour\":"
      + jsonNumber(clock.hourOfDay(t)) + ",\"weekday\":\(clock.dayOfWeek(t)),\"utc_offset_s\":" + jsonNumber(offset)
      + ",\"network\":\"" + ctx.network.description + "\",\"charging\":" + (ctx.isCharging ? "true" : "false")
      + ",\"battery_pct\":" + battery + ",\"fetch_in_flight\":" + (ctx.fetchInFlight ? "true" : "false")
      + ",\"budget\":null,\"gates\":{\"offline\":" + (ctx.network == .offline ? "true" : "false")
      + ",\"low_battery\":" + (low ? "true" : "false") + "}"
    if let o = outcome {
      m += ",\"outcome\":{\"start\":" + jsonNumber(o.start) + ",\"end\":" + jsonNumber(o.end) + ",\"result\":\""
        + o.result.description + "\",\"bytes\":" + jsonNumber(o.bytes) + ",\"energy_j\":" + jsonNumber(o.energyJ)
        + ",\"network\":\"" + o.network.description + "\"}"
    }
    return m + "}"
  }
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
    guard let o = object(line) else { throw bad(line, command: command, why: "is not a JSON object") }
    guard let f = o["fetch"] as? Bool else {
      throw bad(line, command: command, why: "has no boolean \"fetch\"")
    }
    var next = Next.keep
    if o["next"] is NSNull {
      next = .cancel
    } else if let n = o["next"] {
      guard let x = (n as? NSNumber)?.doubleValue, x.isFinite else {
        throw bad(line, command: command, why: "has a \"next\" that is neither a number nor null")
      }
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
      next = .at(x)
    }
    return ExternalReply(fetch: f, next: next)
  }

  /// Checks the handshake's reply: `{"version": 1}`.
  static func checkHello(_ line: String, command: String) throws {
    guard let o = object(line) else {
      throw bad(line, command: command, why: "is not a JSON object (the handshake expects {\"version\": 1})")
    }
    guard let v = o["version"] as? NSNumber, v.doubleValue == Double(ExternalMessage.version)
    else {
      throw ExternalPolicyError(
        .version, command: command,
        detail: "speaks another protocol version: it answered the handshake with \(JSONText.quoted(line)); FetchLab speaks version \(ExternalMessage.version)")
    }
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
