#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer) of the trace reader, the
# experiment-file reader and `run` (a replay of every accepted trace under
# a set of policies of every family, with world-parameter overrides), then
# the Python companion's loaders under seeded mutations.
#
#   bash scripts/fuzz.sh [SECONDS]        # default 60 s per reader
#   FUZZ_OPT=-O bash scripts/fuzz.sh 300  # optimised build (slower to build, faster to run)
#   FUZZ_JOBS=2 bash scripts/fuzz.sh 600  # libFuzzer workers per reader
#   FUZZ_SKIP_BUILD=1 bash scripts/fuzz.sh # reuse the harnesses built last time
#
# Builds FetchLinearAlgebra, FetchSupport and FetchTraces (and, for the
# experiment and run harnesses, FetchModels, FetchSimulation and
# FetchBenchmark) with
# `swiftc -sanitize=fuzzer` into fuzz/.build/, links fuzz/*Fuzzer.swift
# against them, and runs each harness for SECONDS on a working copy of
# fuzz/corpus/<reader>/ (new interesting inputs go to fuzz/.build/corpus-*,
# never into the repository). Prints the executions of each reader and
# exits non-zero if a harness crashed; the crashing input is saved as
# fuzz/.build/crash-<reader>-* (reproduce: fuzz/.build/<reader>-fuzzer FILE).
set -euo pipefail

cd "$(dirname "$0")/.."
SECONDS_PER_READER="${1:-60}"
OPT="${FUZZ_OPT:--Onone}"
JOBS="${FUZZ_JOBS:-1}"
OUT=fuzz/.build
mkdir -p "$OUT"

command -v swiftc >/dev/null || { echo "fuzz.sh: swiftc not on PATH" >&2; exit 1; }
for lib in openblas lapacke libcrypto; do
  pkg-config --exists "$lib" || { echo "fuzz.sh: pkg-config cannot find $lib (bash scripts/install-deps.sh)" >&2; exit 1; }
done
BLAS_CFLAGS=()
for f in $(pkg-config --cflags openblas lapacke libcrypto); do BLAS_CFLAGS+=(-Xcc "$f"); done
C_LIBS=($(pkg-config --libs openblas lapacke libcrypto))
# The system-library modules FetchLinearAlgebra imports (every module above
# it needs their module maps to import it).
C_INCLUDES=(-I Sources/CBLAS -I Sources/CLAPACKE -I Sources/CCrypto)

# One static library and module per target, in dependency order.
module() {  # name, then extra flags
  local name=$1; shift
  echo "fuzz.sh: building $name ($OPT, -sanitize=fuzzer)" >&2
  swiftc -parse-as-library -sanitize=fuzzer "$OPT" -swift-version 6 -package-name FetchLab -module-name "$name" \
    -emit-library -static -emit-module -emit-module-path "$OUT/$name.swiftmodule" \
    -I "$OUT" "$@" $(find Sources/"$name" -name '*.swift' | sort) -o "$OUT/lib$name.a"
}

if [ "${FUZZ_SKIP_BUILD:-0}" = 1 ] && [ -x "$OUT/trace-fuzzer" ] && [ -x "$OUT/experiment-fuzzer" ] && [ -x "$OUT/run-fuzzer" ]; then
  echo "fuzz.sh: reusing $OUT/trace-fuzzer, $OUT/experiment-fuzzer and $OUT/run-fuzzer" >&2
else
module FetchLinearAlgebra "${C_INCLUDES[@]}" "${BLAS_CFLAGS[@]}"
module FetchSupport "${C_INCLUDES[@]}" "${BLAS_CFLAGS[@]}"
module FetchTraces "${C_INCLUDES[@]}" "${BLAS_CFLAGS[@]}"
module FetchModels "${C_INCLUDES[@]}" "${BLAS_CFLAGS[@]}"
module FetchSimulation "${C_INCLUDES[@]}" "${BLAS_CFLAGS[@]}"
module FetchBenchmark "${C_INCLUDES[@]}" "${BLAS_CFLAGS[@]}"

