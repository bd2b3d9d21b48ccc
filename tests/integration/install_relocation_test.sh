#!/usr/bin/env bash
# Installs gtap with `cmake --install`: the default install holds gtap without
# the simulated runtimes, and `gtap run --sim` there says how to get them; the
# `sim` component adds them. Then moves the installed folder and captures a
# workload from the new place: nothing may depend on the build tree or on the
# folder's first location.
set -euo pipefail
build=$1
workload=$2
root=$(mktemp -d /tmp/gtap-install.XXXXXX)
trap 'rm -rf "$root"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$root/first" >/dev/null
for f in bin/gtap lib/gtap/libgtap.so; do
  [ -f "$root/first/$f" ] || fail "the default install has no $f"
done
sims=$(find "$root/first" -name 'libze_gtap_sim.so*' -o -name 'libhsa-runtime64.so*')
[ -z "$sims" ] || fail "the default install holds the simulated runtimes: $sims"

# --sim without them: exit 1 (gtap installed incompletely), the program never
# runs, and the message names the missing file and the install command.
check_missing() {
  local verb=$1; shift
  local status=0
  "$root/first/bin/gtap" "$verb" --sim "$@" >"$root/out.txt" 2>"$root/err.txt" || status=$?
  [ "$status" = 1 ] || { cat "$root/err.txt"; fail "gtap $verb --sim without the simulated runtimes exited $status, not 1"; }
  [ ! -s "$root/out.txt" ] || { cat "$root/out.txt"; fail "gtap $verb --sim wrote to standard output"; }
  for want in "gtap $verb --sim: the simulated runtimes are not installed" \
              "no simulated Level Zero driver at $root/first/lib/gtap/sim/libze_gtap_sim.so" \
              "cmake --install BUILD --component sim --prefix $root/first"; do
    grep -qF -- "$want" "$root/err.txt" || { cat "$root/err.txt"; fail "gtap $verb --sim does not say: $want"; }
  done
}
check_missing run -o "$root/never.gtap" -- /bin/sh -c "touch '$root/ran'"
[ ! -e "$root/ran" ] || fail "gtap run --sim ran the program without the simulated runtimes"
[ ! -e "$root/never.gtap" ] || fail "gtap run --sim wrote a capture without the simulated runtimes"
check_missing replay "$root/none.gtap"
check_missing bench "$root/none.gtap"
# Without --sim the default install works as before.
"$root/first/bin/gtap" run -q -o "$root/plain.gtap" -- /bin/true || fail "gtap run -- /bin/true failed"

cmake --install "$build" --prefix "$root/first" --component sim >/dev/null
for f in lib/gtap/sim/libze_gtap_sim.so lib/gtap/sim/hsa/libhsa-runtime64.so.1; do
  [ -f "$root/first/$f" ] || fail "--component sim did not install $f"
done

mv "$root/first" "$root/moved"
for f in "$root/moved/bin/gtap" $(find "$root/moved" -name '*.so*' -type f); do
  # grep reads all its input (no -q): with pipefail an early exit would SIGPIPE readelf.
  if readelf -d "$f" | grep -E 'RPATH|RUNPATH' | grep -e "$build" -e "$root/first" >/dev/null; then
    fail "$f has a runtime path into the build or first install folder"
  fi
done
"$root/moved/bin/gtap" run --sim -q -o "$root/out.gtap" -- "$workload" direct >/dev/null
info=$("$root/moved/bin/gtap" info "$root/out.gtap" 2>&1) || true
grep -q "closed cleanly" <<<"$info" || { echo "FAIL: no clean capture:"; echo "$info"; ls -l "$root"; exit 1; }
calls=$("$root/moved/bin/gtap" api --format=csv "$root/out.gtap" | awk -F, 'NR>1 {n+=$3} END {print n}')
[ "$calls" = 19 ] || fail "expected the workload's 19 calls, found $calls"
echo "installed without and with the simulated runtimes, moved and captured from $root/moved: ok"
