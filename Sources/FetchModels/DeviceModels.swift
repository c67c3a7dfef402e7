import FetchTraces
import Foundation

/// What a device model predicts at a moment `t`, from the state at `t`.
package enum DeviceTarget: String, CaseIterable, Codable, Sendable {
  /// The phone is on the charger at some moment of [t, t + h] (binary).
  case plugged = "plugged_within"
  /// The phone is on WiFi at t + h (binary).
  case wifi = "wifi_at"
  /// The phone is offline at t + h (binary).
  case offline = "offline_at"
  /// The battery level change from t to t + h, percentage points (Gaussian).
  case level = "level_change"

  /// Whether the target is a yes/no event (else a real number).
  package var isBinary: Bool { self != .level }
}

/// Horizons, grid and shrinkage of the device models.
package struct DeviceModelOptions: Codable, Sendable, Equatable {
  /// Horizon of ``DeviceTarget/plugged``, s (default 3600).
  package var pluggedHorizonSeconds: Double
  /// Horizon of ``DeviceTarget/wifi`` and ``DeviceTarget/offline``, s (default 1800).
  package var networkHorizonSeconds: Double
  /// Horizon of ``DeviceTarget/level``, s (default 3600).
  package var levelHorizonSeconds: Double
  /// Spacing of training and test points, s (default 900).
  package var gridSeconds: Double
  /// λ of a user's fit toward the population coefficients (default 20).
  package var userRidge: Double
  /// λ of the population fit toward zero (default 1: only keeps it finite).
  package var populationRidge: Double

  package init(
    pluggedHorizonSeconds: Double = 3600, networkHorizonSeconds: Double = 1800, levelHorizonSeconds: Double = 3600,
    gridSeconds: Double = 900, userRidge: Double = 20, populationRidge: Double = 1
  ) {
    precondition(
      [pluggedHorizonSeconds, networkHorizonSeconds, levelHorizonSeconds, gridSeconds].allSatisfy { $0 > 0 && $0.isFinite },
      "device horizons and grid must be finite and > 0")
    precondition(userRidge > 0 && populationRidge > 0, "ridges must be > 0")
    self.pluggedHorizonSeconds = pluggedHorizonSeconds
    self.networkHorizonSeconds = networkHorizonSeconds
    self.levelHorizonSeconds = levelHorizonSeconds
    self.gridSeconds = gridSeconds
    self.userRidge = userRidge
    self.populationRidge = populationRidge
  }

  /// The horizon of `target`, s.
  package func horizon(_ target: DeviceTarget) -> Double {
    switch target {
    case .plugged: pluggedHorizonSeconds
    case .wifi, .offline: networkHorizonSeconds
    case .level: levelHorizonSeconds
    }
  }

  enum CodingKeys: String, CodingKey {
    case pluggedHorizonSeconds = "plugged_horizon_s", networkHorizonSeconds = "network_horizon_s"
    case levelHorizonSeconds = "level_horizon_s", gridSeconds = "grid_s"
    case userRidge = "user_ridge", populationRidge = "population_ridge"
  }
}

/// One training or test point of a device target.
package struct DevicePoint: Sendable, Equatable {
  /// Unix time, s.
  package var time: Double
  /// Feature row (``DeviceFeatures``).
  package var features: [Double]
  /// Outcome: 0/1, or the level change in percentage points.
  package var outcome: Double
  /// The current state: charging targets 0 unplugged / 1 plugged; network
  /// targets the ``DeviceTimeline/NetworkClass`` raw value.
  package var state: Int
  /// Local hour of day of `time`, 0...23.
  package var hour: Int
}

