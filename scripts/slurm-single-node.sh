#!/bin/sh
# Stands up a single-node Slurm cluster on this machine, for the Slurm
# executor's tests (`prove --jobs N --executor slurm`) and for trying it
# out: installs Debian's slurm-wlm and munge if missing, writes a minimal
# slurm.conf for this host (its real CPU count and memory), and starts
# munged, slurmctld and slurmd directly (no systemd needed: works as root
# in a container). Idempotent: run it again to (re)start what is not
# running; daemons already running are left alone.
#
#   sudo scripts/slurm-single-node.sh && sinfo
#
# Stop it with: pkill -x slurmd; pkill -x slurmctld; pkill -x munged
set -eu

if [ "$(id -u)" -ne 0 ]; then
    echo "slurm-single-node.sh: run as root (it installs packages and starts daemons)" >&2
    exit 2
fi

if ! command -v slurmctld >/dev/null 2>&1 || ! command -v slurmd >/dev/null 2>&1 \
    || ! command -v munged >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
fi

host=$(hostname -s)
cpus=$(nproc --all)
# Leave 512 MB to the system.
mem_mb=$(awk '/^MemTotal:/ { m = int($2 / 1024) - 512; if (m < 256) m = 256; print m }' /proc/meminfo)

# munge: a key, its directories, the daemon.
mkdir -p /etc/munge /var/lib/munge /var/log/munge /run/munge
if [ ! -s /etc/munge/munge.key ]; then
    if command -v mungekey >/dev/null 2>&1; then
        mungekey --create --keyfile=/etc/munge/munge.key
    else
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null
    fi
fi
chown -R munge:munge /etc/munge /var/lib/munge /var/log/munge /run/munge
chmod 0700 /etc/munge /var/lib/munge /var/log/munge
chmod 0400 /etc/munge/munge.key
chmod 0755 /run/munge
if ! pgrep -x munged >/dev/null 2>&1; then
    runuser -u munge -- /usr/sbin/munged
fi

# slurm.conf: one node, one partition, no accounting, no cgroups.
conf=/etc/slurm/slurm.conf
mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
want=$(cat <<CONF
# Written by antiproof scripts/slurm-single-node.sh
ClusterName=antiproof
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
KillWait=30
NodeName=$host CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=main Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
)
changed=0
if [ ! -f "$conf" ] || [ "$(cat "$conf")" != "$want" ]; then
    printf '%s\n' "$want" > "$conf"
    changed=1
fi
# No cgroup.conf: with proctrack/linuxproc and task/none slurmd needs
# none (and Slurm 22.05 has no `CgroupPlugin=disabled`).

if [ "$changed" = 1 ]; then
    pkill -x slurmd 2>/dev/null || true
    pkill -x slurmctld 2>/dev/null || true
    sleep 1
fi
pgrep -x slurmctld >/dev/null 2>&1 || slurmctld
pgrep -x slurmd >/dev/null 2>&1 || slurmd

# Wait until the node takes jobs.
i=0
while [ $i -lt 30 ]; do
    state=$(sinfo -h -n "$host" -o %T 2>/dev/null | head -1 || true)
    case "$state" in
        idle*|mix*|alloc*) echo "slurm: $host up ($cpus CPUs, $mem_mb MB), partition main"; exit 0 ;;
        down*|drain*) scontrol update nodename="$host" state=resume 2>/dev/null || true ;;
    esac
    sleep 1
    i=$((i + 1))
done
echo "slurm-single-node.sh: the node did not come up; see /var/log/slurm/slurmd.log and slurmctld.log" >&2
exit 1
