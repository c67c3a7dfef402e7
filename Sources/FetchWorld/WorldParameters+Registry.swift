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
    radio("lte", \.radios.lte, tailStages: ["tail"], [
      "*": aro,
      "connected_w": aro + "; Huang et al. 2012 paper: 1.288 W (M)",
      "down_mbps": "Huang et al. MobiSys 2012 median LTE downlink (V abstract)",
      "up_mbps": "Huang et al. MobiSys 2012 median LTE uplink (V abstract)",
      "tail_s": "ARO long-DRX 10 s + inactivity 0.1 s + short DRX ≈ 10.12 s (V); paper 11.576 s (M); carriers vary: sweep 5–15 s",
      "tail_w": "ARO tail base power (V)",
    ])
    radio("3g", \.radios.umts3g, tailStages: ["dch_tail", "fach_tail"], [
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
    radio("wifi", \.radios.wifi, tailStages: ["tail"], [
      "*": huangWiFi,
      "tail_s": huangWiFi + "; ARO WiFi tail 0.25 s agrees (V)",
      "down_mbps": "NV placeholder", "up_mbps": "NV placeholder",
    ])
    let nr = fiveGSources
    radio("5g_nsa_low_band", \.radios.nr5gNSALowBand, tailStages: ["tail"], nr.lowBand)
    radio("5g_nsa_mmwave", \.radios.nr5gNSAmmWave, tailStages: ["tail"], nr.mmWave)
    radio("5g_sa", \.radios.nr5gSA, tailStages: ["tail", "inactive"], nr.sa)
    let techs: [(String, NetworkKind)] = [("lte", .lte), ("3g", .umts3g), ("5g", .nr5g)]
    r.append(.word("network.default_cellular", \.radios.defaultCellular, techs, "choice (LTE is the common case)"))
    r.append(.word("network.5g", \.radios.fiveG, FiveGDeployment.allCases.map { ($0.rawValue, $0) },
                   "choice: the measured deployment the 5g network is (Narayanan et al., SIGCOMM 2021); NSA low-band, the most widespread"))
    r.append(.word("network.default", \.radios.defaultNetwork, NetworkKind.allCases.map { ($0.description, $0) },
                   "assumption for traces without network rows (UbiqLog has none): cellular is the energy-conservative case"))
    r.append(.number("device.cpu_wake_j", \.device.cpuWakeEnergyJ, "J", pos, "D: with device.cpu_active_w a typical 100 kB LTE fetch (≈ 0.65 s) costs the CPU ≈ 1 J, the geometric middle of 0.5–2 J per 1–3 s wake (NV: no measured iPhone number; PowerTutor, Zhang et al. CODES+ISSS 2010); sweep 0.3–2 J"))
    r.append(.number("device.cpu_active_w", \.device.cpuActivePowerW, "W", pos, "PowerTutor HTC Dream CPU at 100 % ≈ 434 mW (V)"))
    r.append(.number("device.location_monitoring_w", \.device.locationMonitoringW, "W", 0...1, "NV: an app's share of the OS's region and significant-change monitoring is unmeasured (the positioning runs for all apps at once); each location wake that starts no fetch is charged device.cpu_wake_j; sweep 0–5 mW (5 mW ≈ 430 J/day)"))
    r.append(.number("device.battery_wh", \.device.batteryCapacityWh, "Wh", 1e-3...1e3, "iPhone 15: 12.981 Wh (S, regulatory listing, MacRumors 2023-09-15)"))
    r.append(.number("device.initial_battery_pct", \.device.initialBatteryPct, "%", -1...100, "assumption; -1 = unknown until the first battery row"))
    r.append(.number("fetch.new_data_median_bytes", \.fetch.newDataMedianBytes, "B", pos, "100 KB, the worked example of the LTE/3G/WiFi energy models above (D); NV"))
    r.append(.number("fetch.new_data_sigma", \.fetch.newDataSigma, "-", 0...5, "NV: log-normal spread of response sizes"))
    r.append(.number("fetch.no_data_bytes", \.fetch.noDataBytes, "B", pos, "NV: HTTP 304 with headers"))
    r.append(.number("fetch.request_bytes", \.fetch.requestBytes, "B", pos, "NV: request with headers"))
    r.append(.number("fetch.server_latency_s", \.fetch.serverLatencyS, "s", 0...3600, "NV: server time plus round trip"))
    r.append(.number("fetch.open_handshake_rtts", \.fetch.openHandshakeRTTs, "-", 0...10, "TCP handshake 1 RTT (RFC 9293, V) + TLS 1.3 full handshake 1 RTT (RFC 8446, V) before a launch's first request on a new connection; TLS 1.2 takes 2 (RFC 5246, V): sweep 2–3; only the foreground wait counts them"))
    r.append(.number("fetch.rtt_lte_s", \.fetch.rtt.lteS, "s", 0...60, "NV: ≈ 70 ms LTE round trip, as Huang et al. MobiSys 2012 (4GTest) report (M, not checked here)"))
    r.append(.number("fetch.rtt_3g_s", \.fetch.rtt.umts3gS, "s", 0...60, "NV: ≈ 200 ms UMTS/HSPA round trip, as Huang et al. MobiSys 2012 (4GTest) report for 3G (M, not checked here)"))
    r.append(.number("fetch.rtt_wifi_s", \.fetch.rtt.wifiS, "s", 0...60, "NV: ≈ 50 ms WiFi round trip to a typical server (M, Huang et al. MobiSys 2012)"))
    r.append(.number("fetch.rtt_5g_s", \.fetch.rtt.nr5gS, "s", 0...60, "NV placeholder: below LTE's; sweep with the 5G profile"))
    r.append(.number("fetch.budget_s", \.fetch.fetchBudgetS, "s", 1e-3...86_400, "Apple: ~30 s per background launch (V, Apple background fetch and BGTaskScheduler documentation)"))
    r.append(.number("fetch.failure_probability", \.fetch.failureProbability, "-", 0...1, "NV: server-side failures; sweep"))
    r.append(.word("content.source", \.content.source, ContentSource.allCases.map { ($0.rawValue, $0) }, "choice"))
    r.append(.word("content.model", \.content.model, ContentModelKind.allCases.map { ($0.rawValue, $0) }, "Poisson changes as in Cho & Garcia-Molina (SIGMOD 2000, TODS 2003)"))
    r.append(.number("content.rate_per_hour", \.content.ratePerHour, "1/h", 0...maxRatePerHour, "NV; the closed-form checks use λ = 1/h"))
    for h in 0..<24 {
      r.append(.number("content.diurnal_profile.\(h)", \.content.diurnalProfile[h], "-", 0...1e6,
                       "UbiqLog share of opens by hour (D, computed from the UbiqLog dataset), used as an update-intensity shape (NV)"))
    }
    r.append(.flag("replay.foreground_refresh", \.replay.foregroundRefresh, "default: an open refreshes in the foreground, not charged to the policy"))
    r.append(.word("replay.scope", \.replay.scope, ReplayScope.allCases.map { ($0.rawValue, $0) },
                   "device: a phone has one radio and one walk over its apps; app: each app alone, as in per-app models"))
    r.append(.flag("replay.share_user_radio", \.replay.shareUserRadio,
                   "on: the radio is physically shared with the user's sessions; off: per-flow models in papers do not share"))
    r.append(.word("replay.transfer", \.replay.instantTransfers, [("timed", false), ("instant", true)],
                   "timed: content is as of the response; instant: as of the start (analytic models), energy still counts the duration"))
    r.append(.word("session.network", \.sessions.model, SessionNetworkModel.allCases.map { ($0.rawValue, $0) },
                   "category: networked apps' sessions use the network in bursts (Tadrous & Sabharwal WiOpt 2016, M; Falaki et al. IMC 2010, M); whole: every session keeps the radio connected (upper bound); open: one burst per open"))
    r.append(.word("session.open_exchange", \.sessions.openExchange, OpenExchange.allCases.map { ($0.rawValue, $0) },
                   "always: a content app checks its server at every launch, fresh or not (vendor documentation: Pugpig Bolt 'we check for new content on every foregrounding of the app' beside background fetch, V; Microsoft 2014, startup of web-content apps is spent waiting for HTTP requests, V; Yan et al. MobiSys 2012 and Parate et al. UbiComp 2013 prefetch because launches pull content, V abstracts); when_stale: only when the server holds newer content (a fresh prefetch saves the exchange and its radio); none: no exchange and no foreground refresh; see docs/parameters.md"))
    r.append(.number("session.action_interval_s", \.sessions.actionIntervalS, "s", 1...86_400,
                     "NV: mean gap between a networked session's actions, exponential (Tadrous & Sabharwal WiOpt 2016: action inter-arrivals exponential or gamma on a timescale of seconds, M); sweep 10–120 s"))
    r.append(.number("session.burst_s", \.sessions.burstS, "s", 0.01...600, "NV: radio activity of one burst (a page or a message exchange); sweep 0.5–5 s"))
    r.append(.number("session.networked_share", \.sessions.networkedShare, "-", 0...1, "NV: share of a networked app's sessions (messaging, social, browser, mail, maps, video, store) that use the network"))
    r.append(.number("session.offline_share", \.sessions.offlineShare, "-", 0...1, "NV: share of an offline app's sessions (dialer, contacts, SMS, settings, camera, gallery, local media) that use the network"))
    r.append(.number("session.other_share", \.sessions.otherShare, "-", 0...1, "NV: share of the sessions of apps in neither list that use the network (neutral middle)"))
    r.append(.number("session.background_wakes_per_hour", \.sessions.backgroundWakesPerHour, "1/h", 0...3600,
                     "neutral: 0 adds nothing to the trace's wake rows (UbiqLog has none, though most radio energy is spent screen-off: Huang et al. IMC 2012, M); the synthetic population draws 2.5/h (NV): sweep 0–5/h"))
    r.append(.number("session.background_wake_s", \.sessions.backgroundWakeS, "s", 0.01...3600,
                     "NV: radio activity of one background transfer, the mean of the synthetic population's 1–10 s wakes"))
    r.append(.word("replay.timer_phase", \.replay.alignedTimers, [("seeded", false), ("aligned", true)],
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
      content.appRatePerHour[app] = x
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

extension WorldParameters {
  /// The sources of the 5G profiles' fields (``registry``), by profile.
  static var fiveGSources: (lowBand: [String: String], mmWave: [String: String], sa: [String: String]) {
    // The 5G profiles, from the artifact of Narayanan et al., SIGCOMM 2021
    // (github.com/SIGCOMM21-5G/artifact, snapshot 35aaf28). Powers: linear
    // fits of whole-device power against throughput recomputed from the
    // binned means of MN-Transfer_combined.csv (Verizon; binned and fitted
    // as plot-section4-figure11.py does, scripts/fit_5g_power.py), less the
    // mean device baseline 2.357 W of baseline_power.csv (32 runs).
    let fit = "Data-Transfer-Power/MN-Transfer/data-processed/MN-Transfer_combined.csv"
    let base = "Power-Model/MN-Wild/data-processed/baseline_power.csv"
    let promo = "D: mean of the three idle → 4G promotions 0.36, 0.32, 0.29 s in RRC-Power/README.md (V); the 4G → 5G step after it (1.53–1.84 s) carries data on the LTE anchor, so it is not a wait"
    let promoW = "NV: RRC-Power's state powers (the paper's Table 2) are not in the artifact snapshot; the connected power; sweep"
    let noMbps = "NV placeholder; sweep"
    func nr(band: String, w0: String, timer: String, _ extra: [String: String] = [:]) -> [String: String] {
      var src = [
        "promotion_s": promo, "promotion_w": promoW,
        "connected_w": "D: \(band) downlink fit intercept \(w0) W (V, \(fit)) less the baseline 2.357 W (V, \(base))",
        "down_mbps": noMbps, "up_mbps": noMbps,
        "tail_s": timer,
        "tail_w": "NV: the connected power (C-DRX draws less; state powers not in the snapshot), an upper bound; sweep",
      ]
      src.merge(extra) { $1 }
      return src
    }
    let lowBand = nr(band: "NSALow", w0: "2.925", timer: "NSA low-band inactivity timer 10.2 s (V, RRC-Probe/plot-section4-figure10.py, probe data RRC-Probe/data/*NSA*low*.csv)", [
      "alpha_down": "NSALow downlink fit slope 13.52 mW/Mbps (V, \(fit))",
      "alpha_up": "NSALow uplink fit slope 29.15 mW/Mbps (V, \(fit))",
    ])
    let mmWave = nr(band: "mmwave", w0: "5.136", timer: "Verizon mmWave inactivity timer 11.2 s (V, RRC-Probe/plot-section4-figure10.py, RRC-Probe/data/SALMONBERRY_299_Verizon_NSAmmwave.csv)", [
      "alpha_down": "mmwave downlink fit slope 1.81 mW/Mbps (V, \(fit))",
      "alpha_up": "mmwave uplink fit slope 9.42 mW/Mbps (V, \(fit))",
    ])
    let sa = nr(band: "NSALow", w0: "2.925", timer: "T-Mobile SA RRC_CONNECTED 10.2 s (V, RRC-Probe/plot-section4-figure10.py and plot-section4-figure25.py, RRC-Probe/data/S20US_TMobile_SA.csv)", [
      "promotion_s": "NV: the NSA idle → 4G promotion (RRC-Power/README.md, V), no SA power log in the snapshot; sweep",
      "connected_w": "NV: the NSA low-band value (no SA power in MN-Transfer, which is Verizon only); sweep",
      "alpha_down": "NV: the NSA low-band slope 13.52 mW/Mbps; sweep",
      "alpha_up": "NV: the NSA low-band slope 29.15 mW/Mbps; sweep",
      "inactive_s": "T-Mobile SA RRC_INACTIVE from 10.2 s to 15 s (V, RRC-Probe/plot-section4-figure10.py, plot-section4-figure25.py, RRC-Probe/data/S20US_TMobile_SA.csv)",
      "inactive_w": "NV: IDLE's (0 W above the baseline): INACTIVE keeps the context but pages like IDLE; sweep 0–0.1 W",
      "inactive_promotion_s": "D: the probe's lowest RTTs in INACTIVE (p10 99.5 ms at 10.3–14.9 s) are within 20 ms of CONNECTED's median (83 ms), RRC-Probe/data/S20US_TMobile_SA.csv; NV",
      "inactive_promotion_w": "NV: the connected power",
    ])
    return (lowBand, mmWave, sa)
  }
}
