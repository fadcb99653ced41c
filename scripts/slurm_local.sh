#!/usr/bin/env bash
# A single-node SLURM cluster on this machine, for testing profiles/slurm (tests/test_engines.py).
#
#   scripts/slurm_local.sh start    install what is missing (Debian, as root), write the configs, start
#                                   munged, MariaDB, slurmdbd, slurmctld and slurmd; wait for the node idle
#   scripts/slurm_local.sh stop     stop the daemons this script started (by their pid files)
#   scripts/slurm_local.sh status   the daemons and `sinfo`
#   scripts/slurm_local.sh env      the line to paste so that sbatch/sinfo/sacct find this cluster
#
# Everything lives under $RANKREPRO_SLURM_DIR (default /var/lib/rankrepro-slurm): configs, state,
# logs, the munge socket and key, MariaDB's data.  The clients find the cluster at SLURM's default
# place, /etc/slurm/slurm.conf, a symbolic link to $RANKREPRO_SLURM_DIR/etc/slurm.conf made by
# `start` and removed by `stop` (`start` refuses to replace a slurm.conf it did not write).  The
# default place is needed: the job-step executor of Snakemake's plugin starts each job's `srun`
# with every SLURM_* variable but a few removed, SLURM_CONF among them.  Every daemon
# listens on 127.0.0.1 only, on ports that avoid SLURM's defaults (another SLURM or MySQL on the
# machine is left alone): RANKREPRO_SLURM_PORT (default 16817) for slurmctld, +1 slurmd, +2 slurmdbd,
# +3 MariaDB.
#
# Why slurmdbd and MariaDB: Snakemake's SLURM executor plugin asks `sacct` for the state of its jobs
# (its default status command when sacct is installed) and validates the account a job is charged
# to with `sacctmgr`; both answer only with job accounting through slurmdbd (a bare slurm.conf runs
# `srun`, but `sacct` then says "Slurm accounting storage is disabled" and an account cannot be
# validated).  The cluster "rankrepro" has an account "rankrepro" that root may use, and one
# partition "debug" with this machine as its node.
set -euo pipefail

DIR="${RANKREPRO_SLURM_DIR:-/var/lib/rankrepro-slurm}"
PORT="${RANKREPRO_SLURM_PORT:-16817}"
CTLD_PORT=$PORT
SLURMD_PORT=$((PORT + 1))
DBD_PORT=$((PORT + 2))
DB_PORT=$((PORT + 3))
CLUSTER=rankrepro
ACCOUNT=rankrepro
PARTITION=debug
NODE="$(hostname -s)"
export SLURM_CONF="$DIR/etc/slurm.conf"
MUNGE_SOCKET="$DIR/munge/munge.socket.2"
DB_SOCKET="$DIR/mysql/mysqld.sock"

log() { echo "slurm_local: $*" >&2; }
die() { log "$*"; exit 1; }

