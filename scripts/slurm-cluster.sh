#!/usr/bin/env bash
# A one-node SLURM cluster on this machine, for the tests of the SLURM executor
# (tests/slurm.rs) and for trying `glassbox run --executor slurm` without a real cluster.
#
#   scripts/slurm-cluster.sh start DIR [--watch PID]   set up and start the cluster in DIR
#   scripts/slurm-cluster.sh env DIR                   print `export SLURM_CONF=...`
#   scripts/slurm-cluster.sh stop DIR                  stop the cluster started in DIR
#
# `start` installs the Debian packages slurm-wlm and munge when they are missing (as root, or
# through sudo), creates a munge key in DIR and starts `munged` as the user munge on a socket
# in DIR, writes DIR/slurm.conf (this host as the only node, CPUs=2, process tracking by
# /proc, no task plugin, cons_tres selection, no accounting, SlurmUser=root, state, spool,
# logs and pid files in DIR, free ports), starts `slurmctld` and `slurmd`, and waits until
# the node takes jobs. Everything it starts is private to DIR: another cluster (or the
# machine's own munge and slurm services) is left alone. Clients find this cluster through
# SLURM_CONF=DIR/slurm.conf (`env` prints it); the jobs inherit it.
#
# `stop` ends the daemons it started, and only them, by the pids recorded in DIR. With
# `--watch PID`, a watcher stops the cluster once process PID has ended and removes DIR (a
# test binary that exits or is killed leaves no daemons behind).
#
# Errors go to stderr with the step that failed, and the exit status is 1: a caller that
# cannot start SLURM (no root, no package repository, no munge user) says why and skips.
set -euo pipefail

die() {
  echo "slurm-cluster: $*" >&2
  exit 1
}

usage() {
  die "usage: $0 start DIR [--watch PID] | env DIR | stop DIR"
}

# The packages, when a daemon or a client is missing.
install_packages() {
  local missing=0
  for c in slurmctld slurmd sbatch squeue scontrol scancel munged mungekey; do
    command -v "$c" >/dev/null 2>&1 || missing=1
  done
  ((missing)) || return 0
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "slurm-wlm and munge are not installed and this user is not root (no sudo)"
    sudo="sudo -n"
  fi
  command -v apt-get >/dev/null 2>&1 || die "slurm-wlm and munge are not installed and there is no apt-get to install them"
  echo "slurm-cluster: installing slurm-wlm and munge" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >&2 || die "apt-get update failed"
  $sudo apt-get install -y -qq --no-install-recommends slurm-wlm munge >&2 ||
    die "apt-get install slurm-wlm munge failed"
}

# A TCP port on this host that nothing listens on, from $1 upwards, not $2.
free_port() {
  local port=$1
  while [ "$port" -lt 65000 ]; do
    if [ "$port" != "${2:-}" ] && ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
    port=$((port + 1))
  done
  die "no free port from $1"
}

