#!/usr/bin/env bash
# Installs the Debian packages the build and the tests need and a fresh Debian 12 machine lacks:
# with no argument the compilers, the sanitizer runtimes, SIMDe's headers (the native kernels'),
# emscripten, node and npm; with arguments those packages (the Makefile's rules for chromium,
# emscripten and the native build's SIMDe and clang call it so).
# Idempotent and quiet when everything is present. Only Debian packages are fetched here; the
# npm packages come from `npm ci` (node_modules/.stamp).
set -euo pipefail
have() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
need=()
if [ $# -gt 0 ]; then
  for pkg in "$@"; do have "$pkg" || need+=("$pkg"); done
else
  for pkg in gcc make clang libclang-rt-14-dev libsimde-dev emscripten; do have "$pkg" || need+=("$pkg"); done
  # node and npm may come from elsewhere than Debian (nvm, nodesource): only the commands count
  command -v node >/dev/null || need+=(nodejs)
  command -v npm >/dev/null || need+=(npm)
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "install-deps: installing ${need[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
