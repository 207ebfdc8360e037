#!/usr/bin/env bash
# two_hosts_selftest.sh: the contract of two_hosts.sh, checked run by run
# (ctest Dist.TwoHostsScript). Usage errors, the skips and their reasons,
# COMMAND's exit status passed through, the byte check, the timeout, what
# reaches the second host, nothing left behind, and the sweep of a run
# killed with SIGKILL. Exits 77 (skip) after the checks that need no
# namespaces where two_hosts.sh cannot make them.
set -euo pipefail

me=two_hosts_selftest.sh
script=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/two_hosts.sh
failed=0
out=

# run CODE PATTERN [VAR=VALUE...] -- ARGS...: runs two_hosts.sh ARGS with
# the variables set, expects exit status CODE and a line matching PATTERN
# (grep -E) in its output; keeps the output in $out.
run() {
  local code=$1 pattern=$2 rc=0
  shift 2
  local vars=()
  while [[ $1 != -- ]]; do
    vars+=("$1")
    shift
  done
  shift
  out=$(env "${vars[@]}" "$script" "$@" 2>&1) || rc=$?
  if ((rc != code)) || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "$me: FAILED: two_hosts.sh $* ${vars[*]}: exit $rc (expected $code)," \
      "output matching '$pattern' expected; output:" >&2
    echo "    ${out//$'\n'/$'\n'    }" >&2
    failed=$((failed + 1))
  else
    echo "$me: ok: two_hosts.sh $* ${vars[*]}: exit $rc"
  fi
}

# The namespaces a run printed must be gone once it has returned.
expect_nothing_left() {
  local name
  while read -r name; do
    if ip netns list | awk '{print $1}' | grep -qx -- "$name"; then
      echo "$me: FAILED: namespace $name left behind" >&2
      failed=$((failed + 1))
    fi
  done < <(grep -oE 'netns ampx-h[01]-[0-9]+-[0-9]+' <<<"$out" | awk '{print $2}' | sort -u)
}

finish() {
  if ((failed > 0)); then
    echo "$me: $failed check(s) failed" >&2
    exit 1
  fi
  echo "$me: every check passed"
  exit "${1:-0}"
}

# Checks that need no namespaces.
run 2 'usage: two_hosts.sh COMMAND' --
run 1 "AMPX_TWO_HOSTS_TIMEOUT='0': expected a positive" AMPX_TWO_HOSTS_TIMEOUT=0 -- true
run 1 "AMPX_TWO_HOSTS_MIN_BYTES='-1': expected a whole" AMPX_TWO_HOSTS_MIN_BYTES=-1 -- true
if (($(id -u) != 0)); then
  run 77 'SKIP: network namespaces need root' -- true
  echo "$me: the rest needs root"
  finish 77
fi
# The tools come first: without them (a minimal Debian has no iproute2)
# that is the reason given, whatever mpirun is.
if command -v ip >/dev/null && command -v unshare >/dev/null && command -v timeout >/dev/null; then
  run 77 "SKIP: needs Open MPI's mpirun" AMPX_MPIRUN=/bin/echo -- true
else
  run 77 "SKIP: '(ip|unshare|timeout)' not found" AMPX_MPIRUN=/bin/echo -- true
fi
if command -v setpriv >/dev/null; then
  # A copy the other user can read: the checkout may live where it cannot
  # (/root). It stops at the uid check, before it needs its neighbours.
  copy=$(mktemp -d)
  cp "$script" "$copy/"
  chmod 755 "$copy" "$copy/two_hosts.sh"
  out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$copy/two_hosts.sh" true 2>&1) &&
    rc=0 || rc=$?
  rm -rf "$copy"
  if ((rc == 77)) && grep -q 'SKIP: network namespaces need root (running as uid 65534)' <<<"$out"; then
    echo "$me: ok: two_hosts.sh true as uid 65534: exit 77"
  else
    echo "$me: FAILED: two_hosts.sh as uid 65534: exit $rc, expected 77 and the reason; output: $out" >&2
    failed=$((failed + 1))
  fi
fi

# Can this machine make the hosts at all?
probe_rc=0
probe=$("$script" true 2>&1) || probe_rc=$?
if ((probe_rc == 77)); then
  echo "$me: two_hosts.sh skips here: $(grep SKIP <<<"$probe")"
  finish 77
fi

# Each rank on its own host, COMMAND's exit status through mpirun.
run 0 'rank 1 on host ampx-h1, netns ampx-h1-' -- true
grep -q 'rank 0 on host ampx-h0, netns ampx-h0-' <<<"$out" || {
  echo "$me: FAILED: no line for rank 0 on ampx-h0" >&2
  failed=$((failed + 1))
}
expect_nothing_left
run 3 'mpirun exited 3' -- sh -c 'exit 3'
expect_nothing_left
# Both ranks get AMPX_*; the second host gets nothing else of the caller's
# environment (rank 0 runs under mpirun, with all of it).
# shellcheck disable=SC2016 # the ranks' shells expand these
run 0 'mpirun exited 0' AMPX_SELFTEST_FORWARDED=42 SELFTEST_PRIVATE=1 -- sh -c \
  'test "$AMPX_SELFTEST_FORWARDED" = 42 && { test "$OMPI_COMM_WORLD_RANK" = 0 || test -z "${SELFTEST_PRIVATE:-}"; }'
# A run that passes without talking over the veth fails the byte check.
run 1 'the ranks did not talk over TCP between the two hosts' AMPX_TWO_HOSTS_MIN_BYTES=1048576 -- true
expect_nothing_left
run 124 'stopped after 1 s' AMPX_TWO_HOSTS_TIMEOUT=1 -- sleep 60
expect_nothing_left

# A run killed with SIGKILL leaves its namespaces and processes; the next
# run stops those processes and removes the namespaces.
"$script" sleep 60 >/dev/null 2>&1 &
victim=$!
victim_pids=()
for _ in $(seq 1 50); do
  victim_ns=$(ip netns list | awk '{print $1}' | grep -E "^ampx-h1-$victim-" || true)
  if [[ -n $victim_ns ]]; then
    mapfile -t victim_pids < <(ip netns pids "$victim_ns")
    ((${#victim_pids[@]} > 0)) && break
  fi
  sleep 0.2
done
kill -KILL "$victim"
wait "$victim" 2>/dev/null || true
if [[ -z ${victim_ns:-} ]] || ((${#victim_pids[@]} == 0)); then
  echo "$me: FAILED: the run to kill never had processes in its second namespace" >&2
  failed=$((failed + 1))
else
  # Not the "removing" line: a run started at the same time elsewhere
  # (ctest -j) may sweep them first.
  run 0 'mpirun exited 0' -- true
  if ip netns list | grep -qE "^ampx-h[01]-$victim-"; then
    echo "$me: FAILED: the killed run's namespaces are still there" >&2
    failed=$((failed + 1))
  fi
  for pid in "${victim_pids[@]}"; do
    if kill -0 "$pid" 2>/dev/null && [[ $(readlink "/proc/$pid/exe" 2>/dev/null) != "" ]]; then
      echo "$me: FAILED: process $pid of the killed run still runs" >&2
      failed=$((failed + 1))
    fi
  done
fi

finish
