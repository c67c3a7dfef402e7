import FetchTraces
import Foundation

/// A value a parameter takes.
public enum ParameterValue: Sendable, Equatable, CustomStringConvertible {
  case number(Double)
  case flag(Bool)
  case word(String)

  public var description: String {
    switch self {
    case .number(let x): CSV.number(x)
    case .flag(let b): b ? "true" : "false"
    case .word(let s): s
    }
  }
}

/// One overridable parameter: its config-file name, unit, source and range.
public struct ParameterInfo: Sendable {
  /// Dotted snake_case name used in config files, e.g. `radio.lte.tail_s`.
  public let name: String
  /// Unit, or `-` for dimensionless, flags and words.
  public let unit: String
  /// Where the default comes from, with the reference's quality mark.
  public let source: String
  let get: @Sendable (WorldParameters) -> ParameterValue
  let set: @Sendable (inout WorldParameters, ParameterValue) -> String?

  /// The value in `world`.
  public func value(in world: WorldParameters) -> ParameterValue { get(world) }
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
  public static let registry: [ParameterInfo] = {
    typealias P = ParameterInfo
    let pos = 0.0...1e12
    var r: [P] = []
    func radio(_ tech: String, _ p: WritableKeyPath<WorldParameters, RadioProfile>, _ src: String, tailStages: [String]) {
      r.append(.number("radio.\(tech).promotion_s", p.appending(path: \.promotionTimeS), "s", pos, src))
      r.append(.number("radio.\(tech).promotion_w", p.appending(path: \.promotionPowerW), "W", pos, src))
      r.append(.number("radio.\(tech).connected_w", p.appending(path: \.connectedPowerW), "W", pos, src))
      r.append(.number("radio.\(tech).alpha_down_w_per_mbps", p.appending(path: \.downlinkWPerMbps), "W/Mbps", pos, src))
      r.append(.number("radio.\(tech).alpha_up_w_per_mbps", p.appending(path: \.uplinkWPerMbps), "W/Mbps", pos, src))
      r.append(.number("radio.\(tech).down_mbps", p.appending(path: \.downlinkMbps), "Mbps", 1e-6...1e6, src))
      r.append(.number("radio.\(tech).up_mbps", p.appending(path: \.uplinkMbps), "Mbps", 1e-6...1e6, src))
      for (i, stage) in tailStages.enumerated() {
        let t = p.appending(path: \.tail[i])
        r.append(.number("radio.\(tech).\(stage)_s", t.appending(path: \.durationS), "s", pos, src))
        r.append(.number("radio.\(tech).\(stage)_w", t.appending(path: \.powerW), "W", pos, src))
        if i > 0 {
          r.append(.number("radio.\(tech).\(stage)_promotion_s", t.appending(path: \.promotionTimeS), "s", pos, src))
          r.append(.number("radio.\(tech).\(stage)_promotion_w", t.appending(path: \.promotionPowerW), "W", pos, src))
        }
      }
    }
    radio("lte", \.lte, "AT&T ARO lte.conf (V); Huang et al. MobiSys 2012 throughputs 13/6 Mbps (V abstract); paper tail 11.576 s, β 1.288 W (M)", tailStages: ["tail"])
    radio("3g", \.umts3g, "PowerTutor/ARO: DCH→FACH 5 s, FACH→IDLE 12 s (V), IDLE→DCH 2.0 s, FACH→DCH 1.5 s (V ARO i997), DCH 570 / FACH 401 mW (V Dream), promotion 0.65 W (V ARO range); throughput NV", tailStages: ["dch_tail", "fach_tail"])
    radio("wifi", \.wifi, "Huang et al. 2012 WiFi model (M); ARO tail 0.25 s (V); throughput NV", tailStages: ["tail"])
    radio("5g", \.nr5g, "NSA placeholder: LTE timers, power ×2 (Xu et al. SIGCOMM 2020 '2–3× over 4G', V abstract); NV, sweep", tailStages: ["tail"])
    let techs: [(String, NetworkKind)] = [("lte", .lte), ("3g", .umts3g), ("5g", .nr5g)]
    r.append(.word("network.default_cellular", \.defaultCellular, techs, "choice (LTE is the common case)"))
    r.append(.word("network.default", \.defaultNetwork, NetworkKind.allCases.map { ($0.description, $0) },
                   "assumption for traces without network rows (UbiqLog has none): cellular is the energy-conservative case"))
    r.append(.number("device.cpu_wake_j", \.cpuWakeEnergyJ, "J", pos, "NV placeholder; reference §1.5 gives 0.5–2 J per 1–3 s wake in total"))
    r.append(.number("device.cpu_active_w", \.cpuActivePowerW, "W", pos, "PowerTutor HTC Dream CPU at 100 % ≈ 434 mW (V)"))
    r.append(.number("device.battery_wh", \.batteryCapacityWh, "Wh", 1e-3...1e3, "iPhone 15: 12.981 Wh (S, reference §1.6)"))
    r.append(.number("device.initial_battery_pct", \.initialBatteryPct, "%", -1...100, "assumption; -1 = unknown until the first battery row"))
    r.append(.number("fetch.new_data_median_bytes", \.newDataMedianBytes, "B", pos, "reference §1.7 worked example: 100 KB (D); NV"))
    r.append(.number("fetch.new_data_sigma", \.newDataSigma, "-", 0...5, "NV: log-normal spread of response sizes"))
    r.append(.number("fetch.no_data_bytes", \.noDataBytes, "B", pos, "NV: HTTP 304 with headers"))
    r.append(.number("fetch.request_bytes", \.requestBytes, "B", pos, "NV: request with headers"))
    r.append(.number("fetch.server_latency_s", \.serverLatencyS, "s", 0...3600, "NV: server time plus round trip"))
    r.append(.number("fetch.budget_s", \.fetchBudgetS, "s", 1e-3...86_400, "Apple: ~30 s per background launch (V, reference §2.1)"))
    r.append(.number("fetch.failure_probability", \.failureProbability, "-", 0...1, "NV: server-side failures; sweep"))
    r.append(.word("content.source", \.contentSource, ContentSource.allCases.map { ($0.rawValue, $0) }, "choice"))
    r.append(.word("content.model", \.contentModel, ContentModelKind.allCases.map { ($0.rawValue, $0) }, "Poisson changes as in Cho & Garcia-Molina (reference §3)"))
    r.append(.number("content.rate_per_hour", \.contentRatePerHour, "1/h", 0...1e6, "NV; reference §3 check values use λ = 1/h"))
    for h in 0..<24 {
      r.append(.number("content.diurnal_profile.\(h)", \.diurnalProfile[h], "-", 0...1e6,
                       "UbiqLog share of opens by hour (D, reference §5.1), used as an update-intensity shape (NV)"))
    }
    r.append(.flag("replay.foreground_refresh", \.foregroundRefresh, "the issue's default: an open refreshes in the foreground, not charged to the policy"))
    return r
  }()

  /// The prefix of per-app update-rate overrides: `content.app_rate_per_hour.<app>`.
  public static let appRatePrefix = "content.app_rate_per_hour."

  /// Sets the parameter `name`; returns an error message or `nil`.
  public mutating func set(_ name: String, to value: ParameterValue) -> String? {
    if name.hasPrefix(Self.appRatePrefix) {
      let app = String(name.dropFirst(Self.appRatePrefix.count))
      guard !app.isEmpty else { return "missing app name after \(Self.appRatePrefix)" }
      guard case .number(let x) = value, x.isFinite, x >= 0 else { return "expected a non-negative number" }
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