/// The feature rows of the device models. All share the shape
/// `[1, state indicators, log(1 + hours in state) and its interactions with
/// the state, battery level, hour-of-day harmonics and their interactions
/// with the state, weekend]`:
///
/// - charging targets (plugged, level), 17 values:
///   `1, s, d, s·d, L, s·L, low, wifi, h₁…h₄, s·h₁…s·h₄, weekend` with s = 1
///   when plugged, d = log(1 + hours since the state began), L = level/100
///   (0.5 when no sample yet), low = max(0, 0.3 − L)/0.3, wifi = 1 when on
///   WiFi (0 if unknown), h = (sin, cos)(2πk·hour/24) for k = 1, 2;
/// - network targets, 17 values:
///   `1, w, o, d, w·d, o·d, L, plugged, h₁…h₄, w·h₁…w·h₄, weekend` with w, o
///   the WiFi / offline indicators (cellular is the reference class).
///
/// The hour and weekend are those of `t` (local time).
package enum DeviceFeatures {
  /// Features per row of the charging targets.
  package static let chargingCount = 17
  /// Features per row of the network targets.
  package static let networkCount = 17

  /// The point for `target` at `t`, or nil when the state at `t` or the
  /// outcome is unknown. Outcomes look at (t, t + horizon] only.
  package static func point(
    _ target: DeviceTarget, at t: Double, horizon h: Double, timeline d: DeviceTimeline, clock: inout LocalClock
  ) -> DevicePoint? {
    let hour = min(23, max(0, Int(clock.hourOfDay(t))))
    let levelNow = d.level(at: t)
    let level = levelNow?.level ?? 50
    switch target {
    case .plugged, .level:
      guard let c = d.charging(at: t) else { return nil }
      let x = chargingRow(
        plugged: c.plugged, since: c.since, wifi: d.network(at: t)?.kind == .wifi, level: level, at: t, clock: &clock)
      let y: Double
      if target == .plugged {
        guard let p = d.pluggedWithin(h, from: t) else { return nil }
        y = p ? 1 : 0
      } else {
        // Level change between samples no older than 1 h at both ends.
        guard let now = levelNow, t - now.time <= 3600, let later = d.level(at: t + h), t + h - later.time <= 3600,
          later.time > t
        else { return nil }
        y = later.level - now.level
      }
      return DevicePoint(time: t, features: x, outcome: y, state: c.plugged ? 1 : 0, hour: hour)
    case .wifi, .offline:
      guard let n = d.network(at: t), let later = d.network(at: t + h) else { return nil }
      let x = networkRow(
        network: n.kind, since: n.since, plugged: d.charging(at: t)?.plugged == true, level: level, at: t, clock: &clock)
      let y = (target == .wifi ? later.kind == .wifi : later.kind == .offline) ? 1.0 : 0
      return DevicePoint(time: t, features: x, outcome: y, state: n.kind.rawValue, hour: hour)
    }
  }

  /// The charging-target feature row for a state: plugged or not since
  /// `since`, on WiFi or not, `level` % (see the type's docs).
  package static func chargingRow(
    plugged: Bool, since: Double, wifi: Bool, level: Double, at t: Double, clock: inout LocalClock
  ) -> [Double] {
    let (h, weekend) = timeFeatures(t, &clock)
    let s = plugged ? 1.0 : 0, L = level / 100
    let dur = log1p(max(0, t - since) / 3600)
    return [1, s, dur, s * dur, L, s * L, max(0, 0.3 - L) / 0.3, wifi ? 1 : 0] + h + h.map { s * $0 } + [weekend]
  }

  /// The network-target feature row for a state: class `n` since `since`.
  package static func networkRow(
    network n: DeviceTimeline.NetworkClass, since: Double, plugged: Bool, level: Double, at t: Double,
    clock: inout LocalClock
  ) -> [Double] {
    let (h, weekend) = timeFeatures(t, &clock)
    let w = n == .wifi ? 1.0 : 0, o = n == .offline ? 1.0 : 0
    let dur = log1p(max(0, t - since) / 3600)
    return [1, w, o, dur, w * dur, o * dur, level / 100, plugged ? 1 : 0] + h + h.map { w * $0 } + [weekend]
  }

  /// Hour-of-day harmonics (k = 1, 2) and the weekend flag of `t`, local time.
  static func timeFeatures(_ t: Double, _ clock: inout LocalClock) -> ([Double], Double) {
    let a = 2 * Double.pi * clock.hourOfDay(t) / 24
    return ([sin(a), cos(a), sin(2 * a), cos(2 * a)], clock.dayOfWeek(t) >= 5 ? 1 : 0)
  }

  /// The points of `target` on the grid `t = k·grid` with [t, t + horizon]
  /// inside [`from`, `to`] (so training outcomes never look past `to`).
  ///
  /// - Complexity: O((to − from)/grid · log rows).
  package static func points(
    _ target: DeviceTarget, trace: UserTrace, timeline: DeviceTimeline, from: Double, to: Double,
    options: DeviceModelOptions
  ) -> [DevicePoint] {
    switch target {
    case .plugged: guard timeline.hasCharging else { return [] }
    case .level: guard timeline.hasCharging, timeline.hasBattery else { return [] }
    case .wifi, .offline: guard timeline.hasNetwork else { return [] }
    }
    var clock = LocalClock(trace.timeZone)
    let h = options.horizon(target), g = options.gridSeconds
    var out: [DevicePoint] = []
    var t = (from / g).rounded(.up) * g
    while t + h <= to {
      if let p = point(target, at: t, horizon: h, timeline: timeline, clock: &clock) { out.append(p) }
      t += g
    }
    return out
  }

  /// The points of the planning targets (plugged within, WiFi at, offline
  /// at) over the whole of `trace`, on `options`' grid; nil when it has no
  /// network or charging rows.
  ///
  /// - Complexity: O(window / grid · log rows) per target.
  package static func planningPoints(_ trace: UserTrace, options: DeviceModelOptions) -> [DeviceTarget: [DevicePoint]]? {
    let timeline = DeviceTimeline(trace)
    guard timeline.hasNetwork || timeline.hasCharging else { return nil }
    var points: [DeviceTarget: [DevicePoint]] = [:]
    for target in [DeviceTarget.plugged, .wifi, .offline] {
      points[target] = Self.points(target, trace: trace, timeline: timeline, from: trace.start, to: trace.end, options: options)
    }
    return points
  }
}

