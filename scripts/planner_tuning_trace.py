#!/usr/bin/env python3
"""Write the planner's UbiqLog tuning trace: the first 75 % of each user's
window (the training part of experiments/planner.json), so that a replay of
it with train_fraction 0.75 tests on data the evaluation never scores.

usage: planner_tuning_trace.py IN.csv OUT.csv [fraction]
"""
import sys

src, dst = sys.argv[1], sys.argv[2]
frac = float(sys.argv[3]) if len(sys.argv) > 3 else 0.75
rows, begin, end = [], {}, {}
with open(src) as f:
    for line in f:
        if line.startswith("#") or line.startswith("user,"):
            rows.append(("hdr", line))
            continue
        p = line.rstrip("\n").split(",")
        if p[2] == "begin":
            begin[p[0]] = float(p[1])
        elif p[2] == "end":
            end[p[0]] = float(p[1])
        rows.append((p[0], line))
cut = {u: int(begin[u] + frac * (end[u] - begin[u])) for u in begin}
with open(dst, "w") as out:
    for u, line in rows:
        if u == "hdr":
            out.write(line)
            continue
        p = line.rstrip("\n").split(",")
        t = float(p[1])
        if p[2] == "end":
            p[1] = str(cut[u])
            out.write(",".join(p) + "\n")
        elif t < cut[u] or p[2] == "begin":
            out.write(line)
