import FetchTestSupport
import FetchTraces
import FetchWorld
import Testing

/// The pieces of ``WorldParameters``: every setting lands in the piece its
/// key's group names, and the radio set resolves networks as documented.
@Suite("World pieces")
struct WorldPiecesTests {
  /// Which pieces differ between two worlds, by the key group each holds.
  static func changedPieces(_ a: WorldParameters, _ b: WorldParameters) -> Set<String> {
    var out = Set<String>()
    if a.radios != b.radios { out.insert("radios") }
    if a.device != b.device { out.insert("device") }
    if a.fetch != b.fetch { out.insert("fetch") }
    if a.content != b.content { out.insert("content") }
    if a.sessions != b.sessions { out.insert("sessions") }
    if a.replay != b.replay { out.insert("replay") }
    return out
  }

  /// The piece a key's first component names.
  static func piece(of name: String) -> String {
    switch name.split(separator: ".").first! {
    case "radio", "network": "radios"
    case "device": "device"
    case "fetch": "fetch"
    case "content": "content"
    case "session": "sessions"
    case "replay": "replay"
    default: "?"
    }
  }

  /// A value of `p` other than its default that the registry accepts, or nil.
  static func otherValue(_ p: ParameterInfo) -> ParameterValue? {
    var probe = WorldParameters()
    switch p.value(in: probe) {
    case .flag(let b): return .flag(!b)
    case .number(let x):
      for c in [x * 2, x / 2, x + 1, x - 1, 0.5, 1, 0, 2] where c != x && probe.set(p.name, to: .number(c)) == nil {
        return .number(c)
      }
      return nil
    case .word(let s):
      // The message of a refused word lists the choices.
      let message = probe.set(p.name, to: .word("\u{1}")) ?? ""
      guard let list = message.split(separator: "expected one of ").last else { return nil }
      return list.split(separator: ", ").map(String.init).first { $0 != s }.map { .word($0) }
    }
  }

  @Test("every registry key changes its own piece and reads back what it set")
  func registryKeysLandInTheirPiece() throws {
    let defaults = WorldParameters()
    for p in WorldParameters.registry {
      let v = try #require(Self.otherValue(p), "\(p.name): no other accepted value")
      var w = WorldParameters()
      #expect(w.set(p.name, to: v) == nil, "\(p.name) refuses \(v)")
      #expect(p.value(in: w) == v, "\(p.name) reads back \(p.value(in: w)), set \(v)")
      #expect(Self.changedPieces(defaults, w) == [Self.piece(of: p.name)], "\(p.name) changed \(Self.changedPieces(defaults, w))")
      #expect(w.overrides() == ["\(p.name)=\(v)"], "\(p.name): overrides \(w.overrides())")
    }
    var w = WorldParameters()
    #expect(w.set(WorldParameters.appRatePrefix + "news", to: .number(3)) == nil)
    #expect(Self.changedPieces(defaults, w) == ["content"] && w.content.updateRate(app: "news") == 3.0 / 3600)
  }

  /// The radio a network value means, written out from the named profiles.
  static func expectedRadio(_ r: RadioSet, _ n: NetworkKind) -> RadioProfile? {
    let fiveG: RadioProfile =
      switch r.fiveG {
      case .nsaLowBand: r.nr5gNSALowBand
      case .nsaMmWave: r.nr5gNSAmmWave
      case .sa: r.nr5gSA
      }
    func tech(_ k: NetworkKind) -> RadioProfile? {
      switch k {
      case .offline: nil
      case .wifi: r.wifi
      case .lte, .cellular: r.lte
      case .umts3g: r.umts3g
      case .nr5g: fiveG
      }
    }
    return n == .cellular ? tech(r.defaultCellular) : tech(n)
  }

  @Test("radio(for:) gives each network's profile under every 5G deployment and default cellular")
  func radioForEveryNetwork() {
    for deployment in FiveGDeployment.allCases {
      for cellular in [NetworkKind.lte, .umts3g, .nr5g] {
        var w = WorldParameters()
        #expect(w.set("network.5g", to: .word(deployment.rawValue)) == nil)
        #expect(w.set("network.default_cellular", to: .word(cellular.description)) == nil)
        for n in NetworkKind.allCases {
          #expect(w.radios.radio(for: n) == Self.expectedRadio(w.radios, n), "\(n) under \(deployment), cellular \(cellular)")
        }
        #expect(w.radios.radio(for: .cellular) == w.radios.radio(for: cellular))
        #expect(w.radios.radio(for: .offline) == nil)
      }
    }
  }

  @Test("the radio table follows every radio and network setting")
  func radioTableFollowsSettings() throws {
    for deployment in FiveGDeployment.allCases {
      for p in WorldParameters.registry where Self.piece(of: p.name) == "radios" {
        var w = WorldParameters()
        w.radios.fiveG = deployment
        #expect(w.set(p.name, to: try #require(Self.otherValue(p))) == nil)
        for n in NetworkKind.allCases {
          #expect(w.radios.radio(for: n) == Self.expectedRadio(w.radios, n), "\(p.name) under \(deployment): \(n)")
        }
      }
    }
    var w = WorldParameters()
    #expect(w.set("radio.lte.tail_s", to: .number(5)) == nil)
    #expect(w.radios.radio(for: .cellular)?.tailDurationS == 5)
  }

  @Test("the SA profile is the NSA low-band radio with an inactive stage")
  func saProfile() {
    let r = RadioSet()
    #expect(r.nr5gSA.tail.count == 2 && r.nr5gSA.tail[0] == r.nr5gNSALowBand.tail[0])
    #expect(r.nr5gSA.tail[1] == TailStage(durationS: 4.8, powerW: 0, promotionTimeS: 0.02, promotionPowerW: 0.568))
    #expect(r.nr5gSA.connectedPowerW == 0.568 && r.nr5gSA.tailDurationS == 15)
  }

  @Test("an open's connection setup is the handshake round trips of the technology a network stands for")
  func openSetup() {
    var w = WorldParameters()
    #expect(w.openSetupS(on: .offline) == 0)
    #expect(w.openSetupS(on: .wifi) == 2 * 0.05 && w.openSetupS(on: .lte) == 2 * 0.07)
    #expect(w.openSetupS(on: .cellular) == w.openSetupS(on: .lte))
    #expect(w.set("network.default_cellular", to: .word("3g")) == nil)
    #expect(w.openSetupS(on: .cellular) == 2 * 0.2)
  }

  @Test("a config file's overrides land in their pieces and leave the others at their defaults")
  func configOverridesLandInPieces() throws {
    let path = tempConfig("""
      {"radio": {"wifi": {"tail_s": 0.5}}, "device.battery_wh": 10, "fetch": {"request_bytes": 500},
       "session.burst_s": 2}
      """)
    let w = try WorldParameters.load(configPath: path)
    let d = WorldParameters()
    #expect(w.radios.wifi.tailDurationS == 0.5 && w.radios.radio(for: .wifi)?.tailDurationS == 0.5)
    #expect(w.device.batteryCapacityJ == 10 * 3600 && w.fetch.requestBytes == 500 && w.sessions.burstS == 2)
    #expect(Self.changedPieces(d, w) == ["radios", "device", "fetch", "sessions"])
    #expect(w.content == d.content && w.replay == d.replay)
  }
}
