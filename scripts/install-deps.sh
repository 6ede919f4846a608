#!/usr/bin/env bash
# Installs every Debian package kiln needs to build, test, run the demo and the benchmarks: the
# lines of scripts/packages.txt (docs/design.md §1); then the one npm package the tests use,
# onnxruntime-node (tests/onnx/package.json, the runtime ONNX exports are checked in). Idempotent:
# packages already present are skipped, and apt and npm are not touched at all when nothing is
# missing, so `make test` stays fast on a prepared machine.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

# npm's packages for tests/onnx, as its package-lock.json pins them, unless they are there.
install_npm_packages() {
  local folder="$root/tests/onnx" wanted present
  wanted=$(sed -n 's/.*"onnxruntime-node": "\(.*\)".*/\1/p' "$folder/package.json")
  present=$(sed -n 's/^  "version": "\(.*\)".*/\1/p' \
    "$folder/node_modules/onnxruntime-node/package.json" 2>/dev/null || true)
  if [ "$present" = "$wanted" ]; then
    echo "install-deps: onnxruntime-node $wanted present"
    return
  fi
  echo "install-deps: installing onnxruntime-node $wanted (npm)"
  # --ignore-scripts: its install script fetches GPU builds; the CPU build is in the package.
  npm ci --prefix "$folder" --ignore-scripts --no-audit --no-fund --loglevel=error
}

mapfile -t packages < <("$(dirname "$0")/packages.sh" install)
[ ${#packages[@]} -gt 0 ] || { echo "install-deps: scripts/packages.txt lists nothing" >&2; exit 1; }

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
install_npm_packages
