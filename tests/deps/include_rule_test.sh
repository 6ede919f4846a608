#!/usr/bin/env bash
# Checks the folder dependency rule of docs/architecture.md against the code: each folder of
# kiln/ includes only the folders the rule below allows it (besides itself), and the torch-free
# folders include no LibTorch header. Tests (*_test.cpp) are left out: they may reach further.
# A folder the rule does not name fails too, so that a new folder gets its place in the rule
# and in the map. Then it checks itself: a wrong include in a small tree must make it fail.
#
#   tests/deps/include_rule_test.sh [ROOT]     ROOT: the repository (default: this file's)
set -uo pipefail

root="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"

# The rule: a folder, then the folders its code may include.
declare -A allowed=(
  [core]=""
  [io]="core"
  [tabular]="core io"
  [data]="core io tabular"
  [models]="core"
  [losses]="core"
  [metrics]="core"
  [optim]="core"
  [distributed]="core"
  [run]="core"
  [serving]="core io"
  [tensorboard]="core io"
  [onnx]="core"
  [tune]="core run"
  [board]="core io run tensorboard tune serving"
  [engine]="core io tabular data models losses metrics optim distributed run"
  [experiment]="core io tabular data models losses metrics optim distributed run serving tensorboard tune engine"
  [export]="core io tabular data models losses metrics optim distributed run serving tensorboard tune engine experiment onnx"
  [bench]="core io tabular data models losses metrics optim distributed run serving tensorboard tune engine experiment"
)
# Folders whose code builds without LibTorch (their targets do not link it).
torch_free="core io tabular run serving tensorboard tune board onnx"

# Checks the tree at ROOT; prints each breach, returns 1 if any.
check() {
  local tree="$1" failed=0 folder file included
  for folder_path in "$tree"/kiln/*/; do
    folder="$(basename "$folder_path")"
    if [[ -z "${allowed[$folder]+set}" ]]; then
      echo "kiln/$folder/ is in no rule: give it its allowed folders in $0 and docs/architecture.md"
      failed=1
      continue
    fi
    while IFS= read -r -d '' file; do
      while IFS= read -r included; do
        [[ "$included" == "$folder" ]] && continue
        if [[ " ${allowed[$folder]} " != *" $included "* ]]; then
          echo "${file#"$tree"/}: includes kiln/$included/, which kiln/$folder/ may not"
          failed=1
        fi
      done < <(sed -n -E 's|^#include "kiln/([a-z_]+)/.*|\1|p' "$file" | sort -u)
      if [[ " $torch_free " == *" $folder "* ]] &&
        grep -q -E '^#include <(torch|ATen|c10)/' "$file"; then
        echo "${file#"$tree"/}: includes LibTorch, which kiln/$folder/ keeps out"
        failed=1
      fi
    done < <(find "$folder_path" \( -name '*.h' -o -name '*.cpp' \) -not -name '*_test.cpp' -print0)
  done
  return "$failed"
}

status=0
check "$root" || status=1

# The check must catch what it is for: a core header that includes the engine, and LibTorch in io.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/kiln/core" "$scratch/kiln/io" "$scratch/kiln/engine"
printf '#include "kiln/engine/trainer.h"\n' >"$scratch/kiln/core/wrong.h"
printf '#include <torch/torch.h>\n' >"$scratch/kiln/io/wrong.cpp"
printf '#include "kiln/engine/trainer.h"\n' >"$scratch/kiln/core/fine_test.cpp"
found="$(check "$scratch")"
for expected in "kiln/core/wrong.h: includes kiln/engine/" "kiln/io/wrong.cpp: includes LibTorch"; do
  if [[ "$found" != *"$expected"* ]]; then
    echo "self-check: a tree with a wrong include was not refused ($expected)"
    status=1
  fi
done
if [[ "$found" == *fine_test* ]]; then
  echo "self-check: a test file was held to the rule"
  status=1
fi

[[ $status == 0 ]] && echo "include rule: ok"
exit "$status"
