import FetchSimulation
import FetchSupport
import FetchTraces

/// One colour and one marker per policy family, the same in every chart of
/// every report, read from the family's declaration in the policy registry
/// (``PolicyFamily/style``).
///
/// The built-in families' colours come from ``SVGPlot/palette`` (Okabe–Ito
/// and Paul Tol's colour-blind-safe schemes); each family has its own colour
/// AND its own marker (the registry test checks both), so a chart printed
/// in grey still tells families apart, and the families of the default
/// benchmark are at least 38 CIELAB ΔE apart. The configurations of one family
/// (`periodic:15m`, `periodic:1h`) share its colour and marker and differ by
/// line dash, in the order they appear in the run. Families the registry
/// does not know (results of another version) get a pair from a stable hash
/// of their name.
extension SVGPlot {
  /// How a policy configuration is drawn.
  package struct PolicyStyle: Sendable, Equatable {
    /// `#RRGGBB`, from the family's declaration.
    package var color: String
    package var marker: MarkerShape
    /// `stroke-dasharray` of its line; nil: solid.
    package var dash: String?
  }

  /// Dash patterns of a family's 2nd, 3rd, … configuration (the 1st is solid).
  static let variantDashes = ["7 3", "2 2.5", "9 3 2 3", "4 4", "1 3"]

  /// The colour and marker of a policy family (the text before `:`).
  package static func familyStyle(_ family: String) -> (color: String, marker: MarkerShape) {
    if let f = PolicyRegistry.family(named: family) { return (f.style.color, f.style.marker) }
    // Unknown family: a stable choice among the colours and markers.
    let h = StableHash.fnv1a(family)
    let colours = ["#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7"]
    let shapes: [MarkerShape] = [.plus, .cross, .circle, .diamond]
    return (colours[Int(h % UInt64(colours.count))], shapes[Int((h / 7) % UInt64(shapes.count))])
  }

  /// The style of every policy in `policies` (configuration names, in run
  /// order): the family's colour and marker, and a dash that tells a
  /// family's configurations apart (solid for the first).
  package static func policyStyles(_ policies: [String]) -> [String: PolicyStyle] {
    var seen: [String: Int] = [:]
    var out: [String: PolicyStyle] = [:]
    for p in policies where out[p] == nil {
      let f = Scoring.family(of: p)
      let k = seen[f, default: 0]
      seen[f] = k + 1
      let st = familyStyle(f)
      out[p] = PolicyStyle(
        color: st.color, marker: st.marker, dash: k == 0 ? nil : variantDashes[(k - 1) % variantDashes.count])
    }
    return out
  }

  /// The style of one policy given the run's policies (see ``policyStyles(_:)``).
  package static func policyStyle(_ policy: String, among policies: [String]) -> PolicyStyle {
    policyStyles(policies.contains(policy) ? policies : policies + [policy])[policy]!
  }
}
