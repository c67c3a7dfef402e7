import FetchSupport
import FetchTraces
import Foundation

/// The models `fetchlab fit` learns, as one versioned JSON document.
///
/// Layout (compact JSON, keys sorted, numbers in shortest round-trip form;
/// times are Unix seconds):
///
/// ```
/// {
///   "device_population": { DeviceModels }, // population device GLMs (training data)
///   "format": "fetchlab-model",            // always
///   "options": { … },                      // FitOptions: how it was fitted
///   "population": { HabitModel },          // the population habit model
///   "trace": { "path": "…", "bytes": N },  // the input
///   "train_fraction": 0.75,
///   "users": [                             // in trace order
///     { "user": "u1", "time_zone": "+01:00",
///       "split_s": …, "end_s": …,          // training window end, trace end
///       "last_open_any_s": …,              // last open of any app before the split (absent if none)
///       "last_battery": { "time_s": …, "level_pct": … },   // absent if none
///       "apps": [ { "app": "news", "habit": { HabitModel },
///                   "last_open_s": …,      // last open of this app before the split (absent if none)
///                   "training_opens": N } ],
///       "battery": { BatteryModel }, "network": { NetworkModel },
///       "device": { DeviceModels } } ],   // the user's device GLMs
///   "version": 2
/// }
/// ```
///
/// The last-open times let a policy continue predicting from the split:
/// the ``Recency`` at the split is `split − last open`.
///
/// Version policy: a change that old readers would misread bumps
/// ``currentVersion``; ``load(path:)`` rejects other versions by name.
/// Version 2 added the state-aware device models (``DeviceModels``) and
/// fitted the hour-of-week tables' priors on the training data; version 1
/// files are refused with a request to refit.
package struct ModelFile: Codable, Sendable, Equatable {
  /// The `format` value of every model file.
  package static let formatName = "fetchlab-model"
  /// The version this build writes and reads.
  package static let currentVersion = 2

  /// How the models were fitted.
  package var options: FitOptions
  /// Share of each user's window used for training.
  package var trainFraction: Double
  /// The input trace.
  package var trace: TraceInfo
  /// The population habit model every pair was shrunk toward.
  package var population: HabitModel
  /// The population device models every user's was shrunk toward.
  package var devicePopulation: DeviceModels
  /// Per user, in trace order.
  package var users: [UserModels]

  package init(
    options: FitOptions, trainFraction: Double, trace: TraceInfo, population: HabitModel,
    devicePopulation: DeviceModels = DeviceModels(), users: [UserModels] = []
  ) {
    self.options = options
    self.trainFraction = trainFraction
    self.trace = trace
    self.population = population
    self.devicePopulation = devicePopulation
    self.users = users
  }

  /// The input trace of a fit.
  package struct TraceInfo: Codable, Sendable, Equatable {
    /// As given on the command line.
    package var path: String
    /// File size, bytes.
    package var bytes: Int

    package init(path: String, bytes: Int) {
      self.path = path
      self.bytes = bytes
    }
  }

  /// The settings of a fit (everything but the train fraction and input).
  package struct FitOptions: Codable, Sendable, Equatable {
    /// The `--apps` selection, e.g. `top:3`.
    package var apps: String
    /// The `--seed` (selects the population sample).
    package var seed: UInt64
    /// Cap on (user, app) pairs in the population fit.
    package var populationPairs: Int
    /// Habit-model bin length, s.
    package var binSeconds: Double
    /// Ridge on the habit model's shape coefficients.
    package var shapeRidge: Double
    /// Ridge on the habit model's intercept.
    package var interceptRidge: Double
    /// How the held-out windows were scored.
    package var evaluation: EvaluationOptions
    /// Horizons, grid and shrinkage of the device models.
    package var device: DeviceModelOptions

    package init(
      apps: String, seed: UInt64, populationPairs: Int, binSeconds: Double, shapeRidge: Double,
      interceptRidge: Double, evaluation: EvaluationOptions, device: DeviceModelOptions = DeviceModelOptions()
    ) {
      self.device = device
      self.apps = apps
      self.seed = seed
      self.populationPairs = populationPairs
      self.binSeconds = binSeconds
      self.shapeRidge = shapeRidge
      self.interceptRidge = interceptRidge
      self.evaluation = evaluation
    }

    enum CodingKeys: String, CodingKey {
      case apps, seed, evaluation, device
      case populationPairs = "population_pairs", binSeconds = "bin_s"
      case shapeRidge = "shape_ridge", interceptRidge = "intercept_ridge"
    }
  }

  /// One user's models and the state at the split.
  package struct UserModels: Codable, Sendable, Equatable {
    package var user: String
    package var timeZone: TraceTimeZone
    /// End of the training window (start of the test window), Unix s.
    package var splitTime: Double
    /// End of the trace's window, Unix s.
    package var windowEnd: Double
    /// Last open of any app before the split, Unix s.
    package var lastOpenAny: Double?
    /// Last battery sample before the split.
    package var lastBattery: BatteryReading?
    /// The selected apps, most-opened first.
    package var apps: [AppModel]
    package var battery: BatteryModel
    package var network: NetworkModel
    /// The user's state-aware device models.
    package var device: DeviceModels

    package init(
      user: String, timeZone: TraceTimeZone, splitTime: Double, windowEnd: Double, lastOpenAny: Double?,
      lastBattery: BatteryReading?, apps: [AppModel], battery: BatteryModel, network: NetworkModel,
      device: DeviceModels = DeviceModels()
    ) {
      self.device = device
      self.user = user
      self.timeZone = timeZone
      self.splitTime = splitTime
      self.windowEnd = windowEnd
      self.lastOpenAny = lastOpenAny
      self.lastBattery = lastBattery
      self.apps = apps
      self.battery = battery
      self.network = network
    }

    enum CodingKeys: String, CodingKey {
      case user, apps, battery, network, device
      case timeZone = "time_zone", splitTime = "split_s", windowEnd = "end_s"
      case lastOpenAny = "last_open_any_s", lastBattery = "last_battery"
    }

    package init(from decoder: any Decoder) throws {
      let c = try decoder.container(keyedBy: CodingKeys.self)
      user = try c.decode(String.self, forKey: .user)
      let tz = try c.decode(String.self, forKey: .timeZone)
      guard let zone = TraceTimeZone(parsing: tz) else {
        throw DecodingError.dataCorruptedError(
          forKey: .timeZone, in: c, debugDescription: "unknown time zone '\(tz)' (use UTC, +HH:MM or an IANA name)")
      }
      timeZone = zone
      splitTime = try c.decode(Double.self, forKey: .splitTime)
      windowEnd = try c.decode(Double.self, forKey: .windowEnd)
      guard splitTime.isFinite, windowEnd.isFinite, splitTime <= windowEnd else {
        throw DecodingError.dataCorruptedError(
          forKey: .windowEnd, in: c, debugDescription: "need finite split_s ≤ end_s, got \(splitTime), \(windowEnd)")
      }
      lastOpenAny = try c.decodeIfPresent(Double.self, forKey: .lastOpenAny)
      lastBattery = try c.decodeIfPresent(BatteryReading.self, forKey: .lastBattery)
      apps = try c.decode([AppModel].self, forKey: .apps)
      battery = try c.decode(BatteryModel.self, forKey: .battery)
      network = try c.decode(NetworkModel.self, forKey: .network)
      device = try c.decode(DeviceModels.self, forKey: .device)
    }

    package func encode(to encoder: any Encoder) throws {
      var c = encoder.container(keyedBy: CodingKeys.self)
      try c.encode(user, forKey: .user)
      try c.encode(timeZone.description, forKey: .timeZone)
      try c.encode(splitTime, forKey: .splitTime)
      try c.encode(windowEnd, forKey: .windowEnd)
      try c.encodeIfPresent(lastOpenAny, forKey: .lastOpenAny)
      try c.encodeIfPresent(lastBattery, forKey: .lastBattery)
      try c.encode(apps, forKey: .apps)
      try c.encode(battery, forKey: .battery)
      try c.encode(network, forKey: .network)
      try c.encode(device, forKey: .device)
    }
  }

  /// One (user, app) habit model.
  package struct AppModel: Codable, Sendable, Equatable {
    /// The app's name in the trace.
    package var app: String
    package var habit: HabitModel
    /// Last open of this app before the split, Unix s.
    package var lastOpen: Double?
    /// Opens of the app in the training window.
    package var trainingOpens: Int

    package init(app: String, habit: HabitModel, lastOpen: Double?, trainingOpens: Int) {
      self.app = app
      self.habit = habit
      self.lastOpen = lastOpen
      self.trainingOpens = trainingOpens
    }

    enum CodingKeys: String, CodingKey {
      case app, habit
      case lastOpen = "last_open_s", trainingOpens = "training_opens"
    }
  }

  enum CodingKeys: String, CodingKey {
    case format, version, options, trace, population, users
    case devicePopulation = "device_population"
    case trainFraction = "train_fraction"
  }

  package init(from decoder: any Decoder) throws {
    let c = try decoder.container(keyedBy: CodingKeys.self)
    let format = try c.decode(String.self, forKey: .format)
    guard format == Self.formatName else {
      throw DecodingError.dataCorruptedError(
        forKey: .format, in: c, debugDescription: "format is '\(format)', expected '\(Self.formatName)'")
    }
    let version = try c.decode(Int.self, forKey: .version)
    guard version == Self.currentVersion else {
      throw DecodingError.dataCorruptedError(
        forKey: .version, in: c, debugDescription: "unsupported version \(version) (this build reads version \(Self.currentVersion))")
    }
    options = try c.decode(FitOptions.self, forKey: .options)
    trainFraction = try c.decode(Double.self, forKey: .trainFraction)
    trace = try c.decode(TraceInfo.self, forKey: .trace)
    population = try c.decode(HabitModel.self, forKey: .population)
    devicePopulation = try c.decode(DeviceModels.self, forKey: .devicePopulation)
    users = try c.decode([UserModels].self, forKey: .users)
  }

  package func encode(to encoder: any Encoder) throws {
    var c = encoder.container(keyedBy: CodingKeys.self)
    try c.encode(Self.formatName, forKey: .format)
    try c.encode(Self.currentVersion, forKey: .version)
    try c.encode(options, forKey: .options)
    try c.encode(trainFraction, forKey: .trainFraction)
    try c.encode(trace, forKey: .trace)
    try c.encode(population, forKey: .population)
    try c.encode(devicePopulation, forKey: .devicePopulation)
    try c.encode(users, forKey: .users)
  }

  // MARK: - Reading and writing

  /// The encoder of model files: compact, sorted keys, `/` unescaped.
  static func makeEncoder() -> JSONEncoder {
    let e = JSONEncoder()
    e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return e
  }

  /// The document as bytes (what ``write(to:)`` and ``Writer`` produce).
  package func encoded() throws -> Data { try Self.makeEncoder().encode(self) }

  /// Writes the file atomically (temporary name, then rename).
  package func write(to path: String) throws {
    let w = try Writer(path: path, header: self)
    for u in users { try w.append(u) }
    try w.commit()
  }

  /// Reads and checks a model file.
  ///
  /// - Throws: ``ModelFileError`` naming the file and what is wrong: cannot
  ///   read, not JSON, not a FetchLab model file, an unsupported version, a
  ///   missing or mistyped field (with its coding path, e.g.
  ///   `users[2].apps[0].habit.coefficients`), or a habit model whose
  ///   coefficients do not match ``HabitModel/featureNames``.
  package static func load(path: String) throws -> ModelFile {
    var isDir: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir), !isDir.boolValue else {
      throw ModelFileError(path, isDir.boolValue ? "cannot read: a directory, not a model file" : "cannot read: no such file")
    }
    guard let data = FileManager.default.contents(atPath: path) else {
      throw ModelFileError(path, "cannot read: \(String(cString: strerror(errno == 0 ? EACCES : errno)))")
    }
    let json: Any
    do {
      json = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
    } catch {
      // Foundation's parser says neither where nor what: ours does.
      do {
        _ = try LocatedJSON.parse(String(decoding: data, as: UTF8.self))
      } catch {
        throw ModelFileError(path, "not JSON: field \(error.field): \(error.message)", line: error.line)
      }
      throw ModelFileError(path, "not JSON", line: 1)
    }
    guard let top = json as? [String: Any] else {
      throw ModelFileError(path, "not a FetchLab model file: the top level is not a JSON object")
    }
    guard let format = top["format"] as? String, format == formatName else {
      let found = top["format"].map { "format is \(describeJSON($0))" } ?? "no 'format' field"
      throw ModelFileError(path, "not a FetchLab model file: \(found), expected \"\(formatName)\"")
    }
    guard let version = top["version"] as? Int else {
      throw ModelFileError(path, "'version': missing or not an integer")
    }
    guard version == currentVersion else {
      let hint = version < currentVersion ? "; it predates the state-aware device models: refit it with 'fetchlab fit'" : ""
      throw ModelFileError(path, "unsupported version \(version) (this build reads version \(currentVersion))\(hint)")
    }
    do {
      return try JSONDecoder().decode(ModelFile.self, from: data)
    } catch let e as DecodingError {
      throw ModelFileError(path, describe(e, json: json), line: line(of: e, in: [UInt8](data)))
    } catch {
      throw ModelFileError(path, "\(error)")
    }
  }

  /// A decoding error in words, with its coding path; coefficient arrays of
  /// the wrong length are named as such.
  static func describe(_ e: DecodingError, json: Any) -> String {
    func pathText(_ path: [any CodingKey]) -> String {
      var s = ""
      for k in path {
        if let i = k.intValue { s += "[\(i)]" } else { s += (s.isEmpty ? "" : ".") + k.stringValue }
      }
      return s
    }
    switch e {
    case .keyNotFound(let key, let c):
      let p = pathText(c.codingPath + [key])
      return "'\(p)': missing field"
    case .typeMismatch(let type, let c):
      return "'\(pathText(c.codingPath))': wrong type, expected \(type)"
    case .valueNotFound(let type, let c):
      return "'\(pathText(c.codingPath))': null, expected \(type)"
    case .dataCorrupted(let c):
      let p = pathText(c.codingPath)
      if c.codingPath.last?.stringValue == "coefficients", let values = value(at: c.codingPath, in: json) as? [Any],
        values.count != HabitModel.featureNames.count
      {
        return "'\(p)': \(values.count) coefficients, but HabitModel.featureNames has \(HabitModel.featureNames.count) (\(HabitModel.featureNames.joined(separator: ", ")))"
      }
      return (p.isEmpty ? "" : "'\(p)': ") + c.debugDescription
    @unknown default:
      return "\(e)"
    }
  }

  /// The 1-based line of the value a decoding error is about (the deepest
  /// part of its coding path present in `bytes`), or `nil`.
  static func line(of e: DecodingError, in bytes: [UInt8]) -> Int? {
    let path: [any CodingKey]
    switch e {
    case .keyNotFound(_, let c), .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c): path = c.codingPath
    @unknown default: return nil
    }
    var i = 0
    func space() { while i < bytes.count, [9, 10, 13, 32].contains(bytes[i]) { i += 1 } }
    func skipString() {
      i += 1
      while i < bytes.count, bytes[i] != UInt8(ascii: "\"") { i += bytes[i] == UInt8(ascii: "\\") ? 2 : 1 }
      i += 1
    }
    func skipValue() {
      space()
      guard i < bytes.count else { return }
      if bytes[i] == UInt8(ascii: "\"") { return skipString() }
      if bytes[i] == UInt8(ascii: "{") || bytes[i] == UInt8(ascii: "[") {
        var depth = 0
        while i < bytes.count {
          switch bytes[i] {
          case UInt8(ascii: "\""): skipString(); continue
          case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
          case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
          default: break
          }
          i += 1
          if depth == 0 { return }
        }
        return
      }
      while i < bytes.count, ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]")].contains(bytes[i]) { i += 1 }
    }
    /// Moves `i` to the value of `key` in the object or array at `i`.
    func enter(_ key: any CodingKey) -> Bool {
      space()
      guard i < bytes.count else { return false }
      if bytes[i] == UInt8(ascii: "["), let n = key.intValue {
        i += 1
        for _ in 0..<n {
          skipValue()
          space()
          guard i < bytes.count, bytes[i] == UInt8(ascii: ",") else { return false }
          i += 1
        }
        space()
        return true
      }
      guard bytes[i] == UInt8(ascii: "{") else { return false }
      i += 1
      while true {
        space()
        guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { return false }
        let start = i + 1
        skipString()
        let name = String(decoding: bytes[start..<max(start, i - 1)], as: UTF8.self)
        space()
        guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return false }
        i += 1
        space()
        if name == key.stringValue { return true }
        skipValue()
        space()
        guard i < bytes.count, bytes[i] == UInt8(ascii: ",") else { return false }
        i += 1
      }
    }
    space()
    var found = i
    for k in path {
      guard enter(k) else { break }
      found = i
    }
    guard found < bytes.count else { return nil }
    return bytes[..<found].reduce(1) { $1 == 10 ? $0 + 1 : $0 }
  }

  /// The JSON value at a coding path, if there is one.
  static func value(at path: [any CodingKey], in json: Any) -> Any? {
    var cur: Any? = json
    for k in path {
      if let i = k.intValue, let a = cur as? [Any] {
        cur = i >= 0 && i < a.count ? a[i] : nil
      } else if let o = cur as? [String: Any] {
        cur = o[k.stringValue]
      } else {
        return nil
      }
    }
    return cur
  }

  static func describeJSON(_ v: Any) -> String {
    if let s = v as? String { return "\"\(s)\"" }
    if v is NSNull { return "null" }
    return "\(v)"
  }

  /// Streams a model file to disk user by user, so memory does not grow
  /// with the number of users. The bytes equal ``encoded()`` of the same
  /// document. Written under a temporary name, renamed by ``commit()``.
  package final class Writer {
    private let file: AtomicTextFile
    private let encoder = ModelFile.makeEncoder()
    private var users = 0
    private let suffix: String
    private var prepared = false
    private var hasher = SHA256()

    /// The SHA-256 of the bytes written so far (of the whole file after
    /// ``prepare()``), as 64 lowercase hex digits.
    package var sha256: String { hasher.hexDigest() }

    private func write(_ text: String) throws {
      hasher.update(text)
      try file.write(text)
    }

    /// Starts a file with everything of `header` except its users.
    package init(path: String, header: ModelFile) throws {
      var empty = header
      empty.users = []
      let text = String(decoding: try encoder.encode(empty), as: UTF8.self)
      // Keys are sorted: "users" then "version" end the document.
      let tail = "\"users\":[],\"version\":\(ModelFile.currentVersion)}"
      precondition(text.hasSuffix(tail), "unexpected model file layout")
      file = try AtomicTextFile(path: path)
      suffix = "],\"version\":\(ModelFile.currentVersion)}"
      try write(String(text.dropLast(tail.count)) + "\"users\":[")
    }

    /// Appends one user.
    package func append(_ user: UserModels) throws {
      let text = String(decoding: try encoder.encode(user), as: UTF8.self)
      try write((users > 0 ? "," : "") + text)
      users += 1
    }

    /// Finishes the document on disk under its temporary name (see
    /// ``AtomicTextFile/prepare()``); ``commit()`` then only renames it.
    package func prepare() throws {
      if !prepared {
        try write(suffix)
        prepared = true
      }
      try file.prepare()
    }

    /// Finishes the document and moves it into place.
    package func commit() throws {
      try prepare()
      try file.commit()
    }
  }
}

/// A model file that cannot be used; the description is `path: message`.
package struct ModelFileError: Error, CustomStringConvertible, Sendable, Equatable {
  /// The file.
  package let path: String
  /// What is wrong, in words.
  package let message: String
  /// 1-based line of the value at fault, when known.
  package let line: Int?

  init(_ path: String, _ message: String, line: Int? = nil) {
    self.path = path
    self.message = message
    self.line = line
  }

  /// `path:line: message`, or `path: message` without a line.
  package var description: String { "\(path)" + (line.map { ":\($0)" } ?? "") + ": \(message)" }
}
