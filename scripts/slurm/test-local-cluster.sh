#!/bin/bash
# End-to-end test of the Slurm job array (docs/slurm.md) on a real one-node
# Slurm cluster started here: installs slurm-wlm and munge (Debian, as
# root), starts munged, slurmctld and slurmd in the background with a
# private configuration under a temporary directory (its own munge key and
# socket, ports 16817/16818; nothing in /etc is changed), submits
# EXPERIMENT as an array of TASKS shards plus a dependent merge job
# (scripts/slurm/submit.sh), waits, runs the same experiment on one machine,
# and compares every CSV byte for byte (and manifest.json minus the keys a
# merge changes). Stops the daemons it started and removes the temporary
# directory on exit. Exit 0 when everything matches, 1 on any difference or
# failure, 2 when it cannot run (not root).
#
#   bash scripts/slurm/test-local-cluster.sh
#
# Environment: EXPERIMENT (default experiments/default.json), TASKS (4),
# FETCHLAB (default .build/release/fetchlab, built if missing), TIMEOUT
# (seconds to wait for the jobs, default 3600), KEEP=1 keeps the temporary
# directory. Made for containers without systemd: the daemons run in the
# foreground (-D, -F) as children of this script, proctrack/linuxproc,
# task/none, no cgroups, no accounting.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
if [ "$(id -u)" -ne 0 ]; then
  echo "test-local-cluster: run as root (it installs packages and starts Slurm daemons)" >&2
  exit 2
fi
experiment=${EXPERIMENT:-experiments/default.json}
tasks=${TASKS:-4}
fetchlab=${FETCHLAB:-$repo/.build/release/fetchlab}
timeout=${TIMEOUT:-3600}
t0=$(date +%s)
say() { echo "test-local-cluster: [$(($(date +%s) - t0)) s] $*" >&2; }

# Packages and the executable.
if ! command -v slurmctld > /dev/null || ! command -v slurmd > /dev/null || ! command -v sbatch > /dev/null \
  || ! command -v munged > /dev/null; then
  say "installing slurm-wlm and munge"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q slurm-wlm munge > /dev/null || { apt-get update -q > /dev/null && apt-get install -y -q slurm-wlm munge > /dev/null; }
fi
if [ ! -x "$fetchlab" ]; then
  say "building fetchlab (release)"
  swift build -c release --product fetchlab
  fetchlab=$repo/.build/release/fetchlab
fi
export FETCHLAB=$fetchlab

work=$(mktemp -d /tmp/fetchlab-slurm.XXXXXX)
chmod 755 "$work"  # munged wants its socket directory searchable by all
mkdir -p "$work/key" "$work/munge" "$work/state" "$work/spool" "$work/log"
chmod 700 "$work/key"
pids=()
jobs_submitted=""
status=1
cleanup() {
  set +e
  if [ -n "$jobs_submitted" ] && [ -n "${SLURM_CONF:-}" ]; then scancel $jobs_submitted 2> /dev/null; sleep 1; fi
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[$i]}" 2> /dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2> /dev/null; done
  if [ "$status" -ne 0 ]; then
    for f in "$work"/log/* "$work"/shards/logs/*; do
      [ -f "$f" ] || continue
      echo "----- $f (last 20 lines)" >&2
      tail -n 20 "$f" >&2
    done
  fi
  if [ "${KEEP:-0}" = 1 ]; then say "kept $work"; else rm -rf "$work"; fi
  say "exit $status"
}
trap 'cleanup; exit $status' EXIT
trap 'status=1; exit' INT TERM

# munge: a private key and socket.
dd if=/dev/urandom of="$work/key/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/key/munge.key"
munged -F --key-file="$work/key/munge.key" --socket="$work/munge/munge.socket" \
  --pid-file="$work/munge/munged.pid" --seed-file="$work/key/munged.seed" \
  --log-file="$work/log/munged.log" > "$work/log/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$work/munge/munge.socket" ] && break; sleep 0.1; done
munge -S "$work/munge/munge.socket" -n | unmunge -S "$work/munge/munge.socket" > /dev/null \
  || { say "munged does not answer"; exit 1; }

# Slurm: one node (this host, 127.0.0.1), 2 CPUs.
host=$(hostname -s)
cat > "$work/slurm.conf" << CONF
ClusterName=fetchlab-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/munge.socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MinJobAge=86400
NodeName=fetchlab-node NodeAddr=127.0.0.1 NodeHostname=$host CPUs=2 State=UNKNOWN
PartitionName=local Nodes=fetchlab-node Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$work/slurm.conf
slurmctld -D -f "$SLURM_CONF" > "$work/log/slurmctld.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do scontrol ping 2> /dev/null | grep -q UP && break; sleep 0.2; done
slurmd -D -f "$SLURM_CONF" -N fetchlab-node > "$work/log/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 150); do sinfo -h -o %T 2> /dev/null | grep -qx idle && break; sleep 0.2; done
sinfo -h -o %T | grep -qx idle || { say "the node did not come up: $(sinfo -h -o '%T %E' 2>&1)"; exit 1; }
say "cluster up: $(sinfo -h -o '%P %D nodes %c CPUs %T')"

# The job array and the dependent merge.
base=$work/shards
merged=$work/merged
t1=$(date +%s)
submitted=$(bash scripts/slurm/submit.sh "$experiment" "$tasks" "$base" "$merged")
say "$submitted"
array=$(echo "$submitted" | sed -n 's/^array job \([0-9]*\).*/\1/p')
merge=$(echo "$submitted" | sed -n 's/.*merge job \([0-9]*\).*/\1/p')
jobs_submitted="$array $merge"
deadline=$(($(date +%s) + timeout))
while [ -n "$(squeue -h -j "$array,$merge" -o %i 2> /dev/null)" ]; do
  if [ "$(date +%s)" -ge "$deadline" ]; then say "jobs still running after $timeout s"; squeue >&2; exit 1; fi
  sleep 2
