#!/usr/bin/env bash
# Regenerates every committed run that README.md and docs/*.md quote, then
# the figure blocks of those pages (scripts/doc-figures.py):
#   1. scripts/export-notebooks.sh: the default benchmark, its notebook and
#      notebooks-export/default-data/ (pooled.csv among them);
#   2. experiments/robustness.json -> notebooks-export/robustness-data/
#      (robustness.csv, policies.csv);
#   3. experiments/large-content.json, background-wakes.json,
#      model-oracle.json and planner.json -> notebooks-export/<name>-data/
#      (pooled.csv, policies.csv; model-oracle's loss_split.csv, planner's
#      oracle_gap.csv);
#   4. the README's chart (docs/images/staleness-energy-ubiqlog.svg): the
#      default run's chart of the families the README discusses (report --policies
#      on a copy of the three files its charts read, so results/default keeps its own report);
#   5. python3 scripts/doc-figures.py: the blocks from those files.
# The README's speed block reads docs/bench/bench-users300.csv, which this
# script does not remake (timings want a quiet machine):
#   fetchlab bench --users 300 --compare docs/bench/bench-0.7.0-users300.csv --out results/bench
#   cp results/bench/bench.csv docs/bench/bench-users300.csv
# The runs are resumable (results/<name>), so a second call is quick.
# python/tests/test_doc_figures.py fails until this has run after a change
# of the outputs.
#
#   bash scripts/refresh-doc-figures.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/export-notebooks.sh >&2
fetchlab=.build/release/fetchlab
chart=$(mktemp -d)
trap 'rm -rf "$chart"' EXIT
mkdir "$chart/run"
cp results/default/{policies.csv,pareto.csv,manifest.json} "$chart/run/"
readme_policies=$(python3 -c '
import csv
keep = ("never", "oracle", "periodic", "tailender", "ios-minimum", "imp", "planner")
rows = csv.DictReader(open("results/default/policies.csv", encoding="utf-8"))
print(",".join(r["policy"] for r in rows if r["dataset"] == "ubiqlog" and (r["family"] in keep
      or (r["family"] == "oracle-budget" and r["policy"].endswith("J")))))')
$fetchlab report "$chart/run" --no-timeline --policies "$readme_policies" > /dev/null
cp "$chart/run/plots/staleness-energy-ubiqlog.svg" docs/images/
for name in robustness large-content background-wakes model-oracle planner; do
  $fetchlab run "experiments/$name.json" --out "results/$name" >&2
  data="notebooks-export/$name-data"
  rm -rf "$data"
  mkdir -p "$data"
  case $name in
    robustness) extra=robustness.csv ;;
    model-oracle) extra=loss_split.csv ;;
    planner) extra=oracle_gap.csv ;;
    *) extra= ;;
  esac
  for f in pooled.csv policies.csv $extra; do cp "results/$name/$f" "$data/"; done
done
python3 scripts/doc-figures.py
