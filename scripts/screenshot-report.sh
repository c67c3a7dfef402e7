#!/usr/bin/env bash
# Screenshots of a run's report in headless Chromium, to look at what a
# reader sees: every RUN_DIR/plots/*.svg (at its own size, in a 1280 px wide
# window) and RUN_DIR/report.html on a desktop (1440 × 2000, the top of the
# page, and 1440 × full length) and on a phone (390 × 844, and full length).
#
#   bash scripts/screenshot-report.sh results/default /tmp/shots
#
# Needs Chromium (Debian: apt-get install chromium; installed here when
# missing, with sudo if not root). Writes OUTDIR/<name>.png and prints the
# paths.
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 RUN_DIR OUTDIR" >&2
  exit 64
fi
run=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
[ -f "$run/report.html" ] || { echo "$run/report.html not found: run 'fetchlab report $1' first" >&2; exit 1; }

browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >&2
  browser=$(command -v chromium)
fi

shot() { # url width height png
  "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
    --window-size="$2,$3" --screenshot="$4" "$1" >/dev/null 2>&1 || {
    echo "chromium failed on $1" >&2
    return 1
  }
  echo "$4"
}

# Each SVG at 1280 px wide and its own height (from its height attribute).
for svg in "$run"/plots/*.svg; do
  [ -e "$svg" ] || continue
  h=$(grep -o -m1 '<svg [^>]*' "$svg" | sed -n 's/.* height="\([0-9.]*\)".*/\1/p' | cut -d. -f1)
  shot "file://$svg" 1280 "$(( ${h:-800} + 16 ))" "$out/$(basename "$svg" .svg).png"
done

# report.html: the first screen, then the whole page (an estimate of its
# length: the inlined charts scaled to the window's width, the table rows
# and the manifest's lines, should it be opened), at a desktop's and at a
# phone's width.
rows=$(grep -c '<tr>' "$run/report.html" || true)
lines=$(sed -n '/<pre>/,/<\/pre>/p' "$run/report.html" | wc -l)
for width in 1440 390; do
  charts=$(grep -o '<svg [^>]*' "$run/report.html" |
    sed -n 's/.* width="\([0-9.]*\)" height="\([0-9.]*\)".*/\1 \2/p' |
    awk -v w="$width" '{ s += (($1 > w - 40) ? $2 * (w - 40) / $1 : $2) + 60 } END { print int(s) }')
  shot "file://$run/report.html" "$width" "$([ "$width" -ge 800 ] && echo 2000 || echo 844)" "$out/report-$width.png"
  shot "file://$run/report.html" "$width" "$(( 400 + charts + 26 * rows + 15 * lines ))" \
    "$out/report-$width-full.png"
done
