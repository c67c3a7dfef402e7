import FetchTraces
import Foundation
import Testing
import FetchTestSupport

@testable import FetchModels

func tempPath(_ name: String) -> String {
  Scratch.directory("model") + "/" + name
}

/// A small but complete model file with awkward numbers.
func sampleModelFile() -> ModelFile {
  let beta = [-3.1, 0.1, 1.0 / 3, -2.5e-7, 0.7, -0.123456789012345, 1e-300, 0.25, -0.5, 0.05, -0.31, 0.17]
  let habit = HabitModel(
    coefficients: beta, binSeconds: 900,
    diagnostics: .init(trainingOpens: 42, bins: 2688, iterations: 6, converged: true, fallback: .none, deviance: 1234.5678))
  let population = HabitModel(coefficients: beta.map { $0 / 2 })
  let device = deviceTrace(tz: .fixed(3600), offset: 3600)
  let split = device.start + 21 * 86_400
  let users = [
    ModelFile.UserModels(
      user: "u,1 \"quoted\"", timeZone: .fixed(3600), splitTime: split, windowEnd: device.end,
      lastOpenAny: split - 12.5, lastBattery: BatteryReading(time: split - 900, levelPct: 37.5),
      apps: [
        ModelFile.AppModel(app: "com.example/news", habit: habit, lastOpen: split - 3600.25, trainingOpens: 42),
        ModelFile.AppModel(app: "chat", habit: population, lastOpen: nil, trainingOpens: 0),
      ],
      battery: BatteryModel(fitting: device, from: device.start, to: split),
      network: NetworkModel(fitting: device, from: device.start, to: split)),
    ModelFile.UserModels(
      user: "u2", timeZone: .named("Europe/Vienna"), splitTime: 1e9, windowEnd: 1e9 + 86_400, lastOpenAny: nil,
      lastBattery: nil, apps: [], battery: BatteryModel(), network: NetworkModel()),
  ]
  return ModelFile(
    options: .init(
      apps: "top:3", seed: 7, populationPairs: 128, binSeconds: 900, shapeRidge: 20, interceptRidge: 1e-4,
      evaluation: EvaluationOptions()),
    trainFraction: 0.75, trace: .init(path: "datasets/x/trace.csv", bytes: 123_456), population: population,
    users: users)
}

/// Writes `file`, lets `edit` change its JSON object, writes that, and
/// returns the error of loading it.
func loadError(_ edit: (inout [String: Any]) -> Void) throws -> String {
  let path = tempPath("m.json")
  try sampleModelFile().write(to: path)
  var object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as! [String: Any]
  edit(&object)
  try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
  do {
    _ = try ModelFile.load(path: path)
    return "no error"
  } catch let e as ModelFileError {
    #expect(e.description.hasPrefix(path + (e.line.map { ":\($0)" } ?? "") + ": "))
    return e.message
  }
}

@Test("model-file errors give the line of the value at fault")
func modelFileErrorLines() throws {
  let path = tempPath("pretty.json")
  try sampleModelFile().write(to: path)
  var object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as! [String: Any]
  var users = object["users"] as! [[String: Any]]
  users[1]["split_s"] = "noon"
  object["users"] = users
  let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
  try data.write(to: URL(fileURLWithPath: path))
  let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
  do {
    _ = try ModelFile.load(path: path)
    Issue.record("no error")
  } catch let e as ModelFileError {
    let line = try #require(e.line, "\(e)")
    #expect(lines[line - 1].contains("\"split_s\"") && lines[line - 1].contains("noon"), "line \(line): \(lines[line - 1])")
    #expect(e.description.hasPrefix("\(path):\(line): 'users[1].split_s'"), "\(e)")
  }
}

