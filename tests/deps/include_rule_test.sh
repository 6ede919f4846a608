#!/usr/bin/env bash
# Checks the folder dependency rule of docs/architecture.md against the code: each folder of
# kiln/ includes only the folders the rule below allows it (besides itself), and the torch-free
# folders include no LibTorch header. A sub-folder the rule names (serving/grpc) is a folder of
# its own, held to its own line, and what includes it must be allowed it by name; any other
# sub-folder (models/layers) belongs to its parent. Tests (*_test.cpp) are left out: they may
# reach further. A folder the rule does not name fails too, so that a new folder gets its place
# in the rule and in the map. Parts that include each other (a circle: include_circles.py) fail.
# Then it checks itself: wrong includes and a circle in a small tree must make it fail.
#
#   tests/deps/include_rule_test.sh [ROOT]     ROOT: the repository (default: this file's)
set -uo pipefail

root="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
here="$(cd "$(dirname "$0")" && pwd)"

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
  [net]="core"
  [serving]="core io net"
  [serving/rest]="core io net serving"
  [serving/grpc]="core io net serving"
  [serving/client]="core io net serving serving/rest serving/grpc"
  [serving/grpc_off]="core serving serving/grpc serving/client"
  [tensorboard]="core io"
  [onnx]="core"
  [tune]="core run"
  [board]="core io run tensorboard tune net serving"
  [engine]="core io tabular data models losses metrics optim distributed run"
  [loops]="core io tabular data models losses metrics optim distributed run engine"
  [experiment]="core io tabular data models losses metrics optim distributed run serving tensorboard tune engine"
  [export]="core io tabular data models losses metrics optim distributed run serving serving/rest tensorboard tune engine experiment onnx"
  [bench]="core io tabular data models losses metrics optim distributed run serving tensorboard tune engine experiment"
)
# Folders whose code builds without LibTorch (their targets do not link it).
torch_free="core io tabular run net serving serving/rest serving/grpc serving/client serving/grpc_off tensorboard tune board onnx"

# The folder of the rule a path under kiln/ belongs to: its sub-folder where the rule names it.
folder_of() {
  local path="$1" top="${1%%/*}" rest="${1#*/}"
  local sub="$top/${rest%%/*}"
  if [[ "$rest" == */* && -n "${allowed[$sub]+set}" ]]; then
    echo "$sub"
  else
    echo "$top"
  fi
}

# Checks the tree at ROOT; prints each breach, returns 1 if any.
check() {
  local tree="$1" failed=0 folder file included top_path
  for top_path in "$tree"/kiln/*/; do
    top="$(basename "$top_path")"
    if [[ -z "${allowed[$top]+set}" ]]; then
      echo "kiln/$top/ is in no rule: give it its allowed folders in $0 and docs/architecture.md"
      failed=1
      continue
    fi
    while IFS= read -r -d '' file; do
      folder="$(folder_of "${file#"$tree"/kiln/}")"
      while IFS= read -r included; do
        included="$(folder_of "$included")"
        [[ "$included" == "$folder" ]] && continue
        if [[ " ${allowed[$folder]} " != *" $included "* ]]; then
          echo "${file#"$tree"/}: includes kiln/$included/, which kiln/$folder/ may not"
          failed=1
        fi
      done < <(sed -n -E 's|^#include "kiln/([a-z_/]+)/[^/]+"|\1/x|p' "$file" | sort -u)
      if [[ " $torch_free " == *" $folder "* ]] &&
        grep -q -E '^#include <(torch|ATen|c10)/' "$file"; then
        echo "${file#"$tree"/}: includes LibTorch, which kiln/$folder/ keeps out"
        failed=1
      fi
    done < <(find "$top_path" \( -name '*.h' -o -name '*.cpp' \) -not -name '*_test.cpp' -print0)
  done
  python3 "$here/include_circles.py" "$tree" || failed=1
  return "$failed"
}

status=0
check "$root" || status=1

# The check must catch what it is for: a core header that includes the engine, and LibTorch in io.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/kiln/core" "$scratch/kiln/io" "$scratch/kiln/engine" "$scratch/kiln/net" \
  "$scratch/kiln/serving/grpc/proto" "$scratch/kiln/serving/rest"
printf '#include "kiln/engine/trainer.h"\n' >"$scratch/kiln/core/wrong.h"
printf '#include <torch/torch.h>\n' >"$scratch/kiln/io/wrong.cpp"
printf '#include "kiln/engine/trainer.h"\n' >"$scratch/kiln/core/fine_test.cpp"
# serving/ outside its front ends names neither; net/ knows nothing of models.
printf '#include "kiln/serving/grpc/grpc_call.h"\n' >"$scratch/kiln/serving/wrong_grpc.cpp"
printf '#include "kiln/serving/rest/rest_handler.h"\n' >"$scratch/kiln/serving/wrong_rest.h"
printf '#include "kiln/serving/servable.h"\n' >"$scratch/kiln/net/wrong.h"
# What is fine: a front end on the API, and a sub-folder the rule does not name.
printf '#include "kiln/serving/servable.h"\n#include "kiln/net/inbox.h"\n' \
  >"$scratch/kiln/serving/rest/fine.cpp"
printf '#include "kiln/serving/grpc/grpc_call.h"\n' >"$scratch/kiln/serving/grpc/proto/fine.h"
# Two parts of net/ that include each other.
printf '#include "kiln/net/loop_b.h"\n' >"$scratch/kiln/net/loop_a.h"
printf '#include "kiln/net/loop_a.h"\n' >"$scratch/kiln/net/loop_b.cpp"
found="$(check "$scratch")"
for expected in "kiln/core/wrong.h: includes kiln/engine/" "kiln/io/wrong.cpp: includes LibTorch" \
  "kiln/serving/wrong_grpc.cpp: includes kiln/serving/grpc/" \
  "kiln/serving/wrong_rest.h: includes kiln/serving/rest/" \
  "kiln/net/wrong.h: includes kiln/serving/" \
  "a circle of includes: kiln/net/loop_a <-> kiln/net/loop_b"; do
  if [[ "$found" != *"$expected"* ]]; then
    echo "self-check: a tree with a wrong include was not refused ($expected)"
    status=1
  fi
done
if [[ "$found" == *fine_test* || "$found" == *fine.cpp* || "$found" == *fine.h* ]]; then
  echo "self-check: a file the rule allows was refused: $found"
  status=1
fi

[[ $status == 0 ]] && echo "include rule: ok"
exit "$status"
