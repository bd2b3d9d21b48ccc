#!/usr/bin/env bash
# Installs every Debian package gtap needs to build, test and benchmark on a
# fresh Debian 12 machine. Safe to run again.
# `install-deps.sh --list` prints the package names, one a line, and installs nothing.
set -euo pipefail

packages=(
  build-essential binutils cmake ninja-build pkg-config python3 clang lld strace util-linux
  libclang-rt-14-dev
  capnproto libcapnp-dev libzstd-dev libxxhash-dev
  libelf-dev libdw-dev libunwind-dev libcli11-dev libmsgpack-cxx-dev libsqlite3-dev sqlite3 time valgrind
  libze1 libze-dev libhsa-runtime-dev
  libprotobuf-dev protobuf-compiler nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libotf2-trace-dev otf2-tools
  libxml2-utils chromium
)

if [ "${1:-}" = --list ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

sudo_cmd=()
if [ "$(id -u)" != 0 ]; then sudo_cmd=(sudo); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
