#!/usr/bin/env bash
# The fresh-machine check: do the README's two commands work for a newcomer
# on a fresh Debian 12 machine? Builds a minimal Debian 12 root from Debian's
# registry (mmdebstrap, variant minbase: essential packages and apt, nothing
# of ampx's), puts a clean clone of this repository in it, and runs, as root
# in a chroot with /proc, /sys and /dev mounted:
#   scripts/report.sh     then     the Python package     then     scripts/test.sh
# (the Python package: `pip install .` into a fresh venv and `import ampx;
# print(ampx.devices())` outside the checkout, then `pip wheel .` installed
# into a second fresh venv and imported the same way; docs/PYTHON.md).
# Each step's result and time are printed (full logs in the work directory).
# The mounts live in a private mount namespace per step, so they vanish with
# it; the root is removed at the end, also after a failure or Ctrl-C.
#
# Usage: scripts/fresh-machine-check.sh [--commit REV] [--keep] [--record]
#          [--work DIR]
#   --commit REV  the commit to clone (default HEAD; uncommitted changes are
#                 not part of a clean clone)
#   --keep        keep the root and logs (default: logs kept, root removed)
#   --record      write the result into docs/DEVELOPING.md ("Last
#                 fresh-machine check"), atomically
#   --work DIR    work directory (default /var/tmp/ampx-fresh-check)
# Needs root (mmdebstrap, chroot and mounts) and about 10 GB of disk; takes
# about 45 minutes on 2 cores. Too slow for every CI run: run it before
# resolving anything that changes dependencies or install steps.
#
# What comes from the host, as any machine of this workplace has it: apt's
# sources (the Debian registry), DNS (/etc/resolv.conf), extra CA
# certificates (/usr/local/share/ca-certificates) and pip's settings
# (/etc/pip.conf and PIP_* / proxy variables), which reach PyPI through this
# network. Nothing of ampx's dependencies is copied: the CUDA Toolkit is not
# in the root, so the CUDA plugin is not built there (it is optional).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
commit=HEAD
keep=0
record=0
work=/var/tmp/ampx-fresh-check
while [ $# -gt 0 ]; do
  case "$1" in
    --commit) commit="${2:?--commit needs a revision}"; shift 2 ;;
    --keep) keep=1; shift ;;
    --record) record=1; shift ;;
    --work) work="${2:?--work needs a directory}"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "fresh-machine-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "fresh-machine-check: needs root (mmdebstrap, chroot, mount)" >&2; exit 2; }
rev=$(git -C "$repo" rev-parse --verify --quiet "$commit^{commit}") ||
  { echo "fresh-machine-check: '$commit' is not a commit of $repo" >&2; exit 2; }

