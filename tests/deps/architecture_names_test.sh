#!/usr/bin/env bash
# Checks that docs/architecture.md names every file of kiln/ with a job of its own: each header's
# name (without .h) must appear in it, so that a newcomer finds every part on the map (32 were
# missing once). Generated protobuf headers are left out. Then it checks itself: a header the
# map does not name, in a small tree, must make it fail.
#
#   tests/deps/architecture_names_test.sh [ROOT]     ROOT: the repository (default: this file's)
set -uo pipefail

root="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"

# Prints each header of ROOT/kiln that ROOT/docs/architecture.md does not name; 1 if any.
check() {
  local tree="$1" failed=0 header name
  while IFS= read -r -d '' header; do
    name="$(basename "$header" .h)"
    if ! grep -q -w -- "$name" "$tree/docs/architecture.md"; then
      echo "${header#"$tree"/}: docs/architecture.md does not name $name"
      failed=1
    fi
  done < <(find "$tree/kiln" -name '*.h' -not -path '*/proto/*' -print0)
  return "$failed"
}

status=0
check "$root" || status=1

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/kiln/net" "$scratch/docs"
touch "$scratch/kiln/net/named_part.h" "$scratch/kiln/net/unnamed_part.h"
echo "kiln/net/ named_part (a part the map names)" >"$scratch/docs/architecture.md"
if check "$scratch" >"$scratch/out" || ! grep -q "unnamed_part" "$scratch/out" ||
  grep -q "^kiln/net/named_part.h:" "$scratch/out"; then
  echo "the check does not catch a header the map leaves out:"
  cat "$scratch/out"
  status=1
fi

[[ $status == 0 ]] && echo "architecture names: ok"
exit "$status"
