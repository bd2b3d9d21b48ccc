#!/usr/bin/env bash
# Installs gtap with `cmake --install`, moves the installed folder, and captures
# a workload from the new place: nothing may depend on the build tree or on
# the folder's first location.
set -euo pipefail
build=$1
workload=$2
root=$(mktemp -d /tmp/gtap-install.XXXXXX)
trap 'rm -rf "$root"' EXIT
cmake --install "$build" --prefix "$root/first" >/dev/null
mv "$root/first" "$root/moved"
for f in "$root/moved/bin/gtap" $(find "$root/moved" -name '*.so'); do
  # grep reads all its input (no -q): with pipefail an early exit would SIGPIPE readelf.
  if readelf -d "$f" | grep -E 'RPATH|RUNPATH' | grep -e "$build" -e "$root/first" >/dev/null; then
    echo "FAIL: $f has a runtime path into the build or first install folder"; exit 1
  fi
done
"$root/moved/bin/gtap" run --sim -q -o "$root/out.gtap" -- "$workload" direct >/dev/null
info=$("$root/moved/bin/gtap" info "$root/out.gtap" 2>&1) || true
grep -q "closed cleanly" <<<"$info" || { echo "FAIL: no clean capture:"; echo "$info"; ls -l "$root"; exit 1; }
calls=$("$root/moved/bin/gtap" api --format=csv "$root/out.gtap" | awk -F, 'NR>1 {n+=$3} END {print n}')
[ "$calls" = 19 ] || { echo "FAIL: expected the workload's 19 calls, found $calls"; exit 1; }
echo "installed, moved and captured from $root/moved: ok"
