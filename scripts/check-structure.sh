#!/usr/bin/env bash
# Structural checks that CI runs (scripts/check_structure.py says what each
# checks): file length, function length at any indentation, and every import
# of one of the package's modules declared in Package.swift.
set -euo pipefail
cd "$(dirname "$0")/.."
dump=$(mktemp)
trap 'rm -f "$dump"' EXIT
swift package dump-package > "$dump"
python3 scripts/check_structure.py . "$dump"