@Suite("Model files")
struct ModelFileTests {
  @Test("round-trips exactly; the streaming writer gives the encoder's bytes")
  func roundTrip() throws {
    let file = sampleModelFile()
    let path = tempPath("model.json")
    try file.write(to: path)
    let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    #expect(try file.encoded() == bytes)
    let back = try ModelFile.load(path: path)
    #expect(back == file)
    #expect(back.users[0].apps[0].habit.coefficients == file.users[0].apps[0].habit.coefficients)
    #expect(back.users[1].timeZone == .named("Europe/Vienna"))
    // Writing what was read gives the same bytes.
    let again = tempPath("again.json")
    try back.write(to: again)
    #expect(try Data(contentsOf: URL(fileURLWithPath: again)) == bytes)
    // No temporary file is left behind.
    let dir = URL(fileURLWithPath: path).deletingLastPathComponent().path
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["model.json"])
  }

  @Test("the document is versioned, with sorted snake_case keys")
  func layout() throws {
    let text = String(decoding: try sampleModelFile().encoded(), as: UTF8.self)
    #expect(text.hasPrefix("{\"device_population\":{"))
    #expect(text.contains("},\"format\":\"fetchlab-model\",\"options\":{"))
    #expect(text.hasSuffix("],\"version\":2}"))
    for key in ["\"train_fraction\":0.75", "\"split_s\":", "\"end_s\":", "\"last_open_any_s\":", "\"last_open_s\":",
      "\"time_zone\":\"+01:00\"", "\"charging_probability_by_hour_of_week\":", "\"wifi_probability_by_hour_of_week\":",
      "\"path\":\"datasets/x/trace.csv\""]
    {
      #expect(text.contains(key), "\(key)")
    }
    // A user without a last open has no such key.
    #expect(text.components(separatedBy: "\"last_open_any_s\"").count == 2)
  }

  @Test("load errors name the file and what is wrong")
  func errors() throws {
    let path = tempPath("bad.json")
    try "{\"format\": \"fetchlab-model\", ".write(toFile: path, atomically: true, encoding: .utf8)
    #expect(throws: ModelFileError.self) { try ModelFile.load(path: path) }
    do { _ = try ModelFile.load(path: path) } catch let e as ModelFileError {
      #expect(e.description.hasPrefix("\(path):1: not JSON: field -: "), "\(e)")
    }
    let missing = tempPath("none.json")
    do { _ = try ModelFile.load(path: missing) } catch let e as ModelFileError {
      #expect(e.description.hasPrefix("\(missing): cannot read"), "\(e)")
    }

    let format = try loadError { $0["format"] = "fetchlab-trace" }
    #expect(format.contains("not a FetchLab model file") && format.contains("\"fetchlab-trace\""), "\(format)")
    let noFormat = try loadError { $0["format"] = nil }
    #expect(noFormat.contains("no 'format' field"), "\(noFormat)")
    let version = try loadError { $0["version"] = 3 }
    #expect(version == "unsupported version 3 (this build reads version 2)", "\(version)")
    let old = try loadError { $0["version"] = 1 }
    #expect(old.hasPrefix("unsupported version 1 (this build reads version 2); it predates the state-aware device models: refit"), "\(old)")
    let device = try loadError {
      $0["device_population"] = ["plugged": ["family": "logistic", "coefficients": [0.1, 0.2], "rows": 3, "residual_sd": 0]]
    }
    #expect(device.contains("device_population.plugged") && device.contains("need a logistic model with 17 coefficients, got logistic with 2"), "\(device)")
    let missingField = try loadError { $0["population"] = nil }
    #expect(missingField == "'population': missing field", "\(missingField)")
    let mistyped = try loadError { o in
      var users = o["users"] as! [[String: Any]]
      users[1]["split_s"] = "noon"
      o["users"] = users
    }
    #expect(mistyped.hasPrefix("'users[1].split_s': wrong type"), "\(mistyped)")
    let nested = try loadError { o in
      var users = o["users"] as! [[String: Any]]
      var apps = users[0]["apps"] as! [[String: Any]]
      apps[1]["training_opens"] = nil
      users[0]["apps"] = apps
      o["users"] = users
    }
    #expect(nested == "'users[0].apps[1].training_opens': missing field", "\(nested)")
    let coefficients = try loadError { o in
      var users = o["users"] as! [[String: Any]]
      var apps = users[0]["apps"] as! [[String: Any]]
      var habit = apps[0]["habit"] as! [String: Any]
      habit["coefficients"] = [0.1, 0.2, 0.3]
      apps[0]["habit"] = habit
      users[0]["apps"] = apps
      o["users"] = users
    }
    #expect(
      coefficients.hasPrefix("'users[0].apps[0].habit.coefficients': 3 coefficients, but HabitModel.featureNames has 12 (intercept, "),
      "\(coefficients)")
    let zone = try loadError { o in
      var users = o["users"] as! [[String: Any]]
      users[1]["time_zone"] = "Mars/Olympus"
      o["users"] = users
    }
    #expect(zone.hasPrefix("'users[1].time_zone': unknown time zone 'Mars/Olympus'"), "\(zone)")
    let battery = try loadError { o in
      var users = o["users"] as! [[String: Any]]
      var b = users[0]["battery"] as! [String: Any]
      b["charging_probability_by_hour_of_week"] = [0.5]
      users[0]["battery"] = b
      o["users"] = users
    }
    #expect(battery.hasPrefix("'users[0].battery.charging_probability_by_hour_of_week': need 168"), "\(battery)")
    let array = tempPath("array.json")
    try "[1, 2]".write(toFile: array, atomically: true, encoding: .utf8)
    do { _ = try ModelFile.load(path: array) } catch let e as ModelFileError {
      #expect(e.message.contains("top level is not a JSON object"), "\(e)")
    }
  }
}
