#!/bin/bash
# Submits an experiment as a Slurm job array of N shards plus a merge job
# that runs when every shard has succeeded (docs/slurm.md).
#
#   scripts/slurm/submit.sh EXPERIMENT.json N BASE OUT [extra sbatch options...]
#
# Prints the two job ids; the jobs' output goes to BASE/logs/. Extra options
# (e.g. --partition=short, --time=2:00:00) go to both sbatch calls. A failed
# shard cancels the merge (--kill-on-invalid-dep). Run it from the directory
# the paths are relative to.
set -euo pipefail
if [ $# -lt 4 ]; then
  echo "usage: $0 EXPERIMENT.json N BASE OUT [sbatch options...]" >&2
  exit 64
fi
exp=$1 n=$2 base=$3 out=$4
shift 4
case $n in '' | *[!0-9]* | 0) echo "$0: N must be a positive integer, got '$n'" >&2; exit 64 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$base/logs"
array=$(sbatch --parsable --array="1-$n" --output="$base/logs/shard-%a.out" "$@" "$here/fetchlab-array.sbatch" "$exp" "$base")
array=${array%%;*}
merge=$(sbatch --parsable --dependency="afterok:$array" --kill-on-invalid-dep=yes --output="$base/logs/merge.out" "$@" \
  "$here/fetchlab-merge.sbatch" "$base" "$out")
merge=${merge%%;*}
echo "array job $array (shards 1-$n -> $base/shard-K), merge job $merge (-> $out)"