done
t2=$(date +%s)
states=$(scontrol -o show job "$array" | sed -n 's/.* JobState=\([A-Z_]*\) .* ExitCode=\([0-9:]*\) .*/\1 \2/p')
mstate=$(scontrol -o show job "$merge" | sed -n 's/.* JobState=\([A-Z_]*\) .* ExitCode=\([0-9:]*\) .*/\1 \2/p')
say "array tasks: $(echo "$states" | sort | uniq -c | tr -s ' \n' ' '); merge: $mstate"
cp "$base"/logs/*.out "$work/log/" 2> /dev/null || true
if [ "$(echo "$states" | grep -c '^COMPLETED 0:0$')" -ne "$tasks" ] || [ "$mstate" != "COMPLETED 0:0" ]; then
  say "a job failed"
  exit 1
fi
say "sharded run and merge: $((t2 - t1)) s wall on the cluster"

# The same experiment on one machine.
"$fetchlab" run "$experiment" --out "$work/single" --jobs 2 > "$work/log/single.out" 2>&1
t3=$(date +%s)
say "single-machine run: $((t3 - t2)) s"

# Compare.
fail=0
single_csv=$(cd "$work/single" && ls -- *.csv | sort)
merged_csv=$(cd "$merged" && ls -- *.csv | sort)
if [ "$single_csv" != "$merged_csv" ]; then
  say "different CSV files: single [$(echo $single_csv)] merged [$(echo $merged_csv)]"
  fail=1
fi
for f in $single_csv; do
  if cmp "$work/single/$f" "$merged/$f"; then
    say "same bytes: $f ($(wc -c < "$merged/$f") B)"
  else
    fail=1
  fi
done
if command -v python3 > /dev/null; then
  python3 - "$work/single/manifest.json" "$merged/manifest.json" << 'PY' || fail=1
import json, sys
def load(p):
    m = json.load(open(p))
    for k in ("command", "jobs", "started_at", "elapsed_s"):
        m.pop(k, None)
    for k in ("computed", "reused"):
        m["units"].pop(k, None)
    for i in m["inputs"]:
        if i["kind"] == "synthetic":
            i.pop("path")  # inside the output directory
    return m
a, b = load(sys.argv[1]), load(sys.argv[2])
if a != b:
    print("manifest.json differs beyond the documented keys:", sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k)), file=sys.stderr)
    sys.exit(1)
print("test-local-cluster: manifest.json equal except command, jobs, started_at, elapsed_s, units.computed/reused, synthetic input paths", file=sys.stderr)
PY
else
  say "python3 not found: manifest.json not compared"
fi
if [ "$fail" -ne 0 ]; then
  say "FAILED: the merged shards differ from the single-machine run"
  exit 1
fi
status=0
say "PASSED: $tasks shards merged == single run ($(echo $single_csv | wc -w) CSVs); total $(($(date +%s) - t0)) s"
