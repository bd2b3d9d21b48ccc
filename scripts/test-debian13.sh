#!/usr/bin/env bash
# Builds gtap against Debian 13 ("trixie")'s runtimes (Level Zero loader 1.20,
# ROCr 6.1) and runs the Level Zero and HSA capture tests and the workloads
# there. Those packages need trixie's C library, so they run in a trixie root
# made with debootstrap; the root is kept and reused by later runs.
#
# Usage: scripts/test-debian13.sh [ctest regex]     (run as root)
#   GTAP_DEBIAN13_ROOT   the root (default build-debian13/root, git-ignored)
#   GTAP_DEBIAN13_MIRROR the Debian mirror (default http://deb.debian.org/debian)
#   GTAP_DEBIAN13_TARGETS build only these targets (default: all but benchmarks)
# The source tree is bind-mounted read-only at /gtap-src in the root and
# built into /gtap-build there (kept, so a second run only rebuilds changes).
set -euo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)
root=${GTAP_DEBIAN13_ROOT:-$src/build-debian13/root}
mirror=${GTAP_DEBIAN13_MIRROR:-http://deb.debian.org/debian}
# The Level Zero and HSA capture and replay tests (integration_tests, with the device
# filters), the simulated runtimes' own tests, and every workload test.
default_tests='^(SimZe|SimHsa|sim_hsa|Routes/RouteTest|Layers/LoaderLayerTest|ZeCapture|ZeProfile|ZeReplay|HsaCapture|HsaReplay|Workloads/HsaReplayedWorkload|HsaToolTable|DeviceFilter|Samples|Workloads/ProfiledWorkload|workload\.)'
tests=${1:-$default_tests}

if [ "$(id -u)" != 0 ]; then
  echo "test-debian13: needs root (debootstrap, chroot, mount)" >&2
  exit 2
fi

start=$(date +%s)
child=
# Long steps run in the background, each in a process group of its own, so
# that a signal is handled at once and stops everything the step started
# (a command run in the root is a grandchild: chroot, env, then the command).
step() {
  set -m
  "$@" </dev/null &
  child=$!
  set +m
  wait "$child"
  local rc=$?
  child=
  return $rc
}
say() { echo "test-debian13: [$(( $(date +%s) - start ))s] $*"; }

# shellcheck source=debootstrap-root.sh
. "$src/scripts/debootstrap-root.sh"
debootstrap_root test-debian13 "$root" "$mirror" --variant=minbase trixie

mounted=()
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}" || true
  done
}
trap cleanup EXIT
# A signal stops the step under way too, then the mounts are undone.
trap '[ -n "$child" ] && kill -TERM -- "-$child" 2>/dev/null; wait; exit 130' INT TERM
mount_in "$root/proc" -t proc proc
mount_in "$root/dev" --bind /dev
mount_in "$root/dev/pts" -t devpts devpts
mount_in "$root/gtap-src" --bind "$src"
mount -o remount,bind,ro "$root/gtap-src"
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }

# gtap's build dependencies, from the list scripts/install-deps.sh installs on
# Debian 12. A versioned package trixie does not have (libclang-rt-14-dev)
# becomes its unversioned name when that exists; anything else missing is named and skipped.
installed_in_root() { [ "$(in_root dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]; }
unversioned() { sed -E 's/-[0-9]+(-dev)$/\1/' <<<"$1"; }
exists_in_root() { in_root apt-cache show --no-all-versions "$1" >/dev/null 2>&1; }
mapfile -t wanted < <(scripts/install-deps.sh --list)
packages=()
missing=()
for p in "${wanted[@]}"; do
  installed_in_root "$p" || installed_in_root "$(unversioned "$p")" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${#missing[@]} packages in the root"
  in_root apt-get update -qq
  for p in "${missing[@]}"; do
    if exists_in_root "$p"; then
      packages+=("$p")
      continue
    fi
    alt=$(unversioned "$p")
    if [ "$alt" != "$p" ] && exists_in_root "$alt"; then
      say "$p is not in trixie: installing $alt"
      packages+=("$alt")
    else
      say "$p is not in trixie: skipped"
    fi
  done
  step in_root apt-get install -y -qq --no-install-recommends "${packages[@]}" >"$root.apt.log" 2>&1 || {
    tail -20 "$root.apt.log" >&2
    echo "test-debian13: apt-get install in the root failed (log: $root.apt.log)" >&2
    exit 1
  }
fi
say "runtimes in the root: $(in_root dpkg-query -W -f='${Package} ${Version}  ' libze1 libhsa-runtime64-1)"

jobs=$(nproc)
say "building into $root/gtap-build"
in_root cmake -S /gtap-src -B /gtap-build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGTAP_BUILD_BENCHMARKS=OFF >/dev/null
read -ra targets <<<"${GTAP_DEBIAN13_TARGETS:-}"
step in_root cmake --build /gtap-build -j "$jobs" ${targets[@]:+--target "${targets[@]}"} >"$root.build.log" 2>&1 || {
  grep -E "error|FAILED" "$root.build.log" | head -40 >&2
  echo "test-debian13: build failed (log: $root.build.log)" >&2
  exit 1
}

say "running tests matching $tests"
status=0
step in_root ctest --test-dir /gtap-build -R "$tests" -j "$jobs" --output-on-failure >"$root.ctest.log" 2>&1 || status=$?
grep -E "tests passed|tests failed|\(Failed\)|\(SEGFAULT\)|\(Timeout\)|\(Subprocess|Not Run" "$root.ctest.log" || true
say "done (ctest log: $root.ctest.log)"
exit $status
