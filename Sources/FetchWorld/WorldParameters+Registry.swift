import FetchSupport
import FetchTraces
import Foundation

/// A value a parameter takes.
public enum ParameterValue: Sendable, Equatable, CustomStringConvertible {
  case number(Double)
  case flag(Bool)
  case word(String)

  /// The value of a `name=value` override as ``description`` writes it and
  /// `--set` takes it: `true`/`false`, a number, else a word.
  package init(parsing raw: String) {
    self = raw == "true" ? .flag(true) : raw == "false" ? .flag(false) : DecimalText.value(raw).map { .number($0) } ?? .word(raw)
  }

  /// The value as written in a config file.
  public var description: String {
    switch self {
    case .number(let x): CSV.number(x)
    case .flag(let b): b ? "true" : "false"
    case .word(let s): s
    }
  }
}

/// One overridable parameter: its config-file name, unit, source and range.
package struct ParameterInfo: Sendable {
  /// Dotted snake_case name used in config files, e.g. `radio.lte.tail_s`.
  package let name: String
  /// Unit, or `-` for dimensionless, flags and words.
  package let unit: String
  /// Where the default comes from, with the source's quality mark.
  package let source: String
  let get: @Sendable (WorldParameters) -> ParameterValue
  let set: @Sendable (inout WorldParameters, ParameterValue) -> String?

  /// The value in `world`.
  package func value(in world: WorldParameters) -> ParameterValue { get(world) }
}

extension ParameterInfo {
  /// A number at `path`, accepted within `range`.
  static func number(
    _ name: String, _ path: WritableKeyPath<WorldParameters, Double>, _ unit: String,
    _ range: ClosedRange<Double>, _ source: String
  ) -> ParameterInfo {
    nonisolated(unsafe) let path = path
    return ParameterInfo(
      name: name, unit: unit, source: source,
      get: { .number($0[keyPath: path]) },
      set: { w, v in
        guard case .number(let x) = v, x.isFinite else { return "expected a finite number" }
        guard range.contains(x) else { return "\(CSV.number(x)) is outside \(CSV.number(range.lowerBound))...\(CSV.number(range.upperBound))" }
        w[keyPath: path] = x
        return nil
      })
  }

  static func flag(_ name: String, _ path: WritableKeyPath<WorldParameters, Bool>, _ source: String) -> ParameterInfo {
    nonisolated(unsafe) let path = path
    return ParameterInfo(
      name: name, unit: "-", source: source,
      get: { .flag($0[keyPath: path]) },
      set: { w, v in
        guard case .flag(let b) = v else { return "expected true or false" }
        w[keyPath: path] = b
        return nil
      })
  }

  static func word<T: Sendable>(
    _ name: String, _ path: WritableKeyPath<WorldParameters, T>, _ choices: [(String, T)], _ source: String
  ) -> ParameterInfo where T: Equatable {
    nonisolated(unsafe) let path = path
    return ParameterInfo(
      name: name, unit: "-", source: source,
      get: { w in .word(choices.first { $0.1 == w[keyPath: path] }?.0 ?? "?") },
      set: { w, v in
        guard case .word(let s) = v, let c = choices.first(where: { $0.0 == s }) else {
          return "expected one of " + choices.map(\.0).joined(separator: ", ")
        }
        w[keyPath: path] = c.1
        return nil
      })
  }
}

