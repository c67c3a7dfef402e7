#!/usr/bin/env bash
# Regenerates notebooks-export/ from the default benchmark
# (experiments/default.json: the bundled UbiqLog trace and a 100-user
# synthetic population):
#   1. builds fetchlab (release) and runs the benchmark into results/default
#      (resumable: quick when the results are there);
#   2. copies the small run files the notebook reads into
#      notebooks-export/default-data/ (policies.csv, pareto.csv, pooled.csv,
#      manifest.json without its timestamps, the habit model's
#      fit/calibration.csv; not summary.csv, 6.7 MB);
#   3. fetchlab report notebooks-export/default-data \
#        --notebook notebooks-export/default.ipynb
#      (RUN_DIR = "default-data", relative to the notebook; the charts go to
#      default-data/plots/);
#   4. jupyter nbconvert --to html: notebooks-export/default.html (FetchLab's
#      own report.html instead when the Jupyter venv cannot be made offline).
# The same benchmark results give the same bytes.
#
#   bash scripts/export-notebooks.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
swift build -c release --product fetchlab >&2
fetchlab=.build/release/fetchlab
$fetchlab run experiments/default.json --out results/default >&2

out=notebooks-export
data=$out/default-data
rm -rf "$data"
mkdir -p "$data"
for f in policies.csv pareto.csv pooled.csv; do cp results/default/$f "$data/"; done
# The habit model's calibration (UbiqLog test windows), for its chart.
fit=$(mktemp -d)
trap 'rm -rf "$fit"' EXIT
$fetchlab fit --trace datasets/ubiqlog/ubiqlog-opens.csv --out "$fit/model.json" --report "$fit" > /dev/null
mkdir -p "$data/fit"
cp "$fit/calibration.csv" "$data/fit/"
# The manifest without what changes between identical runs.
python3 - results/default/manifest.json "$data/manifest.json" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1], encoding="utf-8"))
for k in ("started_at", "elapsed_s", "jobs", "units"):
    m.pop(k, None)
with open(sys.argv[2], "w", encoding="utf-8") as f:
    json.dump(m, f, indent=2, sort_keys=True, ensure_ascii=False)
    f.write("\n")
EOF
$fetchlab report "$data" --notebook $out/default.ipynb >&2

if venv=$(bash scripts/check-notebooks.sh --venv-only); then
  "$venv/bin/python" -m jupyter nbconvert --to html $out/default.ipynb --output default.html >&2
else
  echo "warning: no Jupyter venv (offline?): $out/default.html is FetchLab's report.html" >&2
  cp "$data/report.html" $out/default.html
fi
# report.html and report.md duplicate the notebook; the plots stay (the
# notebook's show_chart cells read them).
rm -f "$data/report.html" "$data/report.md"
du -sh $out/* >&2
echo "notebook: $out/default.ipynb (HTML: $out/default.html, data: $data/)"