# Waits up to $2 seconds for the pid file $1 to name a running process.
wait_for_pid() {
  local waited=0
  while [ "$waited" -lt $(($2 * 10)) ]; do
    if [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; then
      return 0
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  return 1
}

start() {
  local dir=$1 watch=${2:-}
  [ "$(id -u)" -eq 0 ] || die "slurmd must run as root (SlurmUser=root): run as root"
  install_packages
  id munge >/dev/null 2>&1 || die "there is no user 'munge' (the munge package creates it)"
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  [ ! -e "$dir/slurm.conf" ] || die "$dir already holds a cluster: stop it first, or use another folder"
  # munged refuses folders that others can write; the munge user must reach its own.
  chmod 755 "$dir"
  mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
  chown munge: "$dir/munge"
  chmod 755 "$dir/munge"
  runuser -u munge -- test -x "$dir/munge" ||
    die "the user munge cannot reach $dir (a folder above it is closed to others): choose a folder under /tmp"
  # A start that fails half-way stops what it started.
  trap 'stop "$dir" 2>/dev/null' EXIT
  runuser -u munge -- mungekey --create --keyfile="$dir/munge/munge.key" >/dev/null ||
    die "mungekey could not create $dir/munge/munge.key"
  runuser -u munge -- munged \
    --socket="$dir/munge/munge.socket" \
    --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pid" \
    --log-file="$dir/munge/munged.log" \
    --seed-file="$dir/munge/munged.seed" </dev/null >>"$dir/log/munged.out" 2>&1 ||
    die "munged did not start: $(tail -n 3 "$dir/munge/munged.log" "$dir/log/munged.out" 2>/dev/null | tr '\n' ' ')"
  wait_for_pid "$dir/munge/munged.pid" 10 || die "munged did not write its pid file"
  cp "$dir/munge/munged.pid" "$dir/munged.pid"

  local host ctld_port slurmd_port memory
  # slurmd registers under the short host name (`hostname` is not in every minimal image).
  host=$(hostname -s 2>/dev/null || cut -d. -f1 /proc/sys/kernel/hostname)
  ctld_port=$(free_port 6817)
  slurmd_port=$(free_port $((ctld_port + 1)) "$ctld_port")
  # The node's memory in MB, less a margin, so that a job's --mem can be granted.
  memory=$(awk '/MemTotal/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)
  cat >"$dir/slurm.conf" <<EOF
# A one-node cluster for glassbox's tests (scripts/slurm-cluster.sh).
ClusterName=glassbox
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
NodeName=$host NodeAddr=127.0.0.1 CPUs=2 RealMemory=$memory State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF="$dir/slurm.conf"
  slurmctld -c -f "$SLURM_CONF" </dev/null >>"$dir/log/slurmctld.out" 2>&1 ||
    die "slurmctld did not start: $(tail -n 5 "$dir/log/slurmctld.log" 2>/dev/null | tr '\n' ' ')"
  wait_for_pid "$dir/slurmctld.pid" 20 ||
    die "slurmctld did not start: $(tail -n 5 "$dir/log/slurmctld.log" 2>/dev/null | tr '\n' ' ')"
  slurmd -f "$SLURM_CONF" </dev/null >>"$dir/log/slurmd.out" 2>&1 ||
    die "slurmd did not start: $(tail -n 5 "$dir/log/slurmd.log" 2>/dev/null | tr '\n' ' ')"
  wait_for_pid "$dir/slurmd.pid" 20 ||
    die "slurmd did not start: $(tail -n 5 "$dir/log/slurmd.log" 2>/dev/null | tr '\n' ' ')"

  if [ -n "$watch" ]; then
    # Detached, with its output away from the caller's pipes (a caller that reads them to
    # the end would wait for the watcher).
    setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; rm -f "$3/watcher.pid"; "$2" stop "$3"; rm -rf "$3"' \
      watcher "$watch" "$(cd "$(dirname "$0")" && pwd)/$(basename "$0")" "$dir" \
      </dev/null >>"$dir/log/watcher.out" 2>&1 &
    echo $! >"$dir/watcher.pid"
  fi

  # The node takes jobs once slurmd has registered.
  local waited=0 state=""
  while [ "$waited" -lt 300 ]; do
    state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
    case "$state" in
      idle* | mixed* | allocated*) break ;;
    esac
    sleep 0.1
    waited=$((waited + 1))
  done
  case "$state" in
    idle* | mixed* | allocated*) ;;
    *) die "the node did not come up (state '$state'): $(tail -n 5 "$dir/log/slurmd.log" "$dir/log/slurmctld.log" 2>/dev/null | tr '\n' ' ')" ;;
  esac
  trap - EXIT
  echo "export SLURM_CONF=$dir/slurm.conf"
}

stop() {
  local dir=$1 pid name
  [ -d "$dir" ] || die "$dir: no such folder"
  for name in watcher slurmd slurmctld munged; do
    [ -s "$dir/$name.pid" ] || continue
    pid=$(cat "$dir/$name.pid")
    if kill "$pid" 2>/dev/null; then
      for _ in $(seq 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$dir/$name.pid"
  done
}

case "${1:-}" in
  start)
    [ $# -ge 2 ] || usage
    dir=$2
    watch=""
    if [ $# -ge 3 ]; then
      [ "$3" = --watch ] && [ $# -eq 4 ] || usage
      watch=$4
    fi
    start "$dir" "$watch"
    ;;
  env)
    [ $# -eq 2 ] || usage
    [ -f "$2/slurm.conf" ] || die "$2 holds no cluster (no slurm.conf)"
    echo "export SLURM_CONF=$(cd "$2" && pwd)/slurm.conf"
    ;;
  stop)
    [ $# -eq 2 ] || usage
    stop "$2"
    ;;
  *) usage ;;
esac
