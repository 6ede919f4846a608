#!/usr/bin/env bash
# Installs every Debian package kiln needs to build, test, run the demo and the benchmarks: the
# lines of scripts/packages.txt (docs/design.md §1). Idempotent: packages already present are
# skipped, and apt is not touched at all when nothing is missing, so `make test` stays fast on a
# prepared machine.
set -euo pipefail

mapfile -t packages < <("$(dirname "$0")/packages.sh" install)
[ ${#packages[@]} -gt 0 ] || { echo "install-deps: scripts/packages.txt lists nothing" >&2; exit 1; }

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
