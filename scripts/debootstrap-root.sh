# Sourced by the scripts that test gtap in a Debian root of its own
# (test-debian13.sh, test-bundle.sh): makes the root once and keeps it.
#
#   debootstrap_root NAME ROOT MIRROR DEBOOTSTRAP-ARGUMENTS...
#
# NAME prefixes the messages; the arguments go to debootstrap before ROOT and
# MIRROR (--variant=minbase SUITE, ...). A function `step` runs debootstrap
# when the caller defines one (in a process group of its own, so that a
# signal stops it at once). The root is complete once the marker
# .gtap-debootstrap-done is there; a directory without it that is not empty
# is refused, never removed.
debootstrap_root() {
  local name=$1 root=$2 mirror=$3
  shift 3
  local run=()
  declare -F step >/dev/null && run=(step)
  if ! command -v debootstrap >/dev/null; then
    echo "$name: installing debootstrap"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
  fi
  [ -e "$root/.gtap-debootstrap-done" ] && return 0
  if [ -e "$root" ] && [ -n "$(ls -A "$root" 2>/dev/null)" ]; then
    echo "$name: $root exists but is not a finished root; remove it first" >&2
    exit 2
  fi
  echo "$name: debootstrap $* into $root"
  mkdir -p "$root"
  # A mirror that drops a connection once should not fail the run: one more
  # try, from an empty directory again (it was empty or absent before).
  if ! "${run[@]}" debootstrap "$@" "$root" "$mirror" >"$root.debootstrap.log" 2>&1; then
    echo "$name: debootstrap failed; trying once more"
    rm -rf --one-file-system "$root"
    mkdir -p "$root"
    "${run[@]}" debootstrap "$@" "$root" "$mirror" >"$root.debootstrap.log" 2>&1 || {
      tail -20 "$root.debootstrap.log" >&2
      echo "$name: debootstrap failed (log: $root.debootstrap.log)" >&2
      exit 1
    }
  fi
  touch "$root/.gtap-debootstrap-done"
}

# Mounts into the root, remembered in the caller's array `mounted` (which its
# exit trap undoes, last first).
mount_in() {  # mount_in TARGET mount-arguments...
  local target=$1
  shift
  mkdir -p "$target"
  mount "$@" "$target"
  mounted+=("$target")
}
