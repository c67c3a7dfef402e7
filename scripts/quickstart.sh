#!/usr/bin/env bash
# The main job: build FetchLab and replay the bundled UbiqLog-derived trace
# against never, periodic timers, the oracle, and the learned iOS-like
# Minimum scheduler (trained on the first 75 % of each user's window; every
# policy is scored on the last 25 %). Results go to results/ubiqlog/; the
# comparison table is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
swift build -c release --product fetchlab >&2
.build/release/fetchlab run \
  --trace datasets/ubiqlog/ubiqlog-opens.csv \
  --policy never --policy periodic:15m --policy periodic:1h --policy periodic:4h --policy oracle \
  --policy ios-minimum --policy ios-minimum:price=0.1 --policy ios-custom:1h \
  --seed 1 --out results/ubiqlog "$@"
