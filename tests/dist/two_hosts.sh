#!/usr/bin/env bash
# two_hosts.sh COMMAND [ARGS...]
#
# Runs COMMAND as a 2-rank Open MPI job on two hosts made on this machine:
# two network namespaces joined by a veth pair, each with its own address
# and host name, one rank in each, over Open MPI's TCP transport (no
# shared memory). mpirun runs on the first host and reaches the second
# through netns_rsh.sh, which stands in for ssh. Everything it makes is
# removed on every way out.
#
# Exit status: COMMAND's (through mpirun); 77 (ctest's skip) with the
# reason where the hosts cannot be made (not root, no iproute2 or
# util-linux, no Open MPI, no network namespaces or veth); 124 when the
# run outlives AMPX_TWO_HOSTS_TIMEOUT; 1 when fewer than
# AMPX_TWO_HOSTS_MIN_BYTES crossed the veth in either direction, or for a
# malformed setting; 2 without a command.
#
# Environment:
#   AMPX_MPIRUN              mpirun to use (default: mpirun on PATH)
#   AMPX_TWO_HOSTS_TIMEOUT   seconds before the run is stopped (default 100)
#   AMPX_TWO_HOSTS_MIN_BYTES bytes each direction must carry (default 0)
# Every other AMPX_* variable, and the sanitizers' *SAN_OPTIONS, reach
# both ranks (mpirun -x); Open MPI forwards OMPI_* itself. Nothing else
# reaches the second host.
set -euo pipefail

me=two_hosts.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
skip() {
  echo "$me: SKIP: $*" >&2
  exit 77
}
fail() {
  echo "$me: $*" >&2
  exit 1
}

