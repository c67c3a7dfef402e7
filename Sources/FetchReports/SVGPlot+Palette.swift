import FetchTraces

/// One colour per policy family, the same in every chart of every report.
///
/// Colours are the Okabe–Ito colour-blind-safe palette extended with three
/// of Paul Tol's (``SVGPlot/palette``): each of the 11 families has its own
/// colour, and its own marker too where the 7 shapes allow (no two families
/// share a marker AND a colour, and families that share a marker have
/// clearly different colours), so a chart printed in grey still tells
/// neighbouring families apart. The
/// configurations of one family (`periodic:15m`, `periodic:1h`) share its
/// colour and marker and differ by line dash, in the order they appear in
/// the run. Families the table does not know get a pair from a stable hash
/// of their name.
extension SVGPlot {
  /// How a policy configuration is drawn.
  public struct PolicyStyle: Sendable, Equatable {
    /// `#RRGGBB`, from ``SVGPlot/palette``.
    public var color: String
    public var marker: MarkerShape
    /// `stroke-dasharray` of its line; nil: solid.
    public var dash: String?
  }

  /// The known families' (colour, marker), in the order of the default
  /// experiment.
  static let familyTable: [(family: String, color: String, marker: MarkerShape)] = [
    ("never", "#000000", .square),
    ("periodic", "#E69F00", .circle),
    ("oracle", "#009E73", .diamond),
    ("oracle-budget", "#999933", .triangleDown),
    ("ios-minimum", "#0072B2", .triangle),
    ("ios-custom", "#56B4E9", .triangle),
    ("silent-push", "#CC79A7", .plus),
    ("android-workmanager", "#D55E00", .square),
    ("android-standby", "#882255", .cross),
    ("tailender", "#F0E442", .circle),
    ("imp", "#332288", .diamond),
  ]

  /// Dash patterns of a family's 2nd, 3rd, … configuration (the 1st is solid).
  static let variantDashes = ["7 3", "2 2.5", "9 3 2 3", "4 4", "1 3"]

  /// The colour and marker of a policy family (the text before `:`).
  public static func familyStyle(_ family: String) -> (color: String, marker: MarkerShape) {
    if let f = familyTable.first(where: { $0.family == family }) { return (f.color, f.marker) }
    // Unknown family: a stable choice among the colours and markers.
    let h = StableHash.fnv1a(family)
    let colours = ["#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7"]
    let shapes: [MarkerShape] = [.plus, .cross, .circle, .diamond]
    return (colours[Int(h % UInt64(colours.count))], shapes[Int((h / 7) % UInt64(shapes.count))])
  }

  /// The style of every policy in `policies` (configuration names, in run
  /// order): the family's colour and marker, and a dash that tells a
  /// family's configurations apart (solid for the first).
  public static func policyStyles(_ policies: [String]) -> [String: PolicyStyle] {
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
  public static func policyStyle(_ policy: String, among policies: [String]) -> PolicyStyle {
    policyStyles(policies.contains(policy) ? policies : policies + [policy])[policy]!
  }
}
