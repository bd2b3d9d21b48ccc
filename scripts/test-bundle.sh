#!/usr/bin/env bash
# gtap bundle in a container image that has none of gtap's libraries: a
# Debian 12 root made with `debootstrap --variant=minbase`, holding only what
# the workloads need (the Level Zero loader, libze1), stands in for the image.
# The bundle (--with-sim) is bind-mounted read-only at /opt/gtap there, as
# `docker run -v $PWD/gtap-bundle:/opt/gtap:ro` would; gtap captures a Level
# Zero and an HSA workload on the simulated runtimes inside, and `gtap
# summary` inside reads the captures. The root is kept and reused.
#
# Usage: scripts/test-bundle.sh [BUILD]        (run as root; BUILD default build)
#   GTAP_BUNDLE_ROOT    the root (default build-bundle/root, git-ignored)
#   GTAP_BUNDLE_MIRROR  the Debian mirror (default http://deb.debian.org/debian)
set -euo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)
build=$(realpath "${1:-build}")
root=${GTAP_BUNDLE_ROOT:-$src/build-bundle/root}
mirror=${GTAP_BUNDLE_MIRROR:-http://deb.debian.org/debian}

if [ "$(id -u)" != 0 ]; then
  echo "test-bundle: needs root (debootstrap, chroot, mount)" >&2
  exit 2
fi
start=$(date +%s)
say() { echo "test-bundle: [$(( $(date +%s) - start ))s] $*"; }
fail() { echo "test-bundle: FAILED: $*" >&2; exit 1; }

# shellcheck source=debootstrap-root.sh
. "$src/scripts/debootstrap-root.sh"
debootstrap_root test-bundle "$root" "$mirror" --variant=minbase --include=libze1 bookworm

# The image holds none of the libraries gtap brings (the C library and what
# Debian's base system has, such as zlib, zstd and xxHash for apt, are the image's).
for lib in libcapnp libkj libdw.so libelf.so libunwind libprotobuf libsqlite3; do
  if compgen -G "$root/usr/lib/x86_64-linux-gnu/$lib*" >/dev/null || compgen -G "$root/lib/x86_64-linux-gnu/$lib*" >/dev/null; then
    fail "the root has $lib; it must not"
  fi
done

bundle=$(mktemp -d "${TMPDIR:-/tmp}/gtap-bundle-test.XXXXXX")
mounted=()
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}" || true
  done
  rm -rf "$bundle" "$root/work" "${fakes:-}"
}
trap cleanup EXIT
say "gtap bundle --with-sim"
"$build/bin/gtap" bundle "$bundle/gtap" --with-sim 2>"$bundle.log" || { cat "$bundle.log" >&2; fail "gtap bundle"; }
cat "$bundle.log"
rm -f "$bundle.log"
listing() { (cd "$bundle/gtap" && find . -printf '%p %s %T@\n' | sort); }
needs=$(cat "$bundle/gtap/lib/gtap/needs-glibc") || fail "the bundle has no lib/gtap/needs-glibc"
# The newest version the bundle's objects ask for: 2.N, and none newer than
# the C library they were built against.
system_glibc=$(ldd --version | sed -n '1s/.* //p')
[[ "$needs" =~ ^2\.[0-9]+$ ]] || fail "needs-glibc says '$needs', not a glibc version"
[ "$(printf '%s\n' "$needs" "$system_glibc" | sort -V | tail -1)" = "$system_glibc" ] ||
  fail "needs-glibc says $needs, newer than this system's $system_glibc"

# Images without the C library the bundle needs: the launcher (bin/gtap, a
# static program) says which version is needed instead of the loader's "not
# found". Two bare roots stand in: one with no C library at all (as an image
# built on musl), one whose libc.so.6 states an older version.
check_refused() {
  local fake=$1 expected=$2 out status=0
  mkdir -p "$fake/opt/gtap/bin" "$fake/opt/gtap/lib/gtap"
  cp "$bundle/gtap/bin/gtap" "$fake/opt/gtap/bin/"
  cp "$bundle/gtap/lib/gtap/needs-glibc" "$fake/opt/gtap/lib/gtap/"
  out=$(chroot "$fake" /opt/gtap/bin/gtap --version 2>&1) || status=$?
  [ "$status" = 127 ] || fail "$fake: exit status $status, not 127: $out"
  grep -q "$expected" <<<"$out" || fail "$fake: no '$expected' in: $out"
  grep -q "needs glibc $needs or newer" <<<"$out" || fail "$fake: the needed version is not named: $out"
  echo "  $out"
}
say "the launcher in images without the C library it needs"
fakes=$(mktemp -d "${TMPDIR:-/tmp}/gtap-bundle-fakes.XXXXXX")
check_refused "$fakes/no-libc" "no GNU C library"
mkdir -p "$fakes/old-libc/lib64" "$fakes/old-libc/lib/x86_64-linux-gnu"
: >"$fakes/old-libc/lib64/ld-linux-x86-64.so.2"
printf 'GNU C Library (test) stable release version 2.17.\n' >"$fakes/old-libc/lib/x86_64-linux-gnu/libc.so.6"
check_refused "$fakes/old-libc" "C library is glibc 2.17"
rm -rf "$fakes"

before=$(listing)
mount_in "$root/proc" -t proc proc
mount_in "$root/dev" --bind /dev
mount_in "$root/opt/gtap" --bind "$bundle/gtap"
mount -o remount,bind,ro "$root/opt/gtap"
# The workloads, as a program in the image would be.
mkdir -p "$root/work"
cp "$build/tests/workloads/ze_vector_add" "$build/tests/workloads/hsa_vector_add" "$root/work/"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root LANG=C.UTF-8 "$@"; }

say "gtap --version inside"
in_root /opt/gtap/bin/gtap --version || fail "gtap does not start in the image"
for w in ze_vector_add hsa_vector_add; do
  kernels_dir=/opt/gtap/lib/gtap/sim/kernels
  [ "$w" = hsa_vector_add ] && kernels_dir=/opt/gtap/lib/gtap/sim/hsa/kernels
  say "gtap run --sim $w inside"
  in_root sh -c "cd /work && GTAP_SIM_KERNELS_DIR=$kernels_dir \
    /opt/gtap/bin/gtap run --sim -m api,kernels,memory -o /work/$w.gtap -- ./$w 2 256" \
    || fail "gtap run --sim $w in the image"
  out=$(in_root /opt/gtap/bin/gtap summary /work/$w.gtap) || fail "gtap summary of $w in the image"
  echo "$out" | sed 's/^/  /'
  grep -q "vector_add" <<<"$out" || fail "the summary of $w names no vector_add"
  kernels=$(in_root /opt/gtap/bin/gtap kernels --format=csv /work/$w.gtap)
  grep -q "^vector_add,2," <<<"$kernels" || fail "$w: 2 vector_add launches expected: $kernels"
done
# Nothing in the bundle changed (it was mounted read-only; this says so).
[ "$(listing)" = "$before" ] || fail "the bundle changed"
say "passed"
