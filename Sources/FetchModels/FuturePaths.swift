import FetchSupport
import FetchTraces
import Foundation

/// Seeded sample paths of a user's future — opens of every modelled app,
/// network changes and charging — drawn from the models `fetchlab fit`
/// saved, for forecasts of a window with no trace (`fetchlab predict`
/// without `--trace`).
///
/// - **Opens**: each modelled app's habit model, on 60-s steps: an open of
///   app a in a step with probability `1 − exp(−λ_a(t, recency)·60 s)`;
///   recency (since the app's / any modelled app's last open) restarts at
///   each sampled open. Session length: ``sessionSeconds``.
/// - **Network**: every ``DeviceModelOptions/networkHorizonSeconds`` (30
///   min), the class at the next step is drawn from the user's (else the
///   population's) WiFi and offline GLMs given the current class and its
///   duration: P(WiFi) = p_w, P(offline) = p_o, cellular the rest (both
///   scaled down when p_w + p_o > 1). A first class is drawn from the
///   hour-of-week table at the start.
/// - **Charging**: a two-state chain on 15-min steps. Unplugged → plugged
///   with hazard `q = 1 − (1 − p)^{1/4}` from the "plugged within 1 h" GLM;
///   plugged → unplugged with `q·(1 − π)/π`, π the hour-of-week P(on the
///   charger) table clamped to [0.02, 0.98], so the chain's share of
///   plugged time follows the table (detailed balance). The first state is
///   drawn from π.
///
/// A user whose training window had no network rows (no charge rows) gets
/// no network (charging) rows: the replay's defaults apply, as for the
/// trace itself. Battery level is not sampled (the replay starts from the
/// last sample).
/// Limitations: no model of the phone's other apps; the duration features
/// start at 0 h; the chains use the GLMs at their own horizons as hazards.
package enum FuturePaths {
  /// Session length of a sampled open, s (**NV** placeholder).
  package static let sessionSeconds = 60.0

  /// One sample path: events in [`from`, `to`), sorted by time, with app
  /// indices into `apps` (the user's modelled apps, in model order).
  ///
  /// - Complexity: O((to − from)/60 s × apps).
  package static func sample(
    _ um: ModelFile.UserModels, population: DeviceModels, options: DeviceModelOptions, from: Double, to: Double,
    lastAppOpens: [Double], lastAnyOpen: Double, seed: UInt64
  ) -> [TraceEvent] {
    precondition(lastAppOpens.count == um.apps.count, "one last open per modelled app")
    var rng = SplitMix64(seed: seed)
    var clock = LocalClock(um.timeZone)
    var events: [TraceEvent] = []
    let level = um.lastBattery?.levelPct ?? 50

    // Device state.
    func model(_ t: DeviceTarget) -> StateGLM? { um.device[t] ?? population[t] }
    let wifiProbabilityNow = um.network.probabilityWiFi(at: from, clock: &clock)
    let offlineNow = um.network.probabilityOffline(at: from, clock: &clock)
    var u = rng.uniform()
    var net: DeviceTimeline.NetworkClass = u < wifiProbabilityNow ? .wifi : u < wifiProbabilityNow + offlineNow ? .offline : .cellular
    var netSince = from
    let sampleNetwork = um.network.observedHours > 0, sampleCharging = um.battery.observedChargingHours > 0
    if sampleNetwork { events.append(TraceEvent(time: from, kind: .network, value: Double(kind(net).rawValue))) }
    var plugged = rng.uniform() < um.battery.probabilityCharging(at: from, clock: &clock)
    var plugSince = from
    if sampleCharging { events.append(TraceEvent(time: from, kind: plugged ? .chargeStart : .chargeEnd)) }
    var nextNet = from + options.networkHorizonSeconds, nextCharge = from + 900

    var sinceApp = lastAppOpens.map { from - $0 }
    var sinceAny = from - lastAnyOpen
    var t = from
    let step = 60.0
    while t < to {
      let dt = min(step, to - t)
      // Opens.
      for a in um.apps.indices {
        let r = Recency(sinceAppOpenS: sinceApp[a] + dt / 2, sinceAnyOpenS: sinceAny + dt / 2)
        let lambda = um.apps[a].habit.intensity(at: t + dt / 2, clock: &clock, recency: r)
        if rng.uniform() < -expm1(-lambda * dt) {
          let at = t + dt * rng.uniform()
          events.append(TraceEvent(time: at, kind: .open, app: Int32(a), value: sessionSeconds))
          sinceApp[a] = -(at - t)
          sinceAny = min(sinceAny, -(at - t))
        }
      }
      for a in sinceApp.indices { sinceApp[a] += dt }
      sinceAny += dt
      t += dt
      // Network.
      if sampleNetwork, t >= nextNet, t < to {
        if let w = model(.wifi), let o = model(.offline) {
          let x = DeviceFeatures.networkRow(network: net, since: netSince, plugged: plugged, level: level, at: t, clock: &clock)
          var pw = w.predict(x), po = o.predict(x)
          if pw + po > 1 { (pw, po) = (pw / (pw + po), po / (pw + po)) }
          u = rng.uniform()
          let next: DeviceTimeline.NetworkClass = u < pw ? .wifi : u < pw + po ? .offline : .cellular
          if next != net {
            net = next
            netSince = t
            events.append(TraceEvent(time: t, kind: .network, value: Double(kind(net).rawValue)))
          }
        }
        nextNet += options.networkHorizonSeconds
      }
      // Charging.
      if sampleCharging, t >= nextCharge, t < to {
        if let m = model(.plugged) {
          let x = DeviceFeatures.chargingRow(
            plugged: false, since: plugged ? t : plugSince, wifi: net == .wifi, level: level, at: t, clock: &clock)
          let q = 1 - pow(1 - min(1, max(0, m.predict(x))), 900 / options.pluggedHorizonSeconds)
          let pi = min(0.98, max(0.02, um.battery.probabilityCharging(at: t, clock: &clock)))
          let change = plugged ? min(1, q * (1 - pi) / pi) : q
          if rng.uniform() < change {
            plugged.toggle()
            plugSince = t
            events.append(TraceEvent(time: t, kind: plugged ? .chargeStart : .chargeEnd))
          }
        }
        nextCharge += 900
      }
    }
    return events.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
  }

  static func kind(_ c: DeviceTimeline.NetworkClass) -> NetworkKind {
    switch c {
    case .wifi: .wifi
    case .cellular: .lte
    case .offline: .offline
    }
  }
}
