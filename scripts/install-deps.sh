#!/usr/bin/env bash
# Installs what the build and tests need and a fresh Debian 12 machine lacks. Idempotent and
# quiet when everything is present. Only Debian packages and the npm registry are used.
set -euo pipefail
need=()
have() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
for pkg in gcc make clang libclang-rt-14-dev emscripten; do have "$pkg" || need+=("$pkg"); done
command -v node >/dev/null || need+=(nodejs)
if [ ${#need[@]} -gt 0 ]; then
  echo "install-deps: installing ${need[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
