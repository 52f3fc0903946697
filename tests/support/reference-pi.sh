#!/usr/bin/env bash
# Runs the reference pi (the TypeScript original, from npm) for side-by-side tests:
#   tests/support/reference-pi.sh [pi args...]
# The first run installs @mariozechner/pi-coding-agent (version $PI_REFERENCE_VERSION, default
# 0.73.1) into $PI_REFERENCE_DIR (default: ~/.cache/pi-reference of the real user, so a
# throwaway HOME passed by a test does not cause a reinstall). Needs node and npm.
set -euo pipefail
version="${PI_REFERENCE_VERSION:-0.73.1}"
real_home="$(getent passwd "$(id -u)" | cut -d: -f6 || true)"
dir="${PI_REFERENCE_DIR:-${real_home:-$HOME}/.cache/pi-reference}/$version"
bin="$dir/node_modules/.bin/pi"
if [ ! -x "$bin" ]; then
  mkdir -p "$dir"
  (cd "$dir" && npm install --silent --no-audit --no-fund "@mariozechner/pi-coding-agent@$version" >&2)
fi
exec "$bin" "$@"