alive() {  # alive PIDFILE: the pid in it runs
    [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...: retry COMMAND every 0.5 s
    local secs=$1 what=$2
    shift 2
    local end=$((SECONDS + secs))
    until "$@" >/dev/null 2>&1; do
        [ $SECONDS -lt $end ] || { log "$what: no answer after $secs s"; return 1; }
        sleep 0.5
    done
}

install_missing() {
    local need=()
    command -v munged >/dev/null || need+=(munge)
    command -v slurmctld >/dev/null || need+=(slurmctld)
    command -v slurmd >/dev/null || need+=(slurmd)
    command -v sinfo >/dev/null || need+=(slurm-client)
    command -v slurmdbd >/dev/null || need+=(slurmdbd)
    command -v mariadbd >/dev/null || need+=(mariadb-server)
    [ ${#need[@]} -eq 0 ] && return 0
    [ "$(id -u)" = 0 ] || die "missing ${need[*]}: run as root to install them (Debian: apt-get install slurm-wlm slurmdbd munge mariadb-server)"
    command -v apt-get >/dev/null || die "missing ${need[*]} and no apt-get to install them"
    log "installing ${need[*]} (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    # slurm-wlm brings slurmctld, slurmd and the client commands
    apt-get install -y -q slurm-wlm slurmdbd munge mariadb-server >/dev/null \
        || { apt-get update -q >/dev/null && apt-get install -y -q slurm-wlm slurmdbd munge mariadb-server >/dev/null; }
}

write_configs() {
    mkdir -p "$DIR"/{etc,ctld,spool,run,log,munge,mysql}
    chmod 700 "$DIR/munge"
    # slurmd copies each job's batch script into its spool and executes it there: a spool on a
    # noexec mount fails every job ("Permission denied"), so check before starting
    local probe="$DIR/spool/.exec-probe"
    printf '#!/bin/sh\nexit 0\n' >"$probe" && chmod 700 "$probe"
    "$probe" || die "$DIR/spool does not allow execution (noexec mount?): set RANKREPRO_SLURM_DIR to another path"
    rm -f "$probe"
    # this machine as slurmd sees it (CPUs, sockets, cores, threads, memory in MB), less 1 GB of
    # memory for the daemons themselves
    local hw mem
    hw="$(slurmd -C | head -1 | sed -e 's/^NodeName=[^ ]* //' -e 's/ RealMemory=[0-9]*//')"
    mem="$(slurmd -C | head -1 | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p')"
    mem=$((mem > 2048 ? mem - 1024 : mem))
    cat >"$SLURM_CONF" <<EOF
# written by scripts/slurm_local.sh: a single-node cluster on $NODE for tests
ClusterName=$CLUSTER
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
CredType=cred/munge
StateSaveLocation=$DIR/ctld
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# no cgroups (containers and CI runners seldom delegate them): processes tracked by parentage
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
# finished jobs stay visible to squeue for 5 min (the plugin's squeue status command needs >= 120 s)
MinJobAge=300
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$DBD_PORT
# for slurmdbd this is the munge socket of the connection to it (AuthInfo is not used there)
AccountingStoragePass=$MUNGE_SOCKET
AccountingStorageEnforce=associations
JobCompType=jobcomp/none
NodeName=$NODE NodeAddr=127.0.0.1 $hw RealMemory=$mem State=UNKNOWN
PartitionName=$PARTITION Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
    cat >"$DIR/etc/slurmdbd.conf" <<EOF
# written by scripts/slurm_local.sh
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
DbdHost=$NODE
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
LogFile=$DIR/log/slurmdbd.log
PidFile=$DIR/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=slurm
StorageLoc=slurm_acct_db
EOF
    chmod 600 "$DIR/etc/slurmdbd.conf"
    # where sbatch, srun, sacct look by default (see the top of this file)
    mkdir -p /etc/slurm
    if [ -e /etc/slurm/slurm.conf ] || [ -L /etc/slurm/slurm.conf ]; then
        [ "$(readlink /etc/slurm/slurm.conf)" = "$SLURM_CONF" ] \
            || die "/etc/slurm/slurm.conf exists and is not this script's: another SLURM is configured here"
    else
        ln -s "$SLURM_CONF" /etc/slurm/slurm.conf
    fi
}

start_munge() {
    alive "$DIR/run/munged.pid" && return 0
    if [ ! -s "$DIR/munge/munge.key" ]; then
        dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
        chmod 400 "$DIR/munge/munge.key"
    fi
    munged --force --num-threads=10 --socket="$MUNGE_SOCKET" --key-file="$DIR/munge/munge.key" --pid-file="$DIR/run/munged.pid" \
        --log-file="$DIR/log/munged.log" --seed-file="$DIR/munge/munged.seed"
    wait_for 10 munge munge --socket="$MUNGE_SOCKET" -n || die "munged did not start: $DIR/log/munged.log"
}

start_mariadb() {
    alive "$DIR/run/mariadbd.pid" && return 0
    if [ ! -d "$DIR/mysql/data/mysql" ]; then
        mariadb-install-db --no-defaults --user=root --datadir="$DIR/mysql/data" --skip-test-db \
            >"$DIR/log/mariadb-install.log" 2>&1 || die "mariadb-install-db failed: $DIR/log/mariadb-install.log"
    fi
    # slurmdbd's recommended InnoDB settings (SLURM's accounting.html), a small buffer pool
    mariadbd --no-defaults --user=root --datadir="$DIR/mysql/data" --socket="$DB_SOCKET" --port="$DB_PORT" \
        --bind-address=127.0.0.1 --skip-name-resolve --pid-file="$DIR/run/mariadbd.pid" \
        --log-error="$DIR/log/mariadbd.log" --innodb-buffer-pool-size=64M --innodb-log-file-size=16M \
        --innodb-lock-wait-timeout=900 >/dev/null 2>&1 &
    wait_for 60 mariadb mariadb --no-defaults -S "$DB_SOCKET" -u root -e 'select 1' \
        || die "MariaDB did not start: $DIR/log/mariadbd.log"
    mariadb --no-defaults -S "$DB_SOCKET" -u root -e "CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'slurm';
        GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1'; FLUSH PRIVILEGES;"
}

start_slurmdbd() {
    alive "$DIR/run/slurmdbd.pid" && return 0
    slurmdbd
    wait_for 60 slurmdbd sacctmgr -n list cluster || die "slurmdbd did not answer: $DIR/log/slurmdbd.log"
    if ! sacctmgr -n -P list cluster format=cluster | grep -qx "$CLUSTER"; then
        sacctmgr -i add cluster "$CLUSTER" >/dev/null
    fi
    if ! sacctmgr -n -P list account format=account | grep -qx "$ACCOUNT"; then
        sacctmgr -i add account "$ACCOUNT" cluster="$CLUSTER" description="rankrepro tests" organization=rankrepro >/dev/null
    fi
    if ! sacctmgr -n -P list association user=root account="$ACCOUNT" format=account | grep -qx "$ACCOUNT"; then
        sacctmgr -i add user root account="$ACCOUNT" cluster="$CLUSTER" >/dev/null
    fi
}

start_slurm() {
    alive "$DIR/run/slurmctld.pid" || slurmctld
    wait_for 60 slurmctld scontrol ping || die "slurmctld did not answer: $DIR/log/slurmctld.log"
    alive "$DIR/run/slurmd.pid" || slurmd
    # the node idle (a node that was down from an earlier run is resumed)
    local n=120
    until sinfo -h -n "$NODE" -o '%T' 2>/dev/null | grep -qx idle; do
        if sinfo -h -n "$NODE" -o '%T' 2>/dev/null | grep -qE '^(down|drained|drain)'; then
            scontrol update nodename="$NODE" state=resume >/dev/null 2>&1 || true
        fi
        n=$((n - 1))
        [ $n -gt 0 ] || die "node $NODE not idle after 60 s: $(sinfo -h -N -o '%N %T %E'); see $DIR/log/slurmd.log"
        sleep 0.5
    done
}

stop_pid() {  # stop_pid NAME PIDFILE
    local f=$2 pid n=60
    alive "$f" || { rm -f "$f"; return 0; }
    pid="$(cat "$f")"
    kill -TERM "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do
        n=$((n - 1))
        if [ $n -le 0 ]; then
            log "$1 ($pid) still running after 30 s: SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
            break
        fi
        sleep 0.5
    done
    rm -f "$f"
}

cmd_start() {
    install_missing
    write_configs
    start_munge
    start_mariadb
    start_slurmdbd
    start_slurm
    log "cluster $CLUSTER up: partition $PARTITION, account $ACCOUNT; export SLURM_CONF=$SLURM_CONF"
}

cmd_stop() {
    # the jobs first (a job left running would keep its processes), then the daemons in reverse order
    if alive "$DIR/run/slurmctld.pid"; then
        scancel --full --partition="$PARTITION" >/dev/null 2>&1 || true
    fi
    stop_pid slurmd "$DIR/run/slurmd.pid"
    stop_pid slurmctld "$DIR/run/slurmctld.pid"
    stop_pid slurmdbd "$DIR/run/slurmdbd.pid"
    stop_pid mariadbd "$DIR/run/mariadbd.pid"
    stop_pid munged "$DIR/run/munged.pid"
    if [ "$(readlink /etc/slurm/slurm.conf 2>/dev/null)" = "$SLURM_CONF" ]; then
        rm -f /etc/slurm/slurm.conf
    fi
    log "stopped"
}

cmd_status() {
    local rc=0 d
    for d in munged mariadbd slurmdbd slurmctld slurmd; do
        if alive "$DIR/run/$d.pid"; then
            echo "$d: running ($(cat "$DIR/run/$d.pid"))"
        else
            echo "$d: stopped"
            rc=3
        fi
    done
    [ $rc = 0 ] && sinfo -N -o '%N %P %T %c %m'
    return $rc
}

case "${1:-}" in
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    env) echo "export SLURM_CONF=$SLURM_CONF" ;;
    *) echo "usage: $0 start|stop|status|env" >&2; exit 2 ;;
esac
