#!/usr/bin/env bash
# Keeps the code in pieces a reader can hold (docs/architecture.md, "Size limits"): no function
# in kiln/ or apps/ over 60 lines, no file in kiln/ over 450 lines, engine/ (the training loop)
# under 5,000 lines. Tests (*_test.cpp, test rigs) are left out. Functions are measured by
# function_length.py beside this file. Then it checks itself: a long function and a long file
# in a small tree must make it fail.
#
#   tests/deps/size_limits_test.sh [ROOT]     ROOT: the repository (default: this file's)
set -uo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="${1:-$(cd "$here/../.." && pwd)}"
readonly function_limit=60 file_limit=450 engine_limit=5000

# The non-test sources under the folders given, relative to `tree`, one per line.
sources() {
  local tree="$1"
  shift
  (cd "$tree" && find "$@" \( -name '*.h' -o -name '*.cpp' \) -not -name '*_test.cpp' \
    -not -name '*_test_rig.h' 2>/dev/null | sort)
}

# Checks the tree at `tree`; prints each breach, returns 1 if any.
check() {
  local tree="$1" failed=0 file lines engine_lines=0
  mapfile -t code < <(sources "$tree" kiln apps)
  if ((${#code[@]})) && ! (cd "$tree" && python3 "$here/function_length.py" "$function_limit" \
    "${code[@]}"); then
    failed=1
  fi
  while IFS= read -r file; do
    lines="$(wc -l <"$tree/$file")"
    if ((lines > file_limit)); then
      echo "$file: $lines lines, over $file_limit: split it where its jobs part"
      failed=1
    fi
    [[ "$file" == kiln/engine/* ]] && engine_lines=$((engine_lines + lines))
  done < <(sources "$tree" kiln)
  if ((engine_lines >= engine_limit)); then
    echo "kiln/engine/: $engine_lines lines, $engine_limit or more: it is to hold the loop only"
    failed=1
  fi
  return "$failed"
}

status=0
check "$root" || status=1

# The check must catch what it is for: 61-line functions of several forms, and a 451-line file.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/kiln/core" "$scratch/kiln/io"
# A function whose first line is $1, 59 statements long; then $2 closes it.
long_function() {
  echo "$1"
  for i in $(seq 59); do echo "  x += 1'000 * $i;  // a digit separator is no quote"; done
  echo "$2"
}
{
  long_function "int long_function(int x) {" "}"
  long_function "template <class T, class = void> T defaulted(T x) {" "}"
  long_function "struct A { A& operator=(const A& other) {" "} };"
  long_function "const auto lambda = [](int x) {" "};"
} >"$scratch/kiln/core/long_functions.cpp"
for i in $(seq 451); do echo "// $i"; done >"$scratch/kiln/io/long_file.h"
found="$(check "$scratch")"
for expected in "kiln/core/long_functions.cpp:1: a function of 61 lines" \
  "kiln/core/long_functions.cpp:62: a function of 61 lines" \
  "kiln/core/long_functions.cpp:123: a function of 61 lines" \
  "kiln/core/long_functions.cpp:184: a function of 61 lines" \
  "kiln/io/long_file.h: 451 lines"; do
  if [[ "$found" != *"$expected"* ]]; then
    echo "self-check: a tree with a breach was not refused ($expected)"
    status=1
  fi
done

[[ $status == 0 ]] && echo "size limits: ok"
exit "$status"
