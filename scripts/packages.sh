#!/usr/bin/env bash
# Prints the package names of scripts/packages.txt, one a line, for one use of the list:
#
#   scripts/packages.sh install   what scripts/install-deps.sh installs (every line not gpu-only)
#   scripts/packages.sh gpu       what scripts/gpu-build.sh downloads (lines marked gpu or gpu-only)
set -euo pipefail

list="$(dirname "$0")/packages.txt"
case "${1:-}" in
  install) awk '!/^[ \t]*(#|$)/ { for (i = 2; i <= NF; ++i) if ($i == "gpu-only") next; print $1 }' "$list" ;;
  gpu) awk '!/^[ \t]*(#|$)/ { for (i = 2; i <= NF; ++i) if ($i == "gpu" || $i == "gpu-only") { print $1; next } }' "$list" ;;
  *) echo "usage: $0 install | gpu" >&2; exit 2 ;;
esac
