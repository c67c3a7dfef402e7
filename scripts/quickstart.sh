#!/usr/bin/env bash
# The main job: build FetchLab and run the default benchmark
# (experiments/default.json): the bundled UbiqLog trace and a 100-user
# synthetic population, 39 policy configurations (timers, oracles, the
# budgeted oracles, iOS Minimum/Custom sweeps, silent push, Android
# WorkManager and Standby, TailEnder, IMP, the planner), 3 replications, every policy
# trained on the first 75 % of each user's window and scored on the rest.
# Results (CSV with 95 % CIs, Pareto frontiers, paired comparisons) go to
# results/default/; a comparison table per dataset is printed. About 1.5 min
# after the build on 2 cores; rerunning resumes.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
swift build -c release --product fetchlab >&2
.build/release/fetchlab run experiments/default.json --out results/default "$@"
.build/release/fetchlab compare results/default --baseline periodic:1h > results/default/compare.txt
# The habit model against its baselines on the UbiqLog test windows; the
# report draws its calibration from results/default/fit/calibration.csv.
mkdir -p results/default/fit
.build/release/fetchlab fit --trace datasets/ubiqlog/ubiqlog-opens.csv --out results/default/fit/model.json \
  --report results/default/fit > results/default/fit/fit.txt
.build/release/fetchlab report results/default >&2
echo "paired comparison against periodic:1h: results/default/paired.csv (table in results/default/compare.txt)"
echo "habit model vs baselines: results/default/fit/fit.txt (calibration in the report)"
echo "report: results/default/report.html (charts in results/default/plots/)"
