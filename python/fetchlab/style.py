"""Colours, markers and print sizes of the figures.

Each policy family has the colour and marker of FetchLab's own SVG charts
(the Okabe-Ito colour-blind-safe palette extended with Paul Tol's; a family
has its own colour AND its own marker, so a greyscale print still tells
families apart). The configurations of one family (``periodic:15m``,
``periodic:1h``) share both and differ by line style. A test of the Swift
package checks this table against the policy registry.
"""
import zlib

#: family -> (colour, marker name as in FetchLab's registry)
FAMILY_STYLES = {
    "never": ("#000000", "square"),
    "periodic": ("#E69F00", "circle"),
    "ios-minimum": ("#332288", "triangle"),
    "ios-custom": ("#EE3377", "triangleRight"),
    "oracle": ("#009E73", "diamond"),
    "oracle-budget": ("#999933", "triangleDown"),
    "silent-push": ("#AA4499", "plus"),
    "android-standby": ("#661100", "cross"),
    "android-workmanager": ("#CC3311", "triangleLeft"),
    "tailender": ("#56B4E9", "star"),
    "imp": ("#777777", "pentagon"),
    "planner": ("#117733", "hexagon"),
    "transfer": ("#44AA99", "openHexagon"),
    "location-wake": ("#6699CC", "octagon"),
    "fetch-on-exit": ("#CC79A7", "openSquare"),
    "bg-app-refresh": ("#88CCEE", "openTriangle"),
    "bg-processing": ("#DDCC77", "openDiamond"),
    "android-prefetch": ("#882255", "asterisk"),
    "per-app": ("#0072B2", "ring"),
    "external": ("#5D3A9B", "openPentagon"),
    "schedule": ("#994F00", "openOctagon"),
}

# registry marker -> (matplotlib marker, filled)
_MARKERS = {
    "circle": ("o", True), "square": ("s", True), "triangle": ("^", True), "diamond": ("D", True),
    "triangleDown": ("v", True), "plus": ("P", True), "cross": ("X", True), "star": ("*", True),
    "hexagon": ("h", True), "pentagon": ("p", True), "triangleLeft": ("<", True), "triangleRight": (">", True),
    "ring": ("o", False), "octagon": ("8", True), "openSquare": ("s", False), "openDiamond": ("D", False),
    "openTriangle": ("^", False), "openHexagon": ("h", False), "asterisk": ((6, 2, 0), False),
    "openPentagon": ("p", False), "openOctagon": ("8", False),
}
_OTHER_COLOURS = ["#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7"]
_OTHER_MARKERS = ["plus", "cross", "circle", "diamond"]
#: line styles of a family's 2nd, 3rd, ... configuration (the 1st is solid)
VARIANT_LINESTYLES = [(0, (4.5, 2)), (0, (1.2, 1.6)), (0, (6, 2, 1.2, 2)), (0, (2.5, 2.5)), (0, (0.8, 2.5))]

#: matplotlib settings for print: 8 pt text (7 pt ticks and legends), thin lines, embedded TrueType fonts
PAPER_RC = {
    "font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8, "xtick.labelsize": 7, "ytick.labelsize": 7,
    "legend.fontsize": 7, "legend.title_fontsize": 7, "axes.linewidth": 0.6, "lines.linewidth": 1.0,
    "lines.markersize": 4, "xtick.major.width": 0.6, "ytick.major.width": 0.6, "xtick.minor.width": 0.4,
    "ytick.minor.width": 0.4, "xtick.major.size": 3, "ytick.major.size": 3, "xtick.minor.size": 1.5,
    "ytick.minor.size": 1.5, "grid.linewidth": 0.4, "grid.color": "#dddddd", "legend.frameon": False,
    "legend.handlelength": 2.2, "pdf.fonttype": 42, "ps.fonttype": 42, "svg.fonttype": "none",
    "savefig.bbox": "standard", "figure.dpi": 150, "axes.spines.top": False, "axes.spines.right": False,
}


def family_of(policy):
    """The family of a configuration: the text before the first ``:``."""
    return policy.split(":")[0]


def family_style(family):
    """(colour, matplotlib marker, filled) of a family; unknown families get a stable pair from their name."""
    if family in FAMILY_STYLES:
        colour, marker = FAMILY_STYLES[family]
    else:
        h = zlib.crc32(family.encode())
        colour, marker = _OTHER_COLOURS[h % len(_OTHER_COLOURS)], _OTHER_MARKERS[(h // 7) % len(_OTHER_MARKERS)]
    m, filled = _MARKERS[marker]
    return colour, m, filled


def policy_style(policy, among=()):
    """matplotlib keyword arguments (color, marker, linestyle, marker faces) for one configuration.

    ``among``: the configurations drawn, in order; a family's first one is
    solid, the next ones dashed, dotted, ...
    """
    fam = family_of(policy)
    peers = [p for p in dict.fromkeys(list(among) + [policy]) if family_of(p) == fam]
    k = peers.index(policy)
    colour, marker, filled = family_style(fam)
    return {
        "color": colour, "marker": marker, "linestyle": "-" if k == 0 else VARIANT_LINESTYLES[(k - 1) % 5],
        "markerfacecolor": colour if filled else "white", "markeredgecolor": colour,
    }
