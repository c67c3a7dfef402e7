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
    "silent-push": ("#882255", "plus"),
    "android-standby": ("#661100", "cross"),
    "android-workmanager": ("#CC3311", "triangleLeft"),
    "tailender": ("#56B4E9", "star"),
    "imp": ("#777777", "pentagon"),
    "planner": ("#0072B2", "hexagon"),
    "transfer": ("#44AA99", "openHexagon"),
    "location-wake": ("#6699CC", "octagon"),
    "fetch-on-exit": ("#CC79A7", "openSquare"),
    "bg-app-refresh": ("#88CCEE", "openTriangle"),
    "bg-processing": ("#DDCC77", "openDiamond"),
    "android-prefetch": ("#AA4499", "asterisk"),
    "per-app": ("#117733", "ring"),
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


#: the most families a default trade-off figure draws (as FetchLab's report)
SERIES_LIMIT = 8
#: the least CIEDE2000 difference between two families' colours in one default figure
MIN_COLOUR_DIFFERENCE = 20.0
#: the reference families, always drawn first
REFERENCE_FAMILIES = ("never", "oracle", "oracle-budget")


def _lab(colour):
    """CIELAB (D65) of an sRGB ``#RRGGBB`` colour."""
    def lin(c):
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (lin(int(colour[i:i + 2], 16) / 255) for i in (1, 3, 5))
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t):
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116
    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def colour_difference(c1, c2):
    """The CIEDE2000 difference of two ``#RRGGBB`` colours (Sharma, Wu and Dalal, Color Res. Appl. 30(1), 2005)."""
    import math
    (l1, a1, b1), (l2, a2, b2) = _lab(c1), _lab(c2)
    cb = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(cb ** 7 / (cb ** 7 + 25 ** 7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1p, h2p = math.degrees(math.atan2(b1, a1p)) % 360, math.degrees(math.atan2(b2, a2p)) % 360
    dh = h2p - h1p
    if c1p * c2p == 0:
        dh = 0
    elif dh > 180:
        dh -= 360
    elif dh < -180:
        dh += 360
    dl, dc, dhh = l2 - l1, c2p - c1p, 2 * math.sqrt(c1p * c2p) * math.sin(math.radians(dh / 2))
    lb, cbp = (l1 + l2) / 2, (c1p + c2p) / 2
    if c1p * c2p == 0:
        hb = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        hb = (h1p + h2p) / 2
    else:
        hb = (h1p + h2p + 360) / 2 if h1p + h2p < 360 else (h1p + h2p - 360) / 2
    t = (1 - 0.17 * math.cos(math.radians(hb - 30)) + 0.24 * math.cos(math.radians(2 * hb))
         + 0.32 * math.cos(math.radians(3 * hb + 6)) - 0.2 * math.cos(math.radians(4 * hb - 63)))
    dth = 30 * math.exp(-((hb - 275) / 25) ** 2)
    rc = 2 * math.sqrt(cbp ** 7 / (cbp ** 7 + 25 ** 7))
    sl = 1 + 0.015 * (lb - 50) ** 2 / math.sqrt(20 + (lb - 50) ** 2)
    sc, sh = 1 + 0.045 * cbp, 1 + 0.015 * cbp * t
    rt = -math.sin(math.radians(2 * dth)) * rc
    return math.sqrt((dl / sl) ** 2 + (dc / sc) ** 2 + (dhh / sh) ** 2 + rt * (dc / sc) * (dhh / sh))


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