if (($# == 0)); then
  echo "$me: usage: $me COMMAND [ARGS...] (run as a 2-rank MPI job across two network namespaces)" >&2
  exit 2
fi
timeout_s=${AMPX_TWO_HOSTS_TIMEOUT:-100}
min_bytes=${AMPX_TWO_HOSTS_MIN_BYTES:-0}
[[ $timeout_s =~ ^[1-9][0-9]*$ ]] ||
  fail "AMPX_TWO_HOSTS_TIMEOUT='$timeout_s': expected a positive whole number of seconds"
[[ $min_bytes =~ ^[0-9]+$ ]] ||
  fail "AMPX_TWO_HOSTS_MIN_BYTES='$min_bytes': expected a whole number of bytes"

# What the hosts need; without it the test cannot be made here (skip),
# which is not a failure of what it tests.
(($(id -u) == 0)) || skip "network namespaces need root (running as uid $(id -u))"
for tool in ip unshare timeout; do
  command -v "$tool" >/dev/null || skip "'$tool' not found (iproute2, util-linux, coreutils)"
done
mpirun=${AMPX_MPIRUN:-mpirun}
command -v "$mpirun" >/dev/null || skip "'$mpirun' not found (AMPX_MPIRUN or PATH)"
# Open MPI 4 calls its mpiexec "OpenRTE", 5 "Open MPI".
version=$("$mpirun" --version 2>&1 || true)
[[ $version == *"Open MPI"* || $version == *OpenRTE* ]] ||
  skip "needs Open MPI's mpirun (rsh agent, TCP transport options); '$mpirun --version' says: '${version%%$'\n'*}'"

# Names carry this shell's pid, which a sweep below reads back, and a
# random part (pids of other pid namespaces may repeat). The subnet is
# the same for every run: it exists only inside the run's own two
# namespaces, each with its own routes, so runs at the same time never
# see each other's.
tag="$$-$RANDOM"
ns=("ampx-h0-$tag" "ampx-h1-$tag")
names=(ampx-h0 ampx-h1)
ips=(10.231.0.1 10.231.0.2)
subnet=10.231.0.0/24
link=ampx-veth # each end in its own namespace: the same name twice

# Stops what is still running in a namespace (its processes are this
# run's, or a dead run's), then removes it; its veth end goes with it.
remove_namespace() {
  local name=$1 pids
  ip netns list | awk '{print $1}' | grep -qx -- "$name" || return 0
  mapfile -t pids < <(ip netns pids "$name" 2>/dev/null)
  if ((${#pids[@]} > 0)); then
    kill -TERM "${pids[@]}" 2>/dev/null || true
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      mapfile -t pids < <(ip netns pids "$name" 2>/dev/null)
      ((${#pids[@]} == 0)) && break
      sleep 0.2
    done
    if ((${#pids[@]} > 0)); then kill -KILL "${pids[@]}" 2>/dev/null || true; fi
  fi
  # A run starting at the same time may have swept it first.
  if ! ip netns delete "$name" 2>/dev/null && ip netns list | awk '{print $1}' | grep -qx -- "$name"; then
    echo "$me: could not remove namespace $name" >&2
  fi
}

launcher= # the pid of timeout(1) around mpirun, while it runs
# shellcheck disable=SC2317 # run by the traps
cleanup() {
  local rc=$?
  trap - EXIT INT TERM HUP
  set +e # every step, whatever the one before it returned
  # timeout(1) passes the signal on to mpirun, which stops its daemons.
  [[ -n $launcher ]] && kill -TERM "$launcher" 2>/dev/null && wait "$launcher" 2>/dev/null
  remove_namespace "${ns[1]}"
  remove_namespace "${ns[0]}"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# A run killed with SIGKILL (or a ctest timeout) leaves its namespaces:
# the first run after it removes those whose two_hosts.sh is gone.
for stale in $(ip netns list 2>/dev/null | awk '{print $1}'); do
  [[ $stale =~ ^ampx-h[01]-([0-9]+)-[0-9]+$ ]] || continue
  owner=${BASH_REMATCH[1]}
  grep -qsa two_hosts.sh "/proc/$owner/cmdline" && continue
  echo "$me: removing $stale, left by a run that is gone (pid $owner)" >&2
  remove_namespace "$stale"
done

for i in 0 1; do
  err=$(ip netns add "${ns[$i]}" 2>&1) ||
    skip "cannot make a network namespace here (ip netns add: ${err//$'\n'/ }; a container without CAP_SYS_ADMIN?)"
done
err=$(ip link add name "$link" netns "${ns[0]}" type veth peer name "$link" netns "${ns[1]}" 2>&1) ||
  skip "cannot make a veth pair here (ip link add type veth: ${err//$'\n'/ })"
for i in 0 1; do
  ip -n "${ns[$i]}" address add "${ips[$i]}/24" dev "$link"
  ip -n "${ns[$i]}" link set lo up
  ip -n "${ns[$i]}" link set "$link" up
done

# Bytes through the first host's end of the veth: sent, then received,
# one a line.
veth_bytes() {
  ip netns exec "${ns[0]}" cat "/sys/class/net/$link/statistics/tx_bytes" \
    "/sys/class/net/$link/statistics/rx_bytes"
}

# What netns_rsh.sh needs to find the second host (mpirun passes its own
# environment to the agent).
export AMPX_TWO_HOSTS_IP0=${ips[0]} AMPX_TWO_HOSTS_NS0=${ns[0]} AMPX_TWO_HOSTS_NAME0=${names[0]}
export AMPX_TWO_HOSTS_IP1=${ips[1]} AMPX_TWO_HOSTS_NS1=${ns[1]} AMPX_TWO_HOSTS_NAME1=${names[1]}
export OMPI_MCA_plm_rsh_agent=$here/netns_rsh.sh
# Only root can make the hosts, and Open MPI refuses root without these.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

forward=()
for var in $(compgen -e); do
  case $var in
  AMPX_TWO_HOSTS_* | AMPX_MPIRUN) ;;
  AMPX_* | ASAN_OPTIONS | LSAN_OPTIONS | UBSAN_OPTIONS | TSAN_OPTIONS) forward+=(-x "$var") ;;
  esac
done

# One slot per --host entry, ranks placed round robin by host: rank 0 on
# the first, rank 1 on the second. btl self,tcp: no shared memory, so
# every byte between the ranks crosses the veth; the *_if_include keep
# MPI and the runtime's own traffic (oob) on it. No tree spawn: the
# daemon on the second host would launch further daemons through the
# agent, whose mapping it no longer has (and two hosts have nothing to
# spread). No binding: each host's daemon would bind its one rank to
# "its" first core, the same core of this one machine for both, and two
# ranks polling on one core wait for a scheduler tick (about 5 ms) at
# every message.
# shellcheck disable=SC2054 # commas belong to --host's value
mpirun_args=(
  --host "${ips[0]},${ips[1]}" -np 2 --map-by node --bind-to none
  --mca btl self,tcp --mca btl_tcp_if_include "$subnet" --mca oob_tcp_if_include "$subnet"
  --mca plm_rsh_no_tree_spawn 1
  "${forward[@]}"
)
# Each rank says where it runs before it becomes COMMAND (exec: the same
# process, the same pid).
# shellcheck disable=SC2016 # expanded by each rank's shell
roll_call='echo "two_hosts.sh: rank ${OMPI_COMM_WORLD_RANK:-?} on host $(hostname), netns $(ip netns identify), $(ip -o -4 address show scope global | awk "{print \$2, \$4}")" >&2; exec "$@"'

echo "$me: hosts ${names[0]} (${ips[0]}, netns ${ns[0]}) and ${names[1]} (${ips[1]}, netns ${ns[1]})," \
  "veth $link, mpirun on ${names[0]}" >&2
mapfile -t before < <(veth_bytes)
start=$(date +%s%N)
# shellcheck disable=SC2016 # $1 and $@ are the inner shell's
# In the background and waited for: bash runs a trap (Ctrl-C, a kill)
# only between commands, and wait is one it can interrupt.
timeout -k 5 "$timeout_s" ip netns exec "${ns[0]}" unshare --uts /bin/sh -c 'hostname "$1" && shift && exec "$@"' \
  sh "${names[0]}" "$mpirun" "${mpirun_args[@]}" /bin/sh -c "$roll_call" sh "$@" &
launcher=$!
rc=0
wait "$launcher" || rc=$?
launcher=
end=$(date +%s%N)
mapfile -t after < <(veth_bytes)
sent=$((after[0] - before[0]))
received=$((after[1] - before[1]))
printf '%s: mpirun exited %d after %d ms; the veth carried %d bytes %s -> %s and %d bytes back\n' \
  "$me" "$rc" $(((end - start) / 1000000)) "$sent" "${names[0]}" "${names[1]}" "$received" >&2

# 124: timeout(1) stopped mpirun; 137: it had to kill it (or something
# else killed it, if that was before the limit).
if ((rc == 124 || (rc == 137 && end - start >= timeout_s * 1000000000))); then
  echo "$me: stopped after ${timeout_s} s (AMPX_TWO_HOSTS_TIMEOUT)" >&2
  exit 124
fi
if ((rc == 0 && (sent < min_bytes || received < min_bytes))); then
  fail "only $sent and $received bytes crossed the veth, fewer than AMPX_TWO_HOSTS_MIN_BYTES=$min_bytes" \
    "each way: the ranks did not talk over TCP between the two hosts"
fi
exit "$rc"