extension WorldParameters {
  /// Every overridable parameter, in documentation order.
  package static let registry: [ParameterInfo] = {
    typealias P = ParameterInfo
    let pos = 0.0...1e12
    var r: [P] = []
    /// `src` names the source of each field: promotion_s, promotion_w,
    /// connected_w, alpha_down, alpha_up, down_mbps, up_mbps, and per tail
    /// stage `<stage>_s` / `<stage>_w` (and `_promotion_s` / `_promotion_w`).
    func radio(_ tech: String, _ p: WritableKeyPath<WorldParameters, RadioProfile>, tailStages: [String], _ src: [String: String]) {
      func s(_ k: String) -> String { src[k] ?? src["*"]! }
      r.append(.number("radio.\(tech).promotion_s", p.appending(path: \.promotionTimeS), "s", pos, s("promotion_s")))
      r.append(.number("radio.\(tech).promotion_w", p.appending(path: \.promotionPowerW), "W", pos, s("promotion_w")))
      r.append(.number("radio.\(tech).connected_w", p.appending(path: \.connectedPowerW), "W", pos, s("connected_w")))
      r.append(.number("radio.\(tech).alpha_down_w_per_mbps", p.appending(path: \.downlinkWPerMbps), "W/Mbps", pos, s("alpha_down")))
      r.append(.number("radio.\(tech).alpha_up_w_per_mbps", p.appending(path: \.uplinkWPerMbps), "W/Mbps", pos, s("alpha_up")))
      r.append(.number("radio.\(tech).down_mbps", p.appending(path: \.downlinkMbps), "Mbps", 1e-6...1e6, s("down_mbps")))
      r.append(.number("radio.\(tech).up_mbps", p.appending(path: \.uplinkMbps), "Mbps", 1e-6...1e6, s("up_mbps")))
      for (i, stage) in tailStages.enumerated() {
        let t = p.appending(path: \.tail[i])
        r.append(.number("radio.\(tech).\(stage)_s", t.appending(path: \.durationS), "s", pos, s("\(stage)_s")))
        r.append(.number("radio.\(tech).\(stage)_w", t.appending(path: \.powerW), "W", pos, s("\(stage)_w")))
        if i > 0 {
          r.append(.number("radio.\(tech).\(stage)_promotion_s", t.appending(path: \.promotionTimeS), "s", pos, s("\(stage)_promotion_s")))
          r.append(.number("radio.\(tech).\(stage)_promotion_w", t.appending(path: \.promotionPowerW), "W", pos, s("\(stage)_promotion_w")))
        }
      }
    }
    let aro = "AT&T ARO lte.conf (V)"
    radio("lte", \.lte, tailStages: ["tail"], [
      "*": aro,
      "connected_w": aro + "; Huang et al. 2012 paper: 1.288 W (M)",
      "down_mbps": "Huang et al. MobiSys 2012 median LTE downlink (V abstract)",
      "up_mbps": "Huang et al. MobiSys 2012 median LTE uplink (V abstract)",
      "tail_s": "ARO long-DRX 10 s + inactivity 0.1 s + short DRX ≈ 10.12 s (V); paper 11.576 s (M); carriers vary: sweep 5–15 s",
      "tail_w": "ARO tail base power (V)",
    ])
    radio("3g", \.umts3g, tailStages: ["dch_tail", "fach_tail"], [
      "promotion_s": "ARO i997 IDLE→DCH average (V; Qian et al. IMC 2010)",
      "promotion_w": "D: middle of the ARO promotion power range 0.30–0.65 W (V), below DCH power as a promotion's signalling is",
      "connected_w": "PowerTutor HTC Dream DCH 570 mW (V)",
      "alpha_down": "not modelled for 3G: transfer at DCH power",
      "alpha_up": "not modelled for 3G: transfer at DCH power",
      "down_mbps": "NV placeholder", "up_mbps": "NV placeholder",
      "dch_tail_s": "AT&T DCH→FACH timer 5 s (V PowerTutor; Qian et al. IMC 2010, M)",
      "dch_tail_w": "PowerTutor Dream DCH 570 mW (V)",
      "fach_tail_s": "AT&T FACH→IDLE timer 12 s (V PowerTutor)",
      "fach_tail_w": "PowerTutor Dream FACH 401 mW (V)",
      "fach_tail_promotion_s": "ARO i997 FACH→DCH average 1.5 s (V)",
      "fach_tail_promotion_w": "D: middle of the ARO promotion power range 0.30–0.65 W (V), below DCH power",
    ])
    let huangWiFi = "Huang et al. MobiSys 2012 WiFi model (M)"
    radio("wifi", \.wifi, tailStages: ["tail"], [
      "*": huangWiFi,
      "tail_s": huangWiFi + "; ARO WiFi tail 0.25 s agrees (V)",
      "down_mbps": "NV placeholder", "up_mbps": "NV placeholder",
    ])
    radio("5g", \.nr5g, tailStages: ["tail"], [
      "*": "NSA placeholder: LTE value (NV; sweep; Xu et al. SIGCOMM 2020)",
      "promotion_w": "LTE × 2: Xu et al. SIGCOMM 2020, 5G power '2–3× over 4G' (V abstract); NV, sweep ×1–3",
      "connected_w": "LTE × 2: Xu et al. SIGCOMM 2020 '2–3× over 4G' (V abstract); NV, sweep ×1–3",
      "tail_w": "LTE × 2 (NV; sweep)",
      "tail_s": "LTE timers, NSA (NV); sweep 5–20 s",
      "down_mbps": "NV placeholder", "up_mbps": "NV placeholder",
    ])
    let techs: [(String, NetworkKind)] = [("lte", .lte), ("3g", .umts3g), ("5g", .nr5g)]
    r.append(.word("network.default_cellular", \.defaultCellular, techs, "choice (LTE is the common case)"))
    r.append(.word("network.default", \.defaultNetwork, NetworkKind.allCases.map { ($0.description, $0) },
                   "assumption for traces without network rows (UbiqLog has none): cellular is the energy-conservative case"))
    r.append(.number("device.cpu_wake_j", \.cpuWakeEnergyJ, "J", pos, "D: with device.cpu_active_w a typical 100 kB LTE fetch (≈ 0.65 s) costs the CPU ≈ 1 J, the geometric middle of 0.5–2 J per 1–3 s wake (NV: no measured iPhone number; PowerTutor, Zhang et al. CODES+ISSS 2010); sweep 0.3–2 J"))
    r.append(.number("device.cpu_active_w", \.cpuActivePowerW, "W", pos, "PowerTutor HTC Dream CPU at 100 % ≈ 434 mW (V)"))
    r.append(.number("device.location_monitoring_w", \.locationMonitoringW, "W", 0...1, "NV: an app's share of the OS's region and significant-change monitoring is unmeasured (the positioning runs for all apps at once); each location wake that starts no fetch is charged device.cpu_wake_j; sweep 0–5 mW (5 mW ≈ 430 J/day)"))
    r.append(.number("device.battery_wh", \.batteryCapacityWh, "Wh", 1e-3...1e3, "iPhone 15: 12.981 Wh (S, regulatory listing, MacRumors 2023-09-15)"))
    r.append(.number("device.initial_battery_pct", \.initialBatteryPct, "%", -1...100, "assumption; -1 = unknown until the first battery row"))
    r.append(.number("fetch.new_data_median_bytes", \.newDataMedianBytes, "B", pos, "100 KB, the worked example of the LTE/3G/WiFi energy models above (D); NV"))
    r.append(.number("fetch.new_data_sigma", \.newDataSigma, "-", 0...5, "NV: log-normal spread of response sizes"))
    r.append(.number("fetch.no_data_bytes", \.noDataBytes, "B", pos, "NV: HTTP 304 with headers"))
    r.append(.number("fetch.request_bytes", \.requestBytes, "B", pos, "NV: request with headers"))
    r.append(.number("fetch.server_latency_s", \.serverLatencyS, "s", 0...3600, "NV: server time plus round trip"))
    r.append(.number("fetch.budget_s", \.fetchBudgetS, "s", 1e-3...86_400, "Apple: ~30 s per background launch (V, Apple background fetch and BGTaskScheduler documentation)"))
    r.append(.number("fetch.failure_probability", \.failureProbability, "-", 0...1, "NV: server-side failures; sweep"))
    r.append(.word("content.source", \.contentSource, ContentSource.allCases.map { ($0.rawValue, $0) }, "choice"))
    r.append(.word("content.model", \.contentModel, ContentModelKind.allCases.map { ($0.rawValue, $0) }, "Poisson changes as in Cho & Garcia-Molina (SIGMOD 2000, TODS 2003)"))
    r.append(.number("content.rate_per_hour", \.contentRatePerHour, "1/h", 0...maxRatePerHour, "NV; the closed-form checks use λ = 1/h"))
    for h in 0..<24 {
      r.append(.number("content.diurnal_profile.\(h)", \.diurnalProfile[h], "-", 0...1e6,
                       "UbiqLog share of opens by hour (D, computed from the UbiqLog dataset), used as an update-intensity shape (NV)"))
    }
    r.append(.flag("replay.foreground_refresh", \.foregroundRefresh, "default: an open refreshes in the foreground, not charged to the policy"))
    r.append(.word("replay.scope", \.replayScope, ReplayScope.allCases.map { ($0.rawValue, $0) },
                   "device: a phone has one radio and one walk over its apps; app: each app alone, as in per-app models"))
    r.append(.flag("replay.share_user_radio", \.shareUserRadio,
                   "on: the radio is physically shared with the user's sessions; off: per-flow models in papers do not share"))
    r.append(.word("replay.transfer", \.instantTransfers, [("timed", false), ("instant", true)],
                   "timed: content is as of the response; instant: as of the start (analytic models), energy still counts the duration"))
    r.append(.word("session.network", \.sessions.model, SessionNetworkModel.allCases.map { ($0.rawValue, $0) },
                   "category: networked apps' sessions use the network in bursts (Tadrous & Sabharwal WiOpt 2016, M; Falaki et al. IMC 2010, M); whole: every session keeps the radio connected (upper bound); open: one burst per open"))
    r.append(.number("session.action_interval_s", \.sessions.actionIntervalS, "s", 1...86_400,
                     "NV: mean gap between a networked session's actions, exponential (Tadrous & Sabharwal WiOpt 2016: action inter-arrivals exponential or gamma on a timescale of seconds, M); sweep 10–120 s"))
    r.append(.number("session.burst_s", \.sessions.burstS, "s", 0.01...600, "NV: radio activity of one burst (a page or a message exchange); sweep 0.5–5 s"))
    r.append(.number("session.networked_share", \.sessions.networkedShare, "-", 0...1, "NV: share of a networked app's sessions (messaging, social, browser, mail, maps, video, store) that use the network"))
    r.append(.number("session.offline_share", \.sessions.offlineShare, "-", 0...1, "NV: share of an offline app's sessions (dialer, contacts, SMS, settings, camera, gallery, local media) that use the network"))
    r.append(.number("session.other_share", \.sessions.otherShare, "-", 0...1, "NV: share of the sessions of apps in neither list that use the network (neutral middle)"))
    r.append(.word("replay.timer_phase", \.alignedTimers, [("seeded", false), ("aligned", true)],
                   "neutral: seeded gives each (user, app) its own timer phase, drawn independently from the seed; aligned fires all apps' timers together (perfect OS batching)"))
    return r
  }()

