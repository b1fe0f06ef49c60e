#!/usr/bin/env bash
# A one-node Slurm of fathom's own (Debian's slurmctld, slurmd, client and munge), for the
# tests that submit `fathom run FILE --shard auto` as job arrays and for trying
# docs/multi-host.md's Slurm example on one machine. No systemd and no cgroups: its own
# configuration, munge key and socket, state, spool and logs under one directory, the daemons
# run as root. Run as root.
#   scripts/slurm.sh start [DIR]   install what is missing, configure, start; prints the line to
#                                  source (export SLURM_CONF=DIR/slurm.conf)
#   scripts/slurm.sh stop [DIR]    stop the daemons (the directory stays, for their logs)
# DIR defaults to /tmp/fathom-slurm; the controller listens on FATHOM_SLURMCTLD_PORT (6817) and
# the node on the port after it, so a second cluster (the tests') can run beside a first. The
# node declares 8 CPUs on a smaller machine and its partition oversubscribes, so 8 array tasks
# run at once (a barrier test needs them together).
set -euo pipefail
cmd=${1:-}
dir=${2:-/tmp/fathom-slurm}
case "$cmd" in
  start|stop) ;;
  *) echo "slurm.sh: expected start or stop, got '${cmd}'" >&2; exit 2 ;;
esac
if [[ $(id -u) -ne 0 ]]; then
  echo "slurm.sh: run as root (the daemons and their key are root's)" >&2
  exit 1
fi

stop() {
  local pidfile pid
  for pidfile in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munged.pid"; do
    pid=$(cat "$pidfile" 2>/dev/null || true)
    if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
      kill "$pid"
      # Gone, or a zombie (on a machine whose init does not reap, it stays one).
      for _ in $(seq 50); do
        [[ $(awk '/^State:/ { print $2 }' "/proc/$pid/status" 2>/dev/null) =~ ^(|Z)$ ]] && break
        sleep 0.1
      done
    fi
    rm -f "$pidfile"
  done
}

if [[ $cmd == stop ]]; then
  stop
  exit 0
fi

"$(dirname "$0")/setup.sh" --slurm

stop
mkdir -p "$dir"/{state,spool,munge}
# Other users submit jobs too: they reach munge's socket through its directory.
chmod 755 "$dir" "$dir/munge"
if [[ ! -s $dir/munge.key ]]; then
  dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
fi
chmod 400 "$dir/munge.key"
socket=$dir/munge/munge.socket.2
munged --force --key-file="$dir/munge.key" --socket="$socket" --pid-file="$dir/munged.pid" \
  --log-file="$dir/munged.log" --seed-file="$dir/munged.seed"

host=$(hostname -s)
port=${FATHOM_SLURMCTLD_PORT:-6817}
memory=$(awk '/MemTotal/ { print int($2 / 1024 / 2) }' /proc/meminfo)
cat >"$dir/slurm.conf" <<CONF
ClusterName=fathom
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerParameters=batch_sched_delay=0
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=2
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
NodeName=$host CPUs=8 RealMemory=$memory State=UNKNOWN
PartitionName=fathom Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
CONF
export SLURM_CONF=$dir/slurm.conf
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
# Up when the node takes jobs; a node left drained by an earlier run is resumed.
for _ in $(seq 100); do
  state=$(sinfo -h -N -o '%T' 2>/dev/null | head -1 || true)
  case "$state" in
    idle*|mixed*|allocated*) break ;;
    drain*|down*) scontrol update nodename="$host" state=resume 2>/dev/null || true ;;
  esac
  sleep 0.1
done
if ! sinfo -h -N -o '%T' | grep -qE '^(idle|mixed|allocated)'; then
  echo "slurm.sh: the node did not come up: $(sinfo -h -N -o '%T %E' 2>&1); see $dir/slurmctld.log and $dir/slurmd.log" >&2
  exit 1
fi
echo "export SLURM_CONF=$SLURM_CONF"
