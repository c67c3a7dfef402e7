#!/usr/bin/env bash
# Regenerates every committed run that README.md and docs/*.md quote, then
# the figure blocks of those pages (scripts/doc-figures.py):
#   1. scripts/export-notebooks.sh: the default benchmark, its notebook and
#      notebooks-export/default-data/ (pooled.csv among them);
#   2. experiments/robustness.json -> notebooks-export/robustness-data/
#      (robustness.csv, policies.csv);
#   3. experiments/large-content.json and background-wakes.json ->
#      notebooks-export/<name>-data/ (pooled.csv, policies.csv);
#   4. the README's chart (docs/images/staleness-energy-ubiqlog.svg) from
#      the default run's report;
#   5. python3 scripts/doc-figures.py: the blocks from those files.
# The runs are resumable (results/<name>), so a second call is quick.
# python/tests/test_doc_figures.py fails until this has run after a change
# of the outputs.
#
#   bash scripts/refresh-doc-figures.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/export-notebooks.sh >&2
cp notebooks-export/default-data/plots/staleness-energy-ubiqlog.svg docs/images/
fetchlab=.build/release/fetchlab
for name in robustness large-content background-wakes; do
  $fetchlab run "experiments/$name.json" --out "results/$name" >&2
  data="notebooks-export/$name-data"
  rm -rf "$data"
  mkdir -p "$data"
  for f in robustness.csv pooled.csv policies.csv; do
    if [ -f "results/$name/$f" ]; then cp "results/$name/$f" "$data/"; fi
  done
done
python3 scripts/doc-figures.py