root="$work/root"
logs="$work/logs"
mkdir -p "$logs"
rm -f "$logs"/*.log

# Removes the root once nothing is mounted under it (the per-step mount
# namespaces are gone by then; this guards against a mount that leaked).
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -d "$root" ]; then
    if findmnt -rn -o TARGET | grep -q "^$root/"; then
      echo "fresh-machine-check: something is still mounted under $root; not removing it" >&2
      findmnt -rn -o TARGET | grep "^$root/" | sort -r | xargs -r umount -l || true
    elif [ "$keep" -eq 0 ]; then
      rm -rf --one-file-system "$root"
    fi
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

results=()
failed=0
fmt_time() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
# step NAME COMMAND...: runs it with its output in logs/NAME.log, prints the
# result and time, and records them; a failed step stops the check.
step() {
  local name="$1"
  shift
  local log="$logs/${name//\//_}.log" t0 t rc=0
  t0=$(date +%s)
  printf '%-28s ... ' "$name" >&2
  # In the background, so that set -e holds inside the step's function
  # (bash ignores it in functions called from a || list).
  "$@" >"$log" 2>&1 &
  wait $! || rc=$?
  t=$(($(date +%s) - t0))
  if [ "$rc" -eq 0 ]; then
    printf 'ok      %s\n' "$(fmt_time "$t")" >&2
    results+=("$name: pass, $(fmt_time "$t")")
  else
    printf 'FAILED  %s (exit %d; %s)\n' "$(fmt_time "$t")" "$rc" "$log" >&2
    tail -n 25 "$log" | sed 's/^/    | /' >&2
    results+=("$name: FAIL (exit $rc), $(fmt_time "$t")")
    failed=1
  fi
  return "$rc"
}

host_tools() {
  command -v mmdebstrap >/dev/null && return 0
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap
}

make_root() {
  rm -rf --one-file-system "$root"
  local sources=()
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -s "$f" ] && grep -qs 'debian' "$f" && sources+=("$f")
  done
  [ ${#sources[@]} -gt 0 ] || sources=(http://deb.debian.org/debian)
  mmdebstrap --variant=minbase --aptopt='Acquire::Check-Valid-Until "false"' \
    bookworm "$root" "${sources[@]}"
  # The workplace's network, as a machine here has it (see the header).
  cp -L /etc/resolv.conf "$root/etc/resolv.conf"
  if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
    mkdir -p "$root/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  fi
  [ -f /etc/pip.conf ] && cp /etc/pip.conf "$root/etc/pip.conf"
  return 0
}

clone_repo() {
  git clone --quiet --no-hardlinks "$repo" "$root/root/ampx"
  git -C "$root/root/ampx" checkout --quiet --detach "$rev"
  git -C "$root/root/ampx" log -1 --format='%h %s'
}

# in_root COMMAND: runs it in the clone inside the root, as root, with a
# clean environment plus the network settings, in its own mount namespace.
in_root() {
  local pass=()
  for v in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY \
    PIP_CERT PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_TRUSTED_HOST PIP_DEFAULT_TIMEOUT; do
    [ -n "${!v:-}" ] && pass+=("$v=${!v}")
  done
  unshare --mount --propagation private bash -euc '
    r="$1"; shift
    mount -t proc proc "$r/proc"
    mount --rbind /sys "$r/sys"
    mount --rbind /dev "$r/dev"
    exec chroot "$r" "$@"' _ "$root" \
    env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${pass[@]}" \
    bash -c "cd /root/ampx && $1"
}

# The Python package on the packages scripts/report.sh installed
# (install-deps.sh): pip from PyPI (scikit-build-core, nanobind, numpy),
# nothing else.
python_package='set -e
python3 -m venv /root/venv-install && /root/venv-install/bin/pip install -q .
(cd / && /root/venv-install/bin/python -c "import ampx; print(ampx.devices())")
/root/venv-install/bin/pip wheel -q --no-deps -w /root/wheels .
python3 -m venv /root/venv-wheel && /root/venv-wheel/bin/pip install -q /root/wheels/ampx-*.whl
(cd / && /root/venv-wheel/bin/python -c "import ampx; print(ampx.devices()); print(ampx.Session(devices=\"cpu_ref:0\").plan(\"builtin:cnn\"))")'

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')
isa=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' |
  grep -E '^(avx2|avx512f|avx512_bf16|avx512_fp16|amx_bf16)$' | tr '\n' ' ' | sed 's/ $//')
echo "fresh-machine-check: commit ${rev:0:12}, Debian 12 minbase root in $root" >&2
echo "fresh-machine-check: CPU $cpu ($isa), $(nproc) cores; logs in $logs" >&2
t_all=$(date +%s)
step host-tools host_tools &&
  step debian-root make_root &&
  step clean-clone clone_repo &&
  step scripts/report.sh in_root 'scripts/report.sh' &&
  step python-package in_root "$python_package" &&
  step scripts/test.sh in_root 'scripts/test.sh' || true
total=$(($(date +%s) - t_all))
verdict=pass
[ "$failed" -eq 0 ] || verdict=FAIL
echo "fresh-machine-check: $verdict in $(fmt_time "$total")" >&2

if [ "$record" -eq 1 ]; then
  doc="$repo/docs/DEVELOPING.md"
  {
    echo "<!-- fresh-machine-check:begin (written by scripts/fresh-machine-check.sh --record) -->"
    echo "- **$(date -u +%F)**, commit \`${rev:0:12}\`: **$verdict** in $(fmt_time "$total")"
    echo "  on $cpu ($isa), $(nproc) cores."
    for r in "${results[@]}"; do echo "  - $r"; done
    echo "<!-- fresh-machine-check:end -->"
  } >"$work/record.md"
  if grep -q 'fresh-machine-check:begin' "$doc"; then
    tmp=$(mktemp "$doc.XXXXXX")
    awk -v rec="$work/record.md" '
      /fresh-machine-check:begin/ { while ((getline l < rec) > 0) print l; skip = 1; next }
      /fresh-machine-check:end/ { skip = 0; next }
      !skip { print }' "$doc" >"$tmp"
    mv "$tmp" "$doc"
    echo "fresh-machine-check: recorded in docs/DEVELOPING.md" >&2
  else
    echo "fresh-machine-check: docs/DEVELOPING.md has no fresh-machine-check block; result in $work/record.md" >&2
  fi
fi
[ "$failed" -eq 0 ]
