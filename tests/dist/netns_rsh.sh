#!/usr/bin/env bash
# netns_rsh.sh HOST COMMAND...
#
# ssh's stand-in for two_hosts.sh: Open MPI's rsh launcher
# (plm_rsh_agent) calls it as it would call ssh, with a host and the
# words of a shell command line (the remote daemon, orted, and its
# arguments, quoted for a shell). It runs that command line in the
# network namespace that owns HOST, under that host's name, with the
# environment of a fresh ssh login: nothing of the caller's environment
# reaches the remote rank unless mpirun forwards it (-x, OMPI_*), as on a
# real second machine.
#
# two_hosts.sh exports the mapping: AMPX_TWO_HOSTS_IP0/_NS0/_NAME0 and
# the same with 1.
set -euo pipefail

me=netns_rsh.sh
if (($# < 2)); then
  echo "$me: usage: $me HOST COMMAND... (Open MPI's plm_rsh_agent under two_hosts.sh)" >&2
  exit 255 # ssh's code for "could not reach the host"
fi
host=$1
shift

ns=
for i in 0 1; do
  ip_var=AMPX_TWO_HOSTS_IP$i
  if [[ $host == "${!ip_var:-}" ]]; then
    ns_var=AMPX_TWO_HOSTS_NS$i
    name_var=AMPX_TWO_HOSTS_NAME$i
    ns=${!ns_var}
    name=${!name_var}
  fi
done
if [[ -z $ns ]]; then
  echo "$me: unknown host '$host' (this run's hosts: ${AMPX_TWO_HOSTS_IP0:-unset}," \
    "${AMPX_TWO_HOSTS_IP1:-unset}; only two_hosts.sh sets them)" >&2
  exit 255
fi

# ssh joins its arguments with spaces and hands the line to the login
# shell: the same here. unshare --uts gives the host its own name
# (gethostname, Open MPI's node name and session directory) without
# touching the machine's. PATH is the caller's: the two hosts share one
# installation.
# shellcheck disable=SC2016 # the inner shell expands its own $1..$5
exec ip netns exec "$ns" unshare --uts /bin/sh -c '
  hostname "$1" &&
  exec env -i HOME="$2" USER="$3" LOGNAME="$3" SHELL=/bin/sh PATH="$4" \
    /bin/sh -c "$5"' \
  sh "$name" "$HOME" "$(id -un)" "$PATH" "$*"
