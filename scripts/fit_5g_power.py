#!/usr/bin/env python3
"""Recompute the 5G power parameters from the artifact of Narayanan et al.,
"A Variegated Look at 5G in the Wild", SIGCOMM 2021
(github.com/SIGCOMM21-5G/artifact).

Usage: python3 scripts/fit_5g_power.py ARTIFACT
where ARTIFACT is a checkout of the artifact or its bare git directory.

The method is that of the artifact's plot-section4-figure11.py: Verizon rows
of Data-Transfer-Power/MN-Transfer/data-processed/MN-Transfer_combined.csv,
grouped by network type and direction; each group's samples binned around
the target bandwidths (a sample with target - w < throughput <= target + w);
the mean power and mean throughput of each non-empty bin (for LTE
downlink the first 11 bins only, as there); an ordinary
least-squares line through those means. The device baseline is the mean
of the non-empty base_power values of
Power-Model/MN-Wild/data-processed/baseline_power.csv. Standard library
only; the artifact's files are read, never copied.
"""
import csv
import io
import os
import subprocess
import sys

TRANSFER = "Data-Transfer-Power/MN-Transfer/data-processed/MN-Transfer_combined.csv"
BASELINE = "Power-Model/MN-Wild/data-processed/baseline_power.csv"

# Bin half-widths (Mbps) and target bandwidths, as figure 11's script sets
# them; None: the group's distinct targets in order of appearance.
MMWAVE_DL = [1, 50, 100, 130, 200, 400, 600, 800, 1000, 1200, 1400, 1600, 1800, 2000, 2200, 2400]
# The last field keeps only the first bins (figure 11 fits LTE downlink
# over its first 11 bins, up to 50 Mbps).
GROUPS = [
    ("LTE", "downlink", lambda t: 1.5, None, 11),
    ("LTE", "uplink", lambda t: 1, [1.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0], None),
    ("NSALow", "downlink", lambda t: 1, None, None),
    ("NSALow", "uplink", lambda t: 0.5, None, None),
    ("mmwave", "downlink", lambda t: 4 if t <= 200 else 20, MMWAVE_DL, None),
    ("mmwave", "uplink", lambda t: 1, None, None),
]


def read(root, path):
    if os.path.exists(os.path.join(root, path)):
        with open(os.path.join(root, path), newline="") as f:
            return f.read()
    return subprocess.run(["git", "--git-dir", root, "show", "HEAD:" + path],
                          check=True, capture_output=True, text=True).stdout


def line_fit(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    slope = sxy / sxx
    return my - slope * mx, slope


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    rows = [r for r in csv.DictReader(io.StringIO(read(root, TRANSFER))) if r["provider"] == "Verizon"]
    base = [float(r["base_power"]) for r in csv.DictReader(io.StringIO(read(root, BASELINE))) if r["base_power"]]
    baseline = sum(base) / len(base) / 1000
    print(f"baseline {baseline:.3f} W (mean of {len(base)} runs)")
    print("network,direction,intercept_w,slope_mw_per_mbps,radio_w,bins")
    for net, direction, width, targets, keep in GROUPS:
        g = [r for r in rows if r["network type"] == net and r["direction"] == direction]
        if targets is None:
            targets = list(dict.fromkeys(float(r["target bandwidth"]) for r in g))
        first = min(targets)
        xs, ys = [], []
        for t in targets[:keep]:
            w = width(t)
            inside = [r for r in g
                      if (t - w < float(r["throughput"]) or (t == first and float(r["throughput"]) == t - w))
                      and float(r["throughput"]) <= t + w]
            if inside:
                xs.append(sum(float(r["throughput"]) for r in inside) / len(inside))
                ys.append(sum(float(r["avg_power"]) for r in inside) / len(inside) / 1000)
        b, m = line_fit(xs, ys)
        print(f"{net},{direction},{b:.3f},{m * 1000:.2f},{b - baseline:.3f},{len(xs)}")


if __name__ == "__main__":
    main()
