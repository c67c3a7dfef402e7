#!/usr/bin/env bash
# The main job: build FetchLab and replay the bundled UbiqLog-derived trace
# against never, periodic:15m, periodic:1h, periodic:4h and the oracle.
# Results go to results/ubiqlog/; the comparison table is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
swift build -c release --product fetchlab >&2
.build/release/fetchlab run \
  --trace datasets/ubiqlog/ubiqlog-opens.csv \
  --policy never --policy periodic:15m --policy periodic:1h --policy periodic:4h --policy oracle \
  --seed 1 --out results/ubiqlog "$@"