  /// Upper bound of `content.rate_per_hour` and of every per-app rate, 1/h.
  package static let maxRatePerHour = 1e6

  /// The prefix of per-app update-rate overrides: `content.app_rate_per_hour.<app>`.
  package static let appRatePrefix = "content.app_rate_per_hour."

  /// Sets the parameter `name`; returns an error message or `nil`.
  public mutating func set(_ name: String, to value: ParameterValue) -> String? {
    if name.hasPrefix(Self.appRatePrefix) {
      let app = String(name.dropFirst(Self.appRatePrefix.count))
      guard !app.isEmpty else { return "missing app name after \(Self.appRatePrefix)" }
      guard case .number(let x) = value, x.isFinite, x >= 0 else { return "expected a non-negative number" }
      guard x <= Self.maxRatePerHour else {
        return "\(CSV.number(x)) is outside 0...\(CSV.number(Self.maxRatePerHour)) (updates per hour)"
      }
      appRatePerHour[app] = x
      return nil
    }
    guard let p = Self.registry.first(where: { $0.name == name }) else {
      let close = Self.registry.map(\.name).filter { $0.hasPrefix(name.split(separator: ".").first.map(String.init) ?? "") }
      let hint = close.isEmpty ? "" : " (known in this group: \(close.prefix(8).joined(separator: ", "))\(close.count > 8 ? ", ..." : ""))"
      return "unknown parameter\(hint); run 'fetchlab params' for the list"
    }
    return p.set(&self, value)
  }
}