echo "fuzz.sh: linking the harnesses" >&2
BASE_LIBS=("$OUT/libFetchTraces.a" "$OUT/libFetchSupport.a" "$OUT/libFetchLinearAlgebra.a" "${C_LIBS[@]}")
swiftc -parse-as-library -sanitize=fuzzer "$OPT" -swift-version 6 -package-name FetchLab -I "$OUT" "${C_INCLUDES[@]}" "${BLAS_CFLAGS[@]}" \
  fuzz/TraceReaderFuzzer.swift "${BASE_LIBS[@]}" -o "$OUT/trace-fuzzer"
for harness in experiment:ExperimentFuzzer run:RunFuzzer; do
  swiftc -parse-as-library -sanitize=fuzzer "$OPT" -swift-version 6 -package-name FetchLab -I "$OUT" "${C_INCLUDES[@]}" "${BLAS_CFLAGS[@]}" \
    fuzz/"${harness#*:}".swift "$OUT/libFetchBenchmark.a" "$OUT/libFetchSimulation.a" "$OUT/libFetchModels.a" \
    "${BASE_LIBS[@]}" -o "$OUT/${harness%%:*}-fuzzer"
done
fi

status=0
summary=()
for reader in trace experiment run; do
  corpus="$OUT/corpus-$reader"
  mkdir -p "$corpus"
  cp -n fuzz/corpus/"$reader"/* "$corpus"/ 2>/dev/null || true
  log="$OUT/$reader.log"
  echo "fuzz.sh: fuzzing the $reader reader for $SECONDS_PER_READER s (log: $log)" >&2
  # -rss_limit_mb: a harness that needs more than 2 GB is a finding too.
  parallel=()
  if [ "$JOBS" -gt 1 ]; then parallel=(-jobs="$JOBS" -workers="$JOBS"); fi
  set +e
  # SWIFT_BACKTRACE=enable=no: let libFuzzer's handler save the crashing input.
  # Run inside $OUT: with -jobs, libFuzzer writes fuzz-<N>.log to the
  # current directory.
  (cd "$OUT" && SWIFT_BACKTRACE=enable=no OPENBLAS_NUM_THREADS=1 "./$reader-fuzzer" "corpus-$reader" \
    -max_total_time="$SECONDS_PER_READER" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    ${parallel[@]+"${parallel[@]}"} -artifact_prefix="crash-$reader-" >"$reader.log" 2>&1)
  rc=$?
  set -e
  if [ "$JOBS" -gt 1 ]; then cat "$OUT"/fuzz-*.log >>"$log" 2>/dev/null || true; rm -f "$OUT"/fuzz-*.log; fi
  runs=$( (grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" || true) | awk '{s += $2} END {print s + 0}')
  if [ "$runs" = 0 ]; then  # no final stats after a crash: the last status line's count
    runs=$( (grep -Eo '^#[0-9]+' "$log" || true) | tail -1 | tr -d '#')
  fi
  if [ "$rc" -ne 0 ]; then
    status=1
    summary+=("$reader: CRASH after $runs executions (exit $rc); see $log and $OUT/crash-$reader-*")
  else
    summary+=("$reader: $runs executions in $SECONDS_PER_READER s, no crash; corpus $(ls "$corpus" | wc -l) inputs")
  fi
done
# The Python companion (python/fetchlab): seeded mutations of the trace
# conformance corpus and of a result directory's policies.csv, each refused
# with file:line and no traceback (python/tests/test_fuzz.py), FUZZ_PY_CASES
# (default 5000) of each, in the notebook venv (scripts/check-notebooks.sh)
# or any python3 with pandas and matplotlib.
py="${NOTEBOOK_VENV:-.build/notebook-venv}/bin/python"
[ -x "$py" ] || py=python3
if "$py" -c 'import pandas, matplotlib, pytest' 2>/dev/null; then
  if (cd python && FUZZ_CASES="${FUZZ_PY_CASES:-5000}" "$py" -m pytest -q -p no:cacheprovider tests/test_fuzz.py >"../$OUT/python.log" 2>&1); then
    summary+=("python companion: ${FUZZ_PY_CASES:-5000} traces and $(( ${FUZZ_PY_CASES:-5000} / 10 )) result directories, no traceback")
  else
    status=1
    summary+=("python companion: FAILED; see $OUT/python.log")
  fi
else
  summary+=("python companion: SKIPPED (no python with pandas, matplotlib and pytest: bash scripts/check-notebooks.sh --venv-only)")
fi
printf '%s\n' "${summary[@]}"
exit $status
