import FetchSupport
import FetchTestSupport
import FetchTraces
import FetchWorld
import Foundation
import Testing


func tempConfig(_ text: String) -> String {
  let path = Scratch.directory("cfg") + "/config.json"
  try! text.write(toFile: path, atomically: true, encoding: .utf8)
  return path
}

@Suite("World parameters and config files")
struct WorldParametersTests {
  @Test("every registry entry reads back the default and accepts its own value")
  func registryRoundTrip() {
    var w = WorldParameters()
    let names = WorldParameters.registry.map(\.name)
    #expect(Set(names).count == names.count, "duplicate parameter names")
    for p in WorldParameters.registry {
      let v = p.value(in: w)
      #expect(w.set(p.name, to: v) == nil, "\(p.name) rejects its default \(v)")
      #expect(!p.source.isEmpty)
    }
    #expect(w == WorldParameters())
    #expect(w.overrides().isEmpty)
  }

  @Test("nested and dotted JSON both override parameters")
  func loadConfig() throws {
    let path = tempConfig("""
      {
        "radio": {"lte": {"tail_s": 11.576, "connected_w": 1.28804}},
        "replay.foreground_refresh": false,
        "network": {"default": "wifi"},
        "content": {"model": "diurnal", "app_rate_per_hour": {"news": 3}},
        "content.diurnal_profile": [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,2]
      }
      """)
    let w = try WorldParameters.load(configPath: path)
    #expect(w.radios.lte.tail[0].durationS == 11.576 && w.radios.lte.connectedPowerW == 1.28804)
    #expect(!w.replay.foregroundRefresh && w.radios.defaultNetwork == .wifi && w.content.model == .diurnal)
    #expect(w.content.appRatePerHour["news"] == 3 && w.content.diurnalProfile[23] == 2)
    #expect(w.overrides().contains("radio.lte.tail_s=11.576"))
  }

  @Test("bad configs name file, line and parameter", arguments: [
    ("{\n  \"radio\": {\n    \"lte\": {\"tail_seconds\": 3}\n  }\n}", 3, "radio.lte.tail_seconds", "unknown parameter"),
    ("{\n  \"device.battery_wh\": -2\n}", 2, "device.battery_wh", "outside"),
    ("{\n  \"replay.foreground_refresh\": 1\n}", 2, "replay.foreground_refresh", "true or false"),
    ("{\n  \"content.model\": \"weibull\"\n}", 2, "content.model", "expected one of"),
    ("{\n  \"fetch.budget_s\": \"long\"\n}", 2, "fetch.budget_s", "finite number"),
    // The line of the key at fault, not of the first key with that name
    // (the old search found the WiFi tail_s on line 3).
    ("{\n  \"radio\": {\n    \"wifi\": {\"tail_s\": 1},\n    \"lte\": {\n      \"tail_s\": -5\n    }\n  }\n}", 5,
     "radio.lte.tail_s", "outside"),
    ("{\n  \"radio.lte.tail_s\": 5,\n  \"radio\": {\"lte\": {\n    \"tail_s\": 6}}\n}", 2, "radio.lte.tail_s", "set twice"),
    ("{\n  \"radio\": {\n    \"lte\": {\"tail_s\": 1,\n      \"tail_s\": 2}}\n}", 4, "tail_s", "duplicate key"),
  ])
  func badConfig(text: String, line: Int, field: String, fragment: String) {
    let path = tempConfig(text)
    do {
      _ = try WorldParameters.load(configPath: path)
      Issue.record("no error")
    } catch let e as TraceFormatError {
      #expect(e.file == path && e.line == line && e.field == field, "\(e)")
      #expect(e.message.contains(fragment), "\(e)")
    } catch {
      Issue.record("unexpected \(error)")
    }
  }

  @Test("invalid JSON is an error, not a crash")
  func invalidJSON() {
    #expect(throws: TraceFormatError.self) { try WorldParameters.load(configPath: tempConfig("{ nope")) }
    #expect(throws: TraceFormatError.self) { try WorldParameters.load(configPath: tempConfig("[1, 2]")) }
    #expect(throws: TraceFormatError.self) { try WorldParameters.load(configPath: "/nonexistent/config.json") }
  }
}

@Suite("Radio profiles")
struct RadioProfileTests {
  let w = WorldParameters()

  @Test("tail energy is monotone and saturates at the full tail")
  func tailEnergy() {
    let r = w.radios.umts3g
    var last = -1.0
    for g in stride(from: 0.0, through: 30, by: 0.5) {
      let e = r.tailEnergy(gap: g)
      #expect(e >= last)
      last = e
    }
    #expect(abs(r.tailEnergy(gap: 1000) - (5 * 0.57 + 12 * 0.401)) < 1e-12)
    #expect(r.promotion(afterGap: 1).timeS == 0)
    #expect(r.promotion(afterGap: 6).timeS == 1.5)
    #expect(r.promotion(afterGap: 60).timeS == 2.0)
  }

  @Test("merging: one interval inside another costs nothing extra; disjoint far apart cost twice")
  func energyOfSets() {
    let r = w.radios.lte
    let a = BusyInterval(start: 0, end: 10)
    let one = r.energy(ofSorted: [a])
    #expect(abs(r.energy(ofSorted: [a, BusyInterval(start: 2, end: 3)]) - one) < 1e-12)
    let far = r.energy(ofSorted: [a, BusyInterval(start: 1000, end: 1010)])
    #expect(abs(far - 2 * one) < 1e-9)
    #expect(r.energy(ofSorted: [BusyInterval]()) == 0)
  }
}

@Suite("Content model")
struct ContentModelTests {
  @Test("Poisson updates have the configured rate; diurnal keeps the mean and follows the profile")
  func rates() {
    var rng = SplitMix64(seed: 9)
    let days = 400.0
    let p = ContentTimeline.sample(
      rate: 2.0 / 3600, model: .poisson, profile: ContentUpdates.ubiqlogHourlyShare, from: 0, to: days * 86_400,
      timeZone: .utc, using: &rng)
    let expected = 2.0 * 24 * days
    #expect(abs(Double(p.count) - expected) < 5 * expected.squareRoot())
    let d = ContentTimeline.sample(
      rate: 2.0 / 3600, model: .diurnal, profile: ContentUpdates.ubiqlogHourlyShare, from: 0, to: days * 86_400,
      timeZone: .utc, using: &rng)
    #expect(abs(Double(d.count) - expected) < 5 * expected.squareRoot())
    var byHour = [Double](repeating: 0, count: 24)
    for t in d { byHour[Int(t.truncatingRemainder(dividingBy: 86_400) / 3600)] += 1 }
    // Night (04–05 h) is far quieter than evening (22–23 h), as in the profile.
    #expect(byHour[4] < 0.2 * byHour[22])
  }

  @Test("timelines are deterministic per (seed, user, app) and NewData sizes per version")
  func deterministic() {
    var t = UserTrace(user: "u", start: 0, end: 86_400 * 3)
    _ = t.appIndex("a")
    _ = t.appIndex("b")
    let w = WorldParameters()
    let a1 = ContentTimeline(trace: t, app: 0, world: w, seed: 5)
    let a2 = ContentTimeline(trace: t, app: 0, world: w, seed: 5)
    let b = ContentTimeline(trace: t, app: 1, world: w, seed: 5)
    #expect(a1.updates == a2.updates && a1.updates != b.updates)
    #expect(a1.newDataBytes(version: 3) == a2.newDataBytes(version: 3))
    #expect(a1.newDataBytes(version: 3) > 0)
  }
}
