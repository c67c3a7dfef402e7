import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces
import FetchWorld
import Testing

/// Seeded fuzzing of every family's settings: values at and beyond each
/// bound, random ones within, malformed ones and extremes. Each policy
/// string is either refused with a message naming the setting, or replayed
/// on a small trace (or refused by the resource check, naming its
/// settings); never a crash or a hang.
@Suite("Policy setting fuzz")
struct PolicySettingFuzzTests {
  /// The policy string a setting is appended to, and the separator.
  static func base(_ f: any PolicyFamily.Type) -> (String, String) {
    if f.syntax.hasPrefix(f.name + "[:") { return (f.name, ":") }
    let head = f.example.split(separator: ",", maxSplits: 1)[0]
    return (String(head), ",")
  }

  /// A bound of a `lo...hi` range as a number of seconds or a plain number.
  static func bound(_ text: Substring) -> Double? { Double(text) ?? parseDuration(String(text)) }

  /// Values to try for a setting with `range`: the bounds, past them, a
  /// random one within, and malformed text.
  static func values(range: String, rng: inout SplitMix64) -> (inBounds: [String], outOfBounds: [String], malformed: [String]) {
    let malformed = ["", "x", "nan", "inf", "-inf", "1e999", "-", "0x10", "1e", "--1", "1h1h", "\u{7}"]
    let parts = range.components(separatedBy: "...")
    guard parts.count == 2, let lo = bound(Substring(parts[0])), let hi = bound(Substring(parts[1])) else {
      return ([], [], malformed)
    }
    let duration = parseDuration(parts[1]) != nil && Double(parts[1]) == nil
    func text(_ x: Double) -> String { duration ? formatDuration(x) : CSV.number(x) }
    let inside = lo + (hi - lo) * rng.uniform()
    var out = [text(hi == 0 ? 1 : hi * 2), duration ? "\(hi + 1)s" : CSV.number(hi + 1), "1e300"]
    if lo > 0 || !duration { out.append(duration ? "-1s" : CSV.number(lo - 1)) }
    return ([text(lo), text(hi), duration ? "\(inside)s" : CSV.number(inside)], out, malformed)
  }

  /// A small device: two days, one app, a day of training before it.
  static let world = WorldParameters()
  static let trace = TestTraces.user(seed: 5, days: 2, opensPerHour: 1, networkChangesPerDay: 4)
  static let training = TestTraces.user(seed: 6, days: 1, opensPerHour: 1, start: trace.start - 86_400)

  /// Replays `spec` on the small device unless the resource check refuses
  /// it (then its message must name the settings).
  static func replayOrRefuse(_ spec: PolicySpec) {
    print("FUZZ", spec.description)
    if let w = spec.settingWork {
      var limits = ResourceLimits()
      limits.maxPolicySteps = 2e7
      if let m = limits.checkPolicyWork(stepsPerDay: w.stepsPerDay, days: 2, policy: spec.description, settings: w.settings) {
        #expect(m.contains(w.settings) && !w.settings.isEmpty, "\(m)")
        return
      }
    }
    let user = PreparedUser(trace: trace, world: world)
    let r = spec.replay(
      user: user, app: 0, content: ContentTimeline(trace: trace, app: 0, world: world, seed: 1), seed: 1, recordEvents: false,
      learning: spec.learns ? LearningContext(training: training, population: nil) : nil)
    // At most one fetch a second over the window.
    #expect(r.summary.fetches <= 2 * 86_400, "\(spec)")
  }

  @Test("every setting of every family: in bounds replays, past bounds and malformed are refused naming the setting")
  func fuzzEverySetting() throws {
    var rng = SplitMix64(seed: 20_261_128)
    for f in PolicyRegistry.builtInFamilies {
      let (head, separator) = Self.base(f)
      for s in f.settings {
        let v = Self.values(range: s.range, rng: &rng)
        for value in v.inBounds {
          let text = head + separator + s.name + "=" + value
          do {
            Self.replayOrRefuse(try PolicySpec(parsing: text))
          } catch let e as PolicySpecError {
            // Only a combination with the base's own settings may refuse it.
            #expect(e.message.contains(s.name), "\(text): \(e.message)")
          }
        }
        for value in v.outOfBounds + v.malformed {
          let text = head + separator + s.name + "=" + value
          #expect(throws: PolicySpecError.self, "\(text)") { try PolicySpec(parsing: text) }
          if let e = (try? { () throws -> PolicySpecError? in
            do { _ = try PolicySpec(parsing: text) } catch let e as PolicySpecError { return e }
            return nil
          }()) ?? nil {
            #expect(e.message.contains(s.name), "\(text): \(e.message)")
          }
        }
      }
    }
  }

  @Test("random combinations of in-bound settings: each parses and replays, or is refused naming its settings", arguments: 0..<4)
  func fuzzCombinations(seed: UInt64) throws {
    var rng = SplitMix64(seed: 7_000 + seed)
    for f in PolicyRegistry.builtInFamilies where !f.settings.isEmpty {
      let (head, separator) = Self.base(f)
      let settings = f.settings.filter { !head.contains($0.name + "=") }
      var items: [String] = []
      for s in settings where rng.uniform() < 0.5 {
        let v = Self.values(range: s.range, rng: &rng).inBounds
        guard !v.isEmpty else { continue }
        items.append(s.name + "=" + v[Int(rng.uniform() * Double(v.count))])
      }
      guard !items.isEmpty else { continue }
      let text = head + separator + items.joined(separator: ",")
      do {
        Self.replayOrRefuse(try PolicySpec(parsing: text))
      } catch let e as PolicySpecError {
        // Cross-setting rules (a step longer than the horizon, ...) name a setting of the string.
        #expect(items.contains { e.message.contains(String($0.split(separator: "=")[0])) }, "\(text): \(e.message)")
      }
    }
  }
}