/// A user's (or the population's) state-aware device models: one
/// ``StateGLM`` per ``DeviceTarget`` (nil when the training window had no
/// point for it), on the features of ``DeviceFeatures``.
package struct DeviceModels: Codable, Sendable, Equatable {
  package var plugged: StateGLM?
  package var wifi: StateGLM?
  package var offline: StateGLM?
  package var level: StateGLM?

  package init(plugged: StateGLM? = nil, wifi: StateGLM? = nil, offline: StateGLM? = nil, level: StateGLM? = nil) {
    self.plugged = plugged
    self.wifi = wifi
    self.offline = offline
    self.level = level
  }

  enum CodingKeys: String, CodingKey {
    case plugged, wifi, offline, level
  }

  /// Decodes and checks each model's family and number of coefficients
  /// against ``DeviceFeatures`` (a mismatch is a clear decoding error, not
  /// a crash at prediction time).
  package init(from decoder: any Decoder) throws {
    let c = try decoder.container(keyedBy: CodingKeys.self)
    for (key, target) in [(CodingKeys.plugged, DeviceTarget.plugged), (.wifi, .wifi), (.offline, .offline), (.level, .level)] {
      guard let m = try c.decodeIfPresent(StateGLM.self, forKey: key) else { continue }
      let n = target == .wifi || target == .offline ? DeviceFeatures.networkCount : DeviceFeatures.chargingCount
      guard m.coefficients.count == n, m.family == (target.isBinary ? .logistic : .gaussian) else {
        throw DecodingError.dataCorruptedError(
          forKey: key, in: c,
          debugDescription: "need a \(target.isBinary ? "logistic" : "gaussian") model with \(n) coefficients, got \(m.family.rawValue) with \(m.coefficients.count)")
      }
      self[target] = m
    }
  }

  /// The model of `target`.
  package subscript(_ target: DeviceTarget) -> StateGLM? {
    get {
      switch target {
      case .plugged: plugged
      case .wifi: wifi
      case .offline: offline
      case .level: level
      }
    }
    set {
      switch target {
      case .plugged: plugged = newValue
      case .wifi: wifi = newValue
      case .offline: offline = newValue
      case .level: level = newValue
      }
    }
  }

  /// The population models: each target's GLM fitted on the pooled
  /// training points of `points[target]` (from many users), shrunk toward
  /// zero with ``DeviceModelOptions/populationRidge``.
  package static func fitPopulation(
    _ points: [DeviceTarget: [DevicePoint]], options: DeviceModelOptions
  ) throws -> DeviceModels {
    var m = DeviceModels()
    for target in DeviceTarget.allCases {
      guard let p = points[target], !p.isEmpty else { continue }
      m[target] = try StateGLM.fit(
        rows: p.map(\.features), y: p.map(\.outcome), family: target.isBinary ? .logistic : .gaussian,
        ridge: options.populationRidge)
    }
    return m
  }

  /// A user's models: each target's GLM fitted on the user's training
  /// points, shrunk toward the population's coefficients with
  /// ``DeviceModelOptions/userRidge``. A target the population lacks is
  /// fitted toward zero with the population ridge; one without user points
  /// is nil (callers fall back to the population).
  package static func fitUser(
    _ points: [DeviceTarget: [DevicePoint]], population: DeviceModels, options: DeviceModelOptions
  ) throws -> DeviceModels {
    var m = DeviceModels()
    for target in DeviceTarget.allCases {
      guard let p = points[target], !p.isEmpty else { continue }
      let prior = population[target]
      m[target] = try StateGLM.fit(
        rows: p.map(\.features), y: p.map(\.outcome), family: target.isBinary ? .logistic : .gaussian,
        prior: prior?.coefficients, ridge: prior == nil ? options.populationRidge : options.userRidge)
    }
    return m
  }
}

extension DeviceModels {
  /// The device models' probabilities at `t` given what `timeline` shows at
  /// `t` (rows at times ≤ t only): P(on the charger within the plugged
  /// horizon), P(on WiFi) and P(offline) at the network horizon. Each is
  /// nil when its state is unknown at `t` or neither this model nor
  /// `fallback` has the target.
  package func probabilities(
    at t: Double, timeline d: DeviceTimeline, fallback: DeviceModels, clock: inout LocalClock
  ) -> (plugged: Double?, wifi: Double?, offline: Double?) {
    let level = d.level(at: t)?.level ?? 50
    var plugged: Double?, wifi: Double?, offline: Double?
    if let c = d.charging(at: t), let m = self[.plugged] ?? fallback[.plugged] {
      plugged = m.predict(
        DeviceFeatures.chargingRow(
          plugged: c.plugged, since: c.since, wifi: d.network(at: t)?.kind == .wifi, level: level, at: t, clock: &clock))
    }
    if let n = d.network(at: t) {
      let x = DeviceFeatures.networkRow(
        network: n.kind, since: n.since, plugged: d.charging(at: t)?.plugged == true, level: level, at: t, clock: &clock)
      wifi = (self[.wifi] ?? fallback[.wifi])?.predict(x)
      offline = (self[.offline] ?? fallback[.offline])?.predict(x)
    }
    return (plugged, wifi, offline)
  }
}
